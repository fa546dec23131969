#include "ib/ufm_telemetry.h"

#include <algorithm>
#include <array>
#include <utility>

#include "common/text.h"
#include "ib/ib_text.h"
#include "nlohmann/json.hpp"

namespace railwatch::ib {
namespace {

using Json = nlohmann::json;

// UFM's (perfquery-era) names and the PMA fields they are.
constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kUfmNames = {{
    {"SymbolErrors", "SymbolErrorCounter"},
    {"LinkRecovers", "LinkErrorRecoveryCounter"},
    {"LinkDowned", "LinkDownedCounter"},
    {"RcvErrors", "PortRcvErrors"},
    {"RcvRemotePhysErrors", "PortRcvRemotePhysicalErrors"},
    {"RcvSwRelayErrors", "PortRcvSwitchRelayErrors"},
    {"XmtDiscards", "PortXmitDiscards"},
    {"XmtConstraintErrors", "PortXmitConstraintErrors"},
    {"RcvConstraintErrors", "PortRcvConstraintErrors"},
    {"LinkIntegrityErrors", "LocalLinkIntegrityErrors"},
    {"ExcBufOverrunErrors", "ExcessiveBufferOverrunErrors"},
    {"VL15Dropped", "VL15Dropped"},
    {"XmitWait", "PortXmitWait"},
    {"PckOut", "PortXmitPkts"},
    {"PckIn", "PortRcvPkts"},
}};

constexpr PmaAttribute kUfmAttribute = PmaAttribute::kPortCountersExtended;

std::string At(std::string_view source, std::string_view text, size_t offset) {
  return Cat(source, ":", TextPosition(text, offset));
}

// "Infiniband_LinkDowned_u_Errors" -> "LinkDowned"; "" when not of that shape.
std::string_view UfmCounterName(std::string_view key) {
  if (!ConsumePrefix(key, "Infiniband_")) return "";
  for (std::string_view unit_mark : {"_f_u_", "_u_"}) {
    if (const size_t at = key.find(unit_mark); at != std::string_view::npos) {
      return key.substr(0, at);
    }
  }
  return "";
}

// One TFS record's field into `sample`.
void ReadTfsField(const std::string& key, const Json& value, UfmPortSample& sample,
                  std::vector<std::string>& bad) {
  IbPortCounters& c = sample.counters;
  if (key == "source_id" && value.is_string()) {
    sample.source_id = value.get<std::string>();
  } else if (key == "node_guid" && value.is_string()) {
    c.node_guid = ParseGuid(value.get<std::string>());
  } else if (key == "port_guid" && value.is_string()) {
    c.guid = ParseGuid(value.get<std::string>());
  } else if (key == "port_num" && value.is_number_unsigned() && value.get<uint64_t>() <= 255) {
    c.port = static_cast<int>(value.get<uint64_t>());
  } else if (key == "timestamp" && value.is_number_integer()) {
    sample.time_us = value.get<int64_t>();
  } else if (!value.is_number()) {
    bad.push_back(key);
  } else if (std::string_view pma = PmaNameOfUfmCounter(UfmCounterName(key));
             !pma.empty() && value.is_number_unsigned()) {
    c.counters[std::string(pma)] = MakeCounter(kUfmAttribute, pma, value.get<uint64_t>());
  } else {
    sample.other[key] = value.get<double>();
  }
}

// The Prometheus exposition as a stream of tokens: "# TYPE name type", "# HELP ..." (to the
// end of its line), and samples "name{labels} value [timestamp]".
class PrometheusReader {
 public:
  PrometheusReader(std::string_view text, std::string_view source, UfmTelemetry* out)
      : text_(text), source_(source), out_(out) {}

  void Read() {
    for (SkipSpace(); pos_ < text_.size(); SkipSpace()) {
      if (text_[pos_] == '#') {
        ReadComment();
      } else if (!ReadSample()) {
        Problem(pos_, "not a Prometheus sample; skipped to the end of the line");
        SkipLine();
      }
    }
  }

 private:
  void ReadComment() {
    ++pos_;
    SkipBlanks();
    if (Word() != "TYPE") return SkipLine();
    SkipBlanks();
    const std::string name(Word());
    SkipBlanks();
    out_->metric_types[name] = std::string(Word());
  }

  bool ReadSample() {
    const size_t start = pos_;
    const std::string_view name = Word();
    if (name.empty()) return false;
    std::map<std::string, std::string, std::less<>> labels;
    if (pos_ < text_.size() && text_[pos_] == '{' && !ReadLabels(labels)) return false;
    SkipBlanks();
    const std::string_view value_text = Word();
    const std::optional<double> value = ParseDouble(value_text);
    if (!value) {
      pos_ = start;
      return false;
    }
    SkipBlanks();
    // A timestamp is all digits; a metric name never starts with one.
    std::optional<int64_t> time_us;
    if (pos_ < text_.size() && (text_[pos_] >= '0' && text_[pos_] <= '9')) {
      const std::optional<uint64_t> ms = ParseUnsigned(Word());
      if (ms && *ms <= static_cast<uint64_t>(INT64_MAX / 1000)) {
        time_us = static_cast<int64_t>(*ms) * 1000;
      }
    }
    Store(name, labels, *value, ParseUnsigned(value_text), time_us);
    return true;
  }

