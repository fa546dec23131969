// Scores as a table for people and as JSON for scripts (docs/SCENARIOS.md "Scoring").
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/table.h"
#include "nlohmann/json.hpp"
#include "sim/score.h"

namespace railwatch::sim {
namespace {

struct Totals {
  int scenarios = 0, passed = 0, faults = 0, detected = 0, right_culprit = 0, false_diagnoses = 0,
      within_target = 0, with_target = 0;
  double host_hours = 0;

  void Add(const ScenarioScore& s) {
    ++scenarios;
    passed += s.passed ? 1 : 0;
    for (const FaultScore& f : s.faults) {
      ++faults;
      detected += f.detected ? 1 : 0;
      right_culprit += f.detected && f.right_culprit ? 1 : 0;
      if (f.target_ms) ++with_target;
      within_target += f.within_target().value_or(false) ? 1 : 0;
    }
    false_diagnoses += static_cast<int>(s.false_diagnoses.size());
    host_hours += s.hosts * s.duration_s / 3600;
  }
  double per_host_hour() const { return host_hours > 0 ? false_diagnoses / host_hours : 0; }
};

std::string Seconds(int64_t ms) { return absl::StrFormat("%.2f s", ms / 1000.0); }

std::string Values(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::string> v;
  for (const auto& [name, value] : labels) v.push_back(value.empty() ? "?" : value);
  return absl::StrJoin(v, " ");
}

std::string Pairs(const std::vector<std::pair<std::string, std::string>>& labels) {
  std::vector<std::string> v;
  for (const auto& [name, value] : labels) v.push_back(absl::StrCat(name, "=", value));
  return absl::StrJoin(v, " ");
}

// What one system did about one fault, in one cell.
std::string Cell(const FaultScore& f) {
  if (!f.injected) return "NOT INJECTED";
  if (!f.detected) return "missed";
  std::string cell = Seconds(f.delay_ms);
  if (f.within_target() == false) absl::StrAppend(&cell, " (late)");
  if (!f.right_culprit) absl::StrAppend(&cell, " WRONG CULPRIT: ", f.diagnosis_culprit);
  return cell;
}

std::string Offset(const ScenarioScore& s, int64_t unix_nano) {
  if (s.sim_start_unix_nano == 0) return absl::StrCat("at ", unix_nano);
  return absl::StrFormat("at +%.1fs", (unix_nano - s.sim_start_unix_nano) / 1e9);
}

std::string TotalsLine(const std::string& system, const Totals& t) {
  return absl::StrFormat(
      "%s: %d/%d scenarios passed; %d/%d faults detected, %d with the right culprit, %d/%d "
      "within target; %d false diagnoses in %.2f host-hours (%.2f per host-hour)\n",
      system, t.passed, t.scenarios, t.detected, t.faults, t.right_culprit, t.within_target,
      t.with_target, t.false_diagnoses, t.host_hours, t.per_host_hour());
}

nlohmann::json LabelsJson(const std::vector<std::pair<std::string, std::string>>& labels) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : labels) j[name] = value;
  return j;
}

nlohmann::json TotalsJson(const Totals& t) {
  return {{"scenarios", t.scenarios},
          {"passed", t.passed},
          {"faults", t.faults},
          {"detected", t.detected},
          {"right_culprit", t.right_culprit},
          {"false_diagnoses", t.false_diagnoses},
          {"host_hours", t.host_hours},
          {"false_per_host_hour", t.per_host_hour()},
          {"within_target", t.within_target},
          {"with_target", t.with_target}};
}

nlohmann::json ScenarioJson(const ScenarioScore& s) {
  nlohmann::json faults = nlohmann::json::array();
  for (const FaultScore& f : s.faults) {
    const std::optional<bool> within = f.within_target();
    faults.push_back({{"kind", f.kind},
                      {"at", f.at},
                      {"culprit", LabelsJson(f.culprit)},
                      {"injected", f.injected},
                      {"injected_at_unix_nano", f.injected_at_unix_nano},
                      {"detected", f.detected},
                      {"playbook", f.playbook},
                      {"delay_ms", f.detected ? nlohmann::json(f.delay_ms) : nlohmann::json()},
                      {"target_ms", f.target_ms ? nlohmann::json(*f.target_ms) : nlohmann::json()},
                      {"within_target", within ? nlohmann::json(*within) : nlohmann::json()},
                      {"right_culprit", f.right_culprit},
                      {"diagnosis_id", f.diagnosis_id}});
  }
  nlohmann::json wrong = nlohmann::json::array();
  for (const FalseDiagnosis& d : s.false_diagnoses) {
    wrong.push_back({{"id", d.id},
                     {"playbook", d.playbook},
                     {"culprit", LabelsJson(d.culprit)},
                     {"summary", d.summary},
                     {"fired_at_unix_nano", d.fired_at_unix_nano},
                     {"why", d.why}});
  }
  return {{"name", s.name},           {"system", s.system},
          {"hosts", s.hosts},         {"duration_s", s.duration_s},
          {"setup_s", s.setup_s},     {"faults", faults},
          {"false_diagnoses", wrong}, {"false_per_host_hour", s.false_per_host_hour},
          {"passed", s.passed},       {"problems", s.problems},
          {"error", s.error}};
}

}  // namespace

