#include "sim/switch_model.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/labels.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch::sim {

namespace {

constexpr std::pair<Dialect, std::string_view> kDialects[] = {
    {Dialect::kOpenConfig, "openconfig"},
    {Dialect::kSonic, "sonic"},
    {Dialect::kAristaEos, "arista-eos"},
    {Dialect::kCumulus, "cumulus"}};

// A share of each leaf's traffic leaves the rail through the spines (PXN off, some cross-rail
// collectives); rail-optimised fabrics keep most of it on the leaf.
constexpr double kUplinkShare = 0.05;
// SONiC's default PFC-WD detection time and a restoration period after which a storm that is
// still on is detected again.
constexpr absl::Duration kWatchdogDetection = absl::Milliseconds(200);
constexpr absl::Duration kWatchdogRestoration = absl::Seconds(2);

}  // namespace

absl::StatusOr<Dialect> ParseDialect(absl::string_view name) {
  for (const auto& [d, n] : kDialects) {
    if (AsAbsl(n) == name) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown switch dialect \"", name, "\": expected sonic, arista-eos, openconfig or cumulus"));
}

std::string_view DialectName(Dialect d) {
  for (const auto& [dd, n] : kDialects) {
    if (dd == d) return n;
  }
  return "openconfig";
}

std::string SwitchPortName(Dialect d, int index) {
  switch (d) {
    case Dialect::kSonic:
      // SONiC names ports by their first SerDes lane: 4 lanes per port.
      return absl::StrCat("Ethernet", index * 4);
    case Dialect::kCumulus:
      return absl::StrCat("swp", index + 1);
    case Dialect::kAristaEos:
    case Dialect::kOpenConfig:
      return absl::StrCat("Ethernet", index + 1);
  }
  return absl::StrCat("Ethernet", index + 1);
}

absl::StatusOr<PfcStorm> ParsePfcStorm(absl::string_view spec) {
  std::vector<absl::string_view> at = absl::StrSplit(spec, '@');
  std::vector<absl::string_view> parts;
  if (at.size() == 2) parts = absl::StrSplit(at[0], '/');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad PFC storm \"", spec, "\": expected HOST/DEVICE@OFFSET, e.g. gpu-node-002/mlx5_3@10s"));
  }
  PfcStorm s;
  s.host = std::string(parts[0]);
  s.device = std::string(parts[1]);
  absl::StatusOr<absl::Duration> offset = ParseDuration(at[1]);
  if (!offset.ok()) return offset.status();
  s.at = *offset;
  return s;
}

absl::StatusOr<LldpMiswire> ParseLldpMiswire(absl::string_view spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, '/');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad LLDP miswire \"", spec, "\": expected SWITCH/PORT, e.g. leaf-r2/Ethernet8"));
  }
  return LldpMiswire{std::string(parts[0]), std::string(parts[1])};
}

SwitchFabric::SwitchFabric(Options options, absl::Time start)
    : options_(std::move(options)), start_(start), last_(start), rng_(options_.seed ^ 0x5eed) {}

absl::StatusOr<std::unique_ptr<SwitchFabric>> SwitchFabric::Create(Options options,
                                                                   absl::Time start) {
  std::unique_ptr<SwitchFabric> f(new SwitchFabric(std::move(options), start));
  if (absl::Status s = f->Build(); !s.ok()) return s;
  return f;
}

