#include "cli/triage.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/triage_findings.h"
#include "cli/triage_rdma.h"
#include "collectors/rdma_tool_output.h"
#include "common/text.h"
#include "logs/log_fields.h"
#include "logs/log_parser.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace {

using logs::LogEvent;
using logs::LogParser;
using Json = nlohmann::ordered_json;

// Longest line read; the parser itself looks at the first 64 KiB of it and counts the cut.
constexpr size_t kMaxLineBytes = 1 << 20;

struct Input {
  std::string name;
  LogParser::Stats stats;
  RdmaToolOutput rdma;  // the rdma tool output among its lines
  std::string error;  // why it could not be read, "" when it was
  int exit_code = kExitOk;
};

// Feeds `in` line by line, in chunks: a file of any size or shape, even one without a single
// newline, costs bounded memory. Lines of `rdma` tool output go to `rdma`, the rest to `parser`
// (with their true line numbers).
bool FeedStream(std::istream& in, LogParser& parser, RdmaToolParser& rdma,
                std::vector<LogEvent>& events) {
  std::string chunk(64 * 1024, '\0');
  std::string line;
  bool cut = false;
  int line_number = 0;
  bool renumber = false;
  auto feed = [&](const std::string& l) {
    if (rdma.Feed(l, ++line_number)) {
      renumber = true;
      return;
    }
    if (renumber) parser.SetNextLineNumber(line_number);
    renumber = false;
    parser.Feed(l, events);
  };
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    size_t n = static_cast<size_t>(in.gcount());
    size_t start = 0;
    while (start < n) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data() + start, '\n', n - start));
      size_t end = nl ? static_cast<size_t>(nl - chunk.data()) : n;
      if (!cut) {
        size_t take = std::min(end - start, kMaxLineBytes - line.size());
        line.append(chunk, start, take);
        cut = take < end - start;
      }
      if (nl == nullptr) break;
      feed(line);
      line.clear();
      cut = false;
      start = end + 1;
    }
  }
  if (!line.empty()) feed(line);
  parser.Finish(events);
  rdma.Finish();
  return !in.bad();
}

Json FieldValue(const LogEvent& e, const std::string& key, const std::string& value) {
  uint64_t u;
  // rdma tool counters (and numeric attributes such as lid) are numbers.
  if (absl::StartsWith(e.kind, "rdma.") && !value.empty() && absl::ascii_isdigit(value[0]) &&
      absl::SimpleAtoi(value, &u)) {
    return u;
  }
  if (logs::IsNumericField(key)) {
    int64_t i;
    if (absl::SimpleAtoi(value, &i)) return i;
    double d;
    if (absl::SimpleAtod(value, &d) && std::isfinite(d)) return d;
  }
  return value;
}

std::string Dump(const Json& j) {
  // Logs hold any bytes: invalid UTF-8 becomes U+FFFD rather than an exception.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json EventJson(const LogEvent& e) {
  Json j;
  j["kind"] = e.kind;
  j["source"] = e.source;
  j["line"] = e.line;
  if (e.time_unix_nano != 0) j["time"] = FormatTime(e.time_unix_nano);
  for (const auto& [key, value] : e.fields) j[key] = FieldValue(e, key, value);
  j["raw"] = e.raw;
  return j;
}

Json FindingJson(const TriageFinding& f) {
  Json j;
  j["kind"] = "triage.finding";
  j["level"] = LevelName(f.level);
  j["title"] = f.title;
  j["event_kind"] = f.kind;
  j["count"] = f.count;
  j["first_seen"] = f.first_seen;
  if (f.first_time_unix_nano != 0) j["time"] = FormatTime(f.first_time_unix_nano);
  Json details = Json::object();
  for (const auto& [label, text] : f.details) details[label] = text;
  j["details"] = details;
  if (!f.cause.empty()) j["cause"] = f.cause;
  j["next"] = f.next;
  return j;
}

// Words of `text` in lines of at most `width`, every line after the first indented by `indent`.
std::string Wrap(const std::string& text, size_t indent, size_t width = 100) {
  std::string out, line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, out.empty() ? "" : "\n" + std::string(indent, ' '), line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  absl::StrAppend(&out, out.empty() ? "" : "\n" + std::string(indent, ' '), line);
  return out;
}

// Lines, port records and problems of the rdma tool output in every input.
struct RdmaTotals {
  int lines = 0;
  size_t ports = 0;
  size_t problems = 0;
};

RdmaTotals SumRdma(const std::vector<Input>& inputs) {
  RdmaTotals t;
  for (const Input& i : inputs) {
    t.lines += i.rdma.lines;
    t.ports += i.rdma.ports.size();
    t.problems += i.rdma.problems.size();
  }
  return t;
}

