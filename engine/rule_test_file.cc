#include "engine/rule_test_file.h"

#include <filesystem>
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "engine/series_notation.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace fs = std::filesystem;
namespace {

TestFilePos PosOf(const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return {m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
}

// Reads typed values out of YAML nodes and records every problem at the node it concerns.
class Reader {
 public:
  Reader(std::string file, std::vector<LoadProblem>& problems)
      : file_(std::move(file)), problems_(problems) {}

  void Error(TestFilePos pos, std::string code, std::string message) {
    problems_.push_back({LoadProblem::Level::kError, file_, pos.line, pos.column, std::move(code),
                         std::move(message)});
  }
  void Error(const YAML::Node& at, std::string code, std::string message) {
    Error(PosOf(at), std::move(code), std::move(message));
  }

  // A problem at byte `offset` of a scalar's text: exact on one-line scalars (a quoted one
  // starts one column after its quote), the scalar's start otherwise.
  void ErrorInScalar(const YAML::Node& n, size_t offset, std::string code, std::string message) {
    TestFilePos pos = PosOf(n);
    const std::string& text = n.Scalar();
    if (text.find('\n') == std::string::npos) {
      pos.column += static_cast<int>(offset) + (n.Tag() == "!" ? 1 : 0);
    }
    Error(pos, std::move(code), std::move(message));
  }

  // Reports keys outside `known`; false when `n` is not a mapping.
  bool CheckMap(const YAML::Node& n, const char* what, std::initializer_list<const char*> known) {
    if (!n.IsMap()) {
      Error(n, "bad-type", absl::StrCat(what, " must be a mapping"));
      return false;
    }
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (!ok) {
        Error(kv.first, "unknown-key",
              absl::StrCat("unknown key \"", key, "\" in ", what,
                           " (known: ", absl::StrJoin(known, ", "), ")"));
      }
    }
    return true;
  }

  std::optional<std::string> String(const YAML::Node& n, const char* key) {
    if (!n.IsScalar()) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a string"));
      return std::nullopt;
    }
    return n.Scalar();
  }

  std::optional<absl::Duration> Duration(const YAML::Node& n, const char* key) {
    std::optional<std::string> text = String(n, key);
    if (!text) return std::nullopt;
    if (*text == "0") return absl::ZeroDuration();
    absl::StatusOr<absl::Duration> d = ParseDuration(*text);
    if (!d.ok()) {
      Error(n, "bad-duration",
            absl::StrCat("\"", key, "\": ", d.status().message(),
                         " (durations are written 500ms, 15s, 5m, 1h)"));
      return std::nullopt;
    }
    return *d;
  }

  std::optional<int64_t> Int(const YAML::Node& n, const char* key) {
    int64_t v = 0;
    if (!n.IsScalar() || !YAML::convert<int64_t>::decode(n, v) || v < 0) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a whole number >= 0"));
      return std::nullopt;
    }
    return v;
  }

  std::optional<double> Double(const YAML::Node& n, const char* key) {
    double v = 0;
    if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a number"));
      return std::nullopt;
    }
    return v;
  }

  // A list of strings; a single string is a list of one.
  std::vector<std::string> StringList(const YAML::Node& n, const char* key) {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(n.Scalar());
    } else if (n.IsSequence()) {
      for (const YAML::Node& e : n) {
        if (std::optional<std::string> s = String(e, key)) out.push_back(*s);
      }
    } else {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a string or a list of strings"));
    }
    return out;
  }

  // {name: value, ...} in the order written.
  std::vector<std::pair<std::string, std::string>> StringMap(const YAML::Node& n, const char* key) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!n.IsMap()) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a mapping of names to strings"));
      return out;
    }
    for (const auto& kv : n) {
      if (std::optional<std::string> v = String(kv.second, key)) {
        out.emplace_back(kv.first.Scalar(), *v);
      }
    }
    return out;
  }

  Labels LabelMap(const YAML::Node& n, const char* key) {
    Labels out;
    for (auto& [name, value] : StringMap(n, key)) out.push_back({name, value});
    NormalizeLabels(out);
    return out;
  }

  template <typename Fn>
  void Sequence(const YAML::Node& n, const char* key, Fn&& fn) {
    if (!n) return;
    if (n.IsNull()) return;
    if (!n.IsSequence()) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a list"));
      return;
    }
    for (const YAML::Node& e : n) fn(e);
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<LoadProblem>& problems_;
};

std::string Resolve(const std::string& test_file, const std::string& relative) {
  fs::path p(relative);
  if (p.is_absolute()) return p.lexically_normal().string();
  return (fs::path(test_file).parent_path() / p).lexically_normal().string();
}

