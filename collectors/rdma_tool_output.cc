#include "collectors/rdma_tool_output.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "collectors/rdma_tool_json.h"
#include "common/vocabulary.h"

namespace railwatch {
namespace {

// Problems kept per input; the rest are counted in the last one.
constexpr size_t kMaxProblems = 100;

absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }
bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }
bool EndsWith(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

}  // namespace

bool IsRdmaAttributeKey(std::string_view key) {
  static constexpr std::string_view kKeys[] = {
      "state",  "physical_state", "netdev", "netdev_index", "subnet_prefix", "lid",
      "sm_lid", "lmc",            "caps",   "link_layer",   "ifindex",       "ifname",
      "port",   "node_guid",      "sys_image_guid", "cntn", "qp-type",      "pid",
      "comm",   "lqpn",           "mode",   "type"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

std::string_view TrimRdmaText(std::string_view s) {
  absl::string_view t = absl::StripAsciiWhitespace(absl::string_view(s.data(), s.size()));
  return {t.data(), t.size()};
}

std::string QuoteToken(std::string_view token) {
  return absl::StrCat("'", A(token.substr(0, 40)), token.size() > 40 ? "...'" : "'");
}

namespace {

bool IsAttributeKey(std::string_view key) { return IsRdmaAttributeKey(key); }
std::string Quote(std::string_view token) { return QuoteToken(token); }

bool IsNameLike(std::string_view token) {
  if (token.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(token[0]))) return false;
  return std::all_of(token.begin(), token.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
           c == '.';
  });
}

bool ParseU64(std::string_view token, uint64_t* value) {
  return !token.empty() && absl::ascii_isdigit(static_cast<unsigned char>(token[0])) &&
         absl::SimpleAtoi(absl::string_view(token.data(), token.size()), value);
}

bool IsNumber(std::string_view token) {
  uint64_t ignored;
  return ParseU64(token, &ignored);
}

std::vector<std::string_view> Tokens(std::string_view line) {
  std::vector<std::string_view> out;
  for (absl::string_view t : absl::StrSplit(absl::string_view(line.data(), line.size()),
                                            absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    out.emplace_back(t.data(), t.size());
  }
  return out;
}

// ibstatus's "5: LinkUp" -> "LINK_UP", "4: ACTIVE" -> "ACTIVE": the names `rdma link` prints.
std::string IbstatusStateName(std::string_view value) {
  size_t colon = value.find(':');
  if (colon != std::string_view::npos) value = TrimRdmaText(value.substr(colon + 1));
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (i > 0 && absl::ascii_isupper(static_cast<unsigned char>(c)) &&
        absl::ascii_islower(static_cast<unsigned char>(value[i - 1]))) {
      out.push_back('_');
    }
    out.push_back(c == ' ' ? '_' : absl::ascii_toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

// `Infiniband device 'mlx5_0' port 1 status:` -> device, port.
bool ParseIbstatusHeader(std::string_view t, std::string* device, uint64_t* port) {
  constexpr std::string_view kHead = "Infiniband device '";
  if (!StartsWith(t, kHead) || !EndsWith(t, " status:")) return false;
  t.remove_prefix(kHead.size());
  size_t quote = t.find("' port ");
  if (quote == std::string_view::npos || !IsNameLike(t.substr(0, quote))) return false;
  std::string_view number = t.substr(quote + 7, t.size() - quote - 7 - 8);
  if (!ParseU64(number, port) || *port > UINT32_MAX) return false;
  *device = std::string(t.substr(0, quote));
  return true;
}

}  // namespace

std::string_view RdmaCounterCanonicalName(std::string_view counter) {
  // The sysfs collector's hw_counters sources: `rdma statistic` prints exactly those files.
  static const auto* names = [] {
    auto* map = new absl::flat_hash_map<std::string, std::string_view>();
    for (const MetricSpec& spec : CanonicalMetrics()) {
      for (const SysfsSource& source : spec.sysfs) {
        if (StartsWith(source.path, "hw_counters/")) {
          map->try_emplace(A(source.path.substr(sizeof("hw_counters/") - 1)), spec.name);
        }
      }
    }
    return map;
  }();
  auto it = names->find(A(counter));
  return it == names->end() ? std::string_view() : it->second;
}

bool IsRdmaCommandEcho(std::string_view line) {
  std::string_view t = TrimRdmaText(line);
  if (t.empty()) return false;
  // `# rdma ...` (root prompt or a comment), `$ rdma ...`, or a bare prompt `[root@h ~]# `.
  if (t.front() == '#' || t.front() == '$') return true;
  if (t.back() == '#' || t.back() == '$' || t.back() == '>') return true;
  std::vector<std::string_view> tokens = Tokens(t);
  if (tokens.front() == "sudo") return true;
  // `rdma` (or a path to it) followed by an option or one of its objects, or by nothing.
  static constexpr std::string_view kObjects[] = {"statistic", "stat", "link", "dev", "resource",
                                                  "res", "system", "sys", "help"};
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] != "rdma" && !EndsWith(tokens[i], "/rdma")) continue;
    if (i + 1 == tokens.size() || StartsWith(tokens[i + 1], "-") ||
        std::find(std::begin(kObjects), std::end(kObjects), tokens[i + 1]) != std::end(kObjects)) {
      return true;
    }
  }
  return false;
}

