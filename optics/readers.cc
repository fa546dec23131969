#include "optics/readers.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "optics/ethtool_text.h"
#include "optics/mlxlink.h"
#include "optics/reader_util.h"
#include "optics/sonic_text.h"

namespace railwatch::optics {
// Named, not anonymous: the unity build puts the readers in one unit.
namespace readers_impl {

using reader::StartsWith;
using reader::StripAnsi;
using reader::Trim;

constexpr size_t kMaxProblems = 100;
// A block or a paste cannot grow without bound: past these, fields and readings are counted.
constexpr size_t kMaxFields = 4096;
constexpr size_t kMaxReadings = 10000;

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsDashes(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c == '-'; });
}

// A table rule: dashes in runs separated by spaces.
bool IsRule(std::string_view t) {
  return !t.empty() && t.find('-') != std::string_view::npos &&
         std::all_of(t.begin(), t.end(), [](char c) { return c == '-' || c == ' '; });
}

int Indent(std::string_view line) {
  int n = 0;
  for (char c : line) {
    if (c == ' ') {
      ++n;
    } else if (c == '\t') {
      n += 8 - n % 8;
    } else {
      break;
    }
  }
  return n;
}

// "key<pad> : value" as ethtool -m prints it ("\t%-41s : %s"): the key, the value and the
// value's column. The padding tells it from a log line that happens to hold " : ".
bool SplitPadded(std::string_view line, std::string_view* key, std::string_view* value,
                 int* column) {
  size_t at = line.find(" : ");
  size_t value_at = at + 3;
  if (at == std::string_view::npos) {
    // An empty value: "Vendor SN                                 :" (trailing blank trimmed).
    const std::string_view t = Trim(line);
    if (t.size() < 3 || t.substr(t.size() - 2) != " :") return false;
    at = line.rfind(" :");
    value_at = line.size();
  }
  size_t indent = 0;
  while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
  if (at < indent || at - indent < 39) return false;
  *key = Trim(line.substr(0, at));
  if (key->empty()) return false;
  std::string_view rest = line.substr(std::min(value_at, line.size()));
  size_t lead = 0;
  while (lead < rest.size() && rest[lead] == ' ') ++lead;
  *value = Trim(rest);
  *column = static_cast<int>(std::min(value_at, line.size()) + lead) + 1;
  return true;
}

// "key<pad>: value" as mlxlink prints it ("%-35s: %s", a trailing blank on some values): the
// colon at column 36 or beyond tells it from a log line.
bool SplitMlxlink(std::string_view line, std::string_view* key, std::string_view* value,
                  int* column) {
  size_t at = line.find(": ");
  if (at == std::string_view::npos) {
    const std::string_view t = Trim(line);
    if (t.empty() || t.back() != ':') return false;
    at = line.rfind(':');
  }
  if (at < 33) return false;
  *key = Trim(line.substr(0, at));
  if (key->empty()) return false;
  const size_t value_at = std::min(at + 2, line.size());
  std::string_view rest = line.substr(value_at);
  size_t lead = 0;
  while (lead < rest.size() && rest[lead] == ' ') ++lead;
  *value = Trim(rest);
  *column = static_cast<int>(value_at + lead) + 1;
  return true;
}

// A fec-stats row starts with an interface name: "Ethernet0", "Eth1/1", "etp3a".
bool LooksLikeInterface(std::string_view token) {
  return !token.empty() && std::isalpha(static_cast<unsigned char>(token.front())) &&
         std::isdigit(static_cast<unsigned char>(token.back())) &&
         std::all_of(token.begin(), token.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' || c == '_' ||
                  c == '-' || c == ':';
         });
}

