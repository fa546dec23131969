#include "engine/rule_test.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "engine/alert_proto.h"
#include "engine/engine.h"
#include "engine/replay.h"
#include "engine/rule_test_file.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/topology.h"

namespace railwatch {
namespace fs = std::filesystem;

bool RuleTestReport::ok() const {
  return failures.empty() && std::none_of(problems.begin(), problems.end(), [](const auto& p) {
           return p.level == LoadProblem::Level::kError;
         });
}

namespace {

// Samples kept per series: the daemon's default, or more when a test feeds more (a test of a
// one-hour window at 1 s needs 3600).
constexpr size_t kDefaultRetention = 600;

std::string StateName(v1::DiagnosisState s) {
  switch (s) {
    case v1::DIAGNOSIS_STATE_PENDING:
      return "pending";
    case v1::DIAGNOSIS_STATE_FIRING:
      return "firing";
    case v1::DIAGNOSIS_STATE_RESOLVED:
      return "resolved";
    default:
      return "unknown";
  }
}

std::string Quote(std::string_view s) { return absl::StrCat("\"", AsAbsl(s), "\""); }

std::string TimeText(absl::Duration d) {
  return d == absl::ZeroDuration() ? "0s" : HumanDuration(d);
}

std::string CulpritText(const v1::Diagnosis& d) {
  Labels labels;
  for (const v1::Label& l : d.culprit()) labels.push_back({l.name(), l.value()});
  return absl::StrCat("{", FormatLabels(labels), "}");
}

// One line per active diagnosis, for failure messages.
std::string DiagnosisLine(const v1::Diagnosis& d) {
  std::string line = absl::StrCat(d.playbook(), " ", StateName(d.state()), " ", CulpritText(d), " ",
                                  Quote(d.summary()));
  if (d.explains_size() > 0) absl::StrAppend(&line, " explains ", d.explains_size());
  return line;
}

std::string SortedJoin(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

// What the expectation asks for, in one line.
std::string ExpectedText(const ExpectedDiagnosis& e) {
  std::vector<std::string> parts;
  if (e.playbook) parts.push_back(*e.playbook);
  parts.push_back(StateName(e.state));
  if (!e.culprit.empty()) parts.push_back(absl::StrCat("culprit {", FormatLabels(e.culprit), "}"));
  if (e.summary) parts.push_back(absl::StrCat("summary ", Quote(*e.summary)));
  if (e.summary_contains) {
    parts.push_back(absl::StrCat("summary contains ", Quote(*e.summary_contains)));
  }
  for (const std::string& s : e.evidence_contains) {
    parts.push_back(absl::StrCat("evidence contains ", Quote(s)));
  }
  if (e.explains_at_least) {
    parts.push_back(absl::StrCat("explains at least ", *e.explains_at_least));
  }
  if (e.previous_incidents) {
    parts.push_back(absl::StrCat("previous incidents ", *e.previous_incidents));
  }
  if (e.blast_radius) parts.push_back("blast radius as given");
  if (e.location_contains) {
    parts.push_back(absl::StrCat("location contains ", Quote(*e.location_contains)));
  }
  for (const std::string& s : e.commands_contain) {
    parts.push_back(absl::StrCat("a command contains ", Quote(s)));
  }
  return absl::StrJoin(parts, ", ");
}

void CheckBlast(const ExpectedDiagnosis::Blast& want, const v1::BlastRadius& got,
                std::vector<std::string>& why) {
  if (want.scope && got.scope() != *want.scope) {
    why.push_back(
        absl::StrCat("blast radius scope is ", Quote(got.scope()), ", not ", Quote(*want.scope)));
  }
  if (want.gpus && static_cast<int64_t>(got.gpus()) != *want.gpus) {
    why.push_back(absl::StrCat("blast radius has ", got.gpus(), " GPUs, not ", *want.gpus));
  }
  if (want.jobs) {
    std::vector<std::string> jobs;
    for (const v1::JobImpact& j : got.jobs()) jobs.push_back(j.job());
    if (SortedJoin(jobs) != SortedJoin(*want.jobs)) {
      why.push_back(absl::StrCat("blast radius jobs are ", SortedJoin(jobs), ", not ",
                                 SortedJoin(*want.jobs)));
    }
  }
  if (want.hosts) {
    std::vector<std::string> hosts(got.hosts().begin(), got.hosts().end());
    if (SortedJoin(hosts) != SortedJoin(*want.hosts)) {
      why.push_back(absl::StrCat("blast radius hosts are ", SortedJoin(hosts), ", not ",
                                 SortedJoin(*want.hosts)));
    }
  }
  if (want.cost_per_minute && std::abs(got.cost_per_minute() - *want.cost_per_minute) >
                                  1e-9 * std::max(1.0, std::abs(*want.cost_per_minute))) {
    why.push_back(absl::StrFormat("blast radius costs %g per minute, not %g", got.cost_per_minute(),
                                  *want.cost_per_minute));
  }
}

// Why `d` is not the diagnosis `e` describes; empty when it is.
std::vector<std::string> Mismatches(const ExpectedDiagnosis& e, const v1::Diagnosis& d) {
  std::vector<std::string> why;
  if (e.playbook && d.playbook() != *e.playbook) {
    why.push_back(absl::StrCat("playbook is ", d.playbook(), ", not ", *e.playbook));
  }
  if (d.state() != e.state) {
    why.push_back(absl::StrCat("state is ", StateName(d.state()), ", not ", StateName(e.state)));
  }
  for (const Label& want : e.culprit) {
    const v1::Label* got = nullptr;
    for (const v1::Label& l : d.culprit()) {
      if (l.name() == want.name) got = &l;
    }
    if (got == nullptr) {
      why.push_back(absl::StrCat("culprit has no label ", want.name));
    } else if (got->value() != want.value) {
      why.push_back(absl::StrCat("culprit ", want.name, " is ", Quote(got->value()), ", not ",
                                 Quote(want.value)));
    }
  }
  if (e.summary && d.summary() != *e.summary) {
    why.push_back(absl::StrCat("summary is ", Quote(d.summary())));
  }
  if (e.summary_contains && !absl::StrContains(d.summary(), *e.summary_contains)) {
    why.push_back(absl::StrCat("summary ", Quote(d.summary()), " does not contain ",
                               Quote(*e.summary_contains)));
  }
  for (const std::string& want : e.evidence_contains) {
    const bool found =
        std::any_of(d.evidence().begin(), d.evidence().end(), [&](const v1::Evidence& ev) {
          return absl::StrContains(ev.series(), want) || absl::StrContains(ev.raw(), want);
        });
    if (!found) {
      std::vector<std::string> have;
      for (const v1::Evidence& ev : d.evidence()) {
        have.push_back(ev.raw().empty() ? ev.series() : Quote(ev.raw()));
      }
      why.push_back(absl::StrCat("no evidence contains ", Quote(want), " (evidence: ",
                                 have.empty() ? "none" : absl::StrJoin(have, "; "), ")"));
    }
  }
  if (e.explains_at_least && d.explains_size() < *e.explains_at_least) {
    why.push_back(absl::StrCat("explains ", d.explains_size(), " symptom(s), not at least ",
                               *e.explains_at_least, " [", absl::StrJoin(d.explains(), "; "), "]"));
  }
  if (e.previous_incidents &&
      static_cast<int64_t>(d.previous_incidents()) != *e.previous_incidents) {
    why.push_back(absl::StrCat("previous incidents ", d.previous_incidents(), ", not ",
                               *e.previous_incidents));
  }
  if (e.blast_radius) CheckBlast(*e.blast_radius, d.blast_radius(), why);
  if (e.location_contains && !absl::StrContains(d.location(), *e.location_contains)) {
    why.push_back(absl::StrCat("location ", Quote(d.location()), " does not contain ",
                               Quote(*e.location_contains)));
  }
  for (const std::string& want : e.commands_contain) {
    const bool found =
        std::any_of(d.commands().begin(), d.commands().end(),
                    [&](const std::string& c) { return absl::StrContains(c, want); });
    if (!found) {
      why.push_back(absl::StrCat(
          "no runbook command contains ", Quote(want),
          " (commands: ", d.commands().empty() ? "none" : absl::StrJoin(d.commands(), "; "), ")"));
    }
  }
  return why;
}

// Kuhn's augmenting paths: expected i may take found j when fits[i][j].
bool Augment(size_t i, const std::vector<std::vector<bool>>& fits, std::vector<bool>& visited,
             std::vector<int>& owner) {
  for (size_t j = 0; j < owner.size(); ++j) {
    if (!fits[i][j] || visited[j]) continue;
    visited[j] = true;
    if (owner[j] < 0 || Augment(static_cast<size_t>(owner[j]), fits, visited, owner)) {
      owner[j] = static_cast<int>(i);
      return true;
    }
  }
  return false;
}

// Checks one expectation against the active diagnoses; returns the failure text or "".
std::string CheckExpectation(const RuleTestFile& file, const RuleTestCase& test,
                             const DiagnosisExpectation& exp,
                             const std::vector<v1::Diagnosis>& active) {
  std::vector<const v1::Diagnosis*> found;
  for (const v1::Diagnosis& d : active) {
    if (exp.playbook.empty() || d.playbook() == exp.playbook) found.push_back(&d);
  }
  const size_t n = exp.diagnoses.size();
  std::vector<std::vector<bool>> fits(n, std::vector<bool>(found.size()));
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < found.size(); ++j) {
      fits[i][j] = Mismatches(exp.diagnoses[i], *found[j]).empty();
    }
  }
  std::vector<int> owner(found.size(), -1);
  size_t matched = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<bool> visited(found.size(), false);
    if (Augment(i, fits, visited, owner)) ++matched;
  }
  if (matched == n && found.size() == n) return "";

