#include "logs/nccl_inspector.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace railwatch::logs {
namespace nccl_inspector_impl {
namespace {

using json = nlohmann::json;

constexpr size_t kSniffBytes = 4096;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

absl::string_view TrimBlanks(absl::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Byte offsets to 1-based line and column.
class LineIndex {
 public:
  explicit LineIndex(absl::string_view text) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }

  int Line(size_t offset) const {
    return static_cast<int>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                            starts_.begin());
  }

  std::string Where(size_t offset) const {
    int line = Line(offset);
    return absl::StrCat(line, ":", offset - starts_[line - 1] + 1);
  }

 private:
  std::vector<size_t> starts_;
};

// The gauges of the textfile and which record field each fills.
enum class Field { kBusbw, kExec, kAlgbw };
struct InspectorMetric {
  absl::string_view name;
  bool p2p;
  Field field;
};
constexpr InspectorMetric kMetrics[] = {
    {"nccl_bus_bandwidth_gbs", false, Field::kBusbw},
    {"nccl_collective_exec_time_microseconds", false, Field::kExec},
    // 2.29's per-collective textfile; no real sample of it has been seen.
    {"nccl_algorithm_bandwidth_gbs", false, Field::kAlgbw},
    {"nccl_p2p_bus_bandwidth_gbs", true, Field::kBusbw},
    {"nccl_p2p_exec_time_microseconds", true, Field::kExec},
};

const InspectorMetric* MetricNamed(absl::string_view name) {
  for (const InspectorMetric& m : kMetrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// Textfile labels that are record fields; 2.29's names (hostname, gpu_device_id, comm_id) too.
struct StringLabel {
  absl::string_view label;
  std::string InspectorRecord::*field;
};
constexpr StringLabel kStringLabels[] = {
    {"version", &InspectorRecord::version},
    {"slurm_job_id", &InspectorRecord::slurm_job_id},
    {"node", &InspectorRecord::host},
    {"hostname", &InspectorRecord::host},
    {"gpu", &InspectorRecord::gpu},
    {"gpu_device_id", &InspectorRecord::gpu},
    {"comm_name", &InspectorRecord::comm_name},
    {"comm_id", &InspectorRecord::comm_id},
    {"collective", &InspectorRecord::op},
    {"p2p_operation", &InspectorRecord::op},
    {"message_size", &InspectorRecord::message_size_bucket},
    {"algo_proto", &InspectorRecord::algo_proto},
};

// A JSON number as T when it is a whole number that fits: NCCL writes integers, other
// serializers (DataDog's) floats such as 5663.0.
template <typename T>
bool WholeNumber(const json& v, T* out) {
  using Limits = std::numeric_limits<T>;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(Limits::max())) return false;
    *out = static_cast<T>(u);
    return true;
  }
  if (v.is_number_integer()) {  // negative: nlohmann keeps non-negative integers unsigned
    int64_t s = v.get<int64_t>();
    if (!Limits::is_signed || s < static_cast<int64_t>(Limits::min())) return false;
    *out = static_cast<T>(s);
    return true;
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d != std::floor(d) || d < static_cast<double>(Limits::min()) ||
        d >= std::ldexp(1.0, Limits::digits)) {
      return false;
    }
    *out = static_cast<T>(d);
    return true;
  }
  return false;
}

// Members of one section ("header", "coll_perf" ...) into record fields. Absent and null members
// leave the field as it is; the first member of the wrong type is kept in `error`, which makes
// the record bad: a field read wrongly would be worse than none.
class Section {
 public:
  Section(const json& record, absl::string_view name, std::string* error)
      : name_(name), error_(error) {
    auto it = record.find(std::string(name));
    if (it == record.end() || it->is_null()) return;
    if (it->is_object()) {
      object_ = &*it;
    } else if (error_->empty()) {
      *error_ = absl::StrCat(name, " is a JSON ", it->type_name(), ", not an object");
    }
  }

  void String(absl::string_view key, std::string* out) {
    const json* v = Get(key);
    if (v == nullptr) return;
    if (v->is_string()) {
      *out = v->get<std::string>();
    } else {
      Wrong(key, *v, "a string");
    }
  }

  template <typename T>
  void Integer(absl::string_view key, T* out) {
    const json* v = Get(key);
    if (v != nullptr && !WholeNumber(*v, out)) Wrong(key, *v, "a whole number in range");
  }

