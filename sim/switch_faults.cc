// The PFC faults of the simulated leaves: storms (a NIC pauses its leaf port without end; the
// leaf relays to its ports and uplinks, the spines on to the other leaves) and deadlocks (a leaf
// port and its NIC hold each other's lossless queue paused: nothing is sent, the PFC watchdog holds
// the queue stormed).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "common/text.h"
#include "sim/fault_specs.h"
#include "sim/switch_model.h"

namespace railwatch::sim {
namespace {

// SONiC's default PFC-WD detection time and a restoration period after which a storm that is
// still on is detected again.
constexpr absl::Duration kWatchdogDetection = absl::Milliseconds(200);
constexpr absl::Duration kWatchdogRestoration = absl::Seconds(2);
// What the watchdog's drop action discards per second from a stormed queue.
constexpr double kWatchdogDropsPerSecond = 1000;

void RestoreWatchdog(PortCounters& c, int queue) {
  if (!c.wd_stormed[queue]) return;
  c.wd_stormed[queue] = false;
  ++c.wd_restored[queue];
}

void DetectWatchdog(PortCounters& c, int queue) {
  // Detected (again, after a restoration that did not end the fault).
  if (c.wd_stormed[queue]) ++c.wd_restored[queue];
  c.wd_stormed[queue] = true;
  ++c.wd_detected[queue];
}

// Where a fault landed on the switches, for its ground truth (its kind's line, sim/fault_truth.h).
FaultStarted OnPort(absl::Time now, const std::string& switch_name, const std::string& port) {
  FaultStarted started = StartedAt(now);
  started.switch_name = switch_name;
  started.interface = port;
  return started;
}

}  // namespace

void SwitchFabric::ApplyStorms(absl::Time now, double dt) {
  for (size_t i = 0; i < options_.storms.size(); ++i) {
    const PfcStorm& storm = options_.storms[i];
    FaultState& state = storm_state_[i];
    if (state.phase == 2) continue;
    const auto [k, port] = LeafPortOf(storm.host, storm.device);
    SwitchPort& victim = switches_[k].ports[port];
    PortCounters& c = victim.c;
    if (state.phase == 0) {
      if (now < start_ + storm.at) continue;
      state.phase = 1;
      state.began = now;
      state.next_detect = now + kWatchdogDetection;
      spdlog::info("injected PFC storm: {}/{} -> {} {}", storm.host, storm.device,
                   switches_[k].name, victim.name);
      absl::Status s = storm.truth.Write(options_.ground_truth_file,
                                         OnPort(now, switches_[k].name, victim.name));
      if (!s.ok()) spdlog::warn("{}", s.message());
    }
    if (storm.duration > absl::ZeroDuration() && now >= start_ + storm.at + storm.duration) {
      state.phase = 2;
      RestoreWatchdog(c, kRocePriority);
      spdlog::info("PFC storm from {}/{} over", storm.host, storm.device);
      continue;
    }
    // The NIC pauses the leaf; the leaf, its queue toward the NIC stuck, pauses everyone
    // who sends into it: the other hosts of the leaf and the spines.
    c.in_pfc[kRocePriority] += DrawCount(rng_, options_.storm_pause_rate * dt);
    for (SwitchPort& p : switches_[k].ports) {
      if (&p == &victim || !p.up) continue;
      const uint64_t relayed = DrawCount(rng_, options_.relay_pause_rate * dt);
      p.c.out_pfc[kRocePriority] += relayed;
      if (p.uplink)
        switches_[p.peer_switch].ports[p.peer_port_index].c.in_pfc[kRocePriority] += relayed;
    }
    if (now >= state.began + options_.spine_relay_delay) SpreadThroughSpines(k, dt);
    if (now >= state.next_detect) {
      DetectWatchdog(c, kRocePriority);
      state.next_detect = now + kWatchdogRestoration;
    }
    if (c.wd_stormed[kRocePriority]) {
      c.queue_dropped[kRocePriority] += DrawCount(rng_, kWatchdogDropsPerSecond * dt);
    }
  }
}

// The spines that the storm's leaf pauses pause, in turn, whoever sends into them: every other
// leaf's uplink receives their pauses, fewer than the leaf relays, and under the 2,000/s that
// rules/pfc-storm.yaml takes for a storm's source (those leaves are paused, not sources; they
// pass nothing on to their hosts).
void SwitchFabric::SpreadThroughSpines(int leaf, double dt) {
  for (const SwitchPort& uplink : switches_[leaf].ports) {
    if (!uplink.uplink || !uplink.up) continue;
    for (SwitchPort& p : switches_[uplink.peer_switch].ports) {
      if (p.peer_switch == leaf || !p.up) continue;
      const uint64_t relayed = DrawCount(rng_, options_.spine_relay_pause_rate * dt);
      p.c.out_pfc[kRocePriority] += relayed;
      switches_[p.peer_switch].ports[p.peer_port_index].c.in_pfc[kRocePriority] += relayed;
    }
  }
}

// A cyclic buffer dependency through one link: the leaf port's queue 3 toward the NIC is held
// paused by the NIC, and the NIC's by the port. Both ends send pauses AND receive them, so
// neither is a storm's source: the NIC sends far fewer than a storm's (rules/pfc-storm.yaml
// looks for a NIC sending over 2,000/s, or over 100/s with the watchdog stormed, while nobody
// pauses it), and the NIC is itself paused hard. The queue sends nothing, and the watchdog
// holds it stormed (no restore-and-redetect: the queue never drains on its own) until the
// deadlock ends.
void SwitchFabric::ApplyDeadlocks(absl::Time now, double dt) {
  for (size_t i = 0; i < options_.deadlocks.size(); ++i) {
    const PfcDeadlock& d = options_.deadlocks[i];
    FaultState& state = deadlock_state_[i];
    if (state.phase == 2 || now < start_ + d.at) continue;
    const auto [k, port] = LeafPortOf(d.host, d.device);
    SwitchPort& p = switches_[k].ports[port];
    if (state.phase == 0) {
      state.phase = 1;
      state.next_detect = now + kWatchdogDetection;
      p.queue_stuck[kRocePriority] = true;
      spdlog::info("injected PFC deadlock: {}/{} <-> {} {} queue {}", d.host, d.device,
                   switches_[k].name, p.name, kRocePriority);
      absl::Status s =
          d.truth.Write(options_.ground_truth_file, OnPort(now, switches_[k].name, p.name));
      if (!s.ok()) spdlog::warn("{}", s.message());
    }
    if (d.duration > absl::ZeroDuration() && now >= start_ + d.at + d.duration) {
      state.phase = 2;
      p.queue_stuck[kRocePriority] = false;
      RestoreWatchdog(p.c, kRocePriority);
      spdlog::info("PFC deadlock on {}/{} over", d.host, d.device);
      continue;
    }
    if (!p.up) continue;
    p.c.in_pfc[kRocePriority] += DrawCount(rng_, options_.deadlock_nic_pause_rate * dt);
    p.c.out_pfc[kRocePriority] += DrawCount(rng_, options_.deadlock_pause_rate * dt);
    if (now >= state.next_detect) {
      DetectWatchdog(p.c, kRocePriority);
      state.next_detect = absl::InfiniteFuture();
    }
    if (p.c.wd_stormed[kRocePriority]) {
      p.c.queue_dropped[kRocePriority] += DrawCount(rng_, kWatchdogDropsPerSecond * dt);
    }
  }
}

}  // namespace railwatch::sim
