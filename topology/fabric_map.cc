// FabricMap (topology/fabric_map.h): everything the rules engine asks of the topology, answered
// from an index built once, so that topology() and peer() cost a few hash lookups per element.
#include "topology/fabric_map.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace railwatch {
namespace {

std::string LinkId(std::string_view a, std::string_view b) {
  return a < b ? absl::StrCat(AsAbsl(a), " <-> ", AsAbsl(b))
               : absl::StrCat(AsAbsl(b), " <-> ", AsAbsl(a));
}

// Adds labels to an element when it goes out of scope, never replacing one the element has, in
// one merge of two sorted lists: each label moves once (inserting one by one shifts the tail each
// time), and pointers into the element stay valid until then.
class LabelAdder {
 public:
  explicit LabelAdder(Labels& labels) : labels_(labels) {}
  ~LabelAdder() { Flush(); }
  LabelAdder(const LabelAdder&) = delete;
  LabelAdder& operator=(const LabelAdder&) = delete;

  // `name` must be a literal (it is kept as a view).
  void Add(std::string_view name, std::string_view value) {
    if (value.empty() || count_ == kMax) return;
    pending_[count_].name = name;
    pending_[count_].value.assign(value.data(), value.size());
    ++count_;
  }

 private:
  struct Pending {
    std::string_view name;
    std::string value;
  };
  static constexpr size_t kMax = 12;

  void Flush() {
    if (count_ == 0) return;
    std::sort(pending_.begin(), pending_.begin() + count_,
              [](const Pending& a, const Pending& b) { return a.name < b.name; });
    const auto by_name = [](const Label& a, const Label& b) { return a.name < b.name; };
    if (!std::is_sorted(labels_.begin(), labels_.end(), by_name)) {
      // Existing labels come first, so NormalizeLabels keeps them over ours.
      for (size_t i = 0; i < count_; ++i) {
        labels_.push_back(Label{std::string(pending_[i].name), std::move(pending_[i].value)});
      }
      NormalizeLabels(labels_);
      return;
    }
    Labels out;
    out.reserve(labels_.size() + count_);
    auto it = labels_.begin();
    for (size_t i = 0; i < count_; ++i) {
      Pending& p = pending_[i];
      while (it != labels_.end() && it->name < p.name) out.push_back(std::move(*it++));
      if (it != labels_.end() && it->name == p.name) continue;  // the element's own wins
      out.push_back(Label{std::string(p.name), std::move(p.value)});
    }
    while (it != labels_.end()) out.push_back(std::move(*it++));
    labels_.swap(out);
  }