// "Key: value" (SONiC, ethtool --show-fec), or "Key:" with an empty value.
bool SplitColon(std::string_view line, std::string_view* key, std::string_view* value,
                int* column) {
  size_t at = line.find(": ");
  size_t value_at = at + 2;
  if (at == std::string_view::npos) {
    const std::string_view t = Trim(line);
    if (t.empty() || t.back() != ':') return false;
    at = line.rfind(':');
    value_at = line.size();
  }
  *key = Trim(line.substr(0, at));
  if (key->empty()) return false;
  std::string_view rest = line.substr(std::min(value_at, line.size()));
  size_t lead = 0;
  while (lead < rest.size() && rest[lead] == ' ') ++lead;
  *value = Trim(rest);
  *column = static_cast<int>(std::min(value_at, line.size()) + lead) + 1;
  return true;
}

// ethtool -m keys that start a block without a prompt line before it.
bool IsEthtoolModuleStart(std::string_view key, std::string_view value) {
  if (key == "Identifier") return StartsWith(value, "0x");
  static constexpr std::string_view kKeys[] = {
      "Vendor name",        "Vendor PN",        "Vendor SN",
      "Module temperature", "Module voltage",   "Laser bias current",
      "Laser output power", "Transceiver type", "Optical diagnostics support"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

// "Ethernet144: SFP EEPROM detected": the port.
bool SonicEepromHeader(std::string_view t, std::string_view* port) {
  const size_t at = t.find(": SFP EEPROM ");
  if (at == std::string_view::npos || at == 0) return false;
  const std::string_view p = t.substr(0, at);
  if (p.find(' ') != std::string_view::npos) return false;
  *port = p;
  return true;
}

// "Ethernet128:" alone.
bool SonicPortHeader(std::string_view t, bool any_name) {
  if (t.size() < 2 || t.back() != ':' || t.find(' ') != std::string_view::npos) return false;
  const std::string_view name = t.substr(0, t.size() - 1);
  if (!std::isdigit(static_cast<unsigned char>(name.back()))) return false;
  return any_name || StartsWith(name, "Ethernet") || StartsWith(name, "Eth");
}

bool IsFecStatsHeader(std::string_view t) {
  if (t.find("FEC_CORR") == std::string_view::npos) return false;  // most lines: no tokens
  const std::vector<std::string_view> tokens = Tokens(t);
  return std::find(tokens.begin(), tokens.end(), "IFACE") != tokens.end() &&
         std::find(tokens.begin(), tokens.end(), "FEC_CORR") != tokens.end();
}

// "FEC parameters for eth0:" -> "eth0".
bool HeaderFor(std::string_view t, std::string_view prefix, std::string_view* device) {
  if (!StartsWith(t, prefix) || t.back() != ':') return false;
  *device = Trim(t.substr(prefix.size(), t.size() - prefix.size() - 1));
  return !device->empty();
}

// "name: 123" with a name of letters, digits, '-' and '_' (ethtool standard stats).
bool StatLine(std::string_view t, std::string_view* name, std::string_view* value) {
  const size_t colon = t.find(": ");
  if (colon == std::string_view::npos || colon == 0) return false;
  const std::string_view n = t.substr(0, colon);
  if (!std::all_of(n.begin(), n.end(),
                   [](char c) {
                     return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
                   }) ||
      n.find('-') == std::string_view::npos) {
    return false;
  }
  *name = n;
  *value = Trim(t.substr(colon + 2));
  return !value->empty();
}

// A title-like line in an mlxlink block that is no known title: words, no colon.
bool LooksLikeTitle(std::string_view line, std::string_view t) {
  if (t.empty() || t.size() > 60 || Indent(line) > 0 || t.find(':') != std::string_view::npos) {
    return false;
  }
  return std::all_of(t.begin(), t.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '(' || c == ')' ||
           c == '-' || c == '/' || c == '_';
  });
}

bool SameTool(ToolFormat command, ToolFormat block) {
  auto family = [](ToolFormat f) {
    return f == ToolFormat::kMlxlinkJson ? ToolFormat::kMlxlink : f;
  };
  return family(command) == family(block);
}

}  // namespace readers_impl