const RdmaToolCounter* RdmaToolPort::Counter(std::string_view name) const {
  for (const RdmaToolCounter& c : counters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const std::string* RdmaToolPort::Attribute(std::string_view name) const {
  for (const auto& [key, value] : attributes) {
    if (key == name) return &value;
  }
  return nullptr;
}

uint64_t RdmaToolPort::Value(std::string_view name) const {
  const RdmaToolCounter* c = Counter(name);
  return c ? c->value : 0;
}

std::string RdmaToolPort::Name() const { return absl::StrCat(device, "/", port); }

struct RdmaToolParser::State {
  RdmaToolOutput out;
  int problems_left_out = 0;

  // The open `link DEV/PORT` record; `discard` when its header was bad (its continuations are
  // still taken, so that one bad header is one problem).
  bool record_open = false;
  bool discard = false;
  bool ibstatus = false;  // an `ibstatus` block: `key: value` lines
  RdmaToolPort record;
  std::string pending_name;  // a name that ended its line; its value may start the next
  int pending_line = 0;

  RdmaJsonDocument json;  // an open `rdma -j` document

  void Problem(int line, std::string reason) {
    if (out.problems.size() < kMaxProblems) {
      out.problems.push_back({line, std::move(reason)});
    } else {
      ++problems_left_out;
    }
  }

  void AddPair(std::string_view name, std::string_view value, int line) {
    uint64_t v;
    if (IsAttributeKey(name)) {
      record.attributes.emplace_back(std::string(name), std::string(value));
    } else if (ParseU64(value, &v)) {
      record.counters.push_back({std::string(name), v, RdmaCounterCanonicalName(name)});
    } else {
      Problem(line, absl::StrCat("counter ", Quote(name), ": value ", Quote(value),
                                 " is not an unsigned 64-bit integer"));
    }
  }

  // `name value` pairs; `caps: <A, B>` is one attribute.
  void ParsePairs(const std::vector<std::string_view>& tokens, size_t i, int line) {
    if (!pending_name.empty() && i < tokens.size()) {
      if (IsNumber(tokens[i])) {
        AddPair(pending_name, tokens[i], line);
        ++i;
      } else {
        Problem(pending_line, absl::StrCat("counter ", Quote(pending_name), " has no value"));
      }
      pending_name.clear();
    }
    while (i < tokens.size()) {
      std::string_view name = tokens[i];
      if (name.size() > 1 && name.back() == ':') name.remove_suffix(1);
      if (!IsNameLike(name)) {
        Problem(line, absl::StrCat("expected a counter or attribute name, got ", Quote(name)));
        ++i;
        continue;
      }
      if (i + 1 == tokens.size()) {
        pending_name = std::string(name);
        pending_line = line;
        return;
      }
      std::string_view value = tokens[i + 1];
      if (StartsWith(value, "<")) {  // caps: <CM, IP_BASED_GID_TABLE>
        size_t end = i + 1;
        while (end + 1 < tokens.size() && !EndsWith(tokens[end], ">")) ++end;
        std::string joined;
        for (size_t k = i + 1; k <= end; ++k) {
          absl::StrAppend(&joined, k > i + 1 ? " " : "", A(tokens[k]));
        }
        record.attributes.emplace_back(std::string(name), joined);
        i = end + 1;
        continue;
      }
      if (!IsAttributeKey(name) && !IsNumber(value) && IsNameLike(value) &&
          (i + 2 == tokens.size() || IsNumber(tokens[i + 2]))) {
        // `a 1 b c 2`: b lost its value; c starts the next pair.
        Problem(line, absl::StrCat("counter ", Quote(name), " has no value"));
        ++i;
        continue;
      }
      AddPair(name, value, line);
      i += 2;
    }
  }

  void CloseRecord() {
    if (!record_open) return;
    if (!pending_name.empty()) {
      Problem(pending_line, absl::StrCat("counter ", Quote(pending_name), " has no value"));
      pending_name.clear();
    }
    if (!discard) out.ports.push_back(std::move(record));
    record = RdmaToolPort();
    record_open = false;
    discard = false;
    ibstatus = false;
  }

  void OpenIbstatus(std::string device, uint64_t port, int line) {
    CloseRecord();
    record_open = true;
    ibstatus = true;
    record.line = line;
    record.device = std::move(device);
    record.port = static_cast<uint32_t>(port);
  }

  // `        phys state:      5: LinkUp`; false when the line is not one.
  bool IbstatusLine(std::string_view t) {
    size_t colon = t.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    std::string key(TrimRdmaText(t.substr(0, colon)));
    std::string_view value = TrimRdmaText(t.substr(colon + 1));
    std::replace(key.begin(), key.end(), ' ', '_');
    if (!IsNameLike(key)) return false;
    if (key == "state" || key == "phys_state") {
      record.attributes.emplace_back(key == "state" ? "state" : "physical_state",
                                     IbstatusStateName(value));
    } else {
      record.attributes.emplace_back(key == "base_lid" ? "lid" : key, std::string(value));
    }
    return true;
  }

  void OpenRecord(const std::vector<std::string_view>& tokens, int line) {
    CloseRecord();
    record_open = true;
    record.line = line;
    std::string_view devport = tokens.size() > 1 ? tokens[1] : std::string_view();
    size_t slash = devport.rfind('/');
    uint64_t port = 0;
    if (slash == std::string_view::npos || slash == 0 ||
        !IsNameLike(devport.substr(0, slash)) || !ParseU64(devport.substr(slash + 1), &port) ||
        port > UINT32_MAX) {
      Problem(line, absl::StrCat("expected DEV/PORT after 'link', got ",
                                 devport.empty() ? "nothing" : Quote(devport)));
      discard = true;
      return;
    }
    record.device = std::string(devport.substr(0, slash));
    record.port = static_cast<uint32_t>(port);
    ParsePairs(tokens, 2, line);
  }

  // A continuation is `name value ...` (or the value of a name that ended the last line).
  bool IsContinuation(const std::vector<std::string_view>& tokens) const {
    if (tokens.empty()) return false;
    if (!pending_name.empty()) return IsNumber(tokens[0]);
    std::string_view name = tokens[0];
    if (name.size() > 1 && name.back() == ':') name.remove_suffix(1);
    if (!IsNameLike(name) || name == "link") return false;
    return tokens.size() == 1 || IsNumber(tokens[1]) || IsAttributeKey(name);
  }

};

RdmaToolParser::RdmaToolParser() : state_(std::make_unique<State>()) {}
RdmaToolParser::~RdmaToolParser() = default;
RdmaToolParser::RdmaToolParser(RdmaToolParser&&) noexcept = default;
RdmaToolParser& RdmaToolParser::operator=(RdmaToolParser&&) noexcept = default;

bool RdmaToolParser::Feed(std::string_view line, int line_number) {
  State& s = *state_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  auto problem = [&s](int l, std::string reason) { s.Problem(l, std::move(reason)); };
  if (s.json.open()) {
    ++s.out.lines;
    s.json.Feed(line, line_number, s.out.ports, problem);
    return true;
  }
  std::string_view t = TrimRdmaText(line);
  if (RdmaJsonDocument::IsStart(t)) {
    s.CloseRecord();
    ++s.out.lines;
    s.json.Start(line_number);
    s.json.Feed(line, line_number, s.out.ports, problem);
    return true;
  }
  std::string ib_device;
  uint64_t ib_port;
  if (ParseIbstatusHeader(t, &ib_device, &ib_port)) {
    ++s.out.lines;
    s.OpenIbstatus(std::move(ib_device), ib_port, line_number);
    return true;
  }
  if (s.record_open && s.ibstatus && !t.empty() && (line.front() == ' ' || line.front() == '\t') &&
      s.IbstatusLine(t)) {
    ++s.out.lines;
    return true;
  }
  std::vector<std::string_view> tokens = Tokens(t);
  if (!tokens.empty() && tokens[0] == "link") {
    ++s.out.lines;
    s.OpenRecord(tokens, line_number);
    return true;
  }
  if (s.record_open && !s.ibstatus && !line.empty() && (line.front() == ' ' || line.front() == '\t') &&
      s.IsContinuation(tokens)) {
    ++s.out.lines;
    s.ParsePairs(tokens, 0, line_number);
    return true;
  }
  s.CloseRecord();
  return false;
}

void RdmaToolParser::Finish() {
  State& s = *state_;
  s.CloseRecord();
  s.json.Finish([&s](int l, std::string reason) { s.Problem(l, std::move(reason)); });
  if (s.problems_left_out > 0) {
    s.out.problems.push_back(
        {s.out.problems.back().line, absl::StrCat("and ", s.problems_left_out, " more problems")});
    s.problems_left_out = 0;
  }
}

const RdmaToolOutput& RdmaToolParser::output() const { return state_->out; }

RdmaToolOutput RdmaToolParser::TakeOutput() { return std::move(state_->out); }

RdmaToolOutput ParseRdmaToolOutput(std::string_view text) {
  RdmaToolParser parser;
  if (text.empty()) return parser.TakeOutput();
  std::vector<RdmaToolProblem> other;
  int skipped = 0;
  // A final newline ends the last line; it does not start another.
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  int n = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++n;
    std::string_view l(line.data(), line.size());
    if (parser.Feed(l, n)) continue;
    if (TrimRdmaText(l).empty() || IsRdmaCommandEcho(l)) {
      ++skipped;
    } else if (other.size() < kMaxProblems) {
      other.push_back({n, absl::StrCat("not rdma output (expected 'link DEV/PORT ...' or "
                                       "`rdma -j` JSON): ",
                                       Quote(TrimRdmaText(l)))});
    }
  }
  parser.Finish();
  RdmaToolOutput out = parser.TakeOutput();
  out.skipped = skipped;
  out.problems.insert(out.problems.end(), other.begin(), other.end());
  std::stable_sort(out.problems.begin(), out.problems.end(),
                   [](const RdmaToolProblem& a, const RdmaToolProblem& b) { return a.line < b.line; });
  return out;
}

}  // namespace railwatch
