// SysfsFabric's faults: checked against the fabric before anything is written (Validate), then
// applied when due (ApplyFaults), each with its ground-truth line and a log line.
#include "sim/host_faults.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "common/text.h"
#include "sim/inspector_writer.h"
#include "sim/job_failures.h"
#include "sim/nic_port.h"

namespace railwatch::sim {
namespace fs = std::filesystem;

int SimHostIndex(absl::string_view host, int hosts) {
  int h = 0;
  absl::string_view digits = host;
  if (!absl::ConsumePrefix(&digits, "gpu-node-") || !absl::SimpleAtoi(digits, &h) || h < 1 ||
      h > hosts || SysfsFabric::HostName(h) != host) {
    return 0;
  }
  return h;
}

int SimNicIndex(absl::string_view device, int nics) {
  int k = -1;
  absl::string_view digits = device;
  if (!absl::ConsumePrefix(&digits, "mlx5_") || !absl::SimpleAtoi(digits, &k) || k < 0 ||
      k >= nics || absl::StrCat("mlx5_", k) != device) {
    return -1;
  }
  return k;
}

namespace {

// Whether simulated host `host` is in none of the jobs.
bool RunsNoJob(const SysfsFabric::Options& o, const std::string& host) {
  const int h = SimHostIndex(host, o.hosts);
  return std::none_of(o.jobs.begin(), o.jobs.end(),
                      [h](const SimJob& j) { return j.first_host <= h && h <= j.last_host; });
}

}  // namespace

absl::Status SysfsFabric::Validate() const {
  const Options& o = options_;
  auto nic = [&o](absl::string_view what, const std::string& host,
                  const std::string& device) -> absl::Status {
    if (SimHostIndex(host, o.hosts) > 0 && SimNicIndex(device, o.nics_per_host) >= 0) {
      return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        what, " target ", host, "/", device, " is not a simulated NIC (gpu-node-001 .. ",
        HostName(o.hosts), ", mlx5_0 .. mlx5_", o.nics_per_host - 1, ")"));
  };
  auto host = [&o](absl::string_view what, const std::string& name) -> absl::Status {
    if (SimHostIndex(name, o.hosts) > 0) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what, " target ", name,
                                                   " is not a simulated host (gpu-node-001 .. ",
                                                   HostName(o.hosts), ")"));
  };
  for (size_t i = 0; i < o.flaps.size(); ++i) {
    const LinkFlap& f = o.flaps[i];
    const std::string name = absl::StrCat(f.host, "/", f.device, "/", f.port);
    if (!nic("flap", f.host, f.device).ok() || f.port != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("flap target ", name, " is not a simulated port"));
    }
    // Each flap is one down and one up with its own ground truth: two that overlap would be one.
    for (size_t j = 0; j < i; ++j) {
      const LinkFlap& g = o.flaps[j];
      if (g.host != f.host || g.device != f.device || g.port != f.port) continue;
      if (f.at < g.at + g.down_for && g.at < f.at + f.down_for) {
        return absl::InvalidArgumentError(absl::StrCat(
            "flaps of ", name, " at ", HumanDuration(g.at), " and ", HumanDuration(f.at),
            " overlap (a flap keeps the link down for ", HumanDuration(f.down_for), ")"));
      }
    }
  }
  if (absl::Status s =
          ValidateTrafficFaults(o.hosts, o.nics_per_host, o.jobs, o.degrades, o.ecn_misconfigs);
      !s.ok()) {
    return s;
  }
  const int groups = o.hosts_per_leaf > 0 ? (o.hosts + o.hosts_per_leaf - 1) / o.hosts_per_leaf : 1;
  for (const EcnMisconfig& m : o.ecn_misconfigs) {
    const bool grouped_name = absl::StartsWith(m.switch_name, "leaf-g");
    if (grouped_name != (o.hosts_per_leaf > 0) || m.group >= groups) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ECN misconfiguration target ", m.switch_name, " is not a simulated leaf (",
          o.hosts_per_leaf > 0
              ? absl::StrCat("leaf-g0-r0 .. leaf-g", groups - 1, "-r", o.nics_per_host - 1)
              : absl::StrCat("leaf-r0 .. leaf-r", o.nics_per_host - 1),
          ")"));
    }
  }
  absl::Status s;
  for (const StormingNic& x : o.storms) s.Update(nic("pfc_storm", x.host, x.device));
  for (const PfcDeadlock& x : o.deadlocks) s.Update(nic("pfc_deadlock", x.host, x.device));
  for (const BitErrors& x : o.bit_errors) s.Update(nic("ber", x.host, x.device));
  auto kernel = [&](absl::string_view what, const std::string& h, const std::string& d) {
    s.Update(nic(what, h, d));
    if (!o.kmsg) {
      s.Update(absl::InvalidArgumentError(absl::StrCat(
          what, " on ", h, "/", d, " shows in the kernel's messages: it needs --kmsg")));
    }
  };
  for (const NicHealth& x : o.nic_health) kernel("nic_health", x.host, x.device);
  for (const PcieAer& x : o.pcie_aer) kernel("pcie_aer", x.host, x.device);
  for (const LinkAtRisk& x : o.links_at_risk) {
    s.Update(nic("link at risk", x.host, x.device));
    if (!o.optics) {
      s.Update(absl::InvalidArgumentError(absl::StrCat(
          "a link at risk on ", x.host, "/", x.device,
          " shows in its module's readings and FEC counters: it needs --optics")));
    }
  }
  for (const Straggler& x : o.stragglers) s.Update(nic("straggler", x.host, x.device));
  // A rank's fault: a NIC whose host runs a job that writes NCCL logs and Inspector records.
  auto rank = [&](absl::string_view what, const std::string& host,
                  const std::string& device) -> absl::Status {
    if (absl::Status n = nic(what, host, device); !n.ok()) return n;
    if (RunsNoJob(o, host)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " target ", host, " runs no job (--job): it has no ranks"));
    }
    if (!o.nccl_logs || !o.nccl_inspector) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", what, " shows in NCCL's Inspector records and RAS: it needs --nccl_logs and "
          "--nccl_inspector"));
    }
    return absl::OkStatus();
  };
  for (const SlowRank& x : o.slow_ranks) s.Update(rank("slow_rank", x.host, x.device));
  for (const RankHang& x : o.rank_hangs) s.Update(rank("rank_hang", x.host, x.device));
  for (const NicGone& x : o.nics_gone) s.Update(nic("nic_gone", x.host, x.device));
  for (const PacketLoss& x : o.packet_losses) s.Update(nic("packet_loss", x.host, x.device));
  for (const DriverReload& x : o.driver_reloads) s.Update(nic("driver_reload", x.host, x.device));
  for (const WrongPriority& x : o.wrong_priorities) s.Update(host("wrong_priority", x.host));
  for (const NcclError& x : o.nccl_errors) {
    s.Update(host("nccl_error", x.host));
    if (!s.ok()) break;
    if (RunsNoJob(o, x.host)) {
      return absl::InvalidArgumentError(
          absl::StrCat("nccl_error target ", x.host, " runs no job (--job): it has no NCCL log"));
    }
    if (!o.nccl_logs) {
      return absl::InvalidArgumentError("--nccl_error needs the NCCL logs (--nccl_logs)");
    }
  }
  return s;
}