  void Double(absl::string_view key, double* out) {
    const json* v = Get(key);
    if (v == nullptr) return;
    if (v->is_number()) {
      *out = v->get<double>();
    } else {
      Wrong(key, *v, "a number");
    }
  }

 private:
  const json* Get(absl::string_view key) const {
    if (object_ == nullptr) return nullptr;
    auto it = object_->find(std::string(key));
    return it == object_->end() || it->is_null() ? nullptr : &*it;
  }

  void Wrong(absl::string_view key, const json& v, absl::string_view want) {
    if (!error_->empty()) return;
    std::string shown = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (shown.size() > 40) shown = absl::StrCat(shown.substr(0, 40), "...");
    *error_ = absl::StrCat(name_, ".", key, " is ", shown, ", not ", want);
  }

  absl::string_view name_;
  std::string* error_;
  const json* object_ = nullptr;
};

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." without
// the bracket and the position, which are given as the input's line:column instead.
absl::string_view JsonErrorReason(absl::string_view what) {
  if (absl::StartsWith(what, "[")) {
    size_t close = what.find("] ");
    if (close != absl::string_view::npos) what.remove_prefix(close + 2);
  }
  if (absl::StartsWith(what, "parse error")) {
    size_t colon = what.find(": ");
    if (colon != absl::string_view::npos) what.remove_prefix(colon + 2);
  }
  return what;
}

// Whether each character, fed in order, belongs to a JSON string (its quotes included).
class StringTracker {
 public:
  bool InString(char c) {
    if (!in_) {
      in_ = c == '"';
      return in_;
    }
    if (escaped_) {
      escaped_ = false;
    } else if (c == '\\') {
      escaped_ = true;
    } else if (c == '"' || c == '\n') {  // JSON strings hold no raw newline: a broken one ends
      in_ = false;
    }
    return true;
  }

 private:
  bool in_ = false;
  bool escaped_ = false;
};

// printf's `nan`, `-nan`, `inf`, `-inf` where a JSON value stands become null. "nan" and
// "inf" grow by a character: `grown_at` keeps where (in the result), so that a parse error's
// offset can be mapped back to the input.
std::string NullNonFinite(absl::string_view text, std::vector<size_t>* grown_at) {
  std::string out;
  out.reserve(text.size() + 16);
  StringTracker strings;
  char last = 0;  // the last character that is not blank, a string's quote for its contents
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (strings.InString(c)) {
      out.push_back(c);
      last = '"';
      continue;
    }
    if ((last == ':' || last == ',' || last == '[') && (absl::ascii_isalpha(c) || c == '-')) {
      size_t end = i + (c == '-' ? 1 : 0);
      while (end < text.size() && absl::ascii_isalpha(text[end])) ++end;
      std::string word = absl::AsciiStrToLower(text.substr(i, end - i));
      if (word == "nan" || word == "-nan" || word == "inf" || word == "-inf") {
        out.append("null");
        if (word.size() == 3) grown_at->push_back(out.size() - 1);
        last = 'l';
        i = end - 1;
        continue;
      }
    }
    out.push_back(c);
    if (!IsBlank(c)) last = c;
  }
  return out;
}

class JsonReader {
 public:
  JsonReader(absl::string_view text, InspectorParse& out) : text_(text), index_(text), out_(out) {}

  // Splits top-level objects by brace depth, respecting strings. A '{' at the start of a line
  // inside an object starts the next record: writers indent nested objects, so the object
  // before it was cut short (a truncated JSONL line) and must not swallow the rest.
  void Read() {
    int depth = 0;
    StringTracker strings;
    size_t start = 0;
    for (size_t i = 0; i < text_.size(); ++i) {
      char c = text_[i];
      if (depth == 0) {
        if (c == '{') {
          start = i;
          depth = 1;
        } else if (!IsBlank(c)) {
          Problem(i, "text outside a JSON object");
          size_t eol = text_.find('\n', i);
          i = eol == absl::string_view::npos ? text_.size() : eol;
        }
        continue;
      }
      if (strings.InString(c)) continue;
      if (c == '{' && text_[i - 1] == '\n') {
        Problem(start, absl::StrCat("JSON object not closed before line ", index_.Line(i)));
        start = i;
        depth = 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        Object(start, i + 1);
      }
    }
    if (depth > 0) Problem(start, "JSON object not closed at the end of the input");
  }

