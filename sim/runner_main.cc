// `railwatch-sim run` and `railwatch-sim score`: their flags, defaults and output.
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/shipped_data.h"
#include "common/text.h"
#include "sim/runner.h"
#include "sim/runner_flags.h"

namespace railwatch::sim {
namespace {

namespace fs = std::filesystem;

constexpr char kRunUsage[] =
    "Usage: railwatch-sim run [flags] SCENARIO.yaml|DIR...\n"
    "Plays each scenario through the real programs (simulator, railwatchd, agents), scores the\n"
    "diagnoses against the ground truth and prints one row per fault. Exit 0 when every scenario\n"
    "met its expect: block, 1 otherwise, 2 on bad usage. See docs/SCENARIOS.md.\n";
constexpr char kScoreUsage[] =
    "Usage: railwatch-sim score --scenario=FILE --truth=TRUTH.jsonl --diagnoses=DIAGNOSES.json\n"
    "       [--system=railwatch] [--json]\n"
    "Scores a run that is over: DIAGNOSES is what `railwatch diagnoses --state=all --json`\n"
    "prints, TRUTH the simulator's --ground_truth. Exit 0 when the scenario's expect: block is\n"
    "met, 1 when not, 2 on bad usage or unreadable input. See docs/SCENARIOS.md.\n";

// The simulator keeps every counter file open (about 60 per NIC: 31,000 for 64 hosts x 8 NICs)
// and the limit is often 1,024 or 20,000: raise it, for the children too, as far as allowed.
void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlimit wanted = limit;
  wanted.rlim_max = std::max<rlim_t>(limit.rlim_max, 1 << 20);
  wanted.rlim_cur = wanted.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &wanted) != 0) {  // not privileged: up to the hard limit
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

bool Executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

// Defaults found from this binary: the programs of the build tree (sim/railwatch-sim beside
// daemon/ and agent/) or of an installation (one bin/ directory); the playbooks, profiles and
// baseline script where every program finds shipped data (common/shipped_data.h).
void FindDefaults(RunOptions& o) {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  o.self = self.string();
  const fs::path dir = self.parent_path();
  if (fs::exists(dir / "../daemon/railwatchd", ec)) {
    o.daemon = fs::weakly_canonical(dir / "../daemon/railwatchd", ec).string();
    o.agent = fs::weakly_canonical(dir / "../agent/railwatch-agent", ec).string();
    o.cli = fs::weakly_canonical(dir / "../cli/railwatch", ec).string();
    o.loadgen = fs::weakly_canonical(dir / "../bench/railwatch-loadgen", ec).string();
  } else {
    o.daemon = (dir / "railwatchd").string();
    o.agent = (dir / "railwatch-agent").string();
    o.cli = (dir / "railwatch").string();
    o.loadgen = (dir / "railwatch-loadgen").string();
  }
  o.rules = ShippedPath("rules");
  o.gnmi_profiles = ShippedPath("profiles/gnmi");
  o.baseline_script = ShippedPath("baseline/baseline.py");
}

// Whether the agent reads the simulator's ethtool dumps (--ethtool_dumps), from its --helpfull.
bool AgentHasFlag(const std::string& agent, const std::string& flag) {
  const std::string command = absl::StrCat("'", agent, "' --helpfull 2>&1");
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return false;
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  pclose(p);
  return absl::StrContains(text, absl::StrCat("-", flag, " "));
}

// Scenario files from the arguments: files as they are, directories as their *.yaml, sorted.
std::vector<std::string> ScenarioFiles(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    std::error_code ec;
    if (!fs::is_directory(a, ec)) {
      files.push_back(a);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const fs::directory_entry& e : fs::directory_iterator(a, ec)) {
      if (e.path().extension() == ".yaml") in_dir.push_back(e.path().string());
    }
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  return files;
}

ScenarioScore FailedRun(const Scenario& s, const std::string& error) {
  ScenarioScore score;
  score.name = s.name;
  score.hosts = s.topology.hosts;
  score.duration_s = absl::ToDoubleSeconds(s.duration);
  score.error = error;
  score.problems.push_back(absl::StrCat("the run broke: ", error));
  return score;
}

int Usage(const std::string& problem, const char* usage, const std::string& flags_help) {
  std::cerr << "railwatch-sim: " << problem << "\n\n" << usage << "\nFlags:\n" << flags_help;
  return 2;
}

}  // namespace

bool SimHasFlag(absl::string_view name) { return absl::FindCommandLineFlag(name) != nullptr; }