absl::Status SwitchFabric::Build() {
  const int leaves = options_.nics_per_host;
  std::vector<std::string> names;
  for (int k = 0; k < leaves; ++k) names.push_back(absl::StrCat("leaf-r", k));
  for (int s = 0; s < options_.spines; ++s) names.push_back(absl::StrCat("spine-", s));

  // Dialects: round-robin over the plain entries, then per-name overrides.
  std::vector<Dialect> round_robin;
  std::map<std::string, Dialect> by_name;
  std::vector<std::string> specs = options_.dialects;
  if (specs.empty()) specs = {"sonic", "arista-eos", "openconfig", "cumulus"};
  for (const std::string& spec : specs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    absl::StatusOr<Dialect> d = ParseDialect(kv.back());
    if (!d.ok()) return d.status();
    if (kv.size() == 2) {
      if (std::find(names.begin(), names.end(), kv[0]) == names.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "switch dialect \"", spec, "\" names no simulated switch (", absl::StrJoin(names, ", "), ")"));
      }
      by_name[kv[0]] = *d;
    } else {
      round_robin.push_back(*d);
    }
  }
  if (round_robin.empty()) round_robin.push_back(Dialect::kOpenConfig);

  switches_.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    SimSwitch& sw = switches_[i];
    sw.name = names[i];
    sw.role = static_cast<int>(i) < leaves ? "leaf" : "spine";
    sw.rail = static_cast<int>(i) < leaves ? static_cast<int>(i) : -1;
    auto it = by_name.find(sw.name);
    sw.dialect = it != by_name.end() ? it->second : round_robin[i % round_robin.size()];
  }
  auto chassis = [](int a, int b) { return absl::StrFormat("b8:3f:d2:00:%02x:%02x", a % 256, b); };
  for (int k = 0; k < leaves; ++k) {
    SimSwitch& leaf = switches_[k];
    for (int h = 1; h <= options_.hosts; ++h) {
      SwitchPort p;
      p.name = SwitchPortName(leaf.dialect, h - 1);
      p.peer = SysfsFabric::HostName(h);
      p.peer_port = SysfsFabric::NetdevName(k);
      p.peer_device = absl::StrCat("mlx5_", k);
      p.lldp_system_name = p.peer;
      p.lldp_port_id = p.peer_port;
      p.lldp_chassis_id = chassis(h, k);
      leaf.ports.push_back(std::move(p));
    }
    for (int s = 0; s < options_.spines; ++s) {
      SimSwitch& spine = switches_[leaves + s];
      SwitchPort p;
      p.name = SwitchPortName(leaf.dialect, options_.hosts + s);
      p.peer = spine.name;
      p.peer_port = SwitchPortName(spine.dialect, k);
      p.uplink = true;
      p.lldp_system_name = p.peer;
      p.lldp_port_id = p.peer_port;
      p.lldp_chassis_id = absl::StrFormat("02:00:00:00:%02x:00", leaves + s);
      leaf.ports.push_back(std::move(p));
    }
  }
  for (int s = 0; s < options_.spines; ++s) {
    SimSwitch& spine = switches_[leaves + s];
    for (int k = 0; k < leaves; ++k) {
      SwitchPort p;
      p.name = SwitchPortName(spine.dialect, k);
      p.peer = switches_[k].name;
      p.peer_port = SwitchPortName(switches_[k].dialect, options_.hosts + s);
      p.lldp_system_name = p.peer;
      p.lldp_port_id = p.peer_port;
      p.lldp_chassis_id = absl::StrFormat("02:00:00:00:%02x:00", k);
      spine.ports.push_back(std::move(p));
    }
  }

  for (const LldpMiswire& m : options_.miswires) {
    SwitchPort* port = nullptr;
    for (SimSwitch& sw : switches_) {
      for (SwitchPort& p : sw.ports) {
        if (sw.name == m.switch_name && p.name == m.port) port = &p;
      }
    }
    if (port == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("LLDP miswire target ", m.switch_name, "/", m.port, " is not a simulated switch port"));
    }
    // Another host's NIC on the same rail answers: the cables of two hosts were swapped.
    int h = 1;
    (void)absl::SimpleAtoi(absl::StripPrefix(AsAbsl(port->peer), "gpu-node-"), &h);
    const int other = options_.hosts > 1 ? h % options_.hosts + 1 : h + 1;
    port->lldp_system_name = SysfsFabric::HostName(other);
    port->lldp_chassis_id = chassis(other, 0);
    if (absl::Status s = AppendGroundTruth(
            options_.ground_truth_file,
            absl::StrFormat("{\"fault\": \"lldp_miswire\", \"switch\": \"%s\", \"port\": \"%s\", "
                            "\"expected\": \"%s\", \"reported\": \"%s\", \"injected_at_unix_nano\": %d}",
                            m.switch_name, m.port, port->peer, port->lldp_system_name,
                            absl::ToUnixNanos(start_)));
        !s.ok()) {
      return s;
    }
  }
  for (const PfcStorm& s : options_.storms) {
    if (LeafPortOf(s.host, s.device).first < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("PFC storm source ", s.host, "/", s.device, " is not a simulated NIC"));
    }
  }
  for (const EcnMisconfig& m : options_.ecn_misconfigs) {
    if (m.rail < 0 || m.rail >= leaves) {
      return absl::InvalidArgumentError(
          absl::StrCat("ECN misconfiguration target ", m.switch_name, " is not a simulated leaf"));
    }
  }
  absl::MutexLock lock(&mu_);
  storm_state_.assign(options_.storms.size(), 0);
  storm_next_detect_.assign(options_.storms.size(), absl::InfinitePast());
  return absl::OkStatus();
}

std::pair<int, int> SwitchFabric::LeafPortOf(std::string_view host, std::string_view device) const {
  for (int k = 0; k < options_.nics_per_host && k < static_cast<int>(switches_.size()); ++k) {
    const SimSwitch& leaf = switches_[k];
    for (size_t p = 0; p < leaf.ports.size(); ++p) {
      if (!leaf.ports[p].uplink && leaf.ports[p].peer == host && leaf.ports[p].peer_device == device) {
        return {k, static_cast<int>(p)};
      }
    }
  }
  return {-1, -1};
}

