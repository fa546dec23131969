// Scenario files: YAML -> Scenario on common/yaml_reader.h, every problem reported as
// FILE:LINE:COLUMN: error[CODE]: message. A fault's own keys are its kind's (sim/faults/).
#include "sim/scenario.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "common/yaml_reader.h"
#include "sim/spec_parsing.h"

namespace railwatch::sim {
namespace {

const std::vector<std::string> kDialects = {"sonic", "arista-eos", "openconfig", "cumulus"};

// The names a list of valid values is summed up by in a message: all of a few, else the first
// two and the last.
std::string NamesHint(const std::vector<std::string>& names) {
  if (names.size() <= 6) return absl::StrJoin(names, ", ");
  return absl::StrCat(names[0], ", ", names[1], " ... ", names.back());
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& known) {
  const std::string hint = ClosestWord(word, known);
  return hint.empty() ? "" : absl::StrCat(" (did you mean `", hint, "`?)");
}

class ScenarioLoader {
 public:
  explicit ScenarioLoader(const std::string& file) : problems_(file) {}

  YamlProblems& problems() { return problems_; }

  void Load(const YAML::Node& root, Scenario& s) {
    if (!root.IsMap()) {
      problems_.Error(
          root, "bad-type",
          "a scenario is a map (name, duration, topology, jobs, noise, faults, expect)");
      return;
    }
    ScenarioMap top(root, "a scenario", problems_);
    top.String("name", s.name);
    top.String("description", s.description);
    if (std::string seed; top.String("seed", seed) && !absl::SimpleAtoi(seed, &s.seed)) {
      top.Problem("seed", "bad-value",
                  absl::StrCat("`seed` must be a whole number, not \"", seed, "\""));
    }
    top.Require("duration");
    top.Duration("duration", s.duration);
    if (top.Has("duration") && s.duration <= absl::ZeroDuration()) {
      top.Problem("duration", "bad-value", "`duration` must be above 0");
    }
    if (const YAML::Node t = top.Get("topology"); t.IsDefined()) LoadTopology(t, s.topology);
    if (const YAML::Node jobs = top.Get("jobs"); jobs.IsDefined()) LoadJobs(jobs, s);
    if (const YAML::Node noise = top.Get("noise"); noise.IsDefined()) LoadNoise(noise, s);
    if (const YAML::Node faults = top.Get("faults"); faults.IsDefined()) {
      if (!faults.IsSequence()) {
        problems_.Error(faults, "bad-type", "`faults` must be a list");
      } else {
        for (const YAML::Node& f : faults) LoadFault(f, s);
      }
    }
    if (const YAML::Node e = top.Get("expect"); e.IsDefined()) LoadExpect(e, s);
    top.Finish();
  }

 private:
  void LoadTopology(const YAML::Node& node, ScenarioTopology& topo) {
    ScenarioMap t(node, "`topology`", problems_);
    if (!t.ok()) return;
    t.Int("hosts", 1, 4096, topo.hosts);
    t.Int("nics", 1, 16, topo.nics);
    t.Int("hosts_per_leaf", 0, 4096, topo.hosts_per_leaf);
    t.Int("spines", 0, 64, topo.spines);
    t.Number("link_gbps", 0, 3200, true, topo.link_gbps);
    if (std::string fabric; t.String("fabric", fabric)) {
      if (fabric != "roce" && fabric != "ib") {
        t.Problem("fabric", "bad-value",
                  absl::StrCat("`fabric` must be roce or ib, not \"", fabric, "\""));
      }
      topo.infiniband = fabric == "ib";
    }
    if (std::string source; t.String("ib_source", source)) {
      if (source != "tools" && source != "mad") {
        t.Problem("ib_source", "bad-value",
                  absl::StrCat("`ib_source` must be tools or mad, not \"", source, "\""));
      } else if (!topo.infiniband) {
        t.Problem("ib_source", "conflict", "`ib_source` is the InfiniBand scanner's: `fabric: ib`");
      }
      topo.ib_mad = source == "mad";
    }
    if (const YAML::Node d = t.Get("dialects"); d.IsDefined()) {
      if (!d.IsSequence() || d.size() == 0) {
        problems_.Error(
            d, "bad-type",
            absl::StrCat("`dialects` must be a list of: ", absl::StrJoin(kDialects, ", ")));
      } else {
        topo.dialects.clear();
        for (const YAML::Node& one : d) {
          const std::string name = one.IsScalar() ? one.Scalar() : "";
          if (std::find(kDialects.begin(), kDialects.end(), name) == kDialects.end()) {
            problems_.Error(
                one, "bad-value",
                absl::StrCat("unknown dialect \"", name, "\"", DidYouMean(name, kDialects),
                             "; known: ", absl::StrJoin(kDialects, ", ")));
          }
          topo.dialects.push_back(name);
        }
      }
    }
    t.Finish();
  }

