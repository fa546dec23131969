#pragma once

// `railwatch-sim run`: plays scenarios through the real programs and scores them
// (docs/SCENARIOS.md "Running scenarios").

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "sim/scenario.h"
#include "sim/score.h"

namespace railwatch::sim {

struct RunOptions {
  std::string out_dir;  // work directories go here (<out>/<scenario>); empty: a temp dir each
  bool keep = false;    // keep the work directories
  int jobs = 1;         // scenarios at once
  bool json = false;
  bool live = false;     // print each diagnosis as it fires
  bool forever = false;  // keep everything running after the scenario, until Ctrl-C
  bool baseline = false;
  absl::Duration baseline_tail = absl::Seconds(90);
  // A scenario with faults ends this long after its last fault was injected and every fault was
  // detected, rather than at its duration (0: always run to the duration). Not with --baseline
  // or --forever.
  absl::Duration settle = absl::Seconds(10);
  // railwatchd's gRPC and /metrics addresses (the demo's --forever gives fixed ones).
  std::string listen = "127.0.0.1:0", metrics_listen = "127.0.0.1:0";
  std::string self;  // this railwatch-sim (the simulator)
  std::string daemon, agent, cli, rules, gnmi_profiles, baseline_script;
  std::string python = "python3";
  bool agent_has_ethtool_dumps = false;
  // Background load (--load=AGENTSxSERIES): railwatch-loadgen plays this many quiet agents of
  // this many series each into the scenario's railwatchd (docs/BENCHMARKS.md, detection under
  // load); 0 agents: none.
  int load_agents = 0, load_series = 0;
  std::string loadgen;  // the railwatch-loadgen program
  // Where railwatchd's map comes from: "file" (the simulator's topology file, --topology) or
  // "discovered" (no file: the switches' LLDP and the hosts' NICs; the run then checks the
  // discovered map against the simulator's topology, docs/TOPOLOGY.md).
  std::string topology_source = "file";
  // Stop waiting for agents after this long when the scenario has no fault to wait for.
  absl::Duration connect_timeout = absl::Seconds(120);
};

// Serialises what the scenarios running at once print: results on stdout, progress on stderr.
class Printer {
 public:
  explicit Printer(bool json) : json_(json) {}
  void Out(const std::string& text);       // results (stdout)
  void Progress(const std::string& text);  // stderr
  // --live lines: stdout, or stderr under --json (stdout is the JSON's).
  void Live(const std::string& text);

 private:
  bool json_;
  std::mutex mu_;
};

struct ScenarioRun {
  std::vector<ScenarioScore> scores;  // railwatch, then the baseline when it ran
  std::string error;                  // the run broke (set-up, a process died, interrupted)
  double setup_s = 0;
  bool passed() const { return error.empty() && !scores.empty() && scores.front().passed; }
};

ScenarioRun RunScenario(const Scenario& scenario, const RunOptions& options,
                        absl::Notification& stop, Printer& printer);

// Whether this railwatch-sim has a flag of the simulator's (absl's registry).
bool SimHasFlag(absl::string_view name);

// The whole `railwatch-sim run` command: argv after "run". Exit code: 0 every scenario met its
// expect: block, 1 otherwise, 2 usage.
int RunMain(const std::vector<std::string>& args, absl::Notification& stop);
// `railwatch-sim score`: argv after "score".
int ScoreMain(const std::vector<std::string>& args);

}  // namespace railwatch::sim
