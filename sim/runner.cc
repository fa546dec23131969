// One scenario through the real programs: simulator, railwatchd, agents (and the baseline),
// then the diagnoses scored against the ground truth.
#include "sim/runner.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/client.h"
#include "common/text.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "railwatch/v1/query.grpc.pb.h"
#include "sim/runner_live.h"
#include "sim/runner_process.h"
#include "sim/scenario_flags.h"
#include "topology/discovery.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim {

void Printer::Out(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  std::cout << text << std::flush;
}
void Printer::Progress(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  std::cerr << text << std::flush;
}
void Printer::Live(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  (json_ ? std::cerr : std::cout) << text << std::flush;
}

namespace {

namespace fs = std::filesystem;

constexpr absl::Duration kStopGrace = absl::Seconds(5);
constexpr absl::Duration kStartTimeout = absl::Seconds(30);
constexpr absl::Duration kPoll = absl::Milliseconds(200);
// Agents railwatch-loadgen plays (--load) are named with this prefix.
constexpr char kLoadPrefix[] = "load-";

// $TMPDIR, else /dev/shm: the simulator rewrites thousands of counter files ten times a second,
// and on a disk with discard removing a 32-host tree took 22 s (0.2 s in memory); else /tmp.
std::string WorkBase() {
  const char* tmp = getenv("TMPDIR");
  if (tmp != nullptr && *tmp != '\0') return tmp;
  if (access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  return "/tmp";
}

bool FileReady(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec) && fs::file_size(path, ec) > 0;
}

// The processes of one run and what they tell; everything is stopped when it goes.
class Run {
 public:
  Run(const Scenario& s, const RunOptions& o, absl::Notification& stop, Printer& printer)
      : s_(s), o_(o), stop_(stop), printer_(printer) {}
  ~Run() { StopEverything(); }

  ScenarioRun Play();

 private:
  void Say(const std::string& line) {
    printer_.Progress(absl::StrCat("[", s_.name, "] ", line, "\n"));
  }
  std::string SinceStart() const {
    return absl::StrFormat("%.1f s", absl::ToDoubleSeconds(absl::Now() - sim_start_));
  }

  absl::Status MakeWorkDir();
  absl::Status Start(const std::string& name, std::vector<std::string> argv) {
    const std::string log = absl::StrCat(paths_.work, "/logs/", name, ".log");
    absl::StatusOr<std::unique_ptr<Child>> c = Child::Start(name, argv, log);
    if (!c.ok()) return c.status();
    children_.push_back(std::move(*c));
    return absl::OkStatus();
  }
  // OK while every child runs and no one asked to stop; else why not.
  absl::Status Healthy() {
    if (stop_.HasBeenNotified()) return absl::CancelledError("interrupted");
    for (const std::unique_ptr<Child>& c : children_) {
      if (!c->Running()) {
        return absl::AbortedError(absl::StrCat(c->name(), " ", c->ExitDescription(),
                                               "; the end of ", c->log_path(), ":\n",
                                               c->LogTail(15)));
      }
    }
    return absl::OkStatus();
  }
  // Waits until `ready` holds, a child dies, or `deadline`.
  template <typename Ready>
  absl::Status WaitFor(absl::Time deadline, const std::string& what, Ready ready) {
    while (true) {
      if (absl::Status h = Healthy(); !h.ok()) return h;
      if (ready()) return absl::OkStatus();
      if (absl::Now() >= deadline) return absl::DeadlineExceededError(absl::StrCat("no ", what));
      stop_.WaitForNotificationWithTimeout(kPoll);
    }
  }
  absl::Status StartFabric();
  absl::Status StartDaemonAndAgents();
  absl::Status WaitConnected();
  std::string NotConnected();
  absl::Status FetchDiagnoses();
  // Runs to the scenario's end, or --settle after its last fault once every fault is detected.
  absl::Status RunToEnd();
  // --topology_source=discovered: the daemon's discovered map against the simulator's
  // topology file; "" when they are the same.
  std::string CheckDiscoveredTopology();
  // Keeps everything running until Ctrl-C, saying how to look at it (`example_id`: a
  // diagnosis to explain).
  void Forever(const std::string& example_id);
  void StopEverything() {
    live_.reset();
    std::vector<Child*> all;
    for (const std::unique_ptr<Child>& c : children_) all.push_back(c.get());
    if (all.empty()) return;
    const absl::Time start = absl::Now();
    StopAll(all, kStopGrace);
    Say(absl::StrFormat("stopped %d processes in %.1f s", all.size(),
                        absl::ToDoubleSeconds(absl::Now() - start)));
    children_.clear();
  }
  absl::StatusOr<ScenarioScore> Score(const std::string& system, const std::string& diagnoses);
  void NoteBaselineReady(ScenarioScore& score);