  void LoadJobs(const YAML::Node& jobs, Scenario& s) {
    if (!jobs.IsSequence()) {
      problems_.Error(jobs, "bad-type", "`jobs` must be a list of {name, hosts: FIRST-LAST, util}");
      return;
    }
    std::vector<std::string> owner(s.topology.hosts + 1);
    std::set<std::string> names;
    for (const YAML::Node& node : jobs) {
      ScenarioMap j(node, "a job", problems_);
      if (!j.ok()) continue;
      ScenarioJob job;
      j.Require("name");
      j.Require("hosts");
      j.String("name", job.name);
      if (!job.name.empty() && !names.insert(job.name).second) {
        j.Problem("name", "duplicate", absl::StrCat("two jobs are called `", job.name, "`"));
      }
      j.Number("util", 0, 1, true, job.util);
      std::string range;
      const bool has_range = j.String("hosts", range) && !range.empty();
      j.Finish();
      if (!has_range) continue;
      std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
      const bool parsed = (ends.size() == 1 || ends.size() == 2) &&
                          absl::SimpleAtoi(ends[0], &job.first_host) &&
                          absl::SimpleAtoi(ends.back(), &job.last_host);
      if (!parsed || job.first_host < 1 || job.last_host < job.first_host ||
          job.last_host > s.topology.hosts) {
        j.Problem("hosts", "bad-value",
                  absl::StrCat("`hosts: ", range, "` must be FIRST-LAST within 1-",
                               s.topology.hosts, " (the topology's hosts)"));
        continue;
      }
      for (int h = job.first_host; h <= job.last_host; ++h) {
        if (!owner[h].empty()) {
          j.Problem("hosts", "conflict",
                    absl::StrCat(SimHostName(h), " is already in job `", owner[h],
                                 "` (a host runs one job at most)"));
          break;
        }
        owner[h] = job.name.empty() ? "?" : job.name;
      }
      s.jobs.push_back(job);
    }
  }

  void LoadNoise(const YAML::Node& node, Scenario& s) {
    ScenarioMap n(node, "`noise`", problems_);
    if (!n.ok()) return;
    n.Bool("bursty", s.noise.bursty);
    n.Number("benign_pause_rate", 0, 1e6, false, s.noise.benign_pause_rate);
    const YAML::Node reloads = n.Get("driver_reloads");
    n.Finish();
    if (!reloads.IsDefined()) return;
    if (!reloads.IsSequence()) {
      problems_.Error(reloads, "bad-type", "`driver_reloads` must be a list of {host, device, at}");
      return;
    }
    for (const YAML::Node& node : reloads) {
      ScenarioMap r(node, "a driver reload", problems_);
      if (!r.ok()) continue;
      DriverReloadNoise reload;
      reload.line = node.Mark().line + 1;
      for (const char* key : {"host", "device", "at"}) r.Require(key);
      if (r.String("host", reload.host)) CheckHost(r, s, reload.host);
      if (r.String("device", reload.device)) CheckDevice(r, s, reload.device);
      r.Duration("at", reload.at);
      CheckTime(r, "at", s, reload.at);
      r.Finish();
      s.noise.driver_reloads.push_back(reload);
    }
  }

  void LoadFault(const YAML::Node& node, Scenario& s) {
    if (!node.IsMap()) {
      problems_.Error(
          node, "bad-type",
          "a fault must be a map such as {kind: link_flap, at: 20s, host: ..., device: ...}");
      return;
    }
    ScenarioFault fault;
    fault.line = node.Mark().line + 1;
    ScenarioMap kind_map(node, "a fault", problems_);
    if (!kind_map.String("kind", fault.kind) || fault.kind.empty()) {
      problems_.Error(node, "missing-key", "a fault: `kind` is required");
      return;
    }
    fault.info = FindFaultKind(fault.kind);
    if (fault.info == nullptr) {
      const std::vector<std::string> kinds = FaultKindNames();
      kind_map.Problem(
          "kind", "unknown-kind",
          absl::StrCat("unknown fault kind `", fault.kind, "`", DidYouMean(fault.kind, kinds),
                       "; known: ", absl::StrJoin(kinds, ", ")));
      return;
    }
    const FaultKind& kind = *fault.info;
    ScenarioMap f(node, absl::StrCat("a ", fault.kind, " fault"), problems_);
    f.Known("kind");
    // What the fault names, then when.
    std::vector<const char*> target_keys;
    switch (kind.target) {
      case FaultTarget::kNic:
        target_keys = {"host", "device"};
        break;
      case FaultTarget::kHost:
        target_keys = {"host"};
        break;
      case FaultTarget::kSwitch:
        target_keys = {"switch"};
        break;
      case FaultTarget::kSwitchPort:
        target_keys = {"switch", "port"};
        break;
    }
    for (const char* key : target_keys) f.Require(key);
    f.Require("at");
    for (const std::string key : target_keys) {
      if (key == "host" && f.String(key, fault.host) && !fault.host.empty()) {
        CheckHost(f, s, fault.host);
      } else if (key == "device" && f.String(key, fault.device) && !fault.device.empty()) {
        CheckDevice(f, s, fault.device);
      } else if (key == "switch" && f.String(key, fault.switch_name) &&
                 !fault.switch_name.empty()) {
        CheckName(f, "switch", fault.switch_name, SimSwitchNames(s.topology));
      } else if (key == "port" && f.Int("port", 1, 4096, fault.port)) {
        const int ports = SimSwitchPorts(s.topology, fault.switch_name).first;
        if (ports > 0 && fault.port > ports) {
          f.Problem("port", "not-in-topology",
                    absl::StrCat(fault.switch_name, " has ports 1-", ports, ", not ", fault.port));
        }
      }
    }
    if (kind.fabric != FaultFabric::kAny &&
        (kind.fabric == FaultFabric::kInfiniband) != s.topology.infiniband) {
      f.Problem("kind", "conflict",
                absl::StrCat(fault.kind, " is a fault of ", FaultFabricName(kind.fabric),
                             " fabrics; this scenario's is ",
                             s.topology.infiniband ? "InfiniBand (`fabric: ib`)" : "RoCE",
                             kind.fabric == FaultFabric::kInfiniband
                                 ? " (set `fabric: ib` in `topology`)"
                                 : ""));
    }
    f.Duration("at", fault.at);
    kind.Read(f, s, fault);
    f.Finish();
    CheckTime(f, "at", s, fault.at);
    if (fault.last_at() != fault.at) CheckTime(f, "period", s, fault.last_at());
    s.faults.push_back(fault);
  }

