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

// How much a counter moved since `seen` (which it updates); a counter that went back restarted
// from 0 (a driver reload) and moved by its whole value.
uint64_t Delta(uint64_t now, uint64_t& seen) {
  const uint64_t d = now >= seen ? now - seen : now;
  seen = now;
  return d;
}

// `bytes` sent from one port's `queue` to the port at the other end of its cable.
void Carry(PortCounters& from, PortCounters& to, int queue, uint64_t bytes) {
  const uint64_t packets = bytes / 4096;
  from.out_octets += bytes;
  from.out_ucast_pkts += packets;
  from.queue_octets[queue] += bytes;
  from.queue_pkts[queue] += packets;
  to.in_octets += bytes;
  to.in_ucast_pkts += packets;
}

// A share of each leaf's traffic leaves the rail through the spines (PXN off, some cross-rail
// collectives); rail-optimised fabrics keep most of it on the leaf.
constexpr double kUplinkShare = 0.05;

}  // namespace

SwitchFabric::SwitchFabric(Options options, absl::Time start)
    : options_(std::move(options)),
      start_(start),
      last_(start),
      rng_(options_.seed ^ 0x5eed),
      phy_rng_(options_.seed ^ 0x0971c5) {}

absl::StatusOr<std::unique_ptr<SwitchFabric>> SwitchFabric::Create(Options options,
                                                                   absl::Time start) {
  std::unique_ptr<SwitchFabric> f(new SwitchFabric(std::move(options), start));
  if (absl::Status s = f->Build(); !s.ok()) return s;
  f->InitOptics();
  absl::MutexLock lock(&f->mu_);
  f->nic_seen_.resize(f->nic_port_.size());
  f->storm_state_.resize(f->options_.storms.size());
  f->deadlock_state_.resize(f->options_.deadlocks.size());
  return f;
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
  leaf_traffic_.assign(leaves_, {});
  for (const NicTraffic& n : nics) {
    if (n.nic < 0 || n.nic >= options_.nics_per_host || n.host < 1 || n.host > options_.hosts) continue;
    const size_t index = static_cast<size_t>(n.host - 1) * options_.nics_per_host + n.nic;
    const auto [leaf, port] = nic_port_[index];
    SwitchPort& p = switches_[leaf].ports[port];
    PortCounters& c = p.c;
    NicSeen& seen = nic_seen_[index];
    // A NIC that left its host leaves its port down for good: one carrier transition.
    seen.gone = seen.gone || n.gone;
    const bool up = n.up && !seen.gone;
    if (p.up != up) {
      p.up = up;
      ++c.carrier_transitions;
      ++switches_[leaf].state_version;
    }
    if (seen.gone) continue;
    // What the NIC sends the port receives, and the other way round.
    const uint64_t in = Delta(n.tx_bytes, seen.tx_bytes), in_pkts = Delta(n.tx_packets, seen.tx_packets);
    uint64_t out = Delta(n.rx_bytes, seen.rx_bytes), out_pkts = Delta(n.rx_packets, seen.rx_packets);
    // What this queue marked is what the NIC received marked.
    uint64_t marks = Delta(n.ecn_marked, seen.ecn_marked);
    // Frames the link corrupted on their way in fail the port's FCS check.
    const uint64_t corrupted = Delta(n.corrupted_packets, seen.corrupted);
    c.in_errors += corrupted;
    c.in_crc_errors += corrupted;
    // The NIC's traffic rides the queue of its priority (0 when its QoS is lost: no ECN there).
    const int queue = n.priority >= 0 && n.priority < kQueues ? n.priority : kRocePriority;
    if (queue != kRocePriority) marks = 0;
    if (p.queue_stuck[queue]) out = out_pkts = marks = 0;  // nothing leaves a stuck queue
    c.in_octets += in;
    c.in_ucast_pkts += in_pkts;
    c.out_octets += out;
    c.out_ucast_pkts += out_pkts;
    c.queue_octets[queue] += out;
    c.queue_pkts[queue] += out_pkts;
    c.queue_ecn_marked[queue] += marks;
    LeafTraffic& t = leaf_traffic_[leaf];
    t.in[queue == kRocePriority ? 0 : 1] += in;
    t.out[queue == kRocePriority ? 0 : 1] += out;
  }

  // A leaf whose ECN threshold is too high lets its queues fill to XOFF: every port sends
  // pauses upstream (toward the NICs and the spines), at a rate that follows the leaf's load.
  const std::vector<double> marking = LeafMarking(now);
  const double line_bytes = options_.link_gbps * 1e9 / 8 * dt;
  for (int l = 0; l < leaves_; ++l) {
    if (marking[l] >= 1) continue;
    const int hosts = static_cast<int>(switches_[l].ports.size()) - options_.spines;
    const double out = static_cast<double>(leaf_traffic_[l].out[0] + leaf_traffic_[l].out[1]);
    const double load = out / std::max(hosts, 1) / line_bytes;
    const double rate = CongestionPauseRate(marking[l], load);
    for (SwitchPort& p : switches_[l].ports) {
      if (!p.up) continue;
      const uint64_t pauses = DrawCount(rng_, rate * dt);
      p.c.out_pfc[kRocePriority] += pauses;
      if (p.uplink) switches_[p.peer_switch].ports[p.peer_port_index].c.in_pfc[kRocePriority] += pauses;
    }
  }

  // Uplinks carry a share of the leaf's traffic, each class in its queue, split over the
  // spines; the spine's port toward the leaf sees the same link from the other end.
  for (int l = 0; l < leaves_; ++l) {
    const LeafTraffic& t = leaf_traffic_[l];
    for (SwitchPort& p : switches_[l].ports) {
      if (!p.uplink) continue;
      PortCounters& far = switches_[p.peer_switch].ports[p.peer_port_index].c;
      for (int cls = 0; cls < 2; ++cls) {
        const int queue = cls == 0 ? kRocePriority : 0;
        const auto up = static_cast<uint64_t>(static_cast<double>(t.in[cls]) * kUplinkShare / options_.spines);
        const auto down = static_cast<uint64_t>(static_cast<double>(t.out[cls]) * kUplinkShare / options_.spines);
        Carry(p.c, far, queue, up);
        Carry(far, p.c, queue, down);
        if (queue != kRocePriority) continue;
        p.c.queue_ecn_marked[queue] += DrawCount(rng_, static_cast<double>(up) / 1e9 * kEcnMarksPerGb * marking[l]);
        far.queue_ecn_marked[queue] += DrawCount(rng_, static_cast<double>(down) / 1e9 * kEcnMarksPerGb);
      }
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
  ApplyDeadlocks(now, dt);
  AdvancePhy(dt);
  for (SimSwitch& sw : switches_) ++sw.counters_version;
  return absl::OkStatus();
}

std::vector<double> SwitchFabric::LeafMarking(absl::Time now) const {
  std::vector<double> marking(leaves_, 1.0);
  for (size_t i = 0; i < options_.ecn_misconfigs.size(); ++i) {
    const EcnMisconfig& m = options_.ecn_misconfigs[i];
    if (now < start_ + m.at) continue;
    double& share = marking[misconfig_leaf_[i]];
    share = std::min(share, EcnMarkingShare(m.threshold_offset_kb));
  }
  return marking;
}

}  // namespace railwatch::sim