  const Scenario& s_;
  const RunOptions& o_;
  absl::Notification& stop_;
  Printer& printer_;
  RunPaths paths_;
  absl::Time sim_start_;
  absl::Duration ran_for_;  // set when the run ended early (--settle)
  std::vector<std::unique_ptr<Child>> children_;
  std::string grpc_, metrics_;
  int targets_ = 0;
  std::unique_ptr<v1::Query::Stub> stub_;
  std::unique_ptr<LiveWatch> live_;
  std::string topology_problem_;  // set by CheckDiscoveredTopology
  double setup_s_ = 0;
  // Set-up milestones from time zero: the simulator's files written, railwatchd ready.
  double files_s_ = 0, daemon_s_ = 0;
};

absl::Status Run::MakeWorkDir() {
  std::error_code ec;
  std::string work;
  if (!o_.out_dir.empty()) {
    work = absl::StrCat(o_.out_dir, "/", s_.name);
    fs::remove_all(work, ec);
    fs::create_directories(work, ec);
  } else {
    std::string pattern = absl::StrCat(WorkBase(), "/railwatch-", s_.name, "-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot make a work directory ", pattern));
    }
    work = pattern;
  }
  paths_ = RunPathsUnder(fs::absolute(work).string());
  fs::create_directories(paths_.work + "/logs", ec);
  fs::create_directories(paths_.work + "/state", ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot make ", paths_.work, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status Run::StartFabric() {
  absl::StatusOr<std::vector<std::string>> sim_args =
      SimulatorArgs(s_, paths_, [](absl::string_view flag) { return SimHasFlag(flag); });
  if (!sim_args.ok()) return sim_args.status();
  std::vector<std::string> argv = {o_.self};
  argv.insert(argv.end(), sim_args->begin(), sim_args->end());
  sim_start_ = absl::Now();
  if (absl::Status st = Start("railwatch-sim", argv); !st.ok()) return st;
  const bool ib = s_.topology.infiniband;
  const std::string switches_file =
      ib ? absl::StrCat(paths_.ib_outputs, "/ibdiagnet2.db_csv") : paths_.targets;
  if (absl::Status st = WaitFor(absl::Now() + kStartTimeout,
                                ib ? "topology and InfiniBand subnet files from the simulator"
                                   : "topology and targets files from the simulator",
                                [&] { return FileReady(paths_.topology) && FileReady(switches_file); });
      !st.ok()) {
    return st;
  }
  files_s_ = absl::ToDoubleSeconds(absl::Now() - sim_start_);
  if (o_.baseline) {
    std::vector<std::string> argv = {o_.python};
    for (const std::string& a : BaselineArgs(paths_, o_.baseline_script, s_.topology.hosts)) {
      argv.push_back(a);
    }
    if (absl::Status st = Start("baseline", argv); !st.ok()) return st;
  }
  if (ib) return absl::OkStatus();  // no gNMI targets
  try {
    targets_ = static_cast<int>(YAML::LoadFile(paths_.targets)["targets"].size());
  } catch (const YAML::Exception& e) {
    return absl::InternalError(absl::StrCat(paths_.targets, ": ", e.what()));
  }
  return absl::OkStatus();
}