  void LoadExpect(const YAML::Node& node, Scenario& s) {
    ScenarioMap e(node, "`expect`", problems_);
    if (!e.ok()) return;
    if (std::string detected; e.String("detected", detected) && !detected.empty()) {
      if (detected != "all" && detected != "none") {
        e.Problem("detected", "bad-value",
                  absl::StrCat("`detected` must be all or none, not \"", detected, "\""));
      }
      s.expect.all_detected = detected == "all";
    }
    e.Int("max_false", 0, 1000000, s.expect.max_false);
    e.Bool("within_target", s.expect.within_target);
    if (const YAML::Node t = e.Get("tolerated"); t.IsDefined()) {
      if (!t.IsSequence()) {
        problems_.Error(t, "bad-type", "`tolerated` must be a list of playbook names");
      } else {
        for (const YAML::Node& p : t) {
          if (!p.IsScalar() || p.Scalar().empty()) {
            problems_.Error(p, "bad-type", "`tolerated` must be a list of playbook names");
            continue;
          }
          s.expect.tolerated.push_back(p.Scalar());
        }
      }
    }
    e.Finish();
  }

  void CheckHost(ScenarioMap& at, const Scenario& s, const std::string& host) {
    std::vector<std::string> hosts;
    for (int h = 1; h <= s.topology.hosts; ++h) hosts.push_back(SimHostName(h));
    CheckName(at, "host", host, hosts);
  }

  void CheckDevice(ScenarioMap& at, const Scenario& s, const std::string& device) {
    std::vector<std::string> devices;
    for (int k = 0; k < s.topology.nics; ++k) devices.push_back(absl::StrCat("mlx5_", k));
    CheckName(at, "device", device, devices);
  }

  // `name` (at key `what`) is one of `valid`.
  void CheckName(ScenarioMap& at, const char* what, const std::string& name,
                 const std::vector<std::string>& valid) {
    if (std::find(valid.begin(), valid.end(), name) != valid.end()) return;
    at.Problem(what, "not-in-topology",
               absl::StrCat(what, " `", name, "` is not in the topology", DidYouMean(name, valid),
                            "; it has ", NamesHint(valid)));
  }

  void CheckTime(ScenarioMap& map, const char* key, const Scenario& s, absl::Duration t) {
    if (s.duration > absl::ZeroDuration() && t >= s.duration) {
      map.Problem(
          key, "after-end",
          absl::StrCat("at ", HumanDuration(t), " it is after the scenario's end (duration ",
                       HumanDuration(s.duration), ")"));
    }
  }

  YamlProblems problems_;
};

}  // namespace

absl::StatusOr<Scenario> ParseScenario(absl::string_view yaml, const std::string& file) {
  Scenario s;
  s.file = file;
  s.name = std::filesystem::path(file).stem().string();
  ScenarioLoader loader(file);
  const YAML::Node root = ParseYaml(std::string(yaml), loader.problems());
  if (root.IsDefined()) {
    try {
      loader.Load(root, s);
    } catch (const YAML::Exception& e) {  // a shape the checks above did not expect
      loader.problems().Error(e.mark, "bad-type", e.msg);
    }
  }
  if (absl::Status st = loader.problems().ToStatus(); !st.ok()) return st;
  return s;
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

absl::StatusOr<DriverReload> ParseDriverReload(absl::string_view spec) {
  return ParseNicFault<DriverReload>("driver_reload", spec,
                                     "HOST/DEVICE@OFFSET, e.g. gpu-node-002/mlx5_1@30s");
}

}  // namespace railwatch::sim
