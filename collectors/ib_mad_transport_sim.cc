#include "collectors/ib_mad_transport_sim.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/labels.h"

namespace railwatch {
namespace ib_mad_sim_internal {

// What each PMA attribute carries (IBA vol. 1 16.1.3.5, 16.1.4.11); widths come from
// ib::PmaCounterWidth, not from here.
constexpr std::string_view kErrorCounters[] = {
    "SymbolErrorCounter",       "LinkErrorRecoveryCounter",     "LinkDownedCounter",
    "PortRcvErrors",            "PortRcvRemotePhysicalErrors",  "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",         "PortXmitConstraintErrors",     "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
    "PortXmitWait",             "QP1Dropped",
};
constexpr std::string_view kDataCounters[] = {"PortXmitData", "PortRcvData", "PortXmitPkts",
                                              "PortRcvPkts"};
constexpr std::string_view kCastCounters[] = {"PortUnicastXmitPkts", "PortUnicastRcvPkts",
                                              "PortMulticastXmitPkts", "PortMulticastRcvPkts"};

uint64_t CountOf(const SimIbFabric::PortCounters& counters, std::string_view name) {
  auto it = counters.find(name);
  return it != counters.end() ? it->second : 0;
}

absl::Status NoAnswer(std::string_view what) {
  return absl::DeadlineExceededError(absl::StrCat("simulated timeout: ", AsAbsl(what)));
}

}  // namespace ib_mad_sim_internal

uint64_t SimIbFabric::AddSwitch(std::string_view name, uint64_t guid, int ports) {
  Node node;
  node.type = ib::IbNodeType::kSwitch;
  node.guid = guid;
  node.description = absl::StrCat("MF0;", AsAbsl(name), ":MQM9700/U1");
  node.device_id = 0xd2f2;
  node.lid = next_lid_++;
  node.ports.resize(static_cast<size_t>(ports) + 1);
  by_lid_[node.lid] = {nodes_.size(), 0};
  by_guid_[guid] = nodes_.size();
  nodes_.push_back(std::move(node));
  return guid;
}

uint64_t SimIbFabric::AddHca(std::string_view host, std::string_view device, uint64_t guid,
                             int ports) {
  Node node;
  node.type = ib::IbNodeType::kCa;
  node.guid = guid;
  node.description = absl::StrCat(AsAbsl(host), " ", AsAbsl(device));
  node.device_id = 0x1021;
  node.ports.resize(static_cast<size_t>(ports) + 1);
  for (int p = 1; p <= ports; ++p) {
    node.ports[p].lid = next_lid_++;
    node.ports[p].port_guid = guid + static_cast<uint64_t>(p - 1);
    by_lid_[node.ports[p].lid] = {nodes_.size(), p};
  }
  by_guid_[guid] = nodes_.size();
  if (!local_) local_ = PortRef{guid, 1};
  nodes_.push_back(std::move(node));
  return guid;
}

SimIbFabric::Node* SimIbFabric::FindNode(uint64_t guid) {
  auto it = by_guid_.find(guid);
  return it != by_guid_.end() ? &nodes_[it->second] : nullptr;
}

const SimIbFabric::Node* SimIbFabric::FindNode(uint64_t guid) const {
  auto it = by_guid_.find(guid);
  return it != by_guid_.end() ? &nodes_[it->second] : nullptr;
}

SimIbFabric::Port* SimIbFabric::FindPort(uint64_t guid, int port) {
  Node* node = FindNode(guid);
  if (node == nullptr || port < 1 || port > node->num_ports()) return nullptr;
  return &node->ports[static_cast<size_t>(port)];
}

absl::Status SimIbFabric::Connect(uint64_t a, int port_a, uint64_t b, int port_b,
                                  int width_lanes, std::string_view generation) {
  Port* pa = FindPort(a, port_a);
  Port* pb = FindPort(b, port_b);
  if (pa == nullptr || pb == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("no port %#x:%d or %#x:%d in the simulated fabric", a, port_a, b, port_b));
  }
  if (pa->peer || pb->peer) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%#x:%d or %#x:%d is already cabled", a, port_a, b, port_b));
  }
  MadPortInfo probe;
  bool fdr10 = false;
  if (!EncodeMadLinkSpeed(width_lanes, generation, probe, fdr10)) {
    return absl::InvalidArgumentError(
        absl::StrCat(width_lanes, "x", AsAbsl(generation), " is no speed PortInfo can say"));
  }
  pa->peer = PortRef{b, port_b};
  pb->peer = PortRef{a, port_a};
  for (Port* p : {pa, pb}) {
    p->width_lanes = width_lanes;
    p->generation = std::string(generation);
  }
  return absl::OkStatus();
}