namespace reader {

bool ParseCommandLine(std::string_view line, CommandLine* out) {
  using readers_impl::Basename;
  // Every line of a log comes here: most hold none of the tools' names, and cost no tokens.
  if (line.find("ethtool") == std::string_view::npos &&
      line.find("mlxlink") == std::string_view::npos &&
      line.find("show") == std::string_view::npos) {
    return false;
  }
  const std::vector<std::string_view> tokens = readers_impl::Tokens(Trim(line));
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view tool = Basename(tokens[i]);
    if (tool != "ethtool" && tool != "mlxlink" && tool != "show") continue;
    // Before it: nothing, sudo, or a prompt ending in #, $ or > (then perhaps sudo).
    size_t j = i;
    while (j > 0 && (tokens[j - 1] == "sudo" ||
                     (StartsWith(tokens[j - 1], "-") && j >= 2 && tokens[j - 2] == "sudo"))) {
      --j;
    }
    if (j > 0) {
      const char last = tokens[j - 1].back();
      if (last != '#' && last != '$' && last != '>') return false;
    }
    CommandLine c;
    c.text = std::string(line.substr(tokens[i].data() - line.data()));
    c.text = std::string(Trim(c.text));
    const std::vector<std::string_view> args(tokens.begin() + static_cast<long>(i) + 1,
                                             tokens.end());
    auto has = [&](std::string_view a) {
      return std::find(args.begin(), args.end(), a) != args.end();
    };
    if (tool == "ethtool") {
      if (has("--json") || has("-j")) return false;
      if (has("-m") || has("--module-info") || has("--dump-module-eeprom")) {
        c.format = ToolFormat::kEthtoolModule;
      } else if (has("--show-fec")) {
        c.format = ToolFormat::kEthtoolFec;
      } else if ((has("-S") || has("--statistics")) && (has("--groups") || has("--all-groups"))) {
        c.format = ToolFormat::kEthtoolStats;
      } else {
        return false;
      }
      for (std::string_view a : args) {
        if (!StartsWith(a, "-")) {
          c.device = std::string(a);
          break;
        }
      }
    } else if (tool == "mlxlink") {
      c.format = has("--json") ? ToolFormat::kMlxlinkJson : ToolFormat::kMlxlink;
      for (size_t k = 0; k < args.size(); ++k) {
        const std::string_view a = args[k];
        if ((a == "-d" || a == "--device") && k + 1 < args.size())
          c.device = std::string(args[k + 1]);
        if (StartsWith(a, "--device=")) c.device = std::string(a.substr(9));
        if ((a == "-p" || a == "--port") && k + 1 < args.size()) c.port = std::string(args[k + 1]);
        if (StartsWith(a, "--port=")) c.port = std::string(a.substr(7));
      }
    } else {
      // show interfaces transceiver eeprom|status [PORT], show interfaces counters fec-stats
      if (args.size() < 3) return false;
      static constexpr std::string_view kInterfaces[] = {"interfaces", "interface", "int",
                                                         "intf",       "inter",     "interf"};
      if (std::find(std::begin(kInterfaces), std::end(kInterfaces), args[0]) ==
          std::end(kInterfaces)) {
        return false;
      }
      size_t rest = 3;
      if (StartsWith(args[1], "trans") && StartsWith(args[2], "eeprom")) {
        c.format = ToolFormat::kSonicEeprom;
      } else if (StartsWith(args[1], "trans") && StartsWith(args[2], "status")) {
        c.format = ToolFormat::kSonicStatus;
      } else if (StartsWith(args[1], "counters") && args[2] == "fec-stats") {
        c.format = ToolFormat::kSonicFecStats;
      } else {
        return false;
      }
      for (; rest < args.size(); ++rest) {
        if (!StartsWith(args[rest], "-")) {
          c.device = std::string(args[rest]);
          break;
        }
      }
    }
    *out = std::move(c);
    return true;
  }
  return false;
}

}  // namespace reader