TestInputSeries ReadSeries(Reader& r, const YAML::Node& n) {
  TestInputSeries s;
  s.pos = PosOf(n);
  if (!r.CheckMap(n, "an input series", {"series", "values"})) return s;
  if (YAML::Node text = n["series"]; !text) {
    r.Error(n, "missing-key", "an input series needs \"series\"");
  } else if (std::optional<std::string> t = r.String(text, "series")) {
    NotationError err;
    absl::StatusOr<SeriesLiteral> lit = ParseSeriesLiteral(*t, &err);
    if (lit.ok()) {
      s.name = lit->name;
      s.labels = lit->labels;
    } else {
      r.ErrorInScalar(text, err.offset, "bad-series", err.message);
    }
  }
  if (YAML::Node values = n["values"]; !values) {
    r.Error(n, "missing-key", "an input series needs \"values\"");
  } else if (std::optional<std::string> t = r.String(values, "values")) {
    NotationError err;
    absl::StatusOr<std::vector<std::optional<double>>> v = ExpandSeriesValues(*t, &err);
    if (v.ok()) {
      s.values = std::move(*v);
    } else {
      r.ErrorInScalar(values, err.offset, "bad-values", err.message);
    }
  }
  return s;
}

TestInputEvent ReadEvent(Reader& r, const YAML::Node& n) {
  TestInputEvent e;
  e.pos = PosOf(n);
  if (!r.CheckMap(n, "an input event", {"kind", "time", "labels", "attributes", "raw"})) return e;
  if (!n["kind"])
    r.Error(n, "missing-key", "an input event needs \"kind\"");
  else if (auto k = r.String(n["kind"], "kind"))
    e.kind = *k;
  if (!n["time"])
    r.Error(n, "missing-key", "an input event needs \"time\" (e.g. 25s)");
  else if (auto t = r.Duration(n["time"], "time"))
    e.time = *t;
  if (n["labels"]) e.labels = r.LabelMap(n["labels"], "labels");
  if (n["attributes"]) e.attributes = r.StringMap(n["attributes"], "attributes");
  if (n["raw"]) {
    if (auto raw = r.String(n["raw"], "raw")) e.raw = *raw;
  }
  return e;
}

std::optional<ExpectedDiagnosis::Blast> ReadBlast(Reader& r, const YAML::Node& n) {
  if (!r.CheckMap(n, "blast_radius", {"scope", "gpus", "jobs", "hosts", "cost_per_minute"})) {
    return std::nullopt;
  }
  ExpectedDiagnosis::Blast b;
  if (n["scope"]) b.scope = r.String(n["scope"], "scope");
  if (n["gpus"]) b.gpus = r.Int(n["gpus"], "gpus");
  if (n["jobs"]) b.jobs = r.StringList(n["jobs"], "jobs");
  if (n["hosts"]) b.hosts = r.StringList(n["hosts"], "hosts");
  if (n["cost_per_minute"]) b.cost_per_minute = r.Double(n["cost_per_minute"], "cost_per_minute");
  return b;
}

ExpectedDiagnosis ReadExpectedDiagnosis(Reader& r, const YAML::Node& n) {
  ExpectedDiagnosis d;
  d.pos = PosOf(n);
  if (!r.CheckMap(n, "an expected diagnosis",
                  {"playbook", "state", "culprit", "summary", "summary_contains",
                   "location_contains", "evidence_contains", "commands_contain",
                   "explains_at_least", "previous_incidents", "blast_radius"})) {
    return d;
  }
  if (n["playbook"]) d.playbook = r.String(n["playbook"], "playbook");
  if (YAML::Node s = n["state"]) {
    std::optional<std::string> state = r.String(s, "state");
    if (state == "pending") {
      d.state = v1::DIAGNOSIS_STATE_PENDING;
    } else if (state == "firing") {
      d.state = v1::DIAGNOSIS_STATE_FIRING;
    } else if (state) {
      r.Error(s, "bad-state",
              absl::StrCat("state \"", *state,
                           "\" is not pending or firing "
                           "(resolved diagnoses are not active)"));
    }
  }
  if (n["culprit"]) d.culprit = r.LabelMap(n["culprit"], "culprit");
  if (n["summary"]) d.summary = r.String(n["summary"], "summary");
  if (n["summary_contains"])
    d.summary_contains = r.String(n["summary_contains"], "summary_contains");
  if (n["location_contains"]) {
    d.location_contains = r.String(n["location_contains"], "location_contains");
  }
  if (n["evidence_contains"]) {
    d.evidence_contains = r.StringList(n["evidence_contains"], "evidence_contains");
  }
  if (n["commands_contain"]) {
    d.commands_contain = r.StringList(n["commands_contain"], "commands_contain");
  }
  if (n["explains_at_least"]) {
    d.explains_at_least = r.Int(n["explains_at_least"], "explains_at_least");
  }
  if (n["previous_incidents"]) {
    d.previous_incidents = r.Int(n["previous_incidents"], "previous_incidents");
  }
  if (n["blast_radius"]) d.blast_radius = ReadBlast(r, n["blast_radius"]);
  return d;
}