  const std::string what = exp.playbook.empty() ? "any playbook" : exp.playbook;
  std::string out =
      absl::StrFormat("%s:%d:%d: test %s: at %s, %s:\n", file.path, exp.pos.line, exp.pos.column,
                      Quote(test.name), TimeText(exp.eval_time), what);
  absl::StrAppendFormat(&out, "  expected %d active diagnos%s, found %d\n", n, n == 1 ? "is" : "es",
                        found.size());
  std::vector<bool> taken(n, false);
  for (int o : owner) {
    if (o >= 0) taken[static_cast<size_t>(o)] = true;
  }
  for (size_t i = 0; i < n; ++i) {
    if (taken[i]) continue;
    const ExpectedDiagnosis& e = exp.diagnoses[i];
    absl::StrAppendFormat(&out, "  missing (line %d): %s\n", e.pos.line, ExpectedText(e));
    for (const v1::Diagnosis* d : found) {
      std::vector<std::string> why = Mismatches(e, *d);
      if (why.empty()) {
        absl::StrAppend(&out, "    ", DiagnosisLine(*d),
                        ": would match, but another "
                        "expectation took it\n");
      } else {
        absl::StrAppend(&out, "    not ", DiagnosisLine(*d), ": ", absl::StrJoin(why, "; "), "\n");
      }
    }
  }
  for (size_t j = 0; j < found.size(); ++j) {
    if (owner[j] < 0) absl::StrAppend(&out, "  unexpected: ", DiagnosisLine(*found[j]), "\n");
  }
  absl::StrAppend(&out, "  active diagnoses at ", TimeText(exp.eval_time), ":");
  if (active.empty()) absl::StrAppend(&out, " none");
  absl::StrAppend(&out, "\n");
  for (const v1::Diagnosis& d : active) absl::StrAppend(&out, "    ", DiagnosisLine(d), "\n");
  return out;
}