 private:
  void Problem(size_t offset, absl::string_view why) {
    out_.problems.push_back(absl::StrCat(index_.Where(offset), ": ", why));
    ++out_.skipped;
  }

  void LineProblem(int line, absl::string_view why) {
    out_.problems.push_back(absl::StrCat(line, ": ", why));
    ++out_.skipped;
  }

  void Object(size_t begin, size_t end) {
    std::vector<size_t> grown_at;
    std::string clean = NullNonFinite(text_.substr(begin, end - begin), &grown_at);
    json record;
    try {
      record = json::parse(clean);
    } catch (const json::parse_error& e) {
      // e.byte counts the characters read, the offending one included.
      size_t at = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, clean.size() - 1);
      at -= std::upper_bound(grown_at.begin(), grown_at.end(), at) - grown_at.begin();
      Problem(begin + at, JsonErrorReason(e.what()));
      return;
    } catch (const json::exception& e) {
      Problem(begin, JsonErrorReason(e.what()));
      return;
    }
    Record(record, index_.Line(begin));
  }

  void Record(const json& record, int line) {
    bool coll = record.contains("coll_perf");
    if (!coll && !record.contains("p2p_perf")) {
      if (record.contains("header") || record.contains("metadata") ||
          record.contains("dump_stats")) {
        ++out_.without_perf;
      } else {
        LineProblem(line, "JSON object without header, metadata, coll_perf or p2p_perf");
      }
      return;
    }
    InspectorRecord r;
    r.format = "json";
    r.line = line;
    r.p2p = !coll;
    std::string error;
    Section header(record, "header", &error);
    header.String("id", &r.comm_id);
    header.String("comm_name", &r.comm_name);
    header.Integer("rank", &r.rank);
    header.Integer("n_ranks", &r.n_ranks);
    header.Integer("nnodes", &r.n_nodes);
    Section metadata(record, "metadata", &error);
    metadata.String("inspector_output_format_version", &r.version);
    metadata.String("hostname", &r.host);
    metadata.Integer("pid", &r.pid);
    int64_t dump_us = 0;
    metadata.Integer("dump_timestamp_us", &dump_us);
    if (dump_us > 0 && dump_us <= std::numeric_limits<int64_t>::max() / 1000) {
      r.dump_time_unix_nano = dump_us * 1000;
    }
    const std::string p = coll ? "coll" : "p2p";
    const std::string perf_name = p + "_perf";
    Section perf(record, perf_name, &error);
    perf.String(p, &r.op);
    perf.Integer(p + "_sn", &r.seq);
    if (r.p2p) perf.Integer("p2p_peer", &r.peer);
    perf.Integer(p + "_msg_size_bytes", &r.msg_bytes);
    perf.Double(p + "_exec_time_us", &r.exec_us);
    perf.String(p + "_timing_source", &r.timing_source);
    perf.Double(p + "_algobw_gbs", &r.algbw_gbs);
    perf.Double(p + "_busbw_gbs", &r.busbw_gbs);
    if (error.empty() && r.op.empty()) error = absl::StrCat(perf_name, ".", p, " is missing");
    if (!error.empty()) return LineProblem(line, error);
    out_.records.push_back(std::move(r));
  }

  absl::string_view text_;
  LineIndex index_;
  InspectorParse& out_;
};

// The textfile: `name{label="value",...} value [timestamp_ms]`, # comments, blank lines. The
// gauges of one label set (one aggregation key) fill one record.
class PrometheusReader {
 public:
  explicit PrometheusReader(InspectorParse& out) : out_(out) {}

  void Read(absl::string_view text) {
    int line = 0;
    for (size_t begin = 0; begin < text.size();) {
      size_t end = text.find('\n', begin);
      if (end == absl::string_view::npos) end = text.size();
      Sample(text.substr(begin, end - begin), ++line);
      begin = end + 1;
    }
  }

 private:
  void Problem(int line, size_t column, absl::string_view why) {
    out_.problems.push_back(absl::StrCat(line, ":", column, ": ", why));
    ++out_.skipped;
  }

  void LineProblem(int line, absl::string_view why) {
    out_.problems.push_back(absl::StrCat(line, ": ", why));
    ++out_.skipped;
  }