  Labels& labels_;
  std::array<Pending, kMax> pending_;
  size_t count_ = 0;
};

const std::string* NonEmpty(const Labels& labels, std::string_view name) {
  const std::string* v = FindLabel(labels, name);
  return v != nullptr && !v->empty() ? v : nullptr;
}

void AppendAll(std::vector<std::string>& out, const std::vector<std::string>& more) {
  out.insert(out.end(), more.begin(), more.end());
}

void SortUnique(std::vector<std::string>& v) {
  if (std::is_sorted(v.begin(), v.end()) &&
      std::adjacent_find(v.begin(), v.end()) == v.end()) {
    return;
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

struct FabricMap::Index {
  struct Nic {
    std::string host, device, netdev, rail, leaf, leaf_port, node, link;
    int vertex = -1;
  };
  // What is at the far end of a switch port: a NIC, or a switch.
  struct Port {
    const Nic* nic = nullptr;
    std::string peer_switch, peer_port, link, leaf;
  };
  struct Switch {
    std::string name, role;
    bool is_leaf = false;
    int vertex = -1;
    absl::flat_hash_map<std::string, Port> ports;
    std::vector<std::string> linked;  // switches at the far end of its links
  };
  struct Host {
    std::string name;
    absl::flat_hash_map<std::string, const Nic*> by_device, by_netdev;
    // NICs on a rail, lowest rail first: GPU k of a rail-optimised host (local rank k) sends
    // through the k-th, whether the rails are numbered from 0 or from 1.
    std::vector<std::pair<int, const Nic*>> by_rail;
    std::vector<const Nic*> nics;
  };

  std::deque<Nic> nics;  // stable addresses for the maps below
  absl::flat_hash_map<std::string, Host> hosts;
  absl::flat_hash_map<std::string, Switch> switches;
  // Hosts by their position in all_hosts (sorted), so that a union of a spine's leaves is a pass
  // over marks rather than a sort of every leaf's host names.
  std::vector<std::string> all_hosts;
  absl::flat_hash_map<std::string, uint32_t> host_id;
  absl::flat_hash_map<std::string, std::vector<uint32_t>> hosts_of_leaf, hosts_of_rail;

  // Hop distance: vertices are NICs and switches; edges are cables.
  absl::flat_hash_map<std::string, int> vertex_of;  // "host/device" or switch name
  std::vector<std::vector<int>> adjacent;

  static constexpr uint16_t kUnreached = std::numeric_limits<uint16_t>::max();
  static constexpr size_t kCachedSources = 64;
  mutable absl::Mutex cache_mu;
  mutable absl::flat_hash_map<std::string, std::vector<uint16_t>> distances
      ABSL_GUARDED_BY(cache_mu);

  int AddVertex(const std::string& name) {
    auto [it, inserted] = vertex_of.try_emplace(name, static_cast<int>(adjacent.size()));
    if (inserted) adjacent.emplace_back();
    return it->second;
  }
  void AddEdge(int a, int b) {
    adjacent[a].push_back(b);
    adjacent[b].push_back(a);
  }

  // The vertices a node name stands for: itself, or every NIC of a host.
  std::vector<int> Vertices(std::string_view node) const {
    if (auto it = vertex_of.find(AsAbsl(node)); it != vertex_of.end()) return {it->second};
    std::vector<int> out;
    if (auto h = hosts.find(AsAbsl(node)); h != hosts.end()) {
      for (const Nic* n : h->second.nics) out.push_back(n->vertex);
    }
    return out;
  }
  const Host* FindHost(std::string_view name) const {
    auto it = hosts.find(AsAbsl(name));
    return it == hosts.end() ? nullptr : &it->second;
  }
  const Switch* FindSwitch(std::string_view name) const {
    auto it = switches.find(AsAbsl(name));
    return it == switches.end() ? nullptr : &it->second;
  }
  const Port* FindPort(const Switch& sw, std::string_view port) const {
    auto it = sw.ports.find(AsAbsl(port));
    return it == sw.ports.end() ? nullptr : &it->second;
  }
  // The NIC an element names by host + device, or host + interface (its netdev).
  const Nic* FindNic(const Host& host, const std::string* device, const std::string* interface,
                     const std::string* local_rank = nullptr) const {
    if (device != nullptr) {
      auto it = host.by_device.find(*device);
      return it == host.by_device.end() ? nullptr : it->second;
    }
    if (interface != nullptr) {
      auto it = host.by_netdev.find(*interface);
      return it == host.by_netdev.end() ? nullptr : it->second;
    }
    if (int k = -1; local_rank != nullptr && absl::SimpleAtoi(*local_rank, &k) && k >= 0 &&
                    static_cast<size_t>(k) < host.by_rail.size()) {
      return host.by_rail[k].second;
    }
    return nullptr;
  }
};

FabricMap::FabricMap(std::shared_ptr<const Topology> topology, const JobRegistry* jobs)
    : jobs_(jobs) {
  Set(std::move(topology));
}

FabricMap::~FabricMap() = default;

void FabricMap::Set(std::shared_ptr<const Topology> topology) {
  auto state = std::make_shared<State>();
  state->topology = std::move(topology);
  state->index = BuildIndex(state->topology.get());
  state->generation = generation_.fetch_add(1, std::memory_order_acq_rel) + 1;
  state_.store(std::move(state), std::memory_order_release);
}

std::shared_ptr<const Topology> FabricMap::topology() const {
  return state_.load(std::memory_order_acquire)->topology;
}

uint64_t FabricMap::generation() const {
  return state_.load(std::memory_order_acquire)->generation;
}

std::shared_ptr<const FabricMap::Index> FabricMap::BuildIndex(const Topology* topology_) {
  auto index = std::make_shared<Index>();
  if (topology_ != nullptr) {
    for (const TopologySwitch& s : topology_->switches()) {
      Index::Switch& sw = index->switches[s.name];
      sw.name = s.name;
      sw.role = s.role;
      sw.is_leaf = absl::EqualsIgnoreCase(s.role, "leaf");
      sw.vertex = index->AddVertex(s.name);
    }
    for (const TopologyHost& h : topology_->hosts()) index->all_hosts.push_back(h.name);
    SortUnique(index->all_hosts);
    for (uint32_t i = 0; i < index->all_hosts.size(); ++i) {
      index->host_id[index->all_hosts[i]] = i;
    }
    for (const TopologyHost& h : topology_->hosts()) {
      Index::Host& host = index->hosts[h.name];
      host.name = h.name;
      host.by_rail.clear();
      for (const TopologyNic& n : h.nics) {
        Index::Nic& nic = index->nics.emplace_back();
        nic.host = h.name;
        nic.device = n.device;
        nic.netdev = n.netdev;
        nic.node = absl::StrCat(h.name, "/", n.device);
        nic.vertex = index->AddVertex(nic.node);
        if (n.rail >= 0) {
          nic.rail = absl::StrCat(n.rail);
          index->hosts_of_rail[nic.rail].push_back(index->host_id.at(h.name));
          host.by_rail.emplace_back(n.rail, &nic);
        }
        host.by_device[n.device] = &nic;
        if (!n.netdev.empty()) host.by_netdev[n.netdev] = &nic;
        host.nics.push_back(&nic);
        auto sw = index->switches.find(n.switch_name);
        if (sw == index->switches.end()) continue;
        nic.leaf = n.switch_name;
        nic.leaf_port = n.switch_port;
        nic.link = LinkId(nic.node, absl::StrCat(n.switch_name, "/", n.switch_port));
        // A switch that NICs plug into is a leaf whatever its role says.
        sw->second.is_leaf = true;
        sw->second.ports[n.switch_port].nic = &nic;
        index->AddEdge(nic.vertex, sw->second.vertex);
        index->hosts_of_leaf[nic.leaf].push_back(index->host_id.at(h.name));
      }
      std::stable_sort(host.by_rail.begin(), host.by_rail.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    for (const TopologySwitch& s : topology_->switches()) {
      Index::Switch& sw = index->switches.at(s.name);
      for (const TopologyLink& l : s.links) {
        auto peer = index->switches.find(l.peer);
        if (peer == index->switches.end()) continue;
        const std::string link = LinkId(absl::StrCat(s.name, "/", l.port),
                                        absl::StrCat(l.peer, "/", l.peer_port));
        const std::string leaf = sw.is_leaf ? s.name : peer->second.is_leaf ? l.peer : "";
        // Written on both ends, a link is still one cable.
        const bool known = sw.ports.contains(l.port);
        sw.ports[l.port] = {nullptr, l.peer, l.peer_port, link, leaf};
        peer->second.ports[l.peer_port] = {nullptr, s.name, l.port, link, leaf};
        if (!known) {
          index->AddEdge(sw.vertex, peer->second.vertex);
          sw.linked.push_back(l.peer);
          peer->second.linked.push_back(s.name);
        }
      }
    }
  }
  return index;
}

bool FabricMap::Enrich(Labels& labels) const {
  const std::shared_ptr<const State> state = state_.load(std::memory_order_acquire);
  const Index& ix = *state->index;
  LabelAdder add(labels);  // adds when Enrich returns: the pointers below stay valid
  const std::string* host = NonEmpty(labels, "host");
  const std::string* sw = NonEmpty(labels, "switch");
  const std::string* device = NonEmpty(labels, "device");
  const std::string* interface = NonEmpty(labels, "interface");
  // Resolve against the index before adding labels: adding moves the element's strings.
  std::string job;
  if (host != nullptr) {
    const Index::Host* h = ix.FindHost(*host);
    // An NCCL rank (fabric_nccl_* series) has no device: its GPU is the cudaDev its NCCL log's
    // Init line gave (JobRegistry::RankGpu), else its local rank (the same when the
    // communicator spans the host's GPUs); in a rail-optimised fabric GPU k sends through the
    // NIC of the k-th rail.
    std::string gpu;
    if (const std::string* local_rank = NonEmpty(labels, "local_rank");
        local_rank != nullptr && device == nullptr && interface == nullptr) {
      const std::string* comm = NonEmpty(labels, "comm");
      const std::string* rank = NonEmpty(labels, "rank");
      int r = -1, k = -1;
      if (jobs_ != nullptr && comm != nullptr && rank != nullptr && absl::SimpleAtoi(*rank, &r)) {
        k = jobs_->RankGpu(*comm, r);
      }
      gpu = k >= 0 ? absl::StrCat(k) : *local_rank;
    }
    const Index::Nic* nic =
        h != nullptr ? ix.FindNic(*h, device, interface, gpu.empty() ? nullptr : &gpu) : nullptr;
    add.Add("gpu", gpu);
    if (jobs_ != nullptr) jobs_->FirstJobOfHost(*host, &job);
    if (nic != nullptr) {
      add.Add("device", nic->device);
      add.Add("netdev", nic->netdev);
      add.Add("rail", nic->rail);
      add.Add("leaf", nic->leaf);
      add.Add("leaf_port", nic->leaf_port);
      add.Add("node", nic->node);
      add.Add("link", nic->link);
    } else if (device != nullptr) {
      add.Add("node", absl::StrCat(*host, "/", *device));
    } else {
      add.Add("node", *host);
    }
    add.Add("job", job);
    return h != nullptr;
  }
  if (sw == nullptr) return false;
  const Index::Switch* s = ix.FindSwitch(*sw);
  if (s == nullptr) {
    add.Add("node", *sw);
    return false;
  }
  const Index::Port* port = interface != nullptr ? ix.FindPort(*s, *interface) : nullptr;
  if (port != nullptr && port->nic != nullptr && jobs_ != nullptr) {
    jobs_->FirstJobOfHost(port->nic->host, &job);
  }
  add.Add("node", s->name);
  add.Add("role", s->role);
  if (port != nullptr && port->nic != nullptr) {
    add.Add("peer_host", port->nic->host);
    add.Add("peer_device", port->nic->device);
    add.Add("rail", port->nic->rail);
    add.Add("leaf", s->name);
    add.Add("link", port->nic->link);
    add.Add("job", job);
  } else if (port != nullptr) {
    add.Add("peer_switch", port->peer_switch);
    add.Add("peer_port", port->peer_port);
    add.Add("link", port->link);
    add.Add("leaf", port->leaf);
  } else if (s->is_leaf) {
    add.Add("leaf", s->name);
  }
  return true;
}

bool FabricMap::ToPeer(Labels& labels) const {
  const std::shared_ptr<const State> state = state_.load(std::memory_order_acquire);
  const Index& ix = *state->index;
  const std::string* host = NonEmpty(labels, "host");
  const std::string* sw = NonEmpty(labels, "switch");
  const std::string* interface = NonEmpty(labels, "interface");
  // The far end, as pointers into the index (stable while labels change).
  const Index::Nic* to_nic = nullptr;
  const std::string* to_switch = nullptr;
  const std::string* to_port = nullptr;
  if (host != nullptr) {
    const Index::Host* h = ix.FindHost(*host);
    const Index::Nic* nic =
        h != nullptr ? ix.FindNic(*h, NonEmpty(labels, "device"), interface) : nullptr;
    if (nic == nullptr || nic->leaf.empty()) return false;
    to_switch = &nic->leaf;
    to_port = &nic->leaf_port;
  } else if (sw != nullptr && interface != nullptr) {
    const Index::Switch* s = ix.FindSwitch(*sw);
    const Index::Port* port = s != nullptr ? ix.FindPort(*s, *interface) : nullptr;
    if (port == nullptr) return false;
    if (port->nic != nullptr) {
      to_nic = port->nic;
    } else {
      to_switch = &port->peer_switch;
      to_port = &port->peer_port;
    }
  } else {
    return false;
  }

  // Drop the near end's identity and everything topology() derived from it.
  // (`guid` is an InfiniBand switch's node GUID, from the fabric scanner: the far end has its own.)
  static constexpr std::string_view kIdentity[] = {
      "device", "guid",     "host",      "interface", "job",         "leaf",
      "leaf_port", "link",  "netdev",    "node",      "peer_device", "peer_host",
      "peer_port", "peer_switch", "port", "rail",     "role",        "switch"};
  labels.erase(std::remove_if(labels.begin(), labels.end(),
                              [](const Label& l) {
                                return std::find(std::begin(kIdentity), std::end(kIdentity),
                                                 l.name) != std::end(kIdentity);
                              }),
               labels.end());
  for (Label& l : labels) {
    if (l.name != "direction") continue;
    if (l.value == "rx") {
      l.value = "tx";
    } else if (l.value == "tx") {
      l.value = "rx";
    }
  }
  {
    LabelAdder add(labels);
    if (to_nic != nullptr) {
      add.Add("host", to_nic->host);
      add.Add("device", to_nic->device);
      add.Add("interface", to_nic->netdev);
    } else {
      add.Add("switch", *to_switch);
      add.Add("interface", *to_port);
    }
  }
  Enrich(labels);
  return true;
}

int FabricMap::HopDistance(std::string_view node_a, std::string_view node_b) const {
  if (node_a == node_b && !node_a.empty()) return 0;
  const std::shared_ptr<const State> state = state_.load(std::memory_order_acquire);
  const Index& ix = *state->index;
  const std::vector<int> to = ix.Vertices(node_b);
  if (to.empty()) return -1;
  absl::MutexLock lock(&ix.cache_mu);
  auto cached = ix.distances.find(AsAbsl(node_a));
  if (cached == ix.distances.end()) {
    const std::vector<int> from = ix.Vertices(node_a);
    if (from.empty()) return -1;
    std::vector<uint16_t> dist(ix.adjacent.size(), Index::kUnreached);
    std::vector<int> queue;
    queue.reserve(ix.adjacent.size());
    for (int v : from) {
      dist[v] = 0;
      queue.push_back(v);
    }
    for (size_t i = 0; i < queue.size(); ++i) {
      const int v = queue[i];
      for (int w : ix.adjacent[v]) {
        if (dist[w] != Index::kUnreached) continue;
        dist[w] = static_cast<uint16_t>(dist[v] + 1);
        queue.push_back(w);
      }
    }
    // A bounded cache: a storm asks about the same few culprits over and over.
    if (ix.distances.size() >= Index::kCachedSources) ix.distances.clear();
    cached = ix.distances.emplace(std::string(node_a), std::move(dist)).first;
  }
  int best = -1;
  for (int v : to) {
    const uint16_t d = cached->second[v];
    if (d != Index::kUnreached && (best < 0 || d < best)) best = d;
  }
  return best;
}

BlastRadius FabricMap::Blast(const Labels& culprit, std::string_view scope) const {
  const std::shared_ptr<const State> state = state_.load(std::memory_order_acquire);
  const Index& ix = *state->index;
  const std::string* host = NonEmpty(culprit, "host");
  const std::string* sw = NonEmpty(culprit, "switch");
  const std::string* device = NonEmpty(culprit, "device");
  const std::string* interface = NonEmpty(culprit, "interface");
  const Index::Host* h = host != nullptr ? ix.FindHost(*host) : nullptr;
  const Index::Nic* nic = h != nullptr ? ix.FindNic(*h, device, interface) : nullptr;
  const Index::Switch* s = host == nullptr && sw != nullptr ? ix.FindSwitch(*sw) : nullptr;
  const Index::Port* port =
      s != nullptr && interface != nullptr ? ix.FindPort(*s, *interface) : nullptr;

  // The leaves and rails the culprit sits on: its NIC's, or those of each of its host's NICs.
  auto from_nics = [&](std::string Index::Nic::*field, std::set<std::string>& out) {
    if (nic == nullptr && h == nullptr) return false;
    for (const Index::Nic* n : nic != nullptr ? std::vector<const Index::Nic*>{nic} : h->nics) {
      if (!(n->*field).empty()) out.insert(n->*field);
    }
    return true;
  };
  std::set<std::string> leaves;
  if (const std::string* l = NonEmpty(culprit, "leaf")) {
    leaves.insert(*l);
  } else if (!from_nics(&Index::Nic::leaf, leaves) && s != nullptr) {
    if (s->is_leaf) {
      leaves.insert(s->name);
    } else if (port != nullptr && port->nic == nullptr) {
      if (!port->leaf.empty()) leaves.insert(port->leaf);
    } else {  // a spine: the leaves below it
      for (const std::string& linked : s->linked) {
        if (const Index::Switch* l = ix.FindSwitch(linked); l != nullptr && l->is_leaf) {
          leaves.insert(linked);
        }
      }
    }
  }
  auto rails_of_culprit = [&] {
    std::set<std::string> rails;
    if (const std::string* r = NonEmpty(culprit, "rail")) {
      rails.insert(*r);
    } else if (!from_nics(&Index::Nic::rail, rails) && s != nullptr) {
      if (port != nullptr && port->nic != nullptr) {
        if (!port->nic->rail.empty()) rails.insert(port->nic->rail);
      } else {  // the rails of the NICs on the culprit's leaves
        for (const Index::Nic& n : ix.nics) {
          if (!n.rail.empty() && leaves.contains(n.leaf)) rails.insert(n.rail);
        }
      }
    }
    return rails;
  };
  auto hosts_of = [&ix](const absl::flat_hash_map<std::string, std::vector<uint32_t>>& by,
                        const std::set<std::string>& keys) {
    std::vector<bool> in(ix.all_hosts.size());
    for (const std::string& k : keys) {
      if (auto it = by.find(k); it != by.end()) {
        for (uint32_t id : it->second) in[id] = true;
      }
    }
    std::vector<std::string> out;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i]) out.push_back(ix.all_hosts[i]);
    }
    return out;
  };

  // The hosts the culprit touches directly; a switch with no NIC-facing port named stalls its
  // leaf's hosts.
  std::vector<std::string> direct;
  if (host != nullptr) {
    direct.push_back(*host);
  } else if (const std::string* ph = NonEmpty(culprit, "peer_host")) {
    direct.push_back(*ph);
  } else if (port != nullptr && port->nic != nullptr) {
    direct.push_back(port->nic->host);
  } else {
    direct = hosts_of(ix.hosts_of_leaf, leaves);
  }

  BlastRadius out;
  out.scope = std::string(scope);
  if (scope == "leaf") {
    out.hosts = hosts_of(ix.hosts_of_leaf, leaves);
  } else if (scope == "rail") {
    out.hosts = hosts_of(ix.hosts_of_rail, rails_of_culprit());
  } else if (scope == "job") {
    out.hosts = direct;
    if (jobs_ != nullptr) {
      const std::string* named = NonEmpty(culprit, "job");
      for (const JobInfo& j : jobs_->All()) {
        const bool touches = std::any_of(j.hosts.begin(), j.hosts.end(), [&](const auto& x) {
          return std::binary_search(direct.begin(), direct.end(), x);
        });
        if (touches || (named != nullptr && j.name == *named)) AppendAll(out.hosts, j.hosts);
      }
    }
  } else if (scope == "fabric") {
    out.hosts = ix.all_hosts;
    if (jobs_ != nullptr) {
      for (const JobInfo& j : jobs_->All()) {
        for (const std::string& x : j.hosts) {
          if (!ix.hosts.contains(x)) out.hosts.push_back(x);
        }
      }
    }
  } else {
    out.hosts = direct;
  }
  // Without the topology to widen it, the culprit's own host is the least it reaches.
  if (out.hosts.empty()) out.hosts = direct;
  SortUnique(out.hosts);

  if (jobs_ != nullptr) {
    for (JobInfo& j : jobs_->JobsOnHosts(out.hosts)) {
      JobImpact impact;
      impact.job = std::move(j.name);
      impact.gpus = j.gpus;
      impact.ranks = j.ranks;
      std::set_intersection(j.hosts.begin(), j.hosts.end(), out.hosts.begin(), out.hosts.end(),
                            std::back_inserter(impact.hosts));
      impact.job_hosts = std::move(j.hosts);
      out.gpus += impact.gpus;
      out.jobs.push_back(std::move(impact));
    }
  }
  return out;
}

}  // namespace railwatch