int RunMain(const std::vector<std::string>& args, absl::Notification& stop) {
  RunOptions o;
  FindDefaults(o);
  std::string baseline_tail = "90s", settle = "10s";
  FlagSet flags;
  flags.String(
      "out", &o.out_dir,
      "put each scenario's work directory here (<out>/<name>); default: a temporary directory");
  flags.Bool("keep", &o.keep, "keep the work directories (logs, ground truth, diagnoses.json)");
  flags.Int("jobs", &o.jobs, "scenarios run at once");
  flags.Bool("json", &o.json, "print the scores as JSON (docs/SCENARIOS.md)");
  flags.Bool("live", &o.live, "print each diagnosis as it fires, with its evidence and runbook");
  flags.Bool("forever", &o.forever, "after the scenario, keep everything running until Ctrl-C");
  flags.Bool("baseline", &o.baseline,
             "also run the threshold baseline (sim/baseline) and score it side by side");
  flags.String("baseline_tail", &baseline_tail,
               "with --baseline: added to each scenario's duration (its for: clauses are slow)");
  flags.String("settle", &settle,
               "end a scenario this long after its last fault once every fault is detected "
               "(0: run to its duration; never with --baseline or --forever)");
  flags.String("topology_source", &o.topology_source,
               "file: railwatchd and the switch agent read the simulator's topology file; "
               "discovered: no file, railwatchd discovers the map (LLDP, NICs) and the run checks "
               "it against the simulator's topology");
  flags.String("listen", &o.listen, "railwatchd's gRPC address");
  flags.String("metrics_listen", &o.metrics_listen, "railwatchd's /metrics address");
  flags.String("daemon", &o.daemon, "railwatchd");
  flags.String("agent", &o.agent, "railwatch-agent");
  std::string load;
  flags.String("load", &load,
               "AGENTSxSERIES: also play this many quiet agents of this many series each into "
               "railwatchd with railwatch-loadgen (detection under load, e.g. 1024x1000)");
  flags.String("loadgen", &o.loadgen, "railwatch-loadgen, for --load");
  flags.String("rules", &o.rules, "playbooks directory for railwatchd");
  flags.String("gnmi_profiles", &o.gnmi_profiles, "gNMI path profiles for the switch agent");
  flags.String("baseline_script", &o.baseline_script, "the baseline's baseline.py");
  flags.String("python", &o.python, "the Python that runs the baseline");
  std::vector<std::string> positional;
  if (absl::Status st = flags.Parse(args, &positional); !st.ok()) {
    if (absl::IsCancelled(st)) {  // --help
      std::cout << kRunUsage << "\nFlags:\n" << flags.Help();
      return 0;
    }
    return Usage(std::string(st.message()), kRunUsage, flags.Help());
  }
  absl::StatusOr<absl::Duration> tail = ParseDuration(baseline_tail);
  if (!tail.ok())
    return Usage("--baseline_tail: " + std::string(tail.status().message()), kRunUsage,
                 flags.Help());
  o.baseline_tail = *tail;
  absl::StatusOr<absl::Duration> settle_for =
      settle == "0" ? absl::StatusOr<absl::Duration>(absl::ZeroDuration()) : ParseDuration(settle);
  if (!settle_for.ok() || *settle_for < absl::ZeroDuration())
    return Usage("--settle: " + (settle_for.ok() ? std::string("negative")
                                                 : std::string(settle_for.status().message())),
                 kRunUsage, flags.Help());
  o.settle = *settle_for;
  if (!load.empty()) {
    const std::vector<std::string> parts = absl::StrSplit(load, 'x');
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &o.load_agents) ||
        !absl::SimpleAtoi(parts[1], &o.load_series) || o.load_agents < 1 || o.load_series < 1) {
      return Usage(absl::StrCat("--load=", load, ": expected AGENTSxSERIES, e.g. 1024x1000"),
                   kRunUsage, flags.Help());
    }
    if (!Executable(o.loadgen)) {
      return Usage(absl::StrCat("--load needs railwatch-loadgen; --loadgen=", o.loadgen,
                                " is not an executable (build the railwatch-loadgen target)"),
                   kRunUsage, flags.Help());
    }
  }
  if (positional.empty()) return Usage("no scenario file", kRunUsage, flags.Help());
  if (o.jobs < 1) return Usage("--jobs must be 1 or more", kRunUsage, flags.Help());
  if (o.topology_source != "file" && o.topology_source != "discovered") {
    return Usage("--topology_source must be file or discovered, not \"" + o.topology_source + "\"",
                 kRunUsage, flags.Help());
  }
  for (const auto& [flag, path] :
       {std::pair<std::string, std::string>{"daemon", o.daemon}, {"agent", o.agent}}) {
    if (!Executable(path))
      return Usage(absl::StrCat("--", flag, "=", path, " is not an executable"), kRunUsage,
                   flags.Help());
  }
  if (o.baseline && !fs::exists(o.baseline_script)) {
    return Usage(absl::StrCat("--baseline_script=", o.baseline_script, " does not exist"),
                 kRunUsage, flags.Help());
  }
  if (!Executable(o.cli)) o.cli = "railwatch";

  std::vector<Scenario> scenarios;
  std::vector<std::string> problems;
  for (const std::string& file : ScenarioFiles(positional)) {
    absl::StatusOr<Scenario> s = LoadScenarioFile(file);
    if (s.ok()) {
      scenarios.push_back(std::move(*s));
    } else {
      problems.emplace_back(s.status().message());
    }
  }
  for (size_t i = 0; i < scenarios.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (scenarios[i].name == scenarios[j].name) {
        problems.push_back(absl::StrCat(scenarios[i].file, ": the name `", scenarios[i].name,
                                        "` is also ", scenarios[j].file, "'s"));
      }
    }
  }
  if (!problems.empty()) {
    std::cerr << absl::StrJoin(problems, "\n") << "\n";
    return 2;
  }
  o.agent_has_ethtool_dumps = AgentHasFlag(o.agent, "ethtool_dumps");
  RaiseOpenFileLimit();

  Printer printer(o.json);
  std::vector<ScenarioRun> runs(scenarios.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < scenarios.size() && !stop.HasBeenNotified();) {
      runs[i] = RunScenario(scenarios[i], o, stop, printer);
      if (!runs[i].error.empty())
        runs[i].scores.insert(runs[i].scores.begin(), FailedRun(scenarios[i], runs[i].error));
      if (!o.json && !o.forever) printer.Out(ScoreTable(runs[i].scores, /*with_summary=*/false));
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < std::min<int>(o.jobs, static_cast<int>(scenarios.size())); ++j)
    threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();

  std::vector<ScenarioScore> all;
  bool passed = !stop.HasBeenNotified();
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].scores.empty())
      runs[i].scores.push_back(FailedRun(scenarios[i], "not run (interrupted)"));
    passed = passed && runs[i].passed();
    all.insert(all.end(), runs[i].scores.begin(), runs[i].scores.end());
  }
  printer.Out(o.json ? ScoreJson(all) : ScoreSummary(all));
  return passed ? 0 : 1;
}