std::string_view ToolFormatName(ToolFormat format) {
  switch (format) {
    case ToolFormat::kEthtoolModule:
      return "ethtool -m";
    case ToolFormat::kEthtoolFec:
      return "ethtool --show-fec";
    case ToolFormat::kEthtoolStats:
      return "ethtool -S";
    case ToolFormat::kMlxlink:
      return "mlxlink";
    case ToolFormat::kMlxlinkJson:
      return "mlxlink --json";
    case ToolFormat::kSonicEeprom:
      return "sonic transceiver eeprom";
    case ToolFormat::kSonicStatus:
      return "sonic transceiver status";
    case ToolFormat::kSonicFecStats:
      return "sonic fec-stats";
  }
  return "unknown";
}

std::vector<std::string> ToolReading::Values(std::string_view key, std::string_view section) const {
  std::vector<std::string> out;
  for (const ToolField& f : fields) {
    if (f.key == key && (section.empty() || f.section == section)) out.push_back(f.value);
  }
  return out;
}

std::string ToolReading::Value(std::string_view key, std::string_view section) const {
  for (const ToolField& f : fields) {
    if (f.key == key && (section.empty() || f.section == section)) return f.value;
  }
  return "";
}

std::string ToolReading::Name() const {
  if (device.empty()) return "";
  return port.empty() ? device : absl::StrCat(device, " port ", port);
}

std::string ToolProblem::ToString(std::string_view source) const {
  return column > 0 ? absl::StrCat(std::string(source), ":", line, ":", column, ": ", message)
                    : absl::StrCat(std::string(source), ":", line, ": ", message);
}

namespace readers_impl {

// What ToolOutputReader keeps between lines.
struct ReaderState {
  ToolOutput out;
  size_t problems_left_out = 0;
  size_t readings_left_out = 0;
  size_t fields_left_out = 0;
  int fields_left_out_line = 0;

  bool open = false;
  ToolReading block;
  std::optional<reader::CommandLine> pending;

  // mlxlink: the current section, those seen, and a title waiting for its underline.
  std::string section;
  std::set<std::string> sections_seen;
  std::string candidate_title;
  // ethtool --show-fec: inside "Statistics:", the statistic whose lanes follow.
  bool statistics = false;
  std::string statistic;
  // SONiC eeprom: the sub-block of the last top-level key with an empty value; the last
  // top-level key (for continuation lines).
  std::string sub_block;
  std::string last_top_key;
  // SONiC fec-stats: the header, the columns from the rule under it, "Last cached time".
  std::string header;
  std::vector<std::pair<size_t, size_t>> spans;
  std::string cached_time;

  void Problems(std::vector<ToolProblem>&& problems) {
    for (ToolProblem& p : problems) {
      if (out.problems.size() < kMaxProblems) {
        out.problems.push_back(std::move(p));
      } else {
        ++problems_left_out;
      }
    }
  }

  void AddField(std::string section_name, std::string_view key, std::string_view value, int line,
                int column) {
    if (block.fields.size() >= kMaxFields) {
      if (fields_left_out++ == 0) fields_left_out_line = line;
      return;
    }
    block.fields.push_back(
        {std::move(section_name), std::string(key), std::string(value), line, column});
  }

  void Open(ToolFormat format, int line) {
    open = true;
    block = ToolReading();
    block.format = format;
    block.line = line;
    if (pending && SameToolFormat(pending->format, format)) {
      block.device = pending->device;
      block.port = pending->port;
      block.command = pending->text;
    }
    pending.reset();
    section.clear();
    sections_seen.clear();
    candidate_title.clear();
    statistics = false;
    statistic.clear();
    sub_block.clear();
    last_top_key.clear();
    header.clear();
    spans.clear();
  }

  static bool SameToolFormat(ToolFormat a, ToolFormat b) { return SameTool(a, b); }

  void Push(ToolReading&& r, std::vector<ToolProblem>&& problems) {
    Problems(std::move(problems));
    if (out.readings.size() >= kMaxReadings) {
      ++readings_left_out;
      return;
    }
    out.readings.push_back(std::move(r));
  }