absl::Status SimIbFabric::Disconnect(uint64_t guid, int port) {
  Port* here = FindPort(guid, port);
  if (here == nullptr || !here->peer) {
    return absl::FailedPreconditionError(absl::StrFormat("%#x:%d has no cable", guid, port));
  }
  Port* there = FindPort(here->peer->guid, here->peer->port);
  for (Port* p : {here, there}) {
    if (p == nullptr) continue;
    p->peer.reset();
    p->width_lanes = 0;
    p->generation.clear();
    ++p->counters["LinkDownedCounter"];
  }
  return absl::OkStatus();
}

absl::Status SimIbFabric::SetLocal(uint64_t hca_guid, int port) {
  const Node* node = FindNode(hca_guid);
  if (node == nullptr || node->type != ib::IbNodeType::kCa || port < 1 ||
      port > node->num_ports()) {
    return absl::InvalidArgumentError(absl::StrFormat("no HCA port %#x:%d", hca_guid, port));
  }
  local_ = PortRef{hca_guid, port};
  return absl::OkStatus();
}

SimIbFabric::PortCounters& SimIbFabric::Counters(uint64_t guid, int port) {
  Port* p = FindPort(guid, port);
  if (p == nullptr) {
    std::fprintf(stderr, "SimIbFabric::Counters: no port %#llx:%d\n",
                 static_cast<unsigned long long>(guid), port);
    std::abort();
  }
  return p->counters;
}

size_t SimIbFabric::switch_ports() const {
  size_t n = 0;
  for (const Node& node : nodes_) {
    if (node.type == ib::IbNodeType::kSwitch) n += static_cast<size_t>(node.num_ports());
  }
  return n;
}

const SimIbFabric::Node* SimIbFabric::Walk(const DrPath& path, int* in_port) const {
  if (!local_) return nullptr;
  const Node* node = FindNode(local_->guid);
  int entered = local_->port;
  for (size_t hop = 0; hop < path.ports.size(); ++hop) {
    if (node == nullptr || node->unresponsive) return nullptr;
    // An HCA sends an SMP out of its own port but forwards none that arrives.
    if (hop > 0 && node->type != ib::IbNodeType::kSwitch) return nullptr;
    const int out = path.ports[hop];
    if (hop == 0 && node->type != ib::IbNodeType::kSwitch && out != local_->port) return nullptr;
    if (out < 1 || out > node->num_ports()) return nullptr;
    const Port& port = node->ports[static_cast<size_t>(out)];
    if (!port.peer) return nullptr;
    node = FindNode(port.peer->guid);
    entered = port.peer->port;
  }
  if (in_port != nullptr) *in_port = entered;
  return node;
}

const SimIbFabric::Node* SimIbFabric::ByLid(uint32_t lid, int* port) const {
  auto it = by_lid_.find(lid);
  if (it == by_lid_.end()) return nullptr;
  if (port != nullptr) *port = it->second.second;
  return &nodes_[it->second.first];
}

uint64_t SimLeafGuid(int leaf) { return 0x0002c90300100000ULL + static_cast<uint64_t>(leaf); }
uint64_t SimSpineGuid(int spine) { return 0x0002c90300200000ULL + static_cast<uint64_t>(spine); }
uint64_t SimHostGuid(int host) { return 0x0c42a10300000000ULL + static_cast<uint64_t>(host) * 16; }