  void Sample(absl::string_view s, int line) {
    while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
    size_t pos = 0;
    SkipBlanks(s, &pos);
    if (pos == s.size() || s[pos] == '#') return;
    size_t name_begin = pos;
    while (pos < s.size() && (absl::ascii_isalnum(s[pos]) || s[pos] == '_' || s[pos] == ':')) {
      ++pos;
    }
    if (pos == name_begin) return Problem(line, pos + 1, "not a Prometheus sample");
    absl::string_view name = s.substr(name_begin, pos - name_begin);
    std::vector<std::pair<std::string, std::string>> labels;
    if (pos < s.size() && s[pos] == '{') {
      std::string why = Labels(s, &pos, &labels);
      if (!why.empty()) return Problem(line, pos + 1, why);
    }
    SkipBlanks(s, &pos);
    size_t value_begin = pos;
    absl::string_view value_text = Word(s, &pos);
    double value;
    if (!absl::SimpleAtod(value_text, &value)) {
      return Problem(line, value_begin + 1, absl::StrCat("sample value \"", value_text, "\""));
    }
    SkipBlanks(s, &pos);
    size_t stamp_begin = pos;
    absl::string_view stamp_text = Word(s, &pos);
    int64_t stamp_ms = 0;
    if (!stamp_text.empty() && !absl::SimpleAtoi(stamp_text, &stamp_ms)) {
      return Problem(line, stamp_begin + 1, absl::StrCat("sample timestamp \"", stamp_text, "\""));
    }
    SkipBlanks(s, &pos);
    if (pos < s.size()) return Problem(line, pos + 1, "text after the sample");
    const InspectorMetric* metric = MetricNamed(name);
    if (metric == nullptr) {
      return LineProblem(line, absl::StrCat(name, " is not an NCCL Inspector metric"));
    }
    InspectorRecord* r = RecordFor(*metric, labels, line);
    if (r == nullptr) return;
    switch (metric->field) {
      case Field::kBusbw:
        r->busbw_gbs = value;
        break;
      case Field::kExec:
        r->exec_us = value;
        break;
      case Field::kAlgbw:
        r->algbw_gbs = value;
        break;
    }
    if (stamp_ms > 0 && stamp_ms <= std::numeric_limits<int64_t>::max() / 1000000) {
      r->dump_time_unix_nano = stamp_ms * 1000000;
    }
  }

  // The record of this label set, made on its first gauge; nullptr (after a problem) when a
  // label that is a number is not one.
  InspectorRecord* RecordFor(const InspectorMetric& metric,
                             const std::vector<std::pair<std::string, std::string>>& labels,
                             int line) {
    std::vector<std::pair<std::string, std::string>> sorted = labels;
    std::sort(sorted.begin(), sorted.end());
    std::string key = metric.p2p ? "p2p" : "coll";
    for (const auto& [k, v] : sorted) absl::StrAppend(&key, "\x1f", k, "=", v);
    auto [it, inserted] = by_key_.try_emplace(std::move(key), out_.records.size());
    if (!inserted) return &out_.records[it->second];

    InspectorRecord r;
    r.format = "prometheus";
    r.line = line;
    r.p2p = metric.p2p;
    std::string error;
    for (const auto& [k, v] : labels) {
      auto known = std::find_if(std::begin(kStringLabels), std::end(kStringLabels),
                                [&k = k](const StringLabel& l) { return l.label == k; });
      bool number_ok = true;
      if (known != std::end(kStringLabels)) {
        r.*(known->field) = v;
        // 2.29 wrote bytes where 2.30 writes a bucket ("4-5GB").
        uint64_t bytes;
        if (k == "message_size" && absl::SimpleAtoi(v, &bytes)) r.msg_bytes = bytes;
      } else if (k == "n_nodes") {
        number_ok = absl::SimpleAtoi(v, &r.n_nodes);
      } else if (k == "nranks") {
        number_ok = absl::SimpleAtoi(v, &r.n_ranks);
      } else if (k == "rank") {
        number_ok = absl::SimpleAtoi(v, &r.rank);
      } else if (k == "coll_sn") {
        number_ok = absl::SimpleAtoi(v, &r.seq);
      } else {
        r.other_labels.emplace_back(k, v);
      }
      if (!number_ok && error.empty()) {
        error = absl::StrCat("label ", k, "=\"", v, "\" is not a number");
      }
    }
    if (error.empty() && r.op.empty()) {
      error = metric.p2p ? "no p2p_operation label" : "no collective label";
    }
    if (!error.empty()) {
      by_key_.erase(it);
      LineProblem(line, error);
      return nullptr;
    }
    out_.records.push_back(std::move(r));
    return &out_.records.back();
  }