absl::Status Run::StartDaemonAndAgents() {
  std::vector<std::string> argv = {o_.daemon};
  const bool file = o_.topology_source != "discovered";
  for (const std::string& a : DaemonArgs(paths_, o_.rules, o_.listen, o_.metrics_listen, file)) {
    argv.push_back(a);
  }
  // The agents ask the simulated RAS endpoints every 2 s (HostRasArgs): a rank behind in two
  // answers in a row is stuck, where a real site waits minutes (checkpoints).
  argv.push_back("--job_hang_after=1s");
  if (absl::Status st = Start("railwatchd", argv); !st.ok()) return st;
  if (absl::Status st = WaitFor(absl::Now() + kStartTimeout, "ready file from railwatchd",
                                [&] { return FileReady(paths_.daemon_ready); });
      !st.ok()) {
    return st;
  }
  try {
    std::ifstream in(paths_.daemon_ready);
    const nlohmann::json ready = nlohmann::json::parse(in);
    grpc_ = ready.at("grpc").get<std::string>();
    metrics_ = ready.at("metrics").get<std::string>();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(paths_.daemon_ready, ": ", e.what()));
  }
  daemon_s_ = absl::ToDoubleSeconds(absl::Now() - sim_start_);
  stub_ = v1::Query::NewStub(grpc::CreateChannel(grpc_, grpc::InsecureChannelCredentials()));
  if (o_.live) {
    live_ =
        std::make_unique<LiveWatch>(grpc_, absl::ToUnixNanos(sim_start_),
                                    o_.jobs > 1 ? absl::StrCat("[", s_.name, "] ") : "", printer_);
  }
  const bool ib = s_.topology.infiniband;
  std::vector<std::string> sw = {o_.agent};
  for (const std::string& a : ib ? IbScannerArgs(paths_, grpc_, s_.topology.ib_mad)
                                 : SwitchAgentArgs(paths_, grpc_, o_.gnmi_profiles, file)) {
    sw.push_back(a);
  }
  if (absl::Status st = Start(ib ? kIbScannerId : "switch-agent", sw); !st.ok()) return st;
  for (int h = 1; h <= s_.topology.hosts; ++h) {
    const std::string host = SimHostName(h);
    std::vector<std::string> argv = {o_.agent};
    for (const std::string& a :
         HostAgentArgs(paths_, grpc_, host, o_.agent_has_ethtool_dumps, ib)) {
      argv.push_back(a);
    }
    // The host's NCCL RAS endpoint, where the simulator serves one (sim/ras_server.h).
    for (const std::string& a : HostRasArgs(paths_, host)) argv.push_back(a);
    if (absl::Status st = Start(host, argv); !st.ok()) return st;
  }
  if (o_.load_agents > 0) {
    const std::vector<std::string> load = {
        o_.loadgen, absl::StrCat("--server=", grpc_), absl::StrCat("--agents=", o_.load_agents),
        absl::StrCat("--series=", o_.load_series), "--interval=1s", "--duration=0",
        absl::StrCat("--host_prefix=", kLoadPrefix)};
    if (absl::Status st = Start("loadgen", load); !st.ok()) return st;
  }
  return absl::OkStatus();
}

// Who is not connected yet, in words; "" when everyone is.
std::string Run::NotConnected() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::ListAgentsResponse agents;
  if (grpc::Status st = stub_->ListAgents(&context, v1::ListAgentsRequest(), &agents); !st.ok()) {
    return absl::StrCat("railwatchd does not answer ListAgents: ", st.error_message());
  }
  int hosts = 0, targets = 0, load = 0;
  bool switch_agent = false;
  const std::string switch_agent_id = s_.topology.infiniband ? kIbScannerId : "switch-agent";
  for (const v1::AgentInfo& a : agents.agents()) {
    if (!a.connected()) continue;
    if (absl::StartsWith(a.agent_id(), kLoadPrefix)) {
      ++load;
    } else if (a.agent_id() == switch_agent_id) {
      switch_agent = true;
      for (const v1::TargetHealth& t : a.targets()) targets += t.connected() ? 1 : 0;
    } else {
      ++hosts;
    }
  }
  std::vector<std::string> missing;
  if (hosts < s_.topology.hosts)
    missing.push_back(absl::StrCat(hosts, " of ", s_.topology.hosts, " host agents"));
  if (!switch_agent) {
    missing.push_back(s_.topology.infiniband ? "no InfiniBand fabric scanner" : "no switch agent");
  }
  if (load < o_.load_agents)
    missing.push_back(absl::StrCat(load, " of ", o_.load_agents, " load agents"));
  if (targets < targets_)
    missing.push_back(absl::StrCat(targets, " of ", targets_, " gNMI targets"));
  return absl::StrJoin(missing, "; ");
}

