#include "topology/topology.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace {

std::string PortKey(std::string_view sw, std::string_view port) {
  std::string key(sw);
  key.push_back('\0');
  key.append(port);
  return key;
}

// Reads the topology file through common/yaml_reader.h, collecting every problem.
class TopologyLoader {
 public:
  explicit TopologyLoader(std::string_view file) : problems_(std::string(file)) {}

  const YamlProblems& problems() const { return problems_; }

  void Load(std::string_view yaml, std::vector<TopologyHost>& hosts,
            std::vector<TopologySwitch>& switches, std::vector<TopologyJob>& jobs) {
    const YAML::Node root = ParseYaml(std::string(yaml), problems_);
    if (!root.IsDefined()) return;
    if (root.IsNull()) {
      problems_.FileError("missing-key", "the topology is empty (give `hosts` and `switches`)");
      return;
    }
    YamlMap map(root, "the topology", problems_, "with `hosts` and `switches`");
    if (!map.ok()) return;
    absl::flat_hash_set<std::string> switch_names;
    for (const YAML::Node& s : ListEntries(map, "switches")) LoadSwitch(s, switches, switch_names);
    absl::flat_hash_set<std::string> host_names;
    for (const YAML::Node& h : ListEntries(map, "hosts")) {
      LoadHost(h, hosts, host_names, switch_names);
    }
    absl::flat_hash_set<std::string> job_names;
    for (const YAML::Node& j : ListEntries(map, "jobs")) LoadJob(j, jobs, job_names, host_names);
    map.Finish();
    // Switch links must name known switches.
    for (const auto& [from, link, node] : links_) {
      if (!link.peer.empty() && !switch_names.contains(link.peer)) {
        problems_.Error(node, "unknown-switch",
                        absl::StrCat("link from ", from, "/", link.port, " names switch `",
                                     link.peer, "`, which is not in `switches`"));
      }
    }
  }

 private:
  // The entries of the list at `key` (none when it is absent or not a list).
  static std::vector<YAML::Node> ListEntries(YamlMap& map, std::string_view key) {
    std::vector<YAML::Node> out;
    const YAML::Node list = map.List(key);
    if (!list.IsDefined()) return out;
    for (const YAML::Node& e : list) out.push_back(e);
    return out;
  }

  // False, with error[duplicate] at its `name`, when `name` was defined before.
  bool FirstDefinition(YamlMap& map, absl::flat_hash_set<std::string>& names,
                       std::string_view what, const std::string& name) {
    if (names.insert(name).second) return true;
    problems_.Error(map.Get("name"), "duplicate",
                    absl::StrCat(std::string(what), " `", name, "` is defined twice"));
    return false;
  }

  // Each switch port is used once, by a NIC or by a link.
  void ClaimPort(const YAML::Node& at, const std::string& sw, const std::string& port,
                 std::string owner) {
    if (sw.empty() || port.empty()) return;
    auto [it, inserted] = port_owner_.emplace(PortKey(sw, port), owner);
    if (!inserted && it->second != owner) {
      problems_.Error(at, "port-in-use",
                      absl::StrCat("switch port ", sw, "/", port, " is used by ", it->second,
                                   " and by ", owner));
    }
  }

  void LoadSwitch(const YAML::Node& s, std::vector<TopologySwitch>& switches,
                  absl::flat_hash_set<std::string>& names) {
    YamlMap map(s, "a switch", problems_, "with at least `name`");
    if (!map.ok()) return;
    TopologySwitch sw;
    map.RequiredString("name", sw.name);
    map.String("role", sw.role);
    map.String("dialect", sw.dialect);
    std::vector<YAML::Node> links = ListEntries(map, "links");
    map.Finish();
    if (sw.name.empty()) return;
    if (!FirstDefinition(map, names, "switch", sw.name)) return;
    for (const YAML::Node& l : links) {
      YamlMap link_map(l, "a link", problems_, "with `port`, `peer` and `peer_port`");
      if (!link_map.ok()) continue;
      TopologyLink link;
      link_map.RequiredString("port", link.port);
      link_map.RequiredString("peer", link.peer);
      link_map.RequiredString("peer_port", link.peer_port);
      link_map.Finish();
      ClaimPort(l, sw.name, link.port, absl::StrCat("the link to ", link.peer));
      links_.push_back({sw.name, link, l});
      sw.links.push_back(std::move(link));
    }
    switches.push_back(std::move(sw));
  }