  // {a="x", b="y"}: values may hold escaped quotes.
  bool ReadLabels(std::map<std::string, std::string, std::less<>>& labels) {
    ++pos_;
    for (;;) {
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      const std::string key(Word());
      SkipBlanks();
      if (key.empty() || pos_ + 1 >= text_.size() || text_[pos_] != '=' || text_[pos_ + 1] != '"') {
        return false;
      }
      pos_ += 2;
      std::string value;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        value.push_back(text_[pos_++]);
      }
      if (pos_ >= text_.size()) return false;
      ++pos_;
      labels[key] = std::move(value);
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
    }
  }

  void Store(std::string_view name, const std::map<std::string, std::string, std::less<>>& labels,
             double value, std::optional<uint64_t> exact, std::optional<int64_t> time_us) {
    auto label = [&](std::string_view key) -> std::string {
      auto it = labels.find(key);
      return it == labels.end() ? "" : it->second;
    };
    UfmPortSample& sample = SampleFor(label("source"), label("port_guid"), label("port_num"));
    if (sample.counters.node_guid.text.empty() && !label("node_guid").empty()) {
      sample.counters.node_guid = ParseGuid(label("node_guid"));
    }
    if (time_us) sample.time_us = time_us;
    std::string_view pma = name;
    if (pma.ends_with("Extended")) pma.remove_suffix(8);
    // Counters are integers; a double would lose their low digits past 2^53.
    if (PmaCounterWidth(kUfmAttribute, pma) > 0 && exact) {
      sample.counters.counters[std::string(pma)] = MakeCounter(kUfmAttribute, pma, *exact);
    } else {
      sample.other[std::string(name)] = value;
    }
  }

  UfmPortSample& SampleFor(const std::string& source_id, const std::string& port_guid,
                           const std::string& port_num) {
    for (UfmPortSample& s : out_->ports) {
      if (s.source_id == source_id && s.counters.guid.text == port_guid &&
          s.counters.port == ParsePort(port_num)) {
        return s;
      }
    }
    UfmPortSample sample;
    sample.source_id = source_id;
    sample.counters.attribute = kUfmAttribute;
    sample.counters.guid = ParseGuid(port_guid);
    sample.counters.port = ParsePort(port_num);
    out_->ports.push_back(std::move(sample));
    return out_->ports.back();
  }

  static std::optional<int> ParsePort(std::string_view text) {
    const std::optional<uint32_t> n = ParseUint32(text);
    if (!n || *n > 255) return std::nullopt;
    return static_cast<int>(*n);
  }

  std::string_view Word() {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\t' &&
           text_[pos_] != '\n' && text_[pos_] != '\r' && text_[pos_] != '{' && text_[pos_] != '=' &&
           text_[pos_] != ',' && text_[pos_] != '}') {
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  void SkipBlanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  void SkipLine() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }
  // source:line:column of `offset`. Problems come in text order, so lines are counted on from
  // the previous problem's, not from the start: a text with a bad line every line stays linear.
  void Problem(size_t offset, std::string message) {
    offset = std::min(offset, text_.size());
    if (offset < counted_) {
      counted_ = 0;
      line_ = 1;
      line_start_ = 0;
    }
    for (; counted_ < offset; ++counted_) {
      if (text_[counted_] == '\n') {
        ++line_;
        line_start_ = counted_ + 1;
      }
    }
    out_->problems.push_back(
        {Cat(source_, ":", line_, ":", offset - line_start_ + 1), std::move(message)});
  }

  std::string_view text_;
  std::string_view source_;
  UfmTelemetry* out_;
  size_t pos_ = 0;
  size_t counted_ = 0, line_ = 1, line_start_ = 0;  // Problem's place in the text
};

}  // namespace

std::string_view PmaNameOfUfmCounter(std::string_view ufm_name) {
  for (const auto& [ufm, pma] : kUfmNames) {
    if (ufm == ufm_name) return pma;
  }
  return "";
}

UfmTelemetry ParseUfmTelemetryJson(std::string_view text, std::string_view source) {
  UfmTelemetry out;
  Json doc;
  try {
    doc = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    out.problems.push_back({At(source, text, e.byte == 0 ? 0 : e.byte - 1),
                            Cat("not JSON: ", std::string_view(e.what()))});
    return out;
  }
  const Json* values = doc.is_object() && doc.contains("values") ? &doc["values"] : nullptr;
  if (values == nullptr || !values->is_array()) {
    out.problems.push_back({At(source, text, 0), "no \"values\" array of port records"});
    return out;
  }
  if (doc.contains("timestamp") && doc["timestamp"].is_string()) {
    out.timestamp = doc["timestamp"].get<std::string>();
  }
  if (doc.contains("type") && doc["type"].is_string()) out.type = doc["type"].get<std::string>();
  for (size_t i = 0; i < values->size(); ++i) {
    const Json& record = (*values)[i];
    if (!record.is_object()) {
      out.problems.push_back({At(source, text, 0), Cat("values[", i, "] is not an object")});
      continue;
    }
    UfmPortSample sample;
    sample.counters.attribute = kUfmAttribute;
    std::vector<std::string> bad;
    for (const auto& [key, value] : record.items()) ReadTfsField(key, value, sample, bad);
    for (const std::string& key : bad) {
      out.problems.push_back(
          {At(source, text, 0), Cat("values[", i, "].", key, " is not a number; skipped")});
    }
    out.ports.push_back(std::move(sample));
  }
  return out;
}

UfmTelemetry ParseUfmPrometheus(std::string_view text, std::string_view source) {
  UfmTelemetry out;
  PrometheusReader(text, source, &out).Read();
  return out;
}

}  // namespace railwatch::ib