void SwitchFabric::WithSwitch(int index, const std::function<void(const SimSwitch&)>& fn) const {
  absl::MutexLock lock(&mu_);
  fn(switches_[index]);
}

absl::Status SwitchFabric::Update(absl::Time now, const std::vector<NicTraffic>& nics) {
  absl::MutexLock lock(&mu_);
  const double dt = absl::ToDoubleSeconds(now - last_);
  if (dt <= 0) return absl::OkStatus();
  last_ = now;
  const int leaves = options_.nics_per_host;
  std::vector<uint64_t> leaf_in(leaves, 0), leaf_out(leaves, 0);

  for (const NicTraffic& n : nics) {
    if (n.nic >= leaves || n.host < 1 || n.host > options_.hosts) continue;
    SwitchPort& p = switches_[n.nic].ports[n.host - 1];
    PortCounters& c = p.c;
    if (p.up != n.up) {
      p.up = n.up;
      ++c.carrier_transitions;
    }
    // What the NIC sends the port receives, and the other way round.
    const uint64_t out_delta = n.rx_bytes >= c.out_octets ? n.rx_bytes - c.out_octets : 0;
    leaf_in[n.nic] += n.tx_bytes >= c.in_octets ? n.tx_bytes - c.in_octets : 0;
    leaf_out[n.nic] += out_delta;
    c.in_octets = std::max(c.in_octets, n.tx_bytes);
    c.out_octets = std::max(c.out_octets, n.rx_bytes);
    c.in_ucast_pkts = std::max(c.in_ucast_pkts, n.tx_packets);
    c.out_ucast_pkts = std::max(c.out_ucast_pkts, n.rx_packets);
    c.queue_octets[kRocePriority] = c.out_octets;
    c.queue_pkts[kRocePriority] = c.out_ucast_pkts;
    // What this queue marked is what the NIC received marked.
    c.queue_ecn_marked[kRocePriority] = std::max(c.queue_ecn_marked[kRocePriority], n.ecn_marked);
  }

  // A leaf whose ECN threshold is too high lets its queues fill to XOFF: every port sends
  // pauses upstream (toward the NICs and the spines), at a rate that follows the leaf's load.
  const std::vector<double> marking = LeafMarking(now);
  const double line_bytes = options_.link_gbps * 1e9 / 8 * dt;
  for (int k = 0; k < leaves; ++k) {
    if (marking[k] >= 1) continue;
    const double load = static_cast<double>(leaf_out[k]) / options_.hosts / line_bytes;
    const double rate = CongestionPauseRate(marking[k], load);
    for (SwitchPort& p : switches_[k].ports) {
      if (!p.up) continue;
      const uint64_t pauses = DrawCount(rng_, rate * dt);
      p.c.out_pfc[kRocePriority] += pauses;
      if (p.uplink) {
        const int s = static_cast<int>(&p - &switches_[k].ports[options_.hosts]);
        switches_[leaves + s].ports[k].c.in_pfc[kRocePriority] += pauses;
      }
    }
  }

  for (int k = 0; k < leaves; ++k) {
    SimSwitch& leaf = switches_[k];
    for (SwitchPort& p : leaf.ports) {
      if (!p.uplink) continue;
      const int s = static_cast<int>(&p - &leaf.ports[options_.hosts]);
      const uint64_t in = static_cast<uint64_t>(leaf_in[k] * kUplinkShare / options_.spines);
      const uint64_t out = static_cast<uint64_t>(leaf_out[k] * kUplinkShare / options_.spines);
      p.c.out_octets += in;
      p.c.in_octets += out;
      p.c.out_ucast_pkts += in / 4096;
      p.c.in_ucast_pkts += out / 4096;
      p.c.queue_octets[kRocePriority] = p.c.out_octets;
      p.c.queue_pkts[kRocePriority] = p.c.out_ucast_pkts;
      p.c.queue_ecn_marked[kRocePriority] +=
          DrawCount(rng_, static_cast<double>(in) / 1e9 * kEcnMarksPerGb * marking[k]);
      // The spine's port toward this leaf sees the same link from the other end.
      PortCounters& far = switches_[leaves + s].ports[k].c;
      far.in_octets = p.c.out_octets;
      far.out_octets = p.c.in_octets;
      far.in_ucast_pkts = p.c.out_ucast_pkts;
      far.out_ucast_pkts = p.c.in_ucast_pkts;
      far.queue_octets[kRocePriority] = far.out_octets;
      far.queue_pkts[kRocePriority] = far.out_ucast_pkts;
      far.queue_ecn_marked[kRocePriority] +=
          DrawCount(rng_, static_cast<double>(out) / 1e9 * kEcnMarksPerGb);
    }
  }

  // Background: benign pauses on the RoCE priority, LLDP/ARP-ish multicast, best-effort queue 0.
  for (SimSwitch& sw : switches_) {
    for (SwitchPort& p : sw.ports) {
      if (!p.up) continue;
      p.c.in_pfc[kRocePriority] += DrawCount(rng_, options_.benign_pause_rate * dt);
      p.c.out_pfc[kRocePriority] += DrawCount(rng_, options_.benign_pause_rate * dt);
      p.c.in_multicast_pkts += DrawCount(rng_, 0.2 * dt);
      p.c.out_multicast_pkts += DrawCount(rng_, 0.2 * dt);
      const uint64_t best_effort = DrawCount(rng_, 5 * dt);
      p.c.queue_pkts[0] += best_effort;
      p.c.queue_octets[0] += best_effort * 256;
    }
  }
  ApplyStorms(now, dt);
  return absl::OkStatus();
}