int ScoreMain(const std::vector<std::string>& args) {
  std::string scenario_file, truth_file, diagnoses_file, system = "railwatch";
  bool json = false;
  FlagSet flags;
  flags.String("scenario", &scenario_file, "the scenario file");
  flags.String("truth", &truth_file, "the simulator's ground truth (JSON lines)");
  flags.String("diagnoses", &diagnoses_file, "`railwatch diagnoses --state=all --json` of the run");
  flags.String("system", &system, "the name the scores carry (railwatch, baseline)");
  flags.Bool("json", &json, "print JSON (docs/SCENARIOS.md)");
  std::vector<std::string> positional;
  if (absl::Status st = flags.Parse(args, &positional); !st.ok()) {
    if (absl::IsCancelled(st)) {
      std::cout << kScoreUsage << "\nFlags:\n" << flags.Help();
      return 0;
    }
    return Usage(std::string(st.message()), kScoreUsage, flags.Help());
  }
  if (!positional.empty())
    return Usage("unexpected argument " + positional[0], kScoreUsage, flags.Help());
  if (scenario_file.empty() || truth_file.empty() || diagnoses_file.empty()) {
    return Usage("--scenario, --truth and --diagnoses are required", kScoreUsage, flags.Help());
  }
  absl::StatusOr<Scenario> scenario = LoadScenarioFile(scenario_file);
  absl::StatusOr<std::string> truth_text = ReadFile(truth_file);
  absl::StatusOr<std::string> diagnoses_text = ReadFile(diagnoses_file);
  for (const absl::Status& st : {scenario.status(), truth_text.status(), diagnoses_text.status()}) {
    if (!st.ok()) {
      std::cerr << "railwatch-sim score: " << st.message() << "\n";
      return 2;
    }
  }
  ScoreInput in;
  in.scenario = &*scenario;
  in.system = system;
  absl::StatusOr<std::vector<TruthRecord>> truth = ParseGroundTruth(*truth_text, truth_file);
  absl::StatusOr<v1::ListDiagnosesResponse> diagnoses =
      ParseDiagnosesJson(*diagnoses_text, diagnoses_file);
  for (const absl::Status& st : {truth.status(), diagnoses.status()}) {
    if (!st.ok()) {
      std::cerr << "railwatch-sim score: " << st.message() << "\n";
      return 2;
    }
  }
  in.truth = std::move(*truth);
  in.diagnoses = std::move(*diagnoses);
  const ScenarioScore score = ScoreScenario(in);
  std::cout << (json ? ScoreJson({score}) : ScoreTable({score}));
  return score.passed ? 0 : 1;
}

}  // namespace railwatch::sim