  void Close() {
    if (!open) return;
    open = false;
    candidate_title.clear();
    if (fields_left_out > 0) {
      out.problems.push_back(
          {fields_left_out_line, 0,
           absl::StrCat(std::string(ToolFormatName(block.format)),
                        ": block too long: ", fields_left_out, " more lines not read")});
      fields_left_out = 0;
    }
    if (block.format == ToolFormat::kSonicFecStats) return;  // its rows are readings
    if (block.fields.empty()) return;
    std::vector<ToolProblem> problems;
    switch (block.format) {
      case ToolFormat::kEthtoolModule:
        reader::BuildEthtoolModule(block, problems);
        break;
      case ToolFormat::kEthtoolFec:
        reader::BuildEthtoolFec(block, problems);
        break;
      case ToolFormat::kEthtoolStats:
        reader::BuildEthtoolStats(block, problems);
        break;
      case ToolFormat::kMlxlink:
      case ToolFormat::kMlxlinkJson:
        reader::BuildMlxlink(block, problems);
        break;
      case ToolFormat::kSonicEeprom:
        reader::BuildSonicEeprom(block, problems);
        break;
      case ToolFormat::kSonicStatus:
        reader::BuildSonicStatus(block, problems);
        break;
      case ToolFormat::kSonicFecStats:
        break;
    }
    Push(std::move(block), std::move(problems));
  }

  // A row of fec-stats: cells cut by the columns of the rule under the header (without one:
  // header and row split on whitespace).
  void FecRow(std::string_view line, int n) {
    std::vector<std::pair<std::string, std::pair<std::string, int>>> cells;  // header, value, col
    if (!spans.empty()) {
      for (size_t i = 0; i < spans.size(); ++i) {
        auto cut = [&](std::string_view s, size_t from, size_t to) {
          if (from >= s.size()) return std::string_view();
          return s.substr(from, std::min(to, s.size()) - from);
        };
        // The last column takes the rest of the line; a value wider than its rule spills left.
        const size_t from = i == 0 ? 0 : spans[i - 1].second;
        const size_t to = i + 1 == spans.size() ? std::string_view::npos : spans[i].second;
        const std::string_view head = Trim(cut(header, spans[i].first, spans[i].second));
        const std::string_view raw = cut(line, from, to);
        const std::string_view value = Trim(raw);
        const int column = value.empty() ? static_cast<int>(from) + 1
                                         : static_cast<int>(value.data() - line.data()) + 1;
        cells.push_back({std::string(head), {std::string(value), column}});
      }
    } else {
      // Without a rule: header and row both split on whitespace.
      const std::vector<std::string_view> names = Tokens(header);
      const std::vector<std::string_view> values = Tokens(line);
      for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
        cells.push_back(
            {std::string(names[i]),
             {std::string(values[i]), static_cast<int>(values[i].data() - line.data()) + 1}});
      }
    }
    ToolReading r;
    r.format = ToolFormat::kSonicFecStats;
    r.line = n;
    r.command = block.command;
    for (auto& [name, cell] : cells) {
      if (name.empty()) continue;
      r.fields.push_back({"", name, cell.first, n, cell.second});
    }
    if (!cached_time.empty()) r.fields.push_back({"", "Last cached time", cached_time, n, 1});
    std::vector<ToolProblem> problems;
    reader::BuildSonicFecRow(r, problems);
    if (r.device.empty()) {
      problems.push_back({n, 1, "fec-stats: a row without an interface name"});
      Problems(std::move(problems));
      return;
    }
    Push(std::move(r), std::move(problems));
  }

