#include "engine/rule_test_file.h"

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/yaml_reader.h"
#include "engine/series_notation.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace fs = std::filesystem;
namespace {

TestFilePos PosOf(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return {m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

std::string Resolve(const std::string& test_file, const std::string& relative) {
  fs::path p(relative);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (fs::path(test_file).parent_path() / p).lexically_normal().string();
}

// The optional<> fields of an expectation: set only when the key is there and reads.
template <typename T, typename Read>
void ReadOptional(std::optional<T>& out, Read&& read) {
  T value{};
  if (read(value)) out = std::move(value);
}

Labels ReadLabels(YamlMap& map, std::string_view key) {
  std::vector<std::pair<std::string, std::string>> pairs;
  map.StringMap(key, pairs);
  Labels out;
  for (auto& [name, value] : pairs) out.push_back({name, value});
  NormalizeLabels(out);
  return out;
}

// Every entry of the list at `key` through `read`.
template <typename Fn>
void ReadList(YamlMap& map, std::string_view key, Fn&& read) {
  const YAML::Node list = map.List(key);
  if (!list.IsDefined()) return;
  for (const YAML::Node& e : list) read(e);
}

TestInputSeries ReadSeries(YamlProblems& problems, const YAML::Node& n) {
  TestInputSeries s;
  s.pos = PosOf(n);
  YamlMap map(n, "an input series", problems, "(series, values)");
  if (!map.ok()) return s;
  std::string text;
  if (map.RequiredString("series", text)) {
    NotationError err;
    absl::StatusOr<SeriesLiteral> lit = ParseSeriesLiteral(text, &err);
    if (lit.ok()) {
      s.name = lit->name;
      s.labels = lit->labels;
    } else {
      problems.Error(MarkInScalar(map.Get("series"), err.offset), "bad-series", err.message);
    }
  }
  if (map.RequiredString("values", text)) {
    NotationError err;
    absl::StatusOr<std::vector<std::optional<double>>> v = ExpandSeriesValues(text, &err);
    if (v.ok()) {
      s.values = std::move(*v);
    } else {
      problems.Error(MarkInScalar(map.Get("values"), err.offset), "bad-values", err.message);
    }
  }
  map.Finish();
  return s;
}

TestInputEvent ReadEvent(YamlProblems& problems, const YAML::Node& n) {
  TestInputEvent e;
  e.pos = PosOf(n);
  YamlMap map(n, "an input event", problems, "(kind, time, labels, attributes, raw)");
  if (!map.ok()) return e;
  map.RequiredString("kind", e.kind);
  if (!map.Get("time").IsDefined()) {
    problems.Error(n, "missing-key", "an input event needs `time` (e.g. 25s)");
  }
  map.Duration("time", e.time, /*positive=*/false);
  e.labels = ReadLabels(map, "labels");
  map.StringMap("attributes", e.attributes);
  map.String("raw", e.raw);
  map.Finish();
  return e;
}

std::optional<ExpectedDiagnosis::Blast> ReadBlast(YamlProblems& problems, const YAML::Node& n) {
  YamlMap map(n, "`blast_radius`", problems, "(scope, gpus, jobs, hosts, cost_per_minute)");
  if (!map.ok()) return std::nullopt;
  ExpectedDiagnosis::Blast b;
  ReadOptional(b.scope, [&](std::string& v) { return map.String("scope", v); });
  ReadOptional(b.gpus, [&](int64_t& v) { return map.Int("gpus", v, 0); });
  ReadOptional(b.jobs, [&](std::vector<std::string>& v) { return map.StringList("jobs", v, true); });
  ReadOptional(b.hosts,
               [&](std::vector<std::string>& v) { return map.StringList("hosts", v, true); });
  ReadOptional(b.cost_per_minute, [&](double& v) { return map.Double("cost_per_minute", v); });
  map.Finish();
  return b;
}

ExpectedDiagnosis ReadExpectedDiagnosis(YamlProblems& problems, const YAML::Node& n) {
  ExpectedDiagnosis d;
  d.pos = PosOf(n);
  YamlMap map(n, "an expected diagnosis", problems);
  if (!map.ok()) return d;
  ReadOptional(d.playbook, [&](std::string& v) { return map.String("playbook", v); });
  if (std::string state; map.String("state", state)) {
    if (state == "pending") {
      d.state = v1::DIAGNOSIS_STATE_PENDING;
    } else if (state == "firing") {
      d.state = v1::DIAGNOSIS_STATE_FIRING;
    } else {
      problems.Error(map.Get("state"), "bad-state",
                     absl::StrCat("state `", state,
                                  "` is not pending or firing "
                                  "(resolved diagnoses are not active)"));
    }
  }
  d.culprit = ReadLabels(map, "culprit");
  ReadOptional(d.summary, [&](std::string& v) { return map.String("summary", v); });
  ReadOptional(d.summary_contains,
               [&](std::string& v) { return map.String("summary_contains", v); });
  ReadOptional(d.location_contains,
               [&](std::string& v) { return map.String("location_contains", v); });
  map.StringList("evidence_contains", d.evidence_contains, true);
  map.StringList("commands_contain", d.commands_contain, true);
  ReadOptional(d.explains_at_least,
               [&](int64_t& v) { return map.Int("explains_at_least", v, 0); });
  ReadOptional(d.previous_incidents,
               [&](int64_t& v) { return map.Int("previous_incidents", v, 0); });
  if (const YAML::Node blast = map.Get("blast_radius"); blast.IsDefined()) {
    d.blast_radius = ReadBlast(problems, blast);
  }
  map.Finish();
  return d;
}

DiagnosisExpectation ReadExpectation(YamlProblems& problems, const YAML::Node& n) {
  DiagnosisExpectation e;
  e.pos = PosOf(n);
  YamlMap map(n, "an `expected_diagnoses` entry", problems, "(eval_time, playbook, diagnoses)");
  if (!map.ok()) return e;
  if (!map.Get("eval_time").IsDefined()) {
    problems.Error(n, "missing-key", "an expectation needs `eval_time`");
  }
  map.Duration("eval_time", e.eval_time, /*positive=*/false);
  if (map.String("playbook", e.playbook)) e.playbook_pos = PosOf(map.Get("playbook"));
  if (!map.Get("diagnoses").IsDefined()) {
    problems.Error(n, "missing-key",
                   "an expectation needs `diagnoses` (the active diagnoses expected; [] for none)");
  }
  ReadList(map, "diagnoses", [&](const YAML::Node& d) {
    e.diagnoses.push_back(ReadExpectedDiagnosis(problems, d));
  });
  map.Finish();
  return e;
}

RuleTestCase ReadTest(YamlProblems& problems, const YAML::Node& n,
                      absl::Duration default_interval) {
  RuleTestCase t;
  t.pos = PosOf(n);
  t.interval = default_interval;
  YamlMap map(n, "a test", problems);
  if (!map.ok()) return t;
  map.String("name", t.name);
  if (t.name.empty()) t.name = absl::StrCat("test at line ", t.pos.line);
  map.Duration("interval", t.interval);
  ReadList(map, "input_series",
           [&](const YAML::Node& s) { t.input_series.push_back(ReadSeries(problems, s)); });
  ReadList(map, "input_events",
           [&](const YAML::Node& e) { t.input_events.push_back(ReadEvent(problems, e)); });
  ReadList(map, "expected_diagnoses", [&](const YAML::Node& e) {
    t.expectations.push_back(ReadExpectation(problems, e));
  });
  map.Finish();
  if (t.expectations.empty()) {
    problems.Error(n, "no-expectations",
                   absl::StrCat("test `", t.name, "` expects nothing: add expected_diagnoses"));
  }
  // One series written twice would interleave two sample streams into one.
  std::set<std::string> seen;
  const YAML::Node series_nodes = map.Get("input_series");
  for (size_t i = 0; i < t.input_series.size(); ++i) {
    const TestInputSeries& s = t.input_series[i];
    if (s.name.empty()) continue;
    if (!seen.insert(FormatSeries(s.name, s.labels)).second) {
      problems.Error(series_nodes[i], "duplicate-series",
                     absl::StrCat("series ", FormatSeries(s.name, s.labels), " is given twice"));
    }
  }
  return t;
}

}  // namespace

RuleTestFile ParseRuleTestFile(const std::string& text, const std::string& path,
                               std::vector<LoadProblem>& out) {
  RuleTestFile f;
  f.path = path;
  YamlProblems problems(path);
  const YAML::Node root = ParseYaml(text, problems);
  if (root.IsDefined()) {
    YamlMap map(root, "a test file", problems, "(rule_files, topology, tests, ...)");
    if (map.ok()) {
      std::vector<std::string> rule_files;
      if (map.StringList("rule_files", rule_files, true)) {
        for (const std::string& file : rule_files) f.rule_files.push_back(Resolve(path, file));
        if (f.rule_files.empty()) {
          problems.Error(map.Get("rule_files"), "bad-type", "`rule_files` is empty");
        }
      } else if (!map.Get("rule_files").IsDefined()) {
        // The shipped layout: rules/tests/x.test.yaml tests rules/*.yaml.
        f.rule_files.push_back(Resolve(path, ".."));
      }
      if (std::string file; map.String("topology", file)) f.topology = Resolve(path, file);
      map.Duration("evaluation_interval", f.evaluation_interval);
      ReadOptional(f.gpu_hour_cost, [&](double& v) { return map.Double("gpu_hour_cost", v); });
      if (!map.Get("tests").IsDefined()) {
        problems.Error(root, "missing-key", "a test file needs `tests`");
      }
      ReadList(map, "tests", [&](const YAML::Node& t) {
        f.tests.push_back(ReadTest(problems, t, f.evaluation_interval));
      });
      map.Finish();
    }
  }
  out.insert(out.end(), problems.problems().begin(), problems.problems().end());
  return f;
}

}  // namespace railwatch