absl::StatusOr<SimFatTreeSpec> ParseSimFatTreeSpec(std::string_view text) {
  SimFatTreeSpec spec;
  const absl::string_view all = AsAbsl(text);
  for (absl::string_view item : absl::StrSplit(all, ',', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(item, '=');
    const absl::string_view key = kv.first, value = kv.second;
    int n = 0;
    if (key == "speed") {
      spec.speed = std::string(value);
      continue;
    }
    if (!absl::SimpleAtoi(value, &n) || n < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("sim fabric '", all, "': ", key, "=", value, " is not a count"));
    }
    if (key == "leaves") {
      spec.leaves = n;
    } else if (key == "spines") {
      spec.spines = n;
    } else if (key == "hosts_per_leaf") {
      spec.hosts_per_leaf = n;
    } else if (key == "uplinks") {
      spec.uplinks = n;
    } else if (key == "width") {
      spec.width = n;
    } else if (key == "latency_us") {
      spec.latency = absl::Microseconds(n);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "sim fabric '", all, "': unknown key '", key,
          "' (leaves, spines, hosts_per_leaf, uplinks, width, speed, latency_us)"));
    }
  }
  if (spec.leaves < 1 || spec.hosts_per_leaf < 1 || spec.leaves * spec.hosts_per_leaf > 100000 ||
      spec.spines * spec.uplinks > 254 || spec.leaves * spec.uplinks > 254) {
    return absl::InvalidArgumentError(absl::StrCat(
        "sim fabric '", all,
        "': needs at least one leaf and one host a leaf, and at most 254 ports a switch"));
  }
  return spec;
}

absl::StatusOr<std::unique_ptr<SimIbFabric>> BuildSimFatTree(const SimFatTreeSpec& spec) {
  auto fabric = std::make_unique<SimIbFabric>();
  const int leaf_ports = spec.hosts_per_leaf + spec.spines * spec.uplinks;
  if (leaf_ports > 254) return absl::InvalidArgumentError("a leaf would have over 254 ports");
  int host = 0;
  // Hosts first: the first one's HCA is where the scanner sits.
  std::vector<std::vector<uint64_t>> hosts(static_cast<size_t>(spec.leaves));
  for (int l = 1; l <= spec.leaves; ++l) {
    for (int h = 0; h < spec.hosts_per_leaf; ++h) {
      ++host;
      hosts[static_cast<size_t>(l - 1)].push_back(
          fabric->AddHca(absl::StrFormat("node-%04d", host), "mlx5_0", SimHostGuid(host)));
    }
  }
  for (int l = 1; l <= spec.leaves; ++l) {
    fabric->AddSwitch(absl::StrFormat("leaf-%02d", l), SimLeafGuid(l), leaf_ports);
  }
  for (int s = 1; s <= spec.spines; ++s) {
    fabric->AddSwitch(absl::StrFormat("spine-%02d", s), SimSpineGuid(s),
                      spec.leaves * spec.uplinks);
  }
  for (int l = 1; l <= spec.leaves; ++l) {
    for (int h = 0; h < spec.hosts_per_leaf; ++h) {
      if (absl::Status st = fabric->Connect(SimLeafGuid(l), h + 1,
                                            hosts[static_cast<size_t>(l - 1)][static_cast<size_t>(h)],
                                            1, spec.width, spec.speed);
          !st.ok()) {
        return st;
      }
    }
    for (int s = 1; s <= spec.spines; ++s) {
      for (int u = 0; u < spec.uplinks; ++u) {
        const int leaf_port = spec.hosts_per_leaf + (s - 1) * spec.uplinks + u + 1;
        const int spine_port = (l - 1) * spec.uplinks + u + 1;
        if (absl::Status st = fabric->Connect(SimLeafGuid(l), leaf_port, SimSpineGuid(s),
                                              spine_port, spec.width, spec.speed);
            !st.ok()) {
          return st;
        }
      }
    }
  }
  return fabric;
}

SimIbMadTransport::SimIbMadTransport(std::shared_ptr<SimIbFabric> fabric, Options options)
    : fabric_(std::move(fabric)), options_(std::move(options)) {}

