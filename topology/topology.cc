#include "topology/topology.h"

#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/labels.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace {

std::string PortKey(std::string_view sw, std::string_view port) {
  std::string key(sw);
  key.push_back('\0');
  key.append(port);
  return key;
}

class Loader {
 public:
  explicit Loader(std::string_view file) : file_(file) {}


  void Problem(const YAML::Node& at, std::string message) {
    const YAML::Mark m = at.Mark();
    problems_.push_back(absl::StrCat(file_, ":", m.line + 1, ":", m.column + 1, ": ", message));
  }

  // A required string member; reports and returns "" when it is missing or not a scalar.
  std::string Required(const YAML::Node& map, const char* key, std::string_view what) {
    const YAML::Node n = map[key];
    if (!n || !n.IsScalar() || n.Scalar().empty()) {
      Problem(n ? n : map, absl::StrCat(AsAbsl(what), ": `", key, "` is required (a non-empty string)"));
      return "";
    }
    return n.Scalar();
  }
  std::string Optional(const YAML::Node& map, const char* key) {
    const YAML::Node n = map[key];
    if (!n) return "";
    if (!n.IsScalar()) {
      Problem(n, absl::StrCat("`", key, "` must be a string"));
      return "";
    }
    return n.Scalar();
  }
  // An optional integer member >= min into *out; reports and returns false when it is not one.
  bool IntAtLeast(const YAML::Node& map, const char* key, int min, int* out) {
    const YAML::Node n = map[key];
    if (!n) return true;
    try {
      const int v = n.as<int>();
      if (v >= min) {
        *out = v;
        return true;
      }
    } catch (const YAML::Exception&) {
    }
    Problem(n, absl::StrCat("`", key, "` must be a number >= ", min));
    return false;
  }
  void UnknownKeys(const YAML::Node& map, std::initializer_list<const char*> known,
                   std::string_view what) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      bool ok = false;
      for (std::string_view k : known) ok = ok || k == key;
      if (!ok) {
        Problem(kv.first, absl::StrCat("unknown key `", key, "` in ", AsAbsl(what), " (known: ",
                                       absl::StrJoin(known, ", "), ")"));
      }
    }
  }

  void Load(const YAML::Node& root, std::vector<TopologyHost>& hosts,
            std::vector<TopologySwitch>& switches, std::vector<TopologyJob>& jobs) {
    if (!root || root.IsNull()) {
      problems_.push_back(absl::StrCat(file_, ":1:1: the topology is empty"));
      return;
    }
    if (!root.IsMap()) {
      Problem(root, "the topology must be a map with `hosts` and `switches`");
      return;
    }
    UnknownKeys(root, {"hosts", "switches", "jobs"}, "the topology");
    absl::flat_hash_map<std::string, YAML::Node> switch_nodes;
    if (const YAML::Node list = root["switches"]; list) {
      if (!list.IsSequence()) {
        Problem(list, "`switches` must be a list");
      } else {
        for (const YAML::Node& s : list) LoadSwitch(s, switches, switch_nodes);
      }
    }
    if (const YAML::Node list = root["hosts"]; list) {
      if (!list.IsSequence()) {
        Problem(list, "`hosts` must be a list");
      } else {
        absl::flat_hash_set<std::string> names;
        for (const YAML::Node& h : list) LoadHost(h, hosts, names, switch_nodes);
      }
    }
    if (const YAML::Node list = root["jobs"]; list) {
      if (!list.IsSequence()) {
        Problem(list, "`jobs` must be a list");
      } else {
        absl::flat_hash_set<std::string> host_names;
        for (const TopologyHost& h : hosts) host_names.insert(h.name);
        absl::flat_hash_set<std::string> job_names;
        for (const YAML::Node& j : list) LoadJob(j, jobs, job_names, host_names);
      }
    }
    // Switch links must name known switches.
    for (size_t i = 0; i < switches.size(); ++i) {
      const YAML::Node links = switch_nodes[switches[i].name]["links"];
      for (size_t j = 0; j < switches[i].links.size(); ++j) {
        const TopologyLink& l = switches[i].links[j];
        if (!l.peer.empty() && !switch_nodes.contains(l.peer)) {
          Problem(links[j], absl::StrCat("link from ", switches[i].name, "/", l.port,
                                         " names switch `", l.peer,
                                         "`, which is not in `switches`"));
        }
      }
    }
  }

  std::vector<std::string>& problems() { return problems_; }

  // Each switch port is used once, by a NIC or by a link.
  void ClaimPort(const YAML::Node& at, const std::string& sw, const std::string& port,
                 std::string owner) {
    if (sw.empty() || port.empty()) return;
    auto [it, inserted] = port_owner_.emplace(PortKey(sw, port), owner);
    if (!inserted && it->second != owner) {
      Problem(at, absl::StrCat("switch port ", sw, "/", port, " is used by ", it->second,
                               " and by ", owner));
    }
  }

 private:
  void LoadSwitch(const YAML::Node& s, std::vector<TopologySwitch>& switches,
                  absl::flat_hash_map<std::string, YAML::Node>& nodes) {
    if (!s.IsMap()) {
      Problem(s, "a switch must be a map with at least `name`");
      return;
    }
    UnknownKeys(s, {"name", "role", "dialect", "links"}, "a switch");
    TopologySwitch sw;
    sw.name = Required(s, "name", "switch");
    sw.role = Optional(s, "role");
    sw.dialect = Optional(s, "dialect");
    if (sw.name.empty()) return;
    if (!nodes.emplace(sw.name, s).second) {
      Problem(s["name"], absl::StrCat("switch `", sw.name, "` is defined twice"));
      return;
    }
    if (const YAML::Node links = s["links"]; links) {
      if (!links.IsSequence()) {
        Problem(links, "`links` must be a list");
      } else {
        for (const YAML::Node& l : links) {
          if (!l.IsMap()) {
            Problem(l, "a link must be a map with `port`, `peer` and `peer_port`");
            continue;
          }
          UnknownKeys(l, {"port", "peer", "peer_port"}, "a link");
          TopologyLink link{Required(l, "port", "link"), Required(l, "peer", "link"),
                            Required(l, "peer_port", "link")};
          ClaimPort(l, sw.name, link.port, absl::StrCat("the link to ", link.peer));
          sw.links.push_back(std::move(link));
        }
      }
    }
    switches.push_back(std::move(sw));
  }

  void LoadHost(const YAML::Node& h, std::vector<TopologyHost>& hosts,
                absl::flat_hash_set<std::string>& names,
                const absl::flat_hash_map<std::string, YAML::Node>& switches) {
    if (!h.IsMap()) {
      Problem(h, "a host must be a map with `name` and `nics`");
      return;
    }
    UnknownKeys(h, {"name", "nics"}, "a host");
    TopologyHost host;
    host.name = Required(h, "name", "host");
    if (host.name.empty()) return;
    if (!names.insert(host.name).second) {
      Problem(h["name"], absl::StrCat("host `", host.name, "` is defined twice"));
      return;
    }
    const YAML::Node nics = h["nics"];
    if (nics && !nics.IsSequence()) {
      Problem(nics, "`nics` must be a list");
    } else if (nics) {
      absl::flat_hash_set<std::string> devices;
      for (const YAML::Node& n : nics) {
        if (!n.IsMap()) {
          Problem(n, "a NIC must be a map with `device`, `rail`, `switch` and `port`");
          continue;
        }
        UnknownKeys(n, {"device", "netdev", "rail", "switch", "port"}, "a NIC");
        TopologyNic nic;
        nic.device = Required(n, "device", "NIC");
        nic.netdev = Optional(n, "netdev");
        nic.switch_name = Optional(n, "switch");
        nic.switch_port = Optional(n, "port");
        if (!IntAtLeast(n, "rail", 0, &nic.rail)) nic.rail = -1;
        if (!nic.device.empty() && !devices.insert(nic.device).second) {
          Problem(n, absl::StrCat("NIC `", nic.device, "` is listed twice on ", host.name));
        }
        if (nic.switch_name.empty() != nic.switch_port.empty()) {
          Problem(n, "a NIC's `switch` and `port` go together: give both or neither");
        } else if (!nic.switch_name.empty() && !switches.contains(nic.switch_name)) {
          Problem(n["switch"], absl::StrCat("NIC ", host.name, "/", nic.device,
                                            " plugs into switch `", nic.switch_name,
                                            "`, which is not in `switches`"));
        }
        ClaimPort(n, nic.switch_name, nic.switch_port,
                  absl::StrCat(host.name, "/", nic.device));
        host.nics.push_back(std::move(nic));
      }
    }
    hosts.push_back(std::move(host));
  }

  void LoadJob(const YAML::Node& j, std::vector<TopologyJob>& jobs,
               absl::flat_hash_set<std::string>& names,
               const absl::flat_hash_set<std::string>& host_names) {
    if (!j.IsMap()) {
      Problem(j, "a job must be a map with `name` and `hosts`");
      return;
    }
    UnknownKeys(j, {"name", "hosts", "gpus_per_host"}, "a job");
    TopologyJob job;
    job.name = Required(j, "name", "job");
    IntAtLeast(j, "gpus_per_host", 1, &job.gpus_per_host);
    const YAML::Node list = j["hosts"];
    if (!list || !list.IsSequence() || list.size() == 0) {
      Problem(list ? list : j, "job: `hosts` is required (a non-empty list of host names)");
    } else {
      absl::flat_hash_set<std::string> seen;
      for (const YAML::Node& h : list) {
        if (!h.IsScalar() || h.Scalar().empty()) {
          Problem(h, "a job's host must be a host name");
          continue;
        }
        const std::string& name = h.Scalar();
        if (!host_names.contains(name)) {
          Problem(h, absl::StrCat("job `", job.name, "` names host `", name,
                                  "`, which is not in `hosts`"));
        } else if (!seen.insert(name).second) {
          Problem(h, absl::StrCat("host `", name, "` is listed twice in job `", job.name, "`"));
        } else {
          job.hosts.push_back(name);
        }
      }
    }
    if (job.name.empty()) return;
    if (!names.insert(job.name).second) {
      Problem(j["name"], absl::StrCat("job `", job.name, "` is defined twice"));
      return;
    }
    jobs.push_back(std::move(job));
  }

  std::string file_;
  std::vector<std::string> problems_;
  absl::flat_hash_map<std::string, std::string> port_owner_;
};

}  // namespace