void PrintHuman(const std::vector<Input>& inputs, const LogParser::Stats& total,
                const TriageReport& report, std::ostream& out) {
  const RdmaTotals rdma = SumRdma(inputs);
  std::vector<std::string> names;
  for (const Input& i : inputs) names.push_back(i.name);
  out << "railwatch triage: " << absl::StrJoin(names, ", ") << "\n";
  out << "Read " << total.lines << " lines: " << total.recognized << " parsed into " << total.events
      << " events, " << total.known << " known but not useful, " << total.blank << " blank, "
      << total.unknown << " not understood (skipped), " << total.malformed << " malformed.\n";
  if (rdma.lines > 0) {
    out << "Read " << rdma.lines << " lines of rdma tool output: " << rdma.ports
        << " port records, " << rdma.problems << " problems.\n";
  }
  for (const Input& i : inputs) {
    if (!i.error.empty()) out << "Could not read " << i.name << ": " << i.error << ".\n";
  }
  out << "\n";

  bool failed =
      !report.findings.empty() && report.findings[0].level == TriageFinding::Level::kFailure;
  if (report.findings.empty()) {
    out << (total.events == 0 && rdma.ports == 0
                ? "Nothing recognisable: no NCCL, PyTorch, NCCL RAS, nccl-tests or rdma tool "
                  "lines in the input.\n"
                : "No failure found.\n");
  } else if (!failed) {
    out << "No failure found.\n\n";
  }
  constexpr size_t kIndent = 20;
  for (const TriageFinding& f : report.findings) {
    out << LevelName(f.level) << "  " << f.title << "\n";
    auto row = [&](const std::string& label, const std::string& text) {
      std::string pad(kIndent - 6 > label.size() ? kIndent - 6 - label.size() : 1, ' ');
      out << "      " << label << pad << Wrap(text, kIndent) << "\n";
    };
    std::string when = f.first_seen;
    if (f.first_time_unix_nano != 0) {
      absl::StrAppend(&when, " at ", FormatTime(f.first_time_unix_nano));
    }
    row("first seen", when);
    for (const auto& [label, text] : f.details) row(label, text);
    if (!f.cause.empty()) row("likely cause", f.cause);
    for (size_t i = 0; i < f.next.size(); ++i) {
      out << "      " << (i == 0 ? "next" : "    ") << std::string(kIndent - 10, ' ') << f.next[i]
          << "\n";
    }
    out << "\n";
  }
  if (!report.context.empty()) {
    out << "Context\n";
    for (const std::string& c : report.context) out << "  " << Wrap(c, 2) << "\n";
  }
}

}  // namespace

int RunTriage(const std::vector<std::string>& files, bool json, std::istream& in, std::ostream& out,
              std::ostream& err) {
  if (files.empty()) {
    err << "usage: railwatch triage FILE... [--json]   (- reads standard input)\n";
    return kExitUsage;
  }
  std::vector<Input> inputs;
  std::vector<LogEvent> events;
  LogParser::Stats total;
  for (const std::string& file : files) {
    Input input;
    input.name = file;
    LogParser parser(file);
    RdmaToolParser rdma;
    std::error_code ec;
    if (file == "-") {
      if (!FeedStream(in, parser, rdma, events)) input.error = "read error on standard input";
    } else if (!std::filesystem::exists(file, ec)) {
      input.error = "no such file";
      input.exit_code = kExitNotFound;
    } else if (std::filesystem::is_directory(file, ec)) {
      input.error = "is a directory";
      input.exit_code = kExitError;
    } else {
      std::ifstream f(file, std::ios::binary);
      if (!f) {
        input.error = absl::StrCat("cannot open: ", std::strerror(errno));
      } else if (!FeedStream(f, parser, rdma, events)) {
        input.error = absl::StrCat("read error: ", std::strerror(errno));
      }
    }
    if (!input.error.empty()) {
      if (input.exit_code == kExitOk) input.exit_code = kExitError;
      err << "railwatch triage: " << file << ": " << input.error << "\n";
    }
    input.stats = parser.stats();
    for (const auto& p : input.stats.problems) {
      err << "railwatch triage: " << file << ":" << p.line << ": " << p.reason << "\n";
    }
    input.rdma = rdma.TakeOutput();
    for (const RdmaToolProblem& p : input.rdma.problems) {
      err << "railwatch triage: " << file << ":" << p.line << ": rdma output: " << p.reason
          << "\n";
    }
    std::vector<LogEvent> rdma_events = RdmaToolEvents(input.rdma, file);
    events.insert(events.end(), std::make_move_iterator(rdma_events.begin()),
                  std::make_move_iterator(rdma_events.end()));
    total.lines += input.stats.lines;
    total.recognized += input.stats.recognized;
    total.known += input.stats.known;
    total.blank += input.stats.blank;
    total.unknown += input.stats.unknown;
    total.malformed += input.stats.malformed;
    total.truncated += input.stats.truncated;
    total.events += input.stats.events;
    inputs.push_back(std::move(input));
  }

  TriageReport report = AnalyzeEvents(events);
  int failures = 0, warnings = 0, unreadable = 0, exit_code = kExitOk;
  for (const TriageFinding& f : report.findings) {
    failures += f.level == TriageFinding::Level::kFailure;
    warnings += f.level == TriageFinding::Level::kWarning;
  }
  for (const Input& i : inputs) {
    if (i.exit_code != kExitOk) {
      ++unreadable;
      if (exit_code == kExitOk) exit_code = i.exit_code;
    }
  }

  if (json) {
    for (const LogEvent& e : events) out << Dump(EventJson(e)) << "\n";
    for (const TriageFinding& f : report.findings) out << Dump(FindingJson(f)) << "\n";
    Json s;
    s["kind"] = "triage.summary";
    s["verdict"] = failures > 0 ? "failure" : "no_failure";
    s["files"] = inputs.size();
    s["files_unreadable"] = unreadable;
    s["lines"] = total.lines;
    s["recognized"] = total.recognized;
    s["known"] = total.known;
    s["blank"] = total.blank;
    s["skipped"] = total.unknown;
    s["malformed"] = total.malformed;
    s["truncated"] = total.truncated;
    s["events"] = total.events;
    const RdmaTotals rdma = SumRdma(inputs);
    s["rdma_lines"] = rdma.lines;
    s["rdma_ports"] = rdma.ports;
    s["rdma_problems"] = rdma.problems;
    s["failures"] = failures;
    s["warnings"] = warnings;
    s["context"] = report.context;
    out << Dump(s) << "\n";
  } else {
    PrintHuman(inputs, total, report, out);
  }
  return exit_code;
}

}  // namespace railwatch