// Everything one test needs, built fresh for each test.
class TestRun {
 public:
  TestRun(const RuleTestFile& file, std::vector<Playbook> playbooks,
          std::shared_ptr<const Topology> topology, size_t retention)
      : file_(file),
        replay_(EngineReplay::Options{EngineOptions(file), retention, std::move(topology),
                                      absl::FromUnixSeconds(kRuleTestStartUnixSeconds)},
                std::move(playbooks)) {}

  // Returns the failure texts of the test's expectations.
  std::vector<std::string> Run(const RuleTestCase& test) {
    struct Point {
      int64_t time;
      SeriesRef ref;
      double value;
    };
    std::vector<Point> points;
    for (const TestInputSeries& s : test.input_series) {
      SeriesRef ref = replay_.Intern(s.name, s.labels);
      for (size_t i = 0; i < s.values.size(); ++i) {
        if (!s.values[i]) continue;
        points.push_back({Offset(test.interval * static_cast<int64_t>(i)), ref, *s.values[i]});
      }
    }
    std::stable_sort(points.begin(), points.end(),
                     [](const Point& a, const Point& b) { return a.time < b.time; });
    std::vector<const TestInputEvent*> events;
    for (const TestInputEvent& e : test.input_events) events.push_back(&e);
    std::stable_sort(events.begin(), events.end(),
                     [](const auto* a, const auto* b) { return a->time < b->time; });

    // Every evaluation step of the daemon's interval, plus each eval_time itself.
    std::set<absl::Duration> steps;
    absl::Duration last = absl::ZeroDuration();
    for (const DiagnosisExpectation& e : test.expectations) {
      steps.insert(e.eval_time);
      last = std::max(last, e.eval_time);
    }
    for (absl::Duration t = absl::ZeroDuration(); t <= last; t += file_.evaluation_interval) {
      steps.insert(t);
    }

    std::vector<std::string> failures;
    size_t next_point = 0, next_event = 0;
    for (absl::Duration step : steps) {
      const int64_t now = Offset(step);
      for (; next_point < points.size() && points[next_point].time <= now; ++next_point) {
        const Point& p = points[next_point];
        replay_.Append(p.ref, p.time, p.value);
      }
      for (; next_event < events.size() && Offset(events[next_event]->time) <= now; ++next_event) {
        const TestInputEvent& in = *events[next_event];
        StoredEvent e;
        e.kind = in.kind;
        e.time_unix_nano = Offset(in.time);
        e.labels = in.labels;
        e.attributes = in.attributes;
        e.raw = in.raw;
        replay_.AddEvent(std::move(e));
      }
      replay_.EvaluateAt(now);
      std::vector<v1::Diagnosis> active;
      bool listed = false;
      for (const DiagnosisExpectation& exp : test.expectations) {
        if (exp.eval_time != step) continue;
        if (!listed) {
          active = ActiveDiagnoses();
          listed = true;
        }
        std::string failure = CheckExpectation(file_, test, exp, active);
        if (!failure.empty()) failures.push_back(std::move(failure));
      }
    }
    return failures;
  }

