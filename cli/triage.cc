#include "cli/triage.h"

#include <cmath>
#include <istream>
#include <ostream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "common/text.h"
#include "logs/log_fields.h"
#include "nlohmann/json.hpp"
#include "triage/findings.h"
#include "triage/inputs.h"
#include "triage/optics.h"
#include "triage/playbook_replay.h"

namespace railwatch {
namespace {

using logs::LogEvent;
using logs::LogParser;
using Input = TriageInput;
using Json = nlohmann::ordered_json;

// An optics.* field: text, a number, or one number per lane (null for a lane not read).
Json OpticsFieldValue(const std::string& key, const std::string& value) {
  auto number = [](absl::string_view v) -> Json {
    uint64_t u;
    int64_t i;
    double d;
    if (absl::SimpleAtoi(v, &u)) return u;
    if (absl::SimpleAtoi(v, &i)) return i;
    if (absl::SimpleAtod(v, &d) && std::isfinite(d)) return d;
    return nullptr;
  };
  switch (OpticsFieldTypeOf(key)) {
    case OpticsFieldType::kNumber: {
      Json n = number(value);
      return n.is_null() ? Json(value) : n;
    }
    case OpticsFieldType::kNumberList: {
      Json list = Json::array();
      for (absl::string_view item : absl::StrSplit(value, ',')) list.push_back(number(item));
      return list;
    }
    case OpticsFieldType::kText:
      break;
  }
  return value;
}

Json FieldValue(const LogEvent& e, const std::string& key, const std::string& value) {
  if (absl::StartsWith(e.kind, "optics.")) return OpticsFieldValue(key, value);
  uint64_t u;
  // rdma tool counters (and numeric attributes such as lid) are numbers.
  if ((absl::StartsWith(e.kind, "rdma.") || absl::StartsWith(e.kind, "ib.")) && !value.empty() &&
      absl::ascii_isdigit(value[0]) &&
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

Json DiagnosisJson(const TriageDiagnosis& d) {
  Json j;
  j["playbook"] = d.playbook;
  j["severity"] = d.severity;
  j["summary"] = d.summary;
  j["culprit"] = d.culprit;
  j["runbook"] = d.runbook;
  j["commands"] = d.commands;
  j["runbook_text"] = d.runbook_text;
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
  if (!f.meaning.empty()) j["meaning"] = f.meaning;
  j["next"] = f.next;
  Json diagnoses = Json::array();
  for (const TriageDiagnosis& d : f.diagnoses) diagnoses.push_back(DiagnosisJson(d));
  j["diagnoses"] = diagnoses;
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
  size_t ib_records = 0;
  for (const Input& i : inputs) {
    if (i.ib_kind.empty()) continue;
    ib_records += i.ib_records;
    out << "Read " << i.name << " as " << i.ib_kind << " output: " << i.ib_records
        << " records.\n";
  }
  size_t optics_readings = 0;
  for (const Input& i : inputs) {
    if (i.optics_readings == 0 && i.optics_problems == 0) continue;
    optics_readings += i.optics_readings;
    out << "Read " << i.optics_lines << " lines of optics tool output in " << i.name << " ("
        << absl::StrJoin(i.optics_tools, ", ") << "): " << i.optics_readings << " readings, "
        << i.optics_problems << " problems.\n";
  }
  for (const Input& i : inputs) {
    if (i.kernel.lines == 0) continue;
    out << "Read " << i.kernel.lines << " lines of kernel messages in " << i.name << ": "
        << i.kernel.events << " NIC and PCIe events.\n";
  }
  for (const Input& i : inputs) {
    if (!i.error.empty()) out << "Could not read " << i.name << ": " << i.error << ".\n";
  }
  out << "\n";

  bool failed =
      !report.findings.empty() && report.findings[0].level == TriageFinding::Level::kFailure;
  if (report.findings.empty()) {
    out << (total.events == 0 && rdma.ports == 0 && ib_records == 0 && optics_readings == 0
                ? "Nothing recognisable: no NCCL, PyTorch, NCCL RAS, nccl-tests, rdma or optics "
                  "tool lines in the input.\n"
                : "No failure found.\n");
  } else if (!failed) {
    out << "No failure found.\n\n";
  }
  constexpr size_t kIndent = 20;
  std::set<std::string> printed;  // diagnoses whose runbook was printed
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
    if (!f.meaning.empty()) row("meaning", f.meaning);
    for (size_t i = 0; i < f.next.size(); ++i) {
      out << "      " << (i == 0 ? "next" : "    ") << std::string(kIndent - 10, ' ') << f.next[i]
          << "\n";
    }
    // The diagnosis: the playbook these events fire, its runbook and the runbook's commands
    // (printed in full once; a later finding of the same diagnosis refers back to it).
    for (const TriageDiagnosis& d : f.diagnoses) {
      const std::string id = d.playbook + "\n" + d.culprit;
      row("playbook", absl::StrCat(d.playbook, " (", d.severity, "): ", d.summary));
      if (!printed.insert(id).second) {
        row("runbook", "as above");
        continue;
      }
      row("runbook", d.runbook);
      for (size_t i = 0; i < d.commands.size(); ++i) {
        out << "      " << (i == 0 ? "runbook next" : "            ") << std::string(kIndent - 18, ' ')
            << d.commands[i] << "\n";
      }
    }
    out << "\n";
  }
  // A diagnosis no finding names (its culprit is another host than the lines' own).
  for (const TriageDiagnosis& d : report.diagnoses) {
    if (printed.count(d.playbook + "\n" + d.culprit) > 0) continue;
    out << "DIAGNOSIS  " << d.playbook << " (" << d.severity << "): " << Wrap(d.summary, 6)
        << "\n      runbook " << d.runbook << "\n";
    for (const std::string& c : d.commands) out << "        " << c << "\n";
    out << "\n";
  }
  if (!report.context.empty()) {
    out << "Context\n";
    for (const std::string& c : report.context) out << "  " << Wrap(c, 2) << "\n";
  }
}

}  // namespace

int RunTriage(const std::vector<std::string>& files, bool json, std::istream& in, std::ostream& out,
              std::ostream& err, const std::string& rules) {
  if (files.empty()) {
    err << "usage: railwatch triage FILE... [--json] [--rules=DIR]   (- reads standard input)\n";
    return kExitUsage;
  }
  TriageInputs read = ReadTriageInputs(files, in, err);
  const std::vector<Input>& inputs = read.inputs;
  const std::vector<LogEvent>& events = read.events;
  const LogParser::Stats& total = read.total;

  // The diagnosis comes from the daemon's playbooks; a broken rules file is reported and the
  // playbooks that loaded still run (the log detail does not need them).
  LoadResult rules_loaded = LoadTriagePlaybooks(rules);
  for (const LoadProblem& p : rules_loaded.problems) {
    if (p.level == LoadProblem::Level::kError) err << "railwatch triage: " << p.ToString() << "\n";
  }
  TriageReport report = TriageEvents(events, std::move(rules_loaded.playbooks));
  int failures = 0, warnings = 0, unreadable = 0, exit_code = kExitOk;
  for (const TriageFinding& f : report.findings) {
    failures += f.level == TriageFinding::Level::kFailure;
    warnings += f.level == TriageFinding::Level::kWarning;
  }
  for (const Input& i : inputs) {
    if (i.failure != TriageInput::Failure::kNone) {
      ++unreadable;
      if (exit_code == kExitOk) {
        exit_code = i.failure == TriageInput::Failure::kNotFound ? kExitNotFound : kExitError;
      }
    }
  }
  if (exit_code == kExitOk && !rules_loaded.ok()) exit_code = kExitInvalid;

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
    Json ib = Json::array();
    for (const Input& i : inputs) {
      if (!i.ib_kind.empty()) ib.push_back({{"file", i.name}, {"kind", i.ib_kind}, {"records", i.ib_records}});
    }
    s["infiniband"] = ib;
    Json optics = Json::array();
    for (const Input& i : inputs) {
      if (i.optics_readings == 0 && i.optics_problems == 0) continue;
      optics.push_back({{"file", i.name},
                        {"tools", i.optics_tools},
                        {"lines", i.optics_lines},
                        {"readings", i.optics_readings},
                        {"problems", i.optics_problems}});
    }
    s["optics"] = optics;
    Json kernel = Json::array();
    for (const Input& i : inputs) {
      if (i.kernel.lines == 0) continue;
      kernel.push_back({{"file", i.name}, {"lines", i.kernel.lines}, {"events", i.kernel.events}});
    }
    s["kernel"] = kernel;
    s["failures"] = failures;
    s["warnings"] = warnings;
    Json fired = Json::array();
    for (const TriageDiagnosis& d : report.diagnoses) fired.push_back(DiagnosisJson(d));
    s["diagnoses"] = fired;
    s["context"] = report.context;
    out << Dump(s) << "\n";
  } else {
    PrintHuman(inputs, total, report, out);
  }
  return exit_code;
}

}  // namespace railwatch
