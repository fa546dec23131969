// What moves the simulated NICs' counters every tick: traffic (jobs, background steps, bursts),
// ECN marks and CNPs, PFC pauses, and the errors of faulty links and lossy paths. The figures
// are in traffic_model.h and docs/SIMULATOR.md.
#include <algorithm>
#include <cmath>

#include "sim/host_faults.h"
#include "sim/nic_port.h"

namespace railwatch::sim {
namespace {

// RoCE MTU; kernel-stack traffic uses 1500-byte frames.
constexpr uint64_t kRoceMtu = 4096;
constexpr uint64_t kTcpMtu = 1500;

double Uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

}  // namespace

void SysfsFabric::MoveTraffic(absl::Time now, double dt) {
  const int nics = options_.nics_per_host;
  const double line_bytes_per_s = options_.link_gbps * 1e9 / 8;
  // Background hosts: the training-step rhythm, all NICs bursting together in the AllReduce
  // (the phase of the tick's middle stands for the whole tick).
  const double step_s = absl::ToDoubleSeconds(options_.step);
  const double phase =
      std::fmod(absl::ToDoubleSeconds(now - start_) - dt / 2, step_s) / step_s;
  const double background_util = phase < options_.comm_fraction ? 0.85 : 0.02;
  std::normal_distribution<double> job_noise(1.0, 0.02), nic_noise(1.0, 0.01),
      background_noise(1.0, 0.05);
  // A job's collective runs at its slowest rail: a leaf that holds traffic back with PFC (no
  // ECN marks) slows every job with a NIC behind it, which in a rail-optimised fabric is every
  // job in the leaf's group. One noise draw per job and tick keeps its NICs in lockstep.
  std::vector<double>& job_util = scratch_.job_util;
  job_util.assign(options_.jobs.size(), 0);
  for (size_t j = 0; j < job_util.size(); ++j) {
    const SimJob& job = options_.jobs[j];
    double slowest = 1;
    for (int leaf = LeafOf(job.first_host, 0); leaf <= LeafOf(job.last_host, nics - 1); ++leaf) {
      slowest = std::min(slowest, ThroughputUnderMarking(leaf_marking_[leaf]));
    }
    if (options_.bursty) {
      if (now >= job_burst_until_[j]) job_burst_[j] = 1;
      if (job_burst_[j] == 1 && Uniform(rng_, 0, 1) < kJobBurstsPerSecond * dt) {
        job_burst_[j] = Uniform(rng_, 1.1, 1.25);
        job_burst_until_[j] = now + absl::Seconds(Uniform(rng_, 0.3, 1.5));
      }
    }
    // A slow rank makes every step longer: the job moves the same data in more time.
    job_util[j] = job_stalled_[j] ? kStalledUtil
                                  : std::min(0.98, job.util * slowest * job_slowdown_[j] *
                                                       job_burst_[j] *
                                                       std::max(0.0, job_noise(rng_)));
  }

  // CNPs go back to the senders, which for rail-local collectives sit behind the same leaf:
  // each NIC handles its leaf's CNPs in proportion to what it sent.
  std::vector<double>& leaf_cnps = scratch_.leaf_a;
  std::vector<double>& leaf_tx = scratch_.leaf_b;
  std::vector<double>& sent = scratch_.per_port;
  leaf_cnps.assign(leaf_marking_.size(), 0);
  leaf_tx.assign(leaf_marking_.size(), 0);
  sent.assign(ports_.size(), 0);
  for (size_t i = 0; i < ports_.size(); ++i) {
    NicPort& p = *ports_[i];
    p.util = 0;
    if (!p.up) continue;
    double util, rx_ratio;
    if (const int job = job_of_host_[p.host]; job >= 0) {
      util = job_util[job] * std::max(0.0, nic_noise(rng_));
      rx_ratio = std::max(0.0, nic_noise(rng_));
    } else {
      util = background_util * std::max(0.0, background_noise(rng_)) *
             ThroughputUnderMarking(leaf_marking_[p.leaf]);
      rx_ratio = std::max(0.0, background_noise(rng_));
    }
    // A NIC whose link renegotiated lower is saturated at its new speed, both ways; a straggler
    // moves its share whatever its link could do; a NIC paused without end moves nothing.
    util *= p.speed_factor * p.straggler_factor;
    if (p.deadlocked) util = std::min(util, kStalledUtil);
    p.util = util;
    const auto bytes = static_cast<uint64_t>(line_bytes_per_s * util * dt);
    const auto rx = static_cast<uint64_t>(static_cast<double>(bytes) * rx_ratio);
    // IB data counters count 4-byte words.
    p[kPortXmitData] += bytes / 4;
    p[kPortRcvData] += rx / 4;
    p[kPortXmitPackets] += bytes / kRoceMtu;
    p[kPortRcvPackets] += rx / kRoceMtu;
    p[kUnicastXmitPackets] += bytes / kRoceMtu;
    p[kUnicastRcvPackets] += rx / kRoceMtu;
    p[kRxWriteRequests] += rx / (1 << 20);
    // The leaf marks what it sends this NIC; the NIC (notification point) answers with CNPs.
    const uint64_t marks =
        DrawCount(rng_, static_cast<double>(rx) / 1e9 * kEcnMarksPerGb * leaf_marking_[p.leaf]);
    const uint64_t cnps = DrawCount(rng_, static_cast<double>(marks) * kCnpsPerMark);
    p[kNpEcnMarkedRocePackets] += marks;
    p[kNpCnpSent] += cnps;
    leaf_cnps[p.leaf] += static_cast<double>(cnps);
    leaf_tx[p.leaf] += static_cast<double>(bytes);
    sent[i] = static_cast<double>(bytes);

    // The netdev's view: RoCE on its priority (the vport RDMA counters), and a trickle of
    // kernel-stack traffic on priority 0.
    EthtoolCounters& e = p.eth;
    e.tx_prio_bytes[p.priority] += bytes;
    e.tx_prio_packets[p.priority] += bytes / kRoceMtu;
    e.rx_prio_bytes[kRocePriority] += rx;
    e.rx_prio_packets[kRocePriority] += rx / kRoceMtu;
    e.tx_rdma_bytes += bytes;
    e.tx_rdma_packets += bytes / kRoceMtu;
    e.rx_rdma_bytes += rx;
    e.rx_rdma_packets += rx / kRoceMtu;
    const auto tcp_tx = static_cast<uint64_t>(kTcpBytesPerSecond * dt * Uniform(rng_, 0.5, 1.5));
    const auto tcp_rx = static_cast<uint64_t>(kTcpBytesPerSecond * dt * Uniform(rng_, 0.5, 1.5));
    e.tx_bytes += tcp_tx;
    e.tx_packets += tcp_tx / kTcpMtu + 1;
    e.rx_bytes += tcp_rx;
    e.rx_packets += tcp_rx / kTcpMtu + 1;
    e.tx_prio_bytes[0] += tcp_tx;
    e.tx_prio_packets[0] += tcp_tx / kTcpMtu + 1;
    e.rx_prio_bytes[0] += tcp_rx;
    e.rx_prio_packets[0] += tcp_rx / kTcpMtu + 1;
    const uint64_t multicast = DrawCount(rng_, 2 * dt);  // LLDP, IPv6 neighbour discovery
    p[kMulticastRcvPackets] += multicast;
    e.rx_multicast_packets += multicast;
    e.tx_multicast_packets += multicast / 2;
    p.eth_dirty = true;
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    NicPort& p = *ports_[i];
    if (sent[i] <= 0 || leaf_tx[p.leaf] <= 0) continue;
    p[kRpCnpHandled] += DrawCount(rng_, leaf_cnps[p.leaf] * sent[i] / leaf_tx[p.leaf]);
  }
}

std::vector<double> SysfsFabric::JobPace() const {
  std::vector<double> pace(options_.jobs.size(), 1.0);
  for (size_t j = 0; j < pace.size(); ++j) {
    if (job_stalled_[j] || job_failed_[j]) pace[j] = 0;
    const SimJob& job = options_.jobs[j];
    for (int leaf = LeafOf(job.first_host, 0);
         leaf <= LeafOf(job.last_host, options_.nics_per_host - 1); ++leaf) {
      pace[j] = std::min(pace[j], ThroughputUnderMarking(leaf_marking_[leaf]));
    }
  }
  // A collective moves at its slowest NIC's pace (a ring); one that is down holds it.
  for (const auto& port : ports_) {
    const int j = job_of_host_[port->host];
    if (j < 0) continue;
    const double nic = port->up && !port->gone && !port->deadlocked
                           ? port->speed_factor * port->straggler_factor
                           : 0.0;
    pace[j] = std::min(pace[j], nic);
  }
  return pace;
}

void SysfsFabric::MovePauses(double dt) {
  // Per leaf: its load (for the pauses of a leaf that does not mark) and whether a storm behind
  // it makes it relay pauses to every other port.
  std::vector<double>& load = scratch_.leaf_a;
  std::vector<double>& nics = scratch_.leaf_b;
  std::vector<double>& relaying = scratch_.per_leaf_flag;
  load.assign(leaf_marking_.size(), 0);
  nics.assign(leaf_marking_.size(), 0);
  relaying.assign(leaf_marking_.size(), 0);
  for (const auto& port : ports_) {
    load[port->leaf] += port->util;
    nics[port->leaf] += 1;
    if (port->storming && port->up) relaying[port->leaf] = 1;
  }
  const double tick_micros = dt * 1e6;
  for (auto& port : ports_) {
    NicPort& p = *port;
    if (!p.up) continue;
    EthtoolCounters& e = p.eth;
    // Received: pauses its leaf port sends it.
    uint64_t rx = DrawCount(rng_, options_.benign_pause_rate * dt);
    double rx_micros = static_cast<double>(rx) * kBenignPauseMicros * Uniform(rng_, 0.5, 1.5);
    uint64_t transitions = rx;
    if (options_.bursty && Uniform(rng_, 0, 1) < kPauseBurstsPerSecond * dt) {
      // An incast moment: the leaf port pauses the NIC a few dozen times at once.
      const auto burst = static_cast<uint64_t>(Uniform(rng_, 20, 150));
      rx += burst;
      rx_micros += static_cast<double>(burst) * kBenignPauseMicros;
      transitions += burst / 4;
    }
    if (const double marking = leaf_marking_[p.leaf]; marking < 1) {
      const uint64_t n = DrawCount(
          rng_, CongestionPauseRate(marking, load[p.leaf] / std::max(1.0, nics[p.leaf])) * dt);
      rx += n;
      rx_micros += static_cast<double>(n) * kCongestionPauseMicros;
      transitions += n;
    }
    if (relaying[p.leaf] > 0 && !p.storming) {
      const uint64_t n = DrawCount(rng_, options_.relay_pause_rate * dt);
      rx += n;
      rx_micros += static_cast<double>(n) * kQuantumPauseMicros;
      transitions += n / 50;
    }
    if (p.deadlocked) {
      // Its leaf port holds it in XOFF, refreshing the pause every quantum.
      rx += DrawCount(rng_, kDeadlockPauseRate * dt);
      rx_micros = tick_micros * Uniform(rng_, 0.9992, 0.9999);
    }
    e.rx_pause += rx;
    e.rx_pause_duration += static_cast<uint64_t>(std::min(rx_micros, tick_micros));
    e.rx_pause_transition += transitions;
    // Sent: pauses the NIC sends its leaf port.
    uint64_t tx = DrawCount(rng_, options_.benign_pause_rate * dt);
    double tx_micros = static_cast<double>(tx) * kBenignPauseMicros * Uniform(rng_, 0.5, 1.5);
    if (p.deadlocked) {
      const uint64_t n = DrawCount(rng_, kDeadlockNicPauseRate * dt);
      tx += n;
      tx_micros += static_cast<double>(n) * kQuantumPauseMicros;
    }
    if (p.storming) {
      tx += DrawCount(rng_, options_.storm_pause_rate * dt);
      tx_micros = tick_micros * Uniform(rng_, 0.998, 0.9999);
    }
    e.tx_pause += tx;
    e.tx_pause_duration += static_cast<uint64_t>(std::min(tx_micros, tick_micros));
  }
}

void SysfsFabric::MoveErrors(double dt) {
  for (auto& port : ports_) {
    NicPort& p = *port;
    if (!p.up) continue;
    EthtoolCounters& e = p.eth;
    // FEC at work on every PAM4 link, in proportion to the bits on the line (idle symbols
    // too) and the PHY's pre-FEC bit error rate.
    const double corrected = p.optics.PreFecBer() * options_.link_gbps * 1e9 * p.speed_factor;
    const uint64_t bits = static_cast<uint64_t>(corrected * dt * Uniform(rng_, 0.8, 1.2));
    e.corrected_bits += bits;
    // At these rates errors seldom share a 5,440-bit codeword: about one block per 1.2 bits.
    p.fec_corrected_blocks += static_cast<uint64_t>(static_cast<double>(bits) / 1.2);
    if (const double rate = p.symbol_errors_per_s; rate > 0) {
      // Symbol errors past FEC; about half corrupt a frame (FCS error) each way; the port
      // retrains now and then without going down.
      const uint64_t symbols = DrawCount(rng_, rate * dt);
      const uint64_t crc = DrawCount(rng_, rate * 0.5 * dt);
      p[kSymbolError] += symbols;
      p[kPortRcvErrors] += crc;
      p[kLinkErrorRecovery] += DrawCount(rng_, rate / 120 * dt);
      e.symbol_errors += symbols;
      e.pcs_symbol_errors += symbols;
      e.crc_errors += crc;
      // Each symbol error past FEC is a codeword it could not correct.
      p.fec_uncorrectable_blocks += symbols;
      p.corrupted_packets += DrawCount(rng_, rate * 0.5 * dt);
    }
    // Out-of-sequence arrivals: a handful an hour on a lossless fabric, a steady stream behind a
    // lossy path, with the NAKs, ACK timeouts and retransmissions that come with it.
    const double loss = std::max(p.out_of_sequence_per_s, 0.002);
    p[kOutOfSequence] += DrawCount(rng_, loss * dt);
    if (p.out_of_sequence_per_s > 0) {
      p[kPacketSeqErr] += DrawCount(rng_, loss * 0.2 * dt);
      p[kImpliedNakSeqErr] += DrawCount(rng_, loss * 0.02 * dt);
      p[kLocalAckTimeoutErr] += DrawCount(rng_, loss / 2500 * dt);
      p[kRoceAdpRetrans] += DrawCount(rng_, loss * 0.1 * dt);
      p[kRoceAdpRetransTo] += DrawCount(rng_, loss / 5000 * dt);
      p[kDuplicateRequest] += DrawCount(rng_, loss * 0.05 * dt);
    }
  }
}

}  // namespace railwatch::sim