std::vector<double> SwitchFabric::LeafMarking(absl::Time now) const {
  std::vector<double> marking(options_.nics_per_host, 1.0);
  for (const EcnMisconfig& m : options_.ecn_misconfigs) {
    if (now < start_ + m.at) continue;
    marking[m.rail] = std::min(marking[m.rail], EcnMarkingShare(m.threshold_offset_kb));
  }
  return marking;
}

void SwitchFabric::ApplyStorms(absl::Time now, double dt) {
  const int leaves = options_.nics_per_host;
  for (size_t i = 0; i < options_.storms.size(); ++i) {
    const PfcStorm& storm = options_.storms[i];
    if (storm_state_[i] == 2) continue;
    const auto [k, port] = LeafPortOf(storm.host, storm.device);
    SwitchPort& victim = switches_[k].ports[port];
    PortCounters& c = victim.c;
    if (storm_state_[i] == 0) {
      if (now < start_ + storm.at) continue;
      storm_state_[i] = 1;
      storm_next_detect_[i] = now + kWatchdogDetection;
      spdlog::info("injected PFC storm: {}/{} -> {} {}", storm.host, storm.device,
                   switches_[k].name, victim.name);
      absl::Status s = AppendGroundTruth(
          options_.ground_truth_file,
          absl::StrFormat("{\"fault\": \"pfc_storm\", \"host\": \"%s\", \"device\": \"%s\", "
                          "\"switch\": \"%s\", \"port\": \"%s\", \"priority\": %d, "
                          "\"injected_at_unix_nano\": %d, \"duration_ms\": %d}",
                          storm.host, storm.device, switches_[k].name, victim.name, kRocePriority,
                          absl::ToUnixNanos(now), absl::ToInt64Milliseconds(storm.duration)));
      if (!s.ok()) spdlog::warn("{}", s.message());
    }
    if (storm.duration > absl::ZeroDuration() && now >= start_ + storm.at + storm.duration) {
      storm_state_[i] = 2;
      if (c.wd_stormed[kRocePriority]) {
        c.wd_stormed[kRocePriority] = false;
        ++c.wd_restored[kRocePriority];
      }
      spdlog::info("PFC storm from {}/{} over", storm.host, storm.device);
      continue;
    }
    // The NIC pauses the leaf; the leaf, its queue toward the NIC stuck, pauses everyone
    // who sends into it: the other hosts of the rail and the spines.
    c.in_pfc[kRocePriority] += DrawCount(rng_, options_.storm_pause_rate * dt);
    for (SwitchPort& p : switches_[k].ports) {
      if (&p == &victim || !p.up) continue;
      const uint64_t relayed = DrawCount(rng_, options_.relay_pause_rate * dt);
      p.c.out_pfc[kRocePriority] += relayed;
      if (p.uplink) {
        const int s = static_cast<int>(&p - &switches_[k].ports[options_.hosts]);
        switches_[leaves + s].ports[k].c.in_pfc[kRocePriority] += relayed;
      }
    }
    if (now >= storm_next_detect_[i]) {
      // Detected (again, after a restoration that did not end the storm).
      if (c.wd_stormed[kRocePriority]) ++c.wd_restored[kRocePriority];
      c.wd_stormed[kRocePriority] = true;
      ++c.wd_detected[kRocePriority];
      storm_next_detect_[i] = now + kWatchdogRestoration;
    }
    if (c.wd_stormed[kRocePriority]) c.queue_dropped[kRocePriority] += DrawCount(rng_, 1000 * dt);
  }
}

}  // namespace railwatch::sim