  bool Continue(std::string_view line, std::string_view t, int n) {
    std::string_view key, value;
    int column = 0;
    switch (block.format) {
      case ToolFormat::kEthtoolModule:
        if (!SplitPadded(line, &key, &value, &column)) return false;
        AddField("", key, value, n, column);
        return true;
      case ToolFormat::kEthtoolFec: {
        if (t == "Statistics:") {
          statistics = true;
          return true;
        }
        if (!SplitColon(line, &key, &value, &column)) return false;
        if (!statistics) {
          if (key != "Configured FEC encodings" && key != "Supported/Configured FEC encodings" &&
              key != "Supported FEC encodings" && key != "Active FEC encoding") {
            return false;
          }
          AddField("", key, value, n, column);
          return true;
        }
        if (Indent(line) == 0) return false;
        if (StartsWith(key, "Lane ") && !statistic.empty()) {
          AddField("Statistics/" + statistic, key, value, n, column);
        } else {
          statistic = std::string(key);
          AddField("Statistics", key, value, n, column);
        }
        return true;
      }
      case ToolFormat::kEthtoolStats:
        if (!StatLine(t, &key, &value)) return false;
        AddField("", key, value, n, static_cast<int>(value.data() - line.data()) + 1);
        return true;
      case ToolFormat::kMlxlink:
      case ToolFormat::kMlxlinkJson: {
        if (t.empty() || IsDashes(t)) return true;
        if (reader::IsMlxlinkTitle(t)) {
          if (sections_seen.count(std::string(t)) > 0) return false;  // the next device's output
          StartSection(t);
          return true;
        }
        if (Indent(line) == 0 && SplitMlxlink(line, &key, &value, &column)) {
          AddField(section, key, value, n, column);
          return true;
        }
        if (LooksLikeTitle(line, t)) {
          candidate_title = std::string(t);
          return true;
        }
        return false;
      }
      case ToolFormat::kSonicEeprom: {
        const int indent = Indent(line);
        if (t.empty() || indent == 0) return false;
        const bool kv = SplitColon(line, &key, &value, &column);
        if (indent <= 8 && kv) {
          sub_block = value.empty() ? std::string(key) : std::string();
          last_top_key = std::string(key);
          AddField("", key, value, n, column);
          return true;
        }
        if (kv && !sub_block.empty() && indent <= 16) {
          AddField(sub_block, key, value, n, column);
          return true;
        }
        if (last_top_key.empty()) return false;
        // A value continued on the next line, aligned under it: one more value of that key.
        AddField("", last_top_key, t, n, indent + 1);
        return true;
      }
      case ToolFormat::kSonicStatus:
        if (t.empty() || Indent(line) == 0) return false;
        if (!SplitColon(line, &key, &value, &column)) return false;
        AddField("", key, value, n, column);
        return true;
      case ToolFormat::kSonicFecStats: {
        if (t.empty()) return false;
        if (spans.empty() && IsRule(t)) {
          for (size_t i = 0; i < line.size();) {
            if (line[i] != '-') {
              ++i;
              continue;
            }
            size_t j = i;
            while (j < line.size() && line[j] == '-') ++j;
            spans.emplace_back(i, j);
            i = j;
          }
          return true;
        }
        if (IsFecStatsHeader(t) || IsRule(t)) return false;
        if (!LooksLikeInterface(Tokens(t).front())) return false;
        FecRow(line, n);
        return true;
      }
    }
    return false;
  }

  void StartSection(std::string_view title) {
    section = std::string(title);
    sections_seen.insert(section);
  }

  bool Start(std::string_view line, std::string_view t, int n) {
    if (t.empty()) return false;
    std::string_view device, key, value;
    int column = 0;
    if (HeaderFor(t, "FEC parameters for ", &device)) {
      Open(ToolFormat::kEthtoolFec, n);
      block.device = std::string(device);
      return true;
    }
    if (HeaderFor(t, "Standard stats for ", &device)) {
      Open(ToolFormat::kEthtoolStats, n);
      block.device = std::string(device);
      return true;
    }
    if (reader::IsMlxlinkTitle(t)) {
      Open(ToolFormat::kMlxlink, n);
      StartSection(t);
      return true;
    }
    if (SonicEepromHeader(t, &device)) {
      Open(ToolFormat::kSonicEeprom, n);
      block.device = std::string(device);
      AddField("", "SFP EEPROM", t.substr(device.size() + 13), n,
               static_cast<int>(device.size()) + 14);
      return true;
    }
    if (SonicPortHeader(t, pending && pending->format == ToolFormat::kSonicStatus)) {
      Open(ToolFormat::kSonicStatus, n);
      block.device = std::string(t.substr(0, t.size() - 1));
      return true;
    }
    if (IsFecStatsHeader(t)) {
      Open(ToolFormat::kSonicFecStats, n);
      header = std::string(line);
      return true;
    }
    if (StartsWith(t, "Last cached time was ")) {
      cached_time = std::string(Trim(t.substr(21)));
      return true;
    }
    if (SplitPadded(line, &key, &value, &column) &&
        (IsEthtoolModuleStart(key, value) ||
         (pending && pending->format == ToolFormat::kEthtoolModule))) {
      Open(ToolFormat::kEthtoolModule, n);
      AddField("", key, value, n, column);
      return true;
    }
    return false;
  }