namespace {

// A fault that happens once, at `at` after `start`: true the first time it is due.
bool Due(std::vector<bool>::reference started, absl::Time now, absl::Time start,
         absl::Duration at) {
  if (started || now < start + at) return false;
  started = true;
  return true;
}

std::string Nic(const std::string& host, const std::string& device) {
  return absl::StrFormat("\"host\": \"%s\", \"device\": \"%s\"", host, device);
}

FaultStarted OnHost(absl::Time now, double link_gbps) {
  FaultStarted started = StartedAt(now);
  started.link_gbps = link_gbps;
  return started;
}

}  // namespace

absl::Status SysfsFabric::ApplyFaults(absl::Time now) {
  const Options& o = options_;
  FaultProgress& done = *progress_;
  const std::string& truth = o.ground_truth_file;
  const int64_t at = absl::ToUnixNanos(now);
  const FaultStarted started = OnHost(now, o.link_gbps);
  absl::Status s;
  // Each fault's ground-truth line is its kind's (sim/fault_truth.h).
  auto record = [&](const FaultTruth& fault) { s.Update(fault.Write(truth, started)); };

  for (size_t i = 0; i < o.degrades.size(); ++i) {
    const NicDegrade& d = o.degrades[i];
    if (!Due(done.degrade[i], now, start_, d.at)) continue;
    NicPort* p = Find(d.host, d.device);
    p->speed_factor = d.factor;
    const double gbps = o.link_gbps * d.factor;
    s.Update(p->rate->Write(RateText(gbps)));
    s.Update(p->WriteSpeed());
    record(d.truth);
    spdlog::info("injected link degradation: {}/{} renegotiated to {} Gb/s", d.host, d.device,
                 gbps);
  }
  for (size_t i = 0; i < o.ecn_misconfigs.size(); ++i) {
    const EcnMisconfig& m = o.ecn_misconfigs[i];
    if (!Due(done.misconfig[i], now, start_, m.at)) continue;
    const double share = EcnMarkingShare(m.threshold_offset_kb);
    double& marking = leaf_marking_[m.group * o.nics_per_host + m.rail];
    marking = std::min(marking, share);
    record(m.truth);
    spdlog::info(
        "injected ECN misconfiguration: {} threshold {} KB too high, marks {:.2}% of normal",
        m.switch_name, m.threshold_offset_kb, share * 100);
  }
  // PFC storms and deadlocks: the switch side writes their ground truth (it names the port).
  for (size_t i = 0; i < o.storms.size(); ++i) {
    const StormingNic& x = o.storms[i];
    NicPort* p = done.storm_port[i];
    if (Due(done.storm[i], now, start_, x.at)) {
      p->storming = true;
      // mlx5 stall prevention: the NIC's queue stalled past the minor watermark (100 ms).
      done.storm_next_warning[i] = now + absl::Milliseconds(100);
      spdlog::info("{}/{} sends PFC pauses without end (storm)", x.host, x.device);
    }
    if (done.storm[i] && !done.storm_over[i] && x.duration > absl::ZeroDuration() &&
        now >= start_ + x.at + x.duration) {
      done.storm_over[i] = true;
      p->storming = false;
      spdlog::info("{}/{} stopped storming", x.host, x.device);
    }
    if (p->storming && now >= done.storm_next_warning[i]) {
      p->eth.storm_warning_events += 1;
      done.storm_next_warning[i] = now + absl::Seconds(10);
    }
  }
  for (size_t i = 0; i < o.deadlocks.size(); ++i) {
    const PfcDeadlock& x = o.deadlocks[i];
    NicPort* p = done.deadlock_port[i];
    const int job = job_of_host_[p->host];
    if (Due(done.deadlock[i], now, start_, x.at)) {
      p->deadlocked = true;
      if (job >= 0) {
        job_stalled_[job] = true;
        failures_->JobStalled(now, job, p->host, p->nic, x.truth.cause);
      }
      spdlog::info("{}/{}: its leaf port's queue 3 is deadlocked; {} stalls", x.host, x.device,
                   job >= 0 ? absl::StrCat("job ", o.jobs[job].name) : "its traffic");
    }
    if (done.deadlock[i] && !done.deadlock_over[i] && x.duration > absl::ZeroDuration() &&
        now >= start_ + x.at + x.duration) {
      done.deadlock_over[i] = true;
      p->deadlocked = false;
      // The job resumes unless another deadlock, or a hung rank, still holds it.
      if (job >= 0 && !job_hung_[job] && std::none_of(ports_.begin(), ports_.end(), [&](const auto& q) {
            return q->deadlocked && job_of_host_[q->host] == job;
          })) {
        job_stalled_[job] = false;
        failures_->JobResumed(job);
      }
      spdlog::info("{}/{}: deadlock cleared", x.host, x.device);
    }
  }
  for (size_t i = 0; i < o.bit_errors.size(); ++i) {
    const BitErrors& b = o.bit_errors[i];
    if (!Due(done.ber[i], now, start_, b.at)) continue;
    NicPort* p = Find(b.host, b.device);
    p->symbol_errors_per_s = b.per_minute / 60;
    // Errors past FEC mean a pre-FEC BER near what RS(544,514) can correct: 5e-5 at the
    // default 120 symbol errors a minute, in proportion to the rate asked for.
    p->optics.pre_fec_ber = std::max(p->optics.pre_fec_ber, 5e-5 * b.per_minute / 120);
    record(b.truth);
    spdlog::info("injected bit errors: {}/{} at {} symbol errors a minute", b.host, b.device,
                 b.per_minute);
  }
  for (size_t i = 0; i < o.stragglers.size(); ++i) {
    const Straggler& x = o.stragglers[i];
    if (!Due(done.straggler[i], now, start_, x.at)) continue;
    Find(x.host, x.device)->straggler_factor = x.factor;
    record(x.truth);
    spdlog::info("injected straggler: {}/{} moves {} of its peers' traffic", x.host, x.device,
                 x.factor);
  }
  for (size_t i = 0; i < o.slow_ranks.size(); ++i) {
    const SlowRank& x = o.slow_ranks[i];
    if (!Due(done.slow_rank[i], now, start_, x.at)) continue;
    const int h = SimHostIndex(x.host, o.hosts);
    const int job = job_of_host_[h];
    const int k = SimNicIndex(x.device, o.nics_per_host);
    if (job < 0 || inspector_ == nullptr) continue;  // Validate refused these
    inspector_->SetSlowRank(job, h, k, x.factor);
    // Its steps take longer by the extra compute: the job moves its data in more time.
    const double step = absl::ToDoubleSeconds(o.step);
    const double extra = x.factor * step * (1 - o.comm_fraction);
    job_slowdown_[job] = std::min(job_slowdown_[job], step / (step + extra));
    record(x.truth);
    spdlog::info("injected slow rank: GPU {} of {} computes {:.0f}% longer; job {} waits for it",
                 k, x.host, x.factor * 100, o.jobs[job].name);
  }
  for (size_t i = 0; i < o.rank_hangs.size(); ++i) {
    const RankHang& x = o.rank_hangs[i];
    if (!Due(done.rank_hang[i], now, start_, x.at)) continue;
    const int h = SimHostIndex(x.host, o.hosts);
    const int job = job_of_host_[h];
    const int k = SimNicIndex(x.device, o.nics_per_host);
    if (job < 0 || inspector_ == nullptr) continue;  // Validate refused these
    inspector_->SetHungRank(job, h, k);
    job_hung_[job] = true;
    // Its peers wait in the next collective: the job moves nothing, and every rank's watchdog
    // times out after the collective timeout.
    job_stalled_[job] = true;
    failures_->JobStalled(now, job, h, k, x.truth.cause);
    record(x.truth);
    spdlog::info("injected hung rank: GPU {} of {} launches nothing more; job {} waits for it", k,
                 x.host, o.jobs[job].name);
  }
  for (size_t i = 0; i < o.wrong_priorities.size(); ++i) {
    const WrongPriority& w = o.wrong_priorities[i];
    if (!Due(done.wrong_priority[i], now, start_, w.at)) continue;
    for (auto& p : ports_) {
      if (p->host_name == w.host) p->priority = 0;
    }
    record(w.truth);
    spdlog::info("injected wrong traffic class: {} sends RoCE on priority 0", w.host);
  }
  for (size_t i = 0; i < o.nics_gone.size(); ++i) {
    const NicGone& g = o.nics_gone[i];
    if (!Due(done.gone[i], now, start_, g.at)) continue;
    NicPort* p = Find(g.host, g.device);
    if (p->gone) continue;
    s.Update(p->Vanish());
    // The device, its PCI function and netdev, and the netdev's ethtool dump leave the host.
    const fs::path root = HostRoot(g.host);
    std::error_code ec;
    fs::remove_all(root / "class" / "infiniband" / g.device, ec);
    fs::remove(root / "class" / "net" / p->netdev, ec);
    fs::remove_all(
        root / "devices" / "pci0000:00" / absl::StrFormat("0000:%02x:00.0", 0x18 + p->nic * 0x10),
        ec);
    fs::remove_all(root / "ethtool" / p->netdev, ec);
    failures_->NicGone(now, p->host, p->nic, g.truth.cause);
    record(g.truth);
    spdlog::info("injected NIC gone: {}/{} left the host", g.host, g.device);
  }
  for (size_t i = 0; i < o.packet_losses.size(); ++i) {
    const PacketLoss& l = o.packet_losses[i];
    if (!Due(done.loss[i], now, start_, l.at)) continue;
    Find(l.host, l.device)->out_of_sequence_per_s = l.per_second;
    record(l.truth);
    spdlog::info("injected packet loss: {}/{} sees {} out-of-sequence packets a second", l.host,
                 l.device, l.per_second);
  }
  for (size_t i = 0; i < o.nccl_errors.size(); ++i) {
    const NcclError& e = o.nccl_errors[i];
    if (!Due(done.nccl[i], now, start_, e.at)) continue;
    // Its ranks are gone: the job completes no collective from now on.
    if (const int h = SimHostIndex(e.host, o.hosts); h > 0 && job_of_host_[h] >= 0) {
      job_failed_[job_of_host_[h]] = true;
    }
    s.Update(failures_->Independent(now, e));
  }
  for (size_t i = 0; i < o.driver_reloads.size(); ++i) {
    const DriverReload& r = o.driver_reloads[i];
    if (!Due(done.reload[i], now, start_, r.at)) continue;
    NicPort* p = Find(r.host, r.device);
    if (p->gone) continue;
    p->ResetCounters();
    s.Update(AppendGroundTruth(
        truth, absl::StrFormat("{\"noise\": \"driver_reload\", %s, \"at_unix_nano\": %d}",
                               Nic(r.host, r.device), at)));
    spdlog::info("driver reload (noise): {}/{} counters restart from 0", r.host, r.device);
  }
  return s;
}