  void LoadNic(const YAML::Node& n, TopologyHost& host, absl::flat_hash_set<std::string>& devices,
               const absl::flat_hash_set<std::string>& switches) {
    YamlMap map(n, "a NIC", problems_, "with `device`, `rail`, `switch` and `port`");
    if (!map.ok()) return;
    TopologyNic nic;
    map.RequiredString("device", nic.device);
    map.String("netdev", nic.netdev);
    map.String("switch", nic.switch_name);
    map.String("port", nic.switch_port);
    int64_t rail = -1;
    if (map.Int("rail", rail, 0)) {
      nic.rail = static_cast<int>(std::min<int64_t>(rail, std::numeric_limits<int>::max()));
    }
    map.Finish();
    if (!nic.device.empty() && !devices.insert(nic.device).second) {
      problems_.Error(n, "duplicate",
                      absl::StrCat("NIC `", nic.device, "` is listed twice on ", host.name));
    }
    if (nic.switch_name.empty() != nic.switch_port.empty()) {
      problems_.Error(n, "bad-value",
                      "a NIC's `switch` and `port` go together: give both or neither");
    } else if (!nic.switch_name.empty() && !switches.contains(nic.switch_name)) {
      problems_.Error(map.Get("switch"), "unknown-switch",
                      absl::StrCat("NIC ", host.name, "/", nic.device, " plugs into switch `",
                                   nic.switch_name, "`, which is not in `switches`"));
    }
    ClaimPort(n, nic.switch_name, nic.switch_port, absl::StrCat(host.name, "/", nic.device));
    host.nics.push_back(std::move(nic));
  }

  void LoadHost(const YAML::Node& h, std::vector<TopologyHost>& hosts,
                absl::flat_hash_set<std::string>& names,
                const absl::flat_hash_set<std::string>& switches) {
    YamlMap map(h, "a host", problems_, "with `name` and `nics`");
    if (!map.ok()) return;
    TopologyHost host;
    map.RequiredString("name", host.name);
    std::vector<YAML::Node> nics = ListEntries(map, "nics");
    map.Finish();
    if (host.name.empty()) return;
    if (!FirstDefinition(map, names, "host", host.name)) return;
    absl::flat_hash_set<std::string> devices;
    for (const YAML::Node& n : nics) LoadNic(n, host, devices, switches);
    hosts.push_back(std::move(host));
  }

  void LoadJob(const YAML::Node& j, std::vector<TopologyJob>& jobs,
               absl::flat_hash_set<std::string>& names,
               const absl::flat_hash_set<std::string>& host_names) {
    YamlMap map(j, "a job", problems_, "with `name` and `hosts`");
    if (!map.ok()) return;
    TopologyJob job;
    map.RequiredString("name", job.name);
    int64_t gpus = job.gpus_per_host;
    if (map.Int("gpus_per_host", gpus, 1)) {
      job.gpus_per_host = static_cast<int>(std::min<int64_t>(gpus, std::numeric_limits<int>::max()));
    }
    const YAML::Node given = map.Get("hosts");
    const YAML::Node list = map.List("hosts");
    map.Finish();
    if (!list.IsDefined() || list.size() == 0) {
      if (!given.IsDefined() || given.IsNull() || given.IsSequence()) {  // else: bad-type
        problems_.Error(given.IsDefined() ? given : j, "missing-key",
                        "`hosts` is required in a job (a non-empty list of host names)");
      }
    } else {
      absl::flat_hash_set<std::string> seen;
      for (const YAML::Node& h : list) {
        if (!h.IsScalar() || h.Scalar().empty()) {
          problems_.Error(h, "bad-type", "a job's host must be a host name");
          continue;
        }
        const std::string& name = h.Scalar();
        if (!host_names.contains(name)) {
          problems_.Error(h, "unknown-host",
                          absl::StrCat("job `", job.name, "` names host `", name,
                                       "`, which is not in `hosts`"));
        } else if (!seen.insert(name).second) {
          problems_.Error(h, "duplicate",
                          absl::StrCat("host `", name, "` is listed twice in job `", job.name,
                                       "`"));
        } else {
          job.hosts.push_back(name);
        }
      }
    }
    if (job.name.empty()) return;
    if (!FirstDefinition(map, names, "job", job.name)) return;
    jobs.push_back(std::move(job));
  }

  struct PendingLink {
    std::string from;
    TopologyLink link;
    YAML::Node node;
  };

  YamlProblems problems_;
  absl::flat_hash_map<std::string, std::string> port_owner_;
  std::vector<PendingLink> links_;
};

}  // namespace

absl::StatusOr<Topology> Topology::LoadString(std::string_view yaml, std::string_view file_name) {
  Topology t;
  TopologyLoader loader(file_name);
  loader.Load(yaml, t.hosts_, t.switches_, t.jobs_);
  if (absl::Status s = loader.problems().ToStatus(); !s.ok()) return s;
  t.Index();
  return t;
}

Topology Topology::FromParts(std::vector<TopologyHost> hosts,
                             std::vector<TopologySwitch> switches, std::vector<TopologyJob> jobs) {
  Topology t;
  t.hosts_ = std::move(hosts);
  t.switches_ = std::move(switches);
  t.jobs_ = std::move(jobs);
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