template <typename T>
absl::StatusOr<T> SimIbMadTransport::Finish(absl::StatusOr<T> answer, absl::Time start) {
  const absl::Duration wait = answer.ok() || answer.status().code() !=
                                                 absl::StatusCode::kDeadlineExceeded
                                  ? options_.latency
                                  : options_.timeout;
  if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
  const absl::Duration took = absl::Now() - start;
  absl::MutexLock lock(&stats_mu_);
  ++queries_;
  time_ += took;
  return answer;
}

uint64_t SimIbMadTransport::queries() const {
  absl::MutexLock lock(&stats_mu_);
  return queries_;
}

absl::Duration SimIbMadTransport::time_in_queries() const {
  absl::MutexLock lock(&stats_mu_);
  return time_;
}

absl::StatusOr<const SimIbFabric::Node*> SimIbMadTransport::Reach(const DrPath& path,
                                                                   int* in_port) const {
  const SimIbFabric::Node* node = fabric_->Walk(path, in_port);
  if (node == nullptr || node->unresponsive) {
    return ib_mad_sim_internal::NoAnswer(absl::StrCat("DR path ", path.ToString()));
  }
  return node;
}

absl::StatusOr<MadNodeInfo> SimIbMadTransport::QueryNodeInfo(const DrPath& path) {
  const absl::Time start = absl::Now();
  absl::StatusOr<MadNodeInfo> answer;
  {
    absl::MutexLock lock(&mu_);
    int in_port = 0;
    absl::StatusOr<const SimIbFabric::Node*> node = Reach(path, &in_port);
    if (!node.ok()) {
      answer = node.status();
    } else {
      const SimIbFabric::Node& n = **node;
      MadNodeInfo info;
      info.type = n.type;
      info.node_guid = n.guid;
      info.system_image_guid = n.guid;
      info.num_ports = n.num_ports();
      info.local_port = in_port;
      info.port_guid = n.type == ib::IbNodeType::kSwitch
                           ? n.guid
                           : n.ports[static_cast<size_t>(in_port)].port_guid;
      info.vendor_id = n.vendor_id;
      info.device_id = n.device_id;
      answer = info;
    }
  }
  return Finish(std::move(answer), start);
}

absl::StatusOr<std::string> SimIbMadTransport::QueryNodeDescription(const DrPath& path) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> answer;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<const SimIbFabric::Node*> node = Reach(path, nullptr);
    if (node.ok()) {
      answer = (*node)->description;
    } else {
      answer = node.status();
    }
  }
  return Finish(std::move(answer), start);
}

absl::StatusOr<MadPortInfo> SimIbMadTransport::QueryPortInfo(const DrPath& path, int port) {
  const absl::Time start = absl::Now();
  absl::StatusOr<MadPortInfo> answer;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<const SimIbFabric::Node*> node = Reach(path, nullptr);
    if (!node.ok()) {
      answer = node.status();
    } else if (const SimIbFabric::Node& n = **node; port < 0 || port > n.num_ports() ||
                                                   (port == 0 && n.type != ib::IbNodeType::kSwitch)) {
      answer = absl::InvalidArgumentError(
          absl::StrCat("MAD status 0x001c (invalid attribute modifier): port ", port));
    } else {
      const SimIbFabric::Port& p = n.ports[static_cast<size_t>(port)];
      MadPortInfo info;
      const bool is_switch = n.type == ib::IbNodeType::kSwitch;
      if (is_switch && port == 0) {
        info.lid = n.lid;
        info.capability_mask = kPortCapExtendedSpeeds;
        info.state = 4;
        info.physical_state = 5;
      } else {
        info.lid = is_switch ? 0 : p.lid;
        info.capability_mask = is_switch ? 0 : kPortCapExtendedSpeeds;
        info.state = p.peer ? 4 : 1;
        info.physical_state = p.peer ? 5 : 2;
        bool fdr10 = false;
        if (p.peer) EncodeMadLinkSpeed(p.width_lanes, p.generation, info, fdr10);
      }
      answer = info;
    }
  }
  return Finish(std::move(answer), start);
}