absl::Status SysfsFabric::ApplyLinksAtRisk(absl::Time now) {
  const Options& o = options_;
  FaultProgress& done = *progress_;
  absl::Status s;
  for (size_t i = 0; i < o.links_at_risk.size(); ++i) {
    const LinkAtRisk& x = o.links_at_risk[i];
    if (now < start_ + x.at) continue;
    NicPort* p = Find(x.host, x.device);
    if (p->gone) continue;
    NicOptics& m = p->optics;
    if (!done.at_risk[i]) {
      done.at_risk[i] = true;
      s.Update(x.truth.Write(o.ground_truth_file, OnHost(now, o.link_gbps)));
      spdlog::info("injected link at risk: {}/{} drifts over {}, fails after {}", x.host,
                   x.device, absl::FormatDuration(x.ramp), absl::FormatDuration(x.fails_after));
    }
    // How far along the drift is: 0 at `at`, 1 at `at + ramp`.
    const double f =
        x.ramp > absl::ZeroDuration()
            ? std::clamp(absl::FDivDuration(now - start_ - x.at, x.ramp), 0.0, 1.0)
            : 1.0;
    switch (x.what) {
      case LinkAtRisk::What::kBer: {
        const double from = m.healthy_pre_fec_ber;
        m.pre_fec_ber = from * std::pow(x.to / from, f);
        // Near what FEC can correct, some codewords are not: symbol errors past FEC.
        p->symbol_errors_per_s = m.pre_fec_ber > 1e-4 ? (m.pre_fec_ber - 1e-4) * 2e5 : 0;
        break;
      }
      case LinkAtRisk::What::kRxPower:
        m.rx_loss_db = x.to * f;
        break;
      case LinkAtRisk::What::kTemperature: {
        const double alarm = *m.module.threshold(optics::Quantity::kTemperature).alarm_high;
        m.temperature_rise_c = std::max(0.0, alarm + x.to - m.temperature_c) * f;
        break;
      }
    }
    if (x.fails_after > absl::ZeroDuration() && !done.at_risk_failed[i] &&
        now >= start_ + x.at + x.fails_after) {
      done.at_risk_failed[i] = true;
      m.no_light = true;
      p->symbol_errors_per_s = 0;
      s.Update(p->SetUp(false));
      spdlog::info("link {}/{} failed: down for good", x.host, x.device);
    }
  }
  return s;
}