absl::Status Run::WaitConnected() {
  const std::optional<absl::Duration> first = s_.FirstEventAt();
  const absl::Time deadline = first ? sim_start_ + *first : absl::Now() + o_.connect_timeout;
  std::string missing;
  absl::Status st = WaitFor(deadline, "connection", [&] {
    missing = NotConnected();
    return missing.empty();
  });
  if (absl::IsDeadlineExceeded(st)) {
    return absl::DeadlineExceededError(
        first ? absl::StrCat("the first fault or noise is due at ", HumanDuration(*first),
                             " but after ", SinceStart(), " not everything is connected (", missing,
                             "): raise its offset above the set-up time")
              : absl::StrCat("after ", SinceStart(), " not everything is connected: ", missing));
  }
  if (!st.ok()) return st;
  setup_s_ = absl::ToDoubleSeconds(absl::Now() - sim_start_);
  // The simulator's own clock decides: a fault already in the ground truth came too early.
  absl::StatusOr<std::string> truth = ReadFile(paths_.ground_truth);
  if (truth.ok() && truth->find("\"fault\"") != std::string::npos) {
    return absl::FailedPreconditionError(
        absl::StrCat("a fault was injected before everything was connected (", SinceStart(),
                     "): raise its offset"));
  }
  return absl::OkStatus();
}

absl::Status Run::FetchDiagnoses() {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::ListDiagnosesResponse response;  // an empty filter: every state
  grpc::Status st = stub_->ListDiagnoses(&context, v1::ListDiagnosesRequest(), &response);
  if (!st.ok()) {
    return absl::UnavailableError(absl::StrCat("ListDiagnoses: ", st.error_message()));
  }
  std::ofstream out(paths_.diagnoses);
  out << ToJson(response) << "\n";
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", paths_.diagnoses));
  return absl::OkStatus();
}

void Run::Forever(const std::string& example_id) {
  const std::string cli = absl::StrCat(o_.cli.empty() ? "railwatch" : o_.cli, " --server=", grpc_);
  const std::vector<std::string> lines = {
      "the scenario is over; everything keeps running until Ctrl-C",
      absl::StrCat("  railwatchd gRPC   ", grpc_),
      absl::StrCat("  /metrics          http://", metrics_, "/metrics"),
      absl::StrCat("  work directory    ", paths_.work, " (logs/, truth.jsonl, diagnoses.json)"),
      "  try:",
      absl::StrCat("    ", cli, " diagnoses --state=all"),
      absl::StrCat("    ", cli, " watch"),
      absl::StrCat("    ", cli, " explain ", example_id.empty() ? "<ID>" : example_id),
      absl::StrCat("    ", cli, " agents"),
      absl::StrCat("    ", cli, " top"),
      absl::StrCat("    curl -s http://", metrics_, "/metrics | grep '^",
                   s_.topology.infiniband ? "fabric_rdma_port_transmit_wait" : "fabric_pfc", "'"),
  };
  Say(absl::StrJoin(lines, "\n"));
  while (Healthy().ok()) stop_.WaitForNotificationWithTimeout(absl::Seconds(1));
}

absl::Status Run::RunToEnd() {
  const absl::Time end =
      sim_start_ + s_.duration + (o_.baseline ? o_.baseline_tail : absl::ZeroDuration());
  const bool may_settle = o_.settle > absl::ZeroDuration() && !o_.baseline && !o_.forever &&
                          !s_.faults.empty() && s_.expect.all_detected;
  absl::Duration last_fault;
  for (const ScenarioFault& f : s_.faults) last_fault = std::max(last_fault, f.at);
  absl::Time next_check = sim_start_ + last_fault + o_.settle;
  absl::Status st = WaitFor(end, "", [&] {
    const absl::Time now = absl::Now();
    if (!may_settle || now < next_check) return false;
    next_check = now + absl::Seconds(2);
    if (!FetchDiagnoses().ok()) return false;
    absl::StatusOr<ScenarioScore> score = Score("railwatch", paths_.diagnoses);
    if (!score.ok()) return false;
    int64_t last_fired = 0;
    for (const FaultScore& f : score->faults) {
      // Faults of one playbook on several culprits (links-at-risk): each must have its own.
      if (!f.detected || !f.right_culprit) return false;
      last_fired = std::max(last_fired, f.injected_at_unix_nano + f.delay_ms * 1000000);
    }
    return now >= absl::FromUnixNanos(last_fired) + o_.settle;
  });
  if (st.ok()) {
    Say(absl::StrCat("every fault detected; ending at ", SinceStart(), " (", HumanDuration(o_.settle),
                     " after the last fault and the last detection) instead of ",
                     HumanDuration(end - sim_start_)));
  }
  // Ended early: host-hours count what ran; at the duration, the scenario's (as `score` does).
  if (st.ok()) ran_for_ = absl::Now() - sim_start_;
  if (st.ok() || absl::IsDeadlineExceeded(st)) st = FetchDiagnoses();
  return st;
}