absl::StatusOr<Topology> Topology::LoadString(std::string_view yaml, std::string_view file_name) {
  Topology t;
  Loader loader(file_name);
  try {
    loader.Load(YAML::Load(std::string(yaml)), t.hosts_, t.switches_, t.jobs_);
  } catch (const YAML::Exception& e) {
    loader.problems().push_back(absl::StrCat(AsAbsl(file_name), ":", e.mark.line + 1, ":",
                                             e.mark.column + 1, ": ", e.msg));
  }
  if (!loader.problems().empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(loader.problems(), "\n"));
  }
  t.Index();
  return t;
}

absl::StatusOr<Topology> Topology::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the topology file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return LoadString(ss.str(), path);
}

void Topology::Index() {
  peers_.clear();
  for (const TopologyHost& h : hosts_) {
    for (const TopologyNic& n : h.nics) {
      if (n.switch_name.empty()) continue;
      peers_[PortKey(n.switch_name, n.switch_port)] = {TopologyPortPeer::Kind::kHost, h.name,
                                                       n.netdev, n.device};
    }
  }
  for (const TopologySwitch& s : switches_) {
    for (const TopologyLink& l : s.links) {
      peers_[PortKey(s.name, l.port)] = {TopologyPortPeer::Kind::kSwitch, l.peer, l.peer_port,
                                         ""};
      // A link written on one side only still tells the other side what to expect.
      peers_.try_emplace(PortKey(l.peer, l.peer_port),
                         TopologyPortPeer{TopologyPortPeer::Kind::kSwitch, s.name, l.port, ""});
    }
  }
}

const TopologyPortPeer* Topology::PeerOf(std::string_view switch_name,
                                         std::string_view port) const {
  auto it = peers_.find(PortKey(switch_name, port));
  return it == peers_.end() ? nullptr : &it->second;
}

}  // namespace railwatch