DiagnosisExpectation ReadExpectation(Reader& r, const YAML::Node& n) {
  DiagnosisExpectation e;
  e.pos = PosOf(n);
  if (!r.CheckMap(n, "an expected_diagnoses entry", {"eval_time", "playbook", "diagnoses"})) {
    return e;
  }
  if (!n["eval_time"])
    r.Error(n, "missing-key", "an expectation needs \"eval_time\"");
  else if (auto t = r.Duration(n["eval_time"], "eval_time"))
    e.eval_time = *t;
  if (YAML::Node pb = n["playbook"]) {
    e.playbook_pos = PosOf(pb);
    if (auto name = r.String(pb, "playbook")) e.playbook = *name;
  }
  if (!n["diagnoses"]) {
    r.Error(n, "missing-key",
            "an expectation needs \"diagnoses\" (the active diagnoses expected; [] for none)");
  }
  r.Sequence(n["diagnoses"], "diagnoses",
             [&](const YAML::Node& d) { e.diagnoses.push_back(ReadExpectedDiagnosis(r, d)); });
  return e;
}

RuleTestCase ReadTest(Reader& r, const YAML::Node& n, absl::Duration default_interval) {
  RuleTestCase t;
  t.pos = PosOf(n);
  t.interval = default_interval;
  if (!r.CheckMap(n, "a test",
                  {"name", "interval", "input_series", "input_events", "expected_diagnoses"})) {
    return t;
  }
  if (n["name"]) {
    if (auto name = r.String(n["name"], "name")) t.name = *name;
  }
  if (t.name.empty()) t.name = absl::StrCat("test at line ", t.pos.line);
  if (YAML::Node i = n["interval"]) {
    if (auto d = r.Duration(i, "interval")) {
      if (*d <= absl::ZeroDuration())
        r.Error(i, "bad-duration", "\"interval\" must be above 0");
      else
        t.interval = *d;
    }
  }
  r.Sequence(n["input_series"], "input_series",
             [&](const YAML::Node& s) { t.input_series.push_back(ReadSeries(r, s)); });
  r.Sequence(n["input_events"], "input_events",
             [&](const YAML::Node& e) { t.input_events.push_back(ReadEvent(r, e)); });
  r.Sequence(n["expected_diagnoses"], "expected_diagnoses",
             [&](const YAML::Node& e) { t.expectations.push_back(ReadExpectation(r, e)); });
  if (t.expectations.empty()) {
    r.Error(n, "no-expectations",
            absl::StrCat("test \"", t.name, "\" expects nothing: add expected_diagnoses"));
  }
  // One series written twice would interleave two sample streams into one.
  std::set<std::string> seen;
  for (const TestInputSeries& s : t.input_series) {
    if (s.name.empty()) continue;
    if (!seen.insert(FormatSeries(s.name, s.labels)).second) {
      r.Error(s.pos, "duplicate-series",
              absl::StrCat("series ", FormatSeries(s.name, s.labels), " is given twice"));
    }
  }
  return t;
}

}  // namespace

RuleTestFile ParseRuleTestFile(const std::string& text, const std::string& path,
                               std::vector<LoadProblem>& problems) {
  RuleTestFile f;
  f.path = path;
  Reader r(path, problems);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    r.Error(TestFilePos{e.mark.line + 1, e.mark.column + 1}, "yaml-syntax", e.msg);
    return f;
  }
  if (!r.CheckMap(root, "a test file",
                  {"rule_files", "topology", "evaluation_interval", "gpu_hour_cost", "tests"})) {
    return f;
  }
  if (YAML::Node rf = root["rule_files"]) {
    for (const std::string& file : r.StringList(rf, "rule_files")) {
      f.rule_files.push_back(Resolve(path, file));
    }
    if (f.rule_files.empty()) r.Error(rf, "bad-type", "\"rule_files\" is empty");
  } else {
    // The shipped layout: rules/tests/x.test.yaml tests rules/*.yaml.
    f.rule_files.push_back(Resolve(path, ".."));
  }
  if (YAML::Node t = root["topology"]) {
    if (auto file = r.String(t, "topology")) f.topology = Resolve(path, *file);
  }
  if (YAML::Node i = root["evaluation_interval"]) {
    if (auto d = r.Duration(i, "evaluation_interval")) {
      if (*d <= absl::ZeroDuration()) {
        r.Error(i, "bad-duration", "\"evaluation_interval\" must be above 0");
      } else {
        f.evaluation_interval = *d;
      }
    }
  }
  if (YAML::Node c = root["gpu_hour_cost"]) f.gpu_hour_cost = r.Double(c, "gpu_hour_cost");
  if (!root["tests"]) r.Error(root, "missing-key", "a test file needs \"tests\"");
  r.Sequence(root["tests"], "tests", [&](const YAML::Node& t) {
    f.tests.push_back(ReadTest(r, t, f.evaluation_interval));
  });
  return f;
}

}  // namespace railwatch