std::string Run::CheckDiscoveredTopology() {
  absl::StatusOr<Topology> truth = Topology::LoadFile(paths_.topology);
  if (!truth.ok()) return absl::StrCat("the simulator's topology: ", truth.status().message());
  // Discovery passes every 10 s: give a map that is still settling one more pass.
  std::string problem;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) absl::SleepFor(absl::Seconds(5));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::TopologyRequest request;
    request.set_view("discovered");
    v1::TopologyResponse response;
    if (grpc::Status st = stub_->Topology(&context, request, &response); !st.ok()) {
      return absl::StrCat("Topology: ", st.error_message());
    }
    if (response.yaml().empty()) {
      problem = "railwatchd discovered no map";
      continue;
    }
    absl::StatusOr<Topology> found = Topology::LoadString(response.yaml(), "discovered");
    if (!found.ok()) return absl::StrCat("the discovered map does not load: ", found.status().message());
    const std::vector<TopologyDifference> diffs = DiffTopologies(*truth, *found);
    if (diffs.empty()) {
      // The hosts' agents read their lldpd answers: every NIC cable is heard from both ends.
      std::vector<std::string> one_end;
      for (const v1::TopologyHost& h : response.hosts()) {
        for (const v1::TopologyNic& n : h.nics()) {
          if (n.provenance() != "both ends") {
            one_end.push_back(absl::StrCat(h.name(), "/", n.device(), " (", n.provenance(), ")"));
          }
        }
      }
      if (one_end.empty()) return "";
      problem = absl::StrCat(one_end.size(), " NIC cables are not heard from both ends, e.g. ",
                             one_end.front());
      continue;
    }
    std::vector<std::string> shown;
    for (size_t i = 0; i < diffs.size() && i < 3; ++i) {
      shown.push_back(absl::StrCat(diffs[i].where, " ", diffs[i].what, ": ",
                                   diffs[i].declared.empty() ? "-" : diffs[i].declared, " vs ",
                                   diffs[i].discovered.empty() ? "-" : diffs[i].discovered));
    }
    problem = absl::StrCat("the discovered map differs from the simulator's topology in ",
                           diffs.size(), " places (", absl::StrJoin(shown, "; "), ")");
  }
  return problem;
}

absl::StatusOr<ScenarioScore> Run::Score(const std::string& system, const std::string& diagnoses) {
  absl::StatusOr<std::string> truth_text = ReadFile(paths_.ground_truth);
  ScoreInput in;
  in.scenario = &s_;
  in.system = system;
  in.sim_start_unix_nano = absl::ToUnixNanos(sim_start_);
  in.duration = ran_for_ > absl::ZeroDuration()
                    ? ran_for_
                    : s_.duration + (o_.baseline ? o_.baseline_tail : absl::ZeroDuration());
  if (truth_text.ok()) {  // no file: nothing was injected
    absl::StatusOr<std::vector<TruthRecord>> truth =
        ParseGroundTruth(*truth_text, paths_.ground_truth);
    if (!truth.ok()) return truth.status();
    in.truth = std::move(*truth);
  }
  absl::StatusOr<std::string> text = ReadFile(diagnoses);
  if (!text.ok()) return text.status();
  absl::StatusOr<v1::ListDiagnosesResponse> d = ParseDiagnosesJson(*text, diagnoses);
  if (!d.ok()) return d.status();
  in.diagnoses = std::move(*d);
  ScenarioScore score = ScoreScenario(in);
  score.setup_s = setup_s_;
  return score;
}

