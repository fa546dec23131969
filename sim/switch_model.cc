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

// A share of each leaf's traffic leaves the rail through the spines (PXN off, some cross-rail
// collectives); rail-optimised fabrics keep most of it on the leaf.
constexpr double kUplinkShare = 0.05;
// SONiC's default PFC-WD detection time and a restoration period after which a storm that is
// still on is detected again.
constexpr absl::Duration kWatchdogDetection = absl::Milliseconds(200);
constexpr absl::Duration kWatchdogRestoration = absl::Seconds(2);

}  // namespace

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

SwitchFabric::SwitchFabric(Options options, absl::Time start)
    : options_(std::move(options)), start_(start), last_(start), rng_(options_.seed ^ 0x5eed) {}

absl::StatusOr<std::unique_ptr<SwitchFabric>> SwitchFabric::Create(Options options,
                                                                   absl::Time start) {
  std::unique_ptr<SwitchFabric> f(new SwitchFabric(std::move(options), start));
  if (absl::Status s = f->Build(); !s.ok()) return s;
  absl::MutexLock lock(&f->mu_);
  f->storm_state_.assign(f->options_.storms.size(), 0);
  f->storm_next_detect_.assign(f->options_.storms.size(), absl::InfinitePast());
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
  std::vector<uint64_t> leaf_in(leaves_, 0), leaf_out(leaves_, 0);
  for (const NicTraffic& n : nics) {
    if (n.nic < 0 || n.nic >= options_.nics_per_host || n.host < 1 || n.host > options_.hosts) continue;
    const auto [leaf, port] = nic_port_[static_cast<size_t>(n.host - 1) * options_.nics_per_host + n.nic];
    SwitchPort& p = switches_[leaf].ports[port];
    PortCounters& c = p.c;
    if (p.up != n.up) {
      p.up = n.up;
      ++c.carrier_transitions;
    }
    // What the NIC sends the port receives, and the other way round.
    const uint64_t out_delta = n.rx_bytes >= c.out_octets ? n.rx_bytes - c.out_octets : 0;
    leaf_in[leaf] += n.tx_bytes >= c.in_octets ? n.tx_bytes - c.in_octets : 0;
    leaf_out[leaf] += out_delta;
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
  for (int l = 0; l < leaves_; ++l) {
    if (marking[l] >= 1) continue;
    const int hosts = static_cast<int>(switches_[l].ports.size()) - options_.spines;
    const double load = static_cast<double>(leaf_out[l]) / std::max(hosts, 1) / line_bytes;
    const double rate = CongestionPauseRate(marking[l], load);
    for (SwitchPort& p : switches_[l].ports) {
      if (!p.up) continue;
      const uint64_t pauses = DrawCount(rng_, rate * dt);
      p.c.out_pfc[kRocePriority] += pauses;
      if (p.uplink) switches_[p.peer_switch].ports[p.peer_port_index].c.in_pfc[kRocePriority] += pauses;
    }
  }

  for (int l = 0; l < leaves_; ++l) {
    for (SwitchPort& p : switches_[l].ports) {
      if (!p.uplink) continue;
      const uint64_t in = static_cast<uint64_t>(leaf_in[l] * kUplinkShare / options_.spines);
      const uint64_t out = static_cast<uint64_t>(leaf_out[l] * kUplinkShare / options_.spines);
      p.c.out_octets += in;
      p.c.in_octets += out;
      p.c.out_ucast_pkts += in / 4096;
      p.c.in_ucast_pkts += out / 4096;
      p.c.queue_octets[kRocePriority] = p.c.out_octets;
      p.c.queue_pkts[kRocePriority] = p.c.out_ucast_pkts;
      p.c.queue_ecn_marked[kRocePriority] +=
          DrawCount(rng_, static_cast<double>(in) / 1e9 * kEcnMarksPerGb * marking[l]);
      // The spine's port toward this leaf sees the same link from the other end.
      PortCounters& far = switches_[p.peer_switch].ports[p.peer_port_index].c;
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
  std::vector<double> marking(leaves_, 1.0);
  for (size_t i = 0; i < options_.ecn_misconfigs.size(); ++i) {
    const EcnMisconfig& m = options_.ecn_misconfigs[i];
    if (now < start_ + m.at) continue;
    double& share = marking[misconfig_leaf_[i]];
    share = std::min(share, EcnMarkingShare(m.threshold_offset_kb));
  }
  return marking;
}

void SwitchFabric::ApplyStorms(absl::Time now, double dt) {
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
      if (p.uplink) switches_[p.peer_switch].ports[p.peer_port_index].c.in_pfc[kRocePriority] += relayed;
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