  bool Feed(std::string_view raw, int n) {
    // A copy only for a line with ANSI codes or a CR.
    std::string stripped;
    std::string_view line = raw;
    if (raw.find('\x1b') != std::string_view::npos || (!raw.empty() && raw.back() == '\r')) {
      stripped = StripAnsi(raw);
      line = stripped;
    }
    const std::string_view t = Trim(line);
    if (open && !candidate_title.empty()) {
      const std::string title = std::move(candidate_title);
      candidate_title.clear();
      if (IsDashes(t)) {
        StartSection(title);
        ++out.lines;
        return true;
      }
    }
    reader::CommandLine command;
    if (reader::ParseCommandLine(t, &command)) {
      Close();
      pending = std::move(command);
      cached_time.clear();
      ++out.lines;
      return true;
    }
    // JSON (mlxlink --json is read whole; rdma -j and logs' JSON are not ours).
    if (!t.empty() && (t[0] == '{' || t[0] == '}' || t[0] == '"' || t[0] == '[' || t[0] == ']')) {
      Close();
      pending.reset();
      return false;
    }
    if (open && Continue(line, t, n)) {
      ++out.lines;
      return true;
    }
    Close();
    if (Start(line, t, n)) {
      ++out.lines;
      return true;
    }
    if (!t.empty()) {
      pending.reset();
      cached_time.clear();
    }
    return false;
  }

  void Finish() {
    Close();
    if (readings_left_out > 0) {
      out.problems.push_back({out.readings.back().line, 0,
                              absl::StrCat("and ", readings_left_out, " more readings not kept")});
      readings_left_out = 0;
    }
    if (problems_left_out > 0) {
      out.problems.push_back(
          {out.problems.back().line, 0, absl::StrCat("and ", problems_left_out, " more problems")});
      problems_left_out = 0;
    }
  }
};

}  // namespace readers_impl

struct ToolOutputReader::State : readers_impl::ReaderState {};

ToolOutputReader::ToolOutputReader() : state_(std::make_unique<State>()) {}
ToolOutputReader::~ToolOutputReader() = default;
ToolOutputReader::ToolOutputReader(ToolOutputReader&&) noexcept = default;
ToolOutputReader& ToolOutputReader::operator=(ToolOutputReader&&) noexcept = default;

bool ToolOutputReader::Feed(std::string_view line, int line_number) {
  return state_->Feed(line, line_number);
}

void ToolOutputReader::Finish() { state_->Finish(); }

ToolOutput ToolOutputReader::TakeOutput() { return std::move(state_->out); }

ToolOutput ReadToolOutput(std::string_view text) {
  if (LooksLikeMlxlinkJson(text.substr(0, 64 * 1024))) return ReadMlxlinkJson(text);
  ToolOutputReader reader;
  int n = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    reader.Feed(text.substr(at, end - at), ++n);
    at = end + 1;
  }
  reader.Finish();
  return reader.TakeOutput();
}

std::vector<ToolFormat> DetectFormats(std::string_view text) {
  std::vector<ToolFormat> formats;
  for (const ToolReading& r : ReadToolOutput(text).readings) {
    if (std::find(formats.begin(), formats.end(), r.format) == formats.end()) {
      formats.push_back(r.format);
    }
  }
  return formats;
}

}  // namespace railwatch::optics