// The set-up waits for railwatch's agents, not for the baseline (its Prometheus scrapes every
// 10 s): when it was ready only after the first fault, its score says so.
void Run::NoteBaselineReady(ScenarioScore& score) {
  int64_t ready = 0;
  try {
    std::ifstream in(paths_.baseline_ready);
    ready = std::stoll(nlohmann::json::parse(in).at("ready_at_unix_nano").get<std::string>());
  } catch (const std::exception&) {
    score.problems.push_back("the baseline never wrote its ready file");
    score.passed = false;
    return;
  }
  const std::optional<absl::Duration> first = s_.FirstEventAt();
  const absl::Duration after = absl::FromUnixNanos(ready) - sim_start_;
  if (first && after > *first) {
    score.problems.push_back(absl::StrFormat(
        "the baseline was ready %.1f s after the simulator started, after the first fault (%s)",
        absl::ToDoubleSeconds(after), HumanDuration(*first)));
    score.passed = false;
  }
}

ScenarioRun Run::Play() {
  ScenarioRun result;
  absl::Status st = MakeWorkDir();
  if (st.ok()) st = StartFabric();
  if (st.ok()) st = StartDaemonAndAgents();
  if (st.ok()) st = WaitConnected();
  if (st.ok()) {
    Say(absl::StrCat(
        "all ", s_.topology.hosts, " host agents, ",
        s_.topology.infiniband ? "the InfiniBand fabric scanner"
                               : absl::StrCat("the switch agent and its ", targets_, " gNMI targets"),
        o_.load_agents > 0 ? absl::StrCat(" (and ", o_.load_agents, " load agents)") : "",
        " connected ", absl::StrFormat("%.1f s", setup_s_),
        " after the simulator started (its files at ", absl::StrFormat("%.1f s", files_s_),
        ", railwatchd ready at ", absl::StrFormat("%.1f s", daemon_s_), "); running to ",
        HumanDuration(s_.duration + (o_.baseline ? o_.baseline_tail : absl::ZeroDuration()))));
    st = RunToEnd();
  }
  if (st.ok() && o_.topology_source == "discovered") {
    topology_problem_ = CheckDiscoveredTopology();
    Say(topology_problem_.empty()
            ? "the discovered map equals the simulator's topology, every NIC cable heard from "
              "both ends (no topology file given)"
            : topology_problem_);
  }
  if (st.ok() && o_.forever) {
    std::string example_id;
    if (absl::StatusOr<ScenarioScore> score = Score("railwatch", paths_.diagnoses); score.ok()) {
      printer_.Out(ScoreTable({*score}, /*with_summary=*/false));
      for (const FaultScore& f : score->faults) {
        if (example_id.empty()) example_id = f.diagnosis_id;
      }
    }
    Forever(example_id);
  }
  StopEverything();
  result.setup_s = setup_s_;
  if (!st.ok()) {
    result.error = std::string(st.message());
  } else {
    for (const auto& [system, file] :
         {std::pair<std::string, std::string>{"railwatch", paths_.diagnoses},
          {"baseline", paths_.baseline_diagnoses}}) {
      if (system == "baseline" && !o_.baseline) continue;
      absl::StatusOr<ScenarioScore> score = Score(system, file);
      if (!score.ok()) {
        result.error = absl::StrCat(system, ": ", score.status().message());
        break;
      }
      if (system == "baseline") NoteBaselineReady(*score);
      if (system == "railwatch" && !topology_problem_.empty()) {
        score->problems.push_back(topology_problem_);
        score->passed = false;
      }
      result.scores.push_back(std::move(*score));
    }
  }
  if (!o_.keep && !paths_.work.empty()) {
    std::error_code ec;
    fs::remove_all(paths_.work, ec);
  } else if (!paths_.work.empty()) {
    Say(absl::StrCat("kept ", paths_.work));
  }
  return result;
}

}  // namespace

ScenarioRun RunScenario(const Scenario& scenario, const RunOptions& options,
                        absl::Notification& stop, Printer& printer) {
  Run run(scenario, options, stop, printer);
  return run.Play();
}

}  // namespace railwatch::sim
