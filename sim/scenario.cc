// Scenario files: YAML -> Scenario, every problem reported with FILE:LINE:COLUMN.
#include "sim/scenario.h"

#include <filesystem>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim {
namespace {

const std::vector<std::string> kDialects = {"sonic", "arista-eos", "openconfig", "cumulus"};

std::vector<std::string> Strings(const std::vector<absl::string_view>& views) {
  return std::vector<std::string>(views.begin(), views.end());
}

// The names a list of valid values is summed up by in a message: all of a few, else the first
// two and the last.
std::string NamesHint(const std::vector<std::string>& names) {
  if (names.size() <= 6) return absl::StrJoin(names, ", ");
  return absl::StrCat(names[0], ", ", names[1], " ... ", names.back());
}

class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  const std::vector<std::string>& problems() const { return problems_; }

  void Problem(const YAML::Node& at, absl::string_view message) {
    const YAML::Mark m = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
    if (m.is_null()) {
      problems_.push_back(absl::StrCat(file_, ": ", message));
    } else {
      problems_.push_back(absl::StrCat(file_, ":", m.line + 1, ":", m.column + 1, ": ", message));
    }
  }

  // Reports every key of `map` that is not in `known`, with the closest known key.
  void UnknownKeys(const YAML::Node& map, const std::vector<std::string>& known,
                   absl::string_view what) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      const std::string hint = ClosestWord(key, known);
      Problem(kv.first,
              absl::StrCat("unknown key `", key, "` in ", what,
                           hint.empty() ? "" : absl::StrCat(" (did you mean `", hint, "`?)"),
                           "; known: ", absl::StrJoin(known, ", ")));
    }
  }

  bool IsMap(const YAML::Node& n, const YAML::Node& parent, absl::string_view what) {
    if (n.IsMap()) return true;
    Problem(n.IsDefined() && !n.IsNull() ? n : parent, absl::StrCat(what, " must be a map"));
    return false;
  }

  // An optional scalar member; false (reported) when it is there but not a scalar.
  bool Scalar(const YAML::Node& map, const char* key, std::string* out) {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return true;
    if (!n.IsScalar()) {
      Problem(n, absl::StrCat("`", key, "` must be a single value"));
      return false;
    }
    *out = n.Scalar();
    return true;
  }

  void Required(const YAML::Node& map, const char* key, absl::string_view what) {
    if (!map[key].IsDefined() || map[key].IsNull()) {
      Problem(map, absl::StrCat(what, ": `", key, "` is required"));
    }
  }

  void Int(const YAML::Node& map, const char* key, int min, int max, int* out) {
    std::string text;
    if (!Scalar(map, key, &text) || text.empty()) return;
    int v = 0;
    if (!absl::SimpleAtoi(text, &v) || v < min || v > max) {
      Problem(map[key], absl::StrCat("`", key, "` must be a whole number from ", min, " to ", max,
                                     ", not \"", text, "\""));
      return;
    }
    *out = v;
  }

  // A number in (lo, hi] when lo_open, else [lo, hi].
  void Number(const YAML::Node& map, const char* key, double lo, double hi, bool lo_open,
              double* out) {
    std::string text;
    if (!Scalar(map, key, &text) || text.empty()) return;
    double v = 0;
    if (!absl::SimpleAtod(text, &v) || (lo_open ? v <= lo : v < lo) || v > hi) {
      Problem(map[key], absl::StrCat("`", key, "` must be a number in ", lo_open ? "(" : "[", lo,
                                     ", ", hi, "], not \"", text, "\""));
      return;
    }
    *out = v;
  }

  void Bool(const YAML::Node& map, const char* key, bool* out) {
    std::string text;
    if (!Scalar(map, key, &text) || text.empty()) return;
    if (text == "true" || text == "false") {
      *out = text == "true";
    } else {
      Problem(map[key], absl::StrCat("`", key, "` must be true or false, not \"", text, "\""));
    }
  }

  void Duration(const YAML::Node& map, const char* key, absl::Duration* out) {
    std::string text;
    if (!Scalar(map, key, &text) || text.empty()) return;
    absl::StatusOr<absl::Duration> d = ParseDuration(text);
    if (!d.ok()) {
      Problem(map[key], absl::StrCat("`", key, "`: ", d.status().message(),
                                     " (a duration such as 20s, 1m30s or 500ms)"));
      return;
    }
    *out = *d;
  }

  void Load(const YAML::Node& root, Scenario& s) {
    if (!root.IsMap()) {
      Problem(root, "a scenario is a map (name, duration, topology, jobs, noise, faults, expect)");
      return;
    }
    UnknownKeys(root,
                {"name", "description", "seed", "duration", "topology", "jobs", "noise", "faults",
                 "expect"},
                "a scenario");
    Scalar(root, "name", &s.name);
    Scalar(root, "description", &s.description);
    if (std::string seed;
        Scalar(root, "seed", &seed) && !seed.empty() && !absl::SimpleAtoi(seed, &s.seed)) {
      Problem(root["seed"], absl::StrCat("`seed` must be a whole number, not \"", seed, "\""));
    }
    Required(root, "duration", "a scenario");
    Duration(root, "duration", &s.duration);
    if (root["duration"].IsDefined() && s.duration <= absl::ZeroDuration()) {
      Problem(root["duration"], "`duration` must be above 0");
    }
    if (root["topology"].IsDefined()) LoadTopology(root["topology"], root, s.topology);
    if (const YAML::Node jobs = root["jobs"]; jobs.IsDefined() && !jobs.IsNull()) {
      LoadJobs(jobs, s);
    }
    if (const YAML::Node noise = root["noise"]; noise.IsDefined() && !noise.IsNull()) {
      LoadNoise(noise, root, s);
    }
    if (const YAML::Node faults = root["faults"]; faults.IsDefined() && !faults.IsNull()) {
      if (!faults.IsSequence()) {
        Problem(faults, "`faults` must be a list");
      } else {
        for (const YAML::Node& f : faults) LoadFault(f, s);
      }
    }
    CheckSharedFaultFlags(root, s);
    if (const YAML::Node e = root["expect"]; e.IsDefined() && !e.IsNull()) LoadExpect(e, root, s);
  }

 private:
  void LoadTopology(const YAML::Node& t, const YAML::Node& root, ScenarioTopology& topo) {
    if (!IsMap(t, root, "`topology`")) return;
    UnknownKeys(t, {"hosts", "nics", "hosts_per_leaf", "spines", "link_gbps", "dialects"},
                "`topology`");
    Int(t, "hosts", 1, 4096, &topo.hosts);
    Int(t, "nics", 1, 16, &topo.nics);
    Int(t, "hosts_per_leaf", 0, 4096, &topo.hosts_per_leaf);
    Int(t, "spines", 0, 64, &topo.spines);
    Number(t, "link_gbps", 0, 3200, true, &topo.link_gbps);
    if (const YAML::Node d = t["dialects"]; d.IsDefined()) {
      if (!d.IsSequence() || d.size() == 0) {
        Problem(d, absl::StrCat("`dialects` must be a list of: ", absl::StrJoin(kDialects, ", ")));
        return;
      }
      topo.dialects.clear();
      for (const YAML::Node& one : d) {
        const std::string name = one.IsScalar() ? one.Scalar() : "";
        if (std::find(kDialects.begin(), kDialects.end(), name) == kDialects.end()) {
          const std::string hint = ClosestWord(name, kDialects);
          Problem(one,
                  absl::StrCat("unknown dialect \"", name, "\"",
                               hint.empty() ? "" : absl::StrCat(" (did you mean `", hint, "`?)"),
                               "; known: ", absl::StrJoin(kDialects, ", ")));
        }
        topo.dialects.push_back(name);
      }
    }
  }

  void LoadJobs(const YAML::Node& jobs, Scenario& s) {
    if (!jobs.IsSequence()) {
      Problem(jobs, "`jobs` must be a list of {name, hosts: FIRST-LAST, util}");
      return;
    }
    std::vector<std::string> owner(s.topology.hosts + 1);
    std::set<std::string> names;
    for (const YAML::Node& j : jobs) {
      if (!IsMap(j, jobs, "a job")) continue;
      UnknownKeys(j, {"name", "hosts", "util"}, "a job");
      ScenarioJob job;
      Required(j, "name", "a job");
      Required(j, "hosts", "a job");
      Scalar(j, "name", &job.name);
      if (!job.name.empty() && !names.insert(job.name).second) {
        Problem(j["name"], absl::StrCat("two jobs are called `", job.name, "`"));
      }
      Number(j, "util", 0, 1, true, &job.util);
      std::string range;
      if (!Scalar(j, "hosts", &range) || range.empty()) continue;
      std::vector<absl::string_view> ends = absl::StrSplit(range, '-');
      const bool parsed = (ends.size() == 1 || ends.size() == 2) &&
                          absl::SimpleAtoi(ends[0], &job.first_host) &&
                          absl::SimpleAtoi(ends.back(), &job.last_host);
      if (!parsed || job.first_host < 1 || job.last_host < job.first_host ||
          job.last_host > s.topology.hosts) {
        Problem(j["hosts"], absl::StrCat("`hosts: ", range, "` must be FIRST-LAST within 1-",
                                         s.topology.hosts, " (the topology's hosts)"));
        continue;
      }
      for (int h = job.first_host; h <= job.last_host; ++h) {
        if (!owner[h].empty()) {
          Problem(j["hosts"], absl::StrCat(SimHostName(h), " is already in job `", owner[h],
                                           "` (a host runs one job at most)"));
          break;
        }
        owner[h] = job.name.empty() ? "?" : job.name;
      }
      s.jobs.push_back(job);
    }
  }

  void LoadNoise(const YAML::Node& n, const YAML::Node& root, Scenario& s) {
    if (!IsMap(n, root, "`noise`")) return;
    UnknownKeys(n, {"bursty", "benign_pause_rate", "driver_reloads"}, "`noise`");
    Bool(n, "bursty", &s.noise.bursty);
    Number(n, "benign_pause_rate", 0, 1e6, false, &s.noise.benign_pause_rate);
    const YAML::Node reloads = n["driver_reloads"];
    if (!reloads.IsDefined() || reloads.IsNull()) return;
    if (!reloads.IsSequence()) {
      Problem(reloads, "`driver_reloads` must be a list of {host, device, at}");
      return;
    }
    for (const YAML::Node& r : reloads) {
      if (!IsMap(r, reloads, "a driver reload")) continue;
      UnknownKeys(r, {"host", "device", "at"}, "a driver reload");
      DriverReloadNoise reload;
      reload.line = r.Mark().line + 1;
      for (const char* key : {"host", "device", "at"}) Required(r, key, "a driver reload");
      Scalar(r, "host", &reload.host);
      Scalar(r, "device", &reload.device);
      Duration(r, "at", &reload.at);
      CheckHost(r, s, reload.host);
      CheckDevice(r, s, reload.device);
      CheckTime(r, "at", s, reload.at);
      s.noise.driver_reloads.push_back(reload);
    }
  }

  void LoadFault(const YAML::Node& f, Scenario& s) {
    if (!f.IsMap()) {
      Problem(f,
              "a fault must be a map such as {kind: link_flap, at: 20s, host: ..., device: ...}");
      return;
    }
    ScenarioFault fault;
    fault.line = f.Mark().line + 1;
    if (!Scalar(f, "kind", &fault.kind) || fault.kind.empty()) {
      Problem(f, "a fault: `kind` is required");
      return;
    }
    fault.info = FindFaultKind(fault.kind);
    if (fault.info == nullptr) {
      std::vector<std::string> kinds;
      for (const FaultKindInfo& k : FaultKinds()) kinds.emplace_back(k.kind);
      const std::string hint = ClosestWord(fault.kind, kinds);
      Problem(f["kind"],
              absl::StrCat("unknown fault kind `", fault.kind, "`",
                           hint.empty() ? "" : absl::StrCat(" (did you mean `", hint, "`?)"),
                           "; known: ", absl::StrJoin(kinds, ", ")));
      return;
    }
    const std::string what = absl::StrCat("a ", fault.kind, " fault");
    std::vector<std::string> known = Strings(fault.info->fields);
    known.insert(known.begin(), "kind");
    UnknownKeys(f, known, what);
    for (absl::string_view key : fault.info->required) {
      Required(f, std::string(key).c_str(), what);
    }
    Scalar(f, "host", &fault.host);
    Scalar(f, "device", &fault.device);
    Scalar(f, "switch", &fault.switch_name);
    Int(f, "port", 1, 2, &fault.port);
    Duration(f, "at", &fault.at);
    Duration(f, "for", &fault.duration);
    Duration(f, "down_for", &fault.down_for);
    Int(f, "count", 1, 1000, &fault.count);
    Duration(f, "period", &fault.period);
    Number(f, "per_minute", 0, 1e9, true, &fault.per_minute);
    Number(f, "factor", 0, 1, true, &fault.factor);
    Number(f, "offset_kb", 0, 1e6, true, &fault.offset_kb);
    Number(f, "per_second", 0, 1e9, true, &fault.per_second);
    Scalar(f, "error", &fault.error);
    if (fault.kind == "link_degrade" && fault.factor >= 1) {
      Problem(f["factor"], "`factor` of a link_degrade must be below 1");
    }
    if (fault.kind == "nccl_error" && fault.error != "timeout" && fault.error != "ib_completion") {
      Problem(f["error"],
              absl::StrCat("`error` must be timeout or ib_completion, not \"", fault.error, "\""));
    }
    if (fault.kind == "link_flap_repeated" && fault.period <= fault.down_for) {
      Problem(f["period"], absl::StrCat("`period` must be longer than the link stays down (",
                                        HumanDuration(fault.down_for), ")"));
    }
    if (!fault.host.empty()) CheckHost(f, s, fault.host);
    if (!fault.device.empty()) CheckDevice(f, s, fault.device);
    if (!fault.switch_name.empty()) CheckSwitch(f, s, fault);
    if (fault.kind == "nccl_error" && !fault.host.empty() && JobOf(s, fault.host) == nullptr) {
      Problem(f["host"],
              absl::StrCat("no job runs on ", fault.host, ": NCCL errors come from a job's ranks"));
    }
    CheckTime(f, "at", s, fault.at);
    if (fault.last_at() != fault.at) CheckTime(f, "period", s, fault.last_at());
    s.faults.push_back(fault);
  }

  // The simulator has one --pfc_storm_for and one --flap_down_for for all storms and flaps.
  void CheckSharedFaultFlags(const YAML::Node& root, const Scenario& s) {
    const ScenarioFault* storm = nullptr;
    const ScenarioFault* flap = nullptr;
    for (const ScenarioFault& f : s.faults) {
      if (f.kind == "pfc_storm") {
        if (storm != nullptr && storm->duration != f.duration) {
          Problem(root["faults"],
                  absl::StrCat("the pfc_storm faults of lines ", storm->line, " and ", f.line,
                               " last differently (`for`): the simulator's --pfc_storm_for is one "
                               "for all storms"));
        }
        storm = &f;
      }
      if (f.kind == "link_flap" || f.kind == "link_flap_repeated") {
        if (flap != nullptr && flap->down_for != f.down_for) {
          Problem(
              root["faults"],
              absl::StrCat(
                  "the link flaps of lines ", flap->line, " and ", f.line,
                  " differ in `down_for`: the simulator's --flap_down_for is one for all flaps"));
        }
        flap = &f;
      }
    }
  }

  void LoadExpect(const YAML::Node& e, const YAML::Node& root, Scenario& s) {
    if (!IsMap(e, root, "`expect`")) return;
    UnknownKeys(e, {"detected", "max_false", "tolerated", "within_target"}, "`expect`");
    std::string detected;
    if (Scalar(e, "detected", &detected) && !detected.empty()) {
      if (detected != "all" && detected != "none") {
        Problem(e["detected"],
                absl::StrCat("`detected` must be all or none, not \"", detected, "\""));
      }
      s.expect.all_detected = detected == "all";
    }
    Int(e, "max_false", 0, 1000000, &s.expect.max_false);
    Bool(e, "within_target", &s.expect.within_target);
    if (const YAML::Node t = e["tolerated"]; t.IsDefined() && !t.IsNull()) {
      if (!t.IsSequence()) {
        Problem(t, "`tolerated` must be a list of playbook names");
        return;
      }
      for (const YAML::Node& p : t) {
        if (!p.IsScalar() || p.Scalar().empty()) {
          Problem(p, "`tolerated` must be a list of playbook names");
          continue;
        }
        s.expect.tolerated.push_back(p.Scalar());
      }
    }
  }

  static const ScenarioJob* JobOf(const Scenario& s, const std::string& host) {
    for (const ScenarioJob& j : s.jobs) {
      for (int h = j.first_host; h <= j.last_host; ++h) {
        if (SimHostName(h) == host) return &j;
      }
    }
    return nullptr;
  }

  void CheckHost(const YAML::Node& at, const Scenario& s, const std::string& host) {
    if (host.empty()) return;
    std::vector<std::string> hosts;
    for (int h = 1; h <= s.topology.hosts; ++h) hosts.push_back(SimHostName(h));
    CheckName(at["host"], "host", host, hosts);
  }

  void CheckDevice(const YAML::Node& at, const Scenario& s, const std::string& device) {
    if (device.empty()) return;
    std::vector<std::string> devices;
    for (int k = 0; k < s.topology.nics; ++k) devices.push_back(absl::StrCat("mlx5_", k));
    CheckName(at["device"], "device", device, devices);
  }

  void CheckSwitch(const YAML::Node& at, const Scenario& s, const ScenarioFault& f) {
    const std::vector<std::string> switches = SimSwitchNames(s.topology);
    if (!CheckName(at["switch"], "switch", f.switch_name, switches)) return;
    if (f.kind == "ecn_misconfig" && !absl::StartsWith(f.switch_name, "leaf-")) {
      Problem(at["switch"], absl::StrCat("an ecn_misconfig is on a leaf, not ", f.switch_name));
    }
  }

  bool CheckName(const YAML::Node& at, absl::string_view what, const std::string& name,
                 const std::vector<std::string>& valid) {
    if (std::find(valid.begin(), valid.end(), name) != valid.end()) return true;
    const std::string hint = ClosestWord(name, valid);
    Problem(at, absl::StrCat(what, " `", name, "` is not in the topology",
                             hint.empty() ? "" : absl::StrCat(" (did you mean `", hint, "`?)"),
                             "; it has ", NamesHint(valid)));
    return false;
  }

  void CheckTime(const YAML::Node& map, const char* key, const Scenario& s, absl::Duration t) {
    if (s.duration > absl::ZeroDuration() && t >= s.duration) {
      Problem(map[key].IsDefined() ? map[key] : map,
              absl::StrCat("at ", HumanDuration(t), " it is after the scenario's end (duration ",
                           HumanDuration(s.duration), ")"));
    }
  }

  std::string file_;
  std::vector<std::string> problems_;
};

}  // namespace

absl::StatusOr<Scenario> ParseScenario(absl::string_view yaml, const std::string& file) {
  Scenario s;
  s.file = file;
  s.name = std::filesystem::path(file).stem().string();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  Loader loader(file);
  try {
    loader.Load(root, s);
  } catch (const YAML::Exception& e) {  // a shape the checks above did not expect
    return absl::InvalidArgumentError(
        absl::StrCat(file, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  if (!loader.problems().empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(loader.problems(), "\n"));
  }
  return s;
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

}  // namespace railwatch::sim