 private:
  static Engine::Options EngineOptions(const RuleTestFile& file) {
    Engine::Options o;
    o.interval = file.evaluation_interval;
    if (file.gpu_hour_cost) o.gpu_hour_cost = *file.gpu_hour_cost;
    return o;
  }

  static int64_t Offset(absl::Duration d) {
    return absl::ToUnixNanos(absl::FromUnixSeconds(kRuleTestStartUnixSeconds) + d);
  }

  std::vector<v1::Diagnosis> ActiveDiagnoses() const {
    std::vector<v1::Diagnosis> out;
    // Compared as the Query API shows them (alert_proto.h).
    for (const AlertRecord& a : replay_.List()) {
      if (a.state != AlertState::kResolved) out.push_back(ToDiagnosis(a));
    }
    std::sort(out.begin(), out.end(), [](const v1::Diagnosis& a, const v1::Diagnosis& b) {
      return std::make_pair(a.playbook(), CulpritText(a)) <
             std::make_pair(b.playbook(), CulpritText(b));
    });
    return out;
  }

  const RuleTestFile& file_;
  EngineReplay replay_;
};

void AddErrors(const std::vector<LoadProblem>& from, std::vector<LoadProblem>& to) {
  for (const LoadProblem& p : from) {
    if (p.level == LoadProblem::Level::kError) to.push_back(p);
  }
}