absl::StatusOr<bool> SimIbMadTransport::QueryFdr10Active(const DrPath& path, int port) {
  const absl::Time start = absl::Now();
  absl::StatusOr<bool> answer;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<const SimIbFabric::Node*> node = Reach(path, nullptr);
    if (!node.ok()) {
      answer = node.status();
    } else if ((*node)->vendor_id != kMellanoxVendorId) {
      answer = absl::UnimplementedError("no Mellanox ExtendedPortInfo");
    } else if (port < 1 || port > (*node)->num_ports()) {
      answer = absl::InvalidArgumentError(absl::StrCat("no port ", port));
    } else {
      answer = (*node)->ports[static_cast<size_t>(port)].generation == "FDR10";
    }
  }
  return Finish(std::move(answer), start);
}

absl::StatusOr<std::pair<const SimIbFabric::Node*, int>> SimIbMadTransport::PmaOf(
    uint32_t lid, int port) const {
  int lid_port = 0;
  const SimIbFabric::Node* node = fabric_->ByLid(lid, &lid_port);
  if (node == nullptr || node->unresponsive) {
    return ib_mad_sim_internal::NoAnswer(absl::StrCat("LID ", lid));
  }
  if (node->type != ib::IbNodeType::kSwitch) port = lid_port;
  if (port < 1 || port > node->num_ports()) {
    return absl::InvalidArgumentError(absl::StrCat("MAD status 0x001c: no port ", port));
  }
  return std::pair{node, port};
}

absl::StatusOr<MadPortCounters> SimIbMadTransport::QueryPortCounters(uint32_t lid, int port) {
  using namespace ib_mad_sim_internal;  // NOLINT
  const absl::Time start = absl::Now();
  absl::StatusOr<MadPortCounters> answer;
  {
    absl::MutexLock lock(&mu_);
    auto pma = PmaOf(lid, port);
    if (!pma.ok()) {
      answer = pma.status();
    } else {
      const SimIbFabric::Node& n = *pma->first;
      const SimIbFabric::PortCounters& counts = n.ports[static_cast<size_t>(pma->second)].counters;
      MadPortCounters out;
      out.cap_mask = kPmaCapXmitWait | (n.extended_counters ? kPmaCapExtendedWidth : 0);
      out.cap_mask2 = n.extended_error_counters ? kPmaCap2AllExtended : 0;
      auto add = [&](std::string_view name) {
        const int width = ib::PmaCounterWidth(ib::PmaAttribute::kPortCounters, name);
        const uint64_t all_ones = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
        // A PortCounters counter stops at all ones rather than wrap.
        out.values.push_back({name, std::min(CountOf(counts, name), all_ones)});
      };
      for (std::string_view name : kErrorCounters) add(name);
      for (std::string_view name : kDataCounters) add(name);
      answer = std::move(out);
    }
  }
  return Finish(std::move(answer), start);
}

absl::StatusOr<MadPortCounters> SimIbMadTransport::QueryPortCountersExtended(uint32_t lid,
                                                                             int port) {
  using namespace ib_mad_sim_internal;  // NOLINT
  const absl::Time start = absl::Now();
  absl::StatusOr<MadPortCounters> answer;
  {
    absl::MutexLock lock(&mu_);
    auto pma = PmaOf(lid, port);
    if (!pma.ok()) {
      answer = pma.status();
    } else if (!pma->first->extended_counters) {
      answer = absl::UnimplementedError("no PortCountersExtended");
    } else {
      const SimIbFabric::Node& n = *pma->first;
      const SimIbFabric::PortCounters& counts = n.ports[static_cast<size_t>(pma->second)].counters;
      MadPortCounters out;
      out.cap_mask = kPmaCapXmitWait | kPmaCapExtendedWidth;
      out.cap_mask2 = n.extended_error_counters ? kPmaCap2AllExtended : 0;
      for (std::string_view name : kDataCounters) out.values.push_back({name, CountOf(counts, name)});
      for (std::string_view name : kCastCounters) out.values.push_back({name, CountOf(counts, name)});
      if (n.extended_error_counters) {
        for (std::string_view name : kErrorCounters) {
          out.values.push_back({name, CountOf(counts, name)});
        }
      }
      answer = std::move(out);
    }
  }
  return Finish(std::move(answer), start);
}

}  // namespace railwatch