absl::Status SysfsFabric::ApplyKernelFaults(absl::Time now) {
  const Options& o = options_;
  FaultProgress& done = *progress_;
  absl::Status s;
  for (size_t i = 0; i < o.nic_health.size(); ++i) {
    const NicHealth& x = o.nic_health[i];
    const NicPort* p = Find(x.host, x.device);
    while (done.health_reports[i] < x.count &&
           now >= start_ + x.at + x.period * done.health_reports[i]) {
      if (p->gone) break;
      if (done.health_reports[i] == 0) {
        s.Update(x.truth.Write(o.ground_truth_file, OnHost(now, o.link_gbps)));
      }
      ++done.health_reports[i];
      s.Update(kmsg_[p->host - 1]->Mlx5HealthCompromised(now, SimNicPciAddress(p->nic)));
      spdlog::info("{}/{}: firmware health compromised ({} of {})", x.host, x.device,
                   done.health_reports[i], x.count);
    }
  }
  for (size_t i = 0; i < o.pcie_aer.size(); ++i) {
    const PcieAer& x = o.pcie_aer[i];
    const NicPort* p = Find(x.host, x.device);
    if (now < start_ + x.at || p->gone) continue;
    if (done.aer_reports[i] == 0) {
      s.Update(x.truth.Write(o.ground_truth_file, OnHost(now, o.link_gbps)));
      spdlog::info("injected corrected PCIe errors: {}/{} at {} a minute", x.host, x.device,
                   x.per_minute);
    }
    // The first at once, then PER_MINUTE a minute.
    const int64_t due =
        1 + static_cast<int64_t>(absl::ToDoubleMinutes(now - start_ - x.at) * x.per_minute);
    // The root port above the NIC's bus.
    const std::string root_port = absl::StrFormat("0000:%02x:01.0", 0x17 + p->nic * 0x10);
    for (; done.aer_reports[i] < due; ++done.aer_reports[i]) {
      s.Update(kmsg_[p->host - 1]->AerCorrected(now, SimNicPciAddress(p->nic), root_port));
    }
  }
  return s;
}

}  // namespace railwatch::sim