// Expectations that name a playbook the rules do not define.
void CheckPlaybookNames(const RuleTestFile& file, const std::vector<Playbook>& playbooks,
                        std::vector<LoadProblem>& problems) {
  std::set<std::string> names;
  for (const Playbook& pb : playbooks) names.insert(pb.name);
  const std::string known = absl::StrJoin(names, ", ");
  auto check = [&](const std::string& name, TestFilePos pos) {
    if (name.empty() || names.contains(name)) return;
    problems.push_back(
        {LoadProblem::Level::kError, file.path, pos.line, pos.column, "unknown-playbook",
         absl::StrCat("no playbook \"", name, "\" in ", absl::StrJoin(file.rule_files, ", "),
                      " (loaded: ", known.empty() ? "none" : known, ")")});
  };
  for (const RuleTestCase& t : file.tests) {
    for (const DiagnosisExpectation& e : t.expectations) {
      check(e.playbook, e.playbook_pos);
      for (const ExpectedDiagnosis& d : e.diagnoses) {
        if (d.playbook) check(*d.playbook, d.pos);
      }
    }
  }
}

}  // namespace

RuleTestReport RunRuleTestText(const std::string& text, const std::string& path) {
  RuleTestReport report;
  report.file = path;
  RuleTestFile file = ParseRuleTestFile(text, path, report.problems);
  // The rules and the topology are read even when the file has mistakes, so that every
  // problem (an unknown playbook too) is reported at once.
  LoadResult rules = LoadPlaybooks(file.rule_files);
  AddErrors(rules.problems, report.problems);
  std::shared_ptr<const Topology> topology;
  if (!file.topology.empty()) {
    absl::StatusOr<Topology> t = Topology::LoadFile(file.topology);
    if (t.ok()) {
      topology = std::make_shared<const Topology>(std::move(*t));
    } else {
      report.problems.push_back({LoadProblem::Level::kError, file.topology, 0, 0, "bad-topology",
                                 std::string(t.status().message())});
    }
  }
  if (!file.rule_files.empty() && rules.ok()) {
    CheckPlaybookNames(file, rules.playbooks, report.problems);
  }
  // The test file's own problems first, in the order of the file; then the others as found.
  std::stable_sort(report.problems.begin(), report.problems.end(),
                   [&](const LoadProblem& a, const LoadProblem& b) {
                     auto key = [&](const LoadProblem& p) {
                       const bool own = p.file == path;
                       return std::make_tuple(!own, own ? p.line : 0, own ? p.column : 0);
                     };
                     return key(a) < key(b);
                   });
  if (!report.ok()) return report;

  size_t retention = kDefaultRetention;
  for (const RuleTestCase& t : file.tests) {
    for (const TestInputSeries& s : t.input_series)
      retention = std::max(retention, s.values.size());
  }
  for (size_t i = 0; i < file.tests.size(); ++i) {
    // The engine owns its playbooks: each test gets a fresh copy (the first test reuses the
    // ones loaded above).
    std::vector<Playbook> playbooks =
        i == 0 ? std::move(rules.playbooks) : LoadPlaybooks(file.rule_files).playbooks;
    TestRun run(file, std::move(playbooks), topology, retention);
    std::vector<std::string> failures = run.Run(file.tests[i]);
    ++report.tests;
    if (!failures.empty()) ++report.failed_tests;
    for (std::string& f : failures) report.failures.push_back(std::move(f));
  }
  return report;
}

RuleTestReport RunRuleTestFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    RuleTestReport report;
    report.file = path;
    report.problems.push_back({LoadProblem::Level::kError, path, 0, 0, "unreadable",
                               std::string(text.status().message())});
    return report;
  }
  return RunRuleTestText(*text, path);
}

std::vector<std::string> FindRuleTestFiles(const std::vector<std::string>& paths,
                                           std::vector<LoadProblem>& problems) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> files;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file() &&
            (absl::EndsWith(name, ".test.yaml") || absl::EndsWith(name, ".test.yml"))) {
          files.push_back(entry.path().string());
        }
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        problems.push_back({LoadProblem::Level::kError, path, 0, 0, "no-tests",
                            "directory holds no *.test.yaml files"});
      }
      out.insert(out.end(), files.begin(), files.end());
    } else if (fs::exists(path, ec)) {
      out.push_back(path);
    } else {
      problems.push_back(
          {LoadProblem::Level::kError, path, 0, 0, "not-found", "no such file or directory"});
    }
  }
  return out;
}

}  // namespace railwatch