  static void SkipBlanks(absl::string_view s, size_t* pos) {
    while (*pos < s.size() && IsBlank(s[*pos])) ++*pos;
  }

  static absl::string_view Word(absl::string_view s, size_t* pos) {
    size_t begin = *pos;
    while (*pos < s.size() && !IsBlank(s[*pos])) ++*pos;
    return s.substr(begin, *pos - begin);
  }

  // {a="x", b="y\"z"} from s[*pos] == '{'; "" when read, else why not (*pos where it failed).
  static std::string Labels(absl::string_view s, size_t* pos,
                            std::vector<std::pair<std::string, std::string>>* labels) {
    ++*pos;
    for (;;) {
      SkipBlanks(s, pos);
      if (*pos < s.size() && s[*pos] == '}') {
        ++*pos;
        return "";
      }
      size_t begin = *pos;
      while (*pos < s.size() && (absl::ascii_isalnum(s[*pos]) || s[*pos] == '_')) ++*pos;
      if (*pos == begin) return "label name expected";
      std::string key(s.substr(begin, *pos - begin));
      SkipBlanks(s, pos);
      if (*pos >= s.size() || s[*pos] != '=') return "'=' expected after a label name";
      ++*pos;
      SkipBlanks(s, pos);
      if (*pos >= s.size() || s[*pos] != '"') return "'\"' expected before a label value";
      std::string value;
      for (++*pos; *pos < s.size() && s[*pos] != '"'; ++*pos) {
        if (s[*pos] == '\\' && *pos + 1 < s.size()) {
          ++*pos;
          value.push_back(s[*pos] == 'n' ? '\n' : s[*pos]);
        } else {
          value.push_back(s[*pos]);
        }
      }
      if (*pos >= s.size()) return "label value not closed";
      ++*pos;
      labels->emplace_back(std::move(key), std::move(value));
      SkipBlanks(s, pos);
      if (*pos < s.size() && s[*pos] == ',') {
        ++*pos;
      } else if (*pos >= s.size() || s[*pos] != '}') {
        return "',' or '}' expected after a label";
      }
    }
  }

  InspectorParse& out_;
  absl::flat_hash_map<std::string, size_t> by_key_;
};

}  // namespace
}  // namespace nccl_inspector_impl

bool LooksLikeInspectorOutput(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  namespace impl = nccl_inspector_impl;
  absl::string_view head = text.substr(0, impl::kSniffBytes);
  absl::string_view trimmed = impl::TrimBlanks(head);
  if (absl::StartsWith(trimmed, "{")) {
    return absl::StrContains(head, "\"coll_perf\"") || absl::StrContains(head, "\"p2p_perf\"") ||
           absl::StrContains(head, "\"inspector_output_format_version\"");
  }
  for (size_t begin = 0; begin < head.size();) {
    size_t end = head.find('\n', begin);
    if (end == absl::string_view::npos) end = head.size();
    absl::string_view line = impl::TrimBlanks(head.substr(begin, end - begin));
    begin = end + 1;
    if (absl::StartsWith(line, "# HELP ") || absl::StartsWith(line, "# TYPE ")) {
      line.remove_prefix(7);
    }
    if (absl::StartsWith(line, "nccl_p2p_")) return true;
    for (const auto& metric : impl::kMetrics) {
      if (absl::StartsWith(line, metric.name)) return true;
    }
  }
  return false;
}

InspectorParse ParseInspectorOutput(std::string_view std_text) {
  absl::string_view text(std_text.data(), std_text.size());
  InspectorParse out;
  size_t first = 0;
  while (first < text.size() && nccl_inspector_impl::IsBlank(text[first])) ++first;
  if (first < text.size() && text[first] == '{') {
    nccl_inspector_impl::JsonReader(text, out).Read();
  } else {
    nccl_inspector_impl::PrometheusReader(out).Read(text);
  }
  return out;
}

}  // namespace railwatch::logs