std::string ScoreTable(const std::vector<ScenarioScore>& scores, bool with_summary) {
  // Scenarios in the order given, each with its systems side by side.
  std::vector<std::string> names;
  std::map<std::string, std::vector<const ScenarioScore*>> by_name;
  for (const ScenarioScore& s : scores) {
    if (by_name[s.name].empty()) names.push_back(s.name);
    by_name[s.name].push_back(&s);
  }
  std::string out;
  for (const std::string& name : names) {
    const std::vector<const ScenarioScore*>& group = by_name[name];
    const ScenarioScore& first = *group.front();
    absl::StrAppend(&out, "== ", name, ": ", first.hosts, " hosts, ",
                    absl::StrFormat("%.0f s", first.duration_s));
    if (first.setup_s > 0) absl::StrAppend(&out, absl::StrFormat(", setup %.1f s", first.setup_s));
    absl::StrAppend(&out, "\n");
    if (!first.error.empty()) {
      absl::StrAppend(&out, "ERROR: ", first.error, "\n\n");
      continue;
    }
    if (!first.faults.empty()) {
      std::vector<std::string> header = {"FAULT", "AT", "CULPRIT", "PLAYBOOK", "TARGET"};
      for (const ScenarioScore* s : group) header.push_back(absl::AsciiStrToUpper(s->system));
      Table table(header);
      for (size_t i = 0; i < first.faults.size(); ++i) {
        const FaultScore& f = first.faults[i];
        std::vector<std::string> row = {f.kind, f.at, Values(f.culprit), f.playbook,
                                        f.target_ms ? Seconds(*f.target_ms) : "-"};
        for (const ScenarioScore* s : group) {
          row.push_back(i < s->faults.size() ? Cell(s->faults[i]) : "-");
        }
        table.Add(row);
      }
      absl::StrAppend(&out, table.Render());
    } else {
      absl::StrAppend(&out, "(no faults: a healthy fabric)\n");
    }
    for (const ScenarioScore* s : group) {
      absl::StrAppend(&out, s->system, ": ", s->passed ? "PASSED" : "FAILED", ", ",
                      s->false_diagnoses.size(), " false diagnoses",
                      absl::StrFormat(" (%.2f per host-hour)", s->false_per_host_hour), "\n");
      for (const FalseDiagnosis& d : s->false_diagnoses) {
        absl::StrAppend(&out, "  false: ", d.playbook, " ", Pairs(d.culprit), " ",
                        Offset(*s, d.fired_at_unix_nano), " (", d.why, ")\n");
      }
      for (const std::string& p : s->problems) absl::StrAppend(&out, "  - ", p, "\n");
    }
    absl::StrAppend(&out, "\n");
  }
  return with_summary ? out + ScoreSummary(scores) : out;
}

std::string ScoreSummary(const std::vector<ScenarioScore>& scores) {
  std::vector<std::string> systems;
  std::map<std::string, Totals> totals;
  for (const ScenarioScore& s : scores) {
    if (totals.count(s.system) == 0) systems.push_back(s.system);
    totals[s.system].Add(s);
  }
  std::string out;
  for (const std::string& system : systems)
    absl::StrAppend(&out, TotalsLine(system, totals[system]));
  return out;
}

std::string ScoreJson(const std::vector<ScenarioScore>& scores) {
  nlohmann::json list = nlohmann::json::array();
  std::map<std::string, Totals> totals;
  for (const ScenarioScore& s : scores) {
    list.push_back(ScenarioJson(s));
    totals[s.system].Add(s);
  }
  nlohmann::json by_system = nlohmann::json::object();
  for (const auto& [system, t] : totals) by_system[system] = TotalsJson(t);
  const std::string main_system =
      totals.count("railwatch") > 0 || scores.empty() ? "railwatch" : scores.front().system;
  nlohmann::json j = {{"scenarios", list},
                      {"summary", TotalsJson(totals[main_system])},
                      {"summary_by_system", by_system}};
  return j.dump(2) + "\n";
}

}  // namespace railwatch::sim
