#include "sim/sysfs_fabric.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "common/logging.h"

namespace railwatch::sim {
namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<SimFile>> SimFile::Create(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
  return std::unique_ptr<SimFile>(new SimFile(fd, path));
}

SimFile::~SimFile() { ::close(fd_); }

absl::Status SimFile::Write(std::string_view content) {
  if (::pwrite(fd_, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size())) {
    return absl::UnavailableError(absl::StrCat(path_, ": ", std::strerror(errno)));
  }
  if (content.size() < length_ && ::ftruncate(fd_, static_cast<off_t>(content.size())) != 0) {
    return absl::UnavailableError(absl::StrCat(path_, ": ", std::strerror(errno)));
  }
  length_ = content.size();
  return absl::OkStatus();
}

absl::StatusOr<LinkFlap> ParseLinkFlap(absl::string_view spec) {
  std::vector<absl::string_view> at = absl::StrSplit(spec, '@');
  std::vector<absl::string_view> parts;
  if (at.size() == 2) parts = absl::StrSplit(at[0], '/');
  LinkFlap f;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[2], &f.port)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad flap \"", spec, "\": expected HOST/DEVICE/PORT@OFFSET, e.g. gpu-node-003/mlx5_5/1@8s"));
  }
  f.host = std::string(parts[0]);
  f.device = std::string(parts[1]);
  absl::StatusOr<absl::Duration> offset = ParseDuration(at[1]);
  if (!offset.ok()) return offset.status();
  f.at = *offset;
  return f;
}

// One simulated NIC port: its counter values and the files that show them.
struct SysfsFabric::Port {
  std::string host, device;
  int port = 1;
  bool up = true;
  // name (relative to ports/<n>/) -> value and file
  struct Counter {
    uint64_t value = 0;
    uint64_t written = UINT64_MAX;
    std::unique_ptr<SimFile> file;
  };
  std::map<std::string, Counter> counters;
  std::unique_ptr<SimFile> state, phys_state, rate;
  double speed_factor = 1;  // < 1 after a --degrade

  uint64_t& operator[](const std::string& name) { return counters[name].value; }

  absl::Status Flush() {
    for (auto& [name, c] : counters) {
      if (c.value == c.written) continue;
      if (absl::Status s = c.file->Write(absl::StrCat(c.value, "\n")); !s.ok()) return s;
      c.written = c.value;
    }
    return absl::OkStatus();
  }
  absl::Status SetUp(bool is_up) {
    up = is_up;
    if (absl::Status s = state->Write(is_up ? "4: ACTIVE\n" : "1: DOWN\n"); !s.ok()) return s;
    return phys_state->Write(is_up ? "5: LinkUp\n" : "3: Disabled\n");
  }
};

SysfsFabric::SysfsFabric(Options options) : options_(std::move(options)), rng_(options_.seed) {}
SysfsFabric::~SysfsFabric() = default;

std::string SysfsFabric::HostName(int index) { return absl::StrFormat("gpu-node-%03d", index); }

std::string SysfsFabric::NetdevName(int nic) {
  return absl::StrFormat("enp%ds0np0", 0x18 + nic * 0x10);
}

std::string SysfsFabric::HostRoot(const std::string& host) const {
  return (fs::path(options_.root) / host).string();
}

namespace {

absl::Status WriteStatic(const fs::path& path, std::string_view content) {
  std::ofstream out(path);
  out << content;
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// The counters a ConnectX-7 in RoCE mode shows, as named in sysfs.
constexpr const char* kCounters[] = {
    "counters/port_xmit_data", "counters/port_rcv_data", "counters/port_xmit_packets",
    "counters/port_rcv_packets", "counters/unicast_xmit_packets", "counters/unicast_rcv_packets",
    "counters/multicast_xmit_packets", "counters/multicast_rcv_packets",
    "counters/link_downed", "counters/link_error_recovery", "counters/symbol_error",
    "counters/port_rcv_errors", "counters/port_rcv_remote_physical_errors",
    "counters/port_rcv_switch_relay_errors", "counters/port_xmit_discards",
    "counters/port_xmit_constraint_errors", "counters/port_rcv_constraint_errors",
    "counters/port_xmit_wait", "counters/local_link_integrity_errors",
    "counters/excessive_buffer_overrun_errors", "counters/VL15_dropped",
    "hw_counters/out_of_sequence", "hw_counters/packet_seq_err",
    "hw_counters/local_ack_timeout_err", "hw_counters/out_of_buffer",
    "hw_counters/np_ecn_marked_roce_packets", "hw_counters/np_cnp_sent",
    "hw_counters/rp_cnp_handled", "hw_counters/rp_cnp_ignored", "hw_counters/roce_adp_retrans",
    "hw_counters/roce_adp_retrans_to", "hw_counters/rx_write_requests",
    "hw_counters/rx_read_requests", "hw_counters/duplicate_request",
    "hw_counters/rx_atomic_requests", "hw_counters/rx_dct_connect",
    "hw_counters/rnr_nak_retry_err", "hw_counters/implied_nak_seq_err",
    "hw_counters/resp_local_length_error", "hw_counters/resp_cqe_error",
    "hw_counters/req_cqe_error", "hw_counters/req_remote_invalid_request",
    "hw_counters/req_remote_access_errors", "hw_counters/resp_remote_access_errors",
    "hw_counters/resp_cqe_flush_error", "hw_counters/req_cqe_flush_error",
    "hw_counters/roce_slow_restart", "hw_counters/roce_slow_restart_cnps",
    "hw_counters/roce_slow_restart_trans", "hw_counters/rx_icrc_encapsulated",
    "hw_counters/req_transport_retries_exceeded", "hw_counters/req_rnr_retries_exceeded"};

// The PCI function behind RDMA device `nic` of a host, laid out as the kernel does: the RDMA
// device's `device` link points at it; it names its driver, NUMA node and netdev; the port's
// GID table names the netdev too (RoCE).
absl::Status CreatePciFunction(const fs::path& root, const fs::path& rdma_dev,
                               const fs::path& port_dir, int nic, int nics) {
  const int bus = 0x18 + nic * 0x10;
  const std::string address = absl::StrFormat("0000:%02x:00.0", bus);
  const std::string netdev = SysfsFabric::NetdevName(nic);
  const fs::path function = root / "devices" / "pci0000:00" / address;
  const fs::path driver = root / "bus" / "pci" / "drivers" / "mlx5_core";
  std::error_code ec;
  fs::create_directories(function / "net" / netdev, ec);
  fs::create_directories(driver, ec);
  fs::create_directories(port_dir / "gid_attrs" / "ndevs", ec);
  if (ec) return absl::UnavailableError(absl::StrCat(function.string(), ": ", ec.message()));
  // Relative links, so the tree still resolves after the staging directory is renamed.
  fs::create_symlink("../../../bus/pci/drivers/mlx5_core", function / "driver", ec);
  fs::create_symlink(fs::path("../../..") / "devices" / "pci0000:00" / address,
                     rdma_dev / "device", ec);
  if (ec) return absl::UnavailableError(absl::StrCat(rdma_dev.string(), ": ", ec.message()));
  if (absl::Status s = WriteStatic(function / "numa_node", nic < nics / 2 ? "0\n" : "1\n");
      !s.ok()) {
    return s;
  }
  for (int gid = 0; gid < 2; ++gid) {
    if (absl::Status s = WriteStatic(port_dir / "gid_attrs" / "ndevs" / std::to_string(gid),
                                     netdev + "\n");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SysfsFabric::Create(absl::Time start) {
  start_ = last_ = start;
  for (int h = 1; h <= options_.hosts; ++h) {
    const std::string host = HostName(h);
    // Each host's tree is built under a staging name and renamed into place when complete, so
    // an agent never discovers a half-written tree. Open files stay valid across the rename.
    const fs::path staging = fs::path(options_.root) / absl::StrCat(".", host, ".staging");
    std::error_code rm_ec;
    fs::remove_all(staging, rm_ec);
    fs::remove_all(HostRoot(host), rm_ec);
    for (int n = 0; n < options_.nics_per_host; ++n) {
      const std::string device = absl::StrCat("mlx5_", n);
      const fs::path dev = staging / "class" / "infiniband" / device;
      const fs::path port_dir = dev / "ports" / "1";
      std::error_code ec;
      fs::create_directories(port_dir / "counters", ec);
      fs::create_directories(port_dir / "hw_counters", ec);
      if (ec) return absl::UnavailableError(absl::StrCat(port_dir.string(), ": ", ec.message()));
      for (auto [name, content] : std::initializer_list<std::pair<const char*, std::string>>{
               {"board_id", "MT_0000000838\n"},
               {"fw_ver", "28.39.1002\n"},
               {"hca_type", "MT4129\n"},
               {"node_guid", absl::StrFormat("b83f:d203:00%02x:%04x\n", h % 256, n)}}) {
        if (absl::Status s = WriteStatic(dev / name, content); !s.ok()) return s;
      }
      if (absl::Status s = WriteStatic(port_dir / "link_layer", "Ethernet\n"); !s.ok()) return s;
      if (absl::Status s = WriteStatic(port_dir / "hw_counters" / "lifespan", "10\n"); !s.ok()) {
        return s;
      }
      if (absl::Status s = CreatePciFunction(staging, dev, port_dir, n, options_.nics_per_host);
          !s.ok()) {
        return s;
      }

      auto port = std::make_unique<Port>();
      port->host = host;
      port->device = device;
      port->port = 1;
      for (const char* name : kCounters) {
        absl::StatusOr<std::unique_ptr<SimFile>> f = SimFile::Create((port_dir / name).string());
        if (!f.ok()) return f.status();
        Port::Counter& c = port->counters[name];
        c.file = std::move(*f);
        // Start from a plausible uptime's worth of traffic, different per NIC.
        if (std::string_view(name).find("data") != std::string_view::npos) {
          c.value = rng_() % (uint64_t{1} << 40);
        }
      }
      for (auto [member, fname] : {std::pair{&port->state, "state"},
                                   std::pair{&port->phys_state, "phys_state"},
                                   std::pair{&port->rate, "rate"}}) {
        absl::StatusOr<std::unique_ptr<SimFile>> f =
            SimFile::Create((port_dir / fname).string());
        if (!f.ok()) return f.status();
        *member = std::move(*f);
      }
      if (absl::Status s = port->rate->Write(RateText(options_.link_gbps)); !s.ok()) return s;
      if (absl::Status s = port->SetUp(true); !s.ok()) return s;
      if (absl::Status s = port->Flush(); !s.ok()) return s;
      by_name_[absl::StrCat(host, "/", device, "/1")] = port.get();
      ports_.push_back(std::move(port));
    }
    std::error_code ec;
    fs::rename(staging, HostRoot(host), ec);
    if (ec) return absl::UnavailableError(absl::StrCat("rename to ", HostRoot(host), ": ", ec.message()));
  }
  for (size_t i = 0; i < options_.flaps.size(); ++i) {
    const LinkFlap& f = options_.flaps[i];
    const std::string name = absl::StrCat(f.host, "/", f.device, "/", f.port);
    if (!by_name_.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat("flap target ", name, " is not a simulated port"));
    }
    // Each flap is one down and one up with its own ground truth: two that overlap would be one.
    for (size_t j = 0; j < i; ++j) {
      const LinkFlap& g = options_.flaps[j];
      if (g.host != f.host || g.device != f.device || g.port != f.port) continue;
      if (f.at < g.at + g.down_for && g.at < f.at + f.down_for) {
        return absl::InvalidArgumentError(absl::StrCat(
            "flaps of ", name, " at ", HumanDuration(g.at), " and ", HumanDuration(f.at),
            " overlap (a flap keeps the link down for ", HumanDuration(f.down_for), ")"));
      }
    }
  }
  if (absl::Status s = ValidateTrafficFaults(options_.hosts, options_.nics_per_host, options_.jobs,
                                             options_.degrades, options_.ecn_misconfigs);
      !s.ok()) {
    return s;
  }
  job_of_host_.assign(options_.hosts + 1, -1);
  for (size_t j = 0; j < options_.jobs.size(); ++j) {
    for (int h = options_.jobs[j].first_host; h <= options_.jobs[j].last_host; ++h) {
      job_of_host_[h] = static_cast<int>(j);
    }
  }
  leaf_marking_.assign(options_.nics_per_host, 1.0);
  flap_started_.assign(options_.flaps.size(), false);
  flap_ended_.assign(options_.flaps.size(), false);
  degrade_started_.assign(options_.degrades.size(), false);
  misconfig_started_.assign(options_.ecn_misconfigs.size(), false);
  return absl::OkStatus();
}

absl::Status AppendGroundTruth(const std::string& file, std::string_view json_line) {
  if (file.empty()) return absl::OkStatus();
  std::ofstream out(file, std::ios::app);
  out << json_line << "\n";
  if (!out) return absl::UnavailableError("cannot append to " + file);
  return absl::OkStatus();
}

void SysfsFabric::ReadTraffic(std::vector<NicTraffic>& out) const {
  out.resize(ports_.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    const Port& p = *ports_[i];
    auto value = [&p](const char* name) {
      auto it = p.counters.find(name);
      return it == p.counters.end() ? uint64_t{0} : it->second.value;
    };
    NicTraffic& t = out[i];
    t.host = static_cast<int>(i) / options_.nics_per_host + 1;
    t.nic = static_cast<int>(i) % options_.nics_per_host;
    // IB data counters count 4-byte words.
    t.tx_bytes = value("counters/port_xmit_data") * 4;
    t.rx_bytes = value("counters/port_rcv_data") * 4;
    t.tx_packets = value("counters/port_xmit_packets");
    t.rx_packets = value("counters/port_rcv_packets");
    t.up = p.up;
    t.ecn_marked = value("hw_counters/np_ecn_marked_roce_packets");
  }
}

absl::Status SysfsFabric::Tick(absl::Time now) {
  const double dt = absl::ToDoubleSeconds(now - last_);
  if (dt <= 0) return absl::OkStatus();
  last_ = now;
  if (absl::Status s = ApplyFlaps(now); !s.ok()) return s;
  if (absl::Status s = ApplyDegrades(now); !s.ok()) return s;
  if (absl::Status s = ApplyEcnMisconfigs(now); !s.ok()) return s;
  MoveTraffic(now, dt);
  for (auto& port : ports_) {
    if (absl::Status s = port->Flush(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status SysfsFabric::ApplyFlaps(absl::Time now) {
  for (size_t i = 0; i < options_.flaps.size(); ++i) {
    const LinkFlap& f = options_.flaps[i];
    Port* p = by_name_[absl::StrCat(f.host, "/", f.device, "/", f.port)];
    if (!flap_started_[i] && now >= start_ + f.at) {
      flap_started_[i] = true;
      // The PMA counts the failed link the moment it goes down.
      (*p)["counters/link_downed"] += 1;
      (*p)["counters/link_error_recovery"] += 1;
      if (absl::Status s = p->SetUp(false); !s.ok()) return s;
      if (absl::Status s = AppendGroundTruth(
              options_.ground_truth_file,
              absl::StrFormat("{\"fault\": \"link_flap\", \"host\": \"%s\", \"device\": \"%s\", "
                              "\"port\": \"%d\", \"injected_at_unix_nano\": %d, \"down_for_ms\": %d}",
                              f.host, f.device, f.port, absl::ToUnixNanos(now),
                              absl::ToInt64Milliseconds(f.down_for)));
          !s.ok()) {
        return s;
      }
      spdlog::info("injected link flap: {}/{} port {} down", f.host, f.device, f.port);
    }
    if (flap_started_[i] && !flap_ended_[i] && now >= start_ + f.at + f.down_for) {
      flap_ended_[i] = true;
      if (absl::Status s = p->SetUp(true); !s.ok()) return s;
      spdlog::info("link {}/{} port {} up again", f.host, f.device, f.port);
    }
  }
  return absl::OkStatus();
}

absl::Status SysfsFabric::ApplyDegrades(absl::Time now) {
  for (size_t i = 0; i < options_.degrades.size(); ++i) {
    const NicDegrade& d = options_.degrades[i];
    if (degrade_started_[i] || now < start_ + d.at) continue;
    degrade_started_[i] = true;
    Port* p = by_name_[absl::StrCat(d.host, "/", d.device, "/1")];
    p->speed_factor = d.factor;
    const double gbps = options_.link_gbps * d.factor;
    if (absl::Status s = p->rate->Write(RateText(gbps)); !s.ok()) return s;
    if (absl::Status s = AppendGroundTruth(
            options_.ground_truth_file,
            absl::StrFormat("{\"fault\": \"nic_degrade\", \"host\": \"%s\", \"device\": \"%s\", "
                            "\"port\": \"1\", \"factor\": %g, \"rate_gbps\": %g, "
                            "\"injected_at_unix_nano\": %d}",
                            d.host, d.device, d.factor, gbps, absl::ToUnixNanos(now)));
        !s.ok()) {
      return s;
    }
    spdlog::info("injected link degradation: {}/{} renegotiated to {} Gb/s", d.host, d.device, gbps);
  }
  return absl::OkStatus();
}

absl::Status SysfsFabric::ApplyEcnMisconfigs(absl::Time now) {
  for (size_t i = 0; i < options_.ecn_misconfigs.size(); ++i) {
    const EcnMisconfig& m = options_.ecn_misconfigs[i];
    if (misconfig_started_[i] || now < start_ + m.at) continue;
    misconfig_started_[i] = true;
    const double share = EcnMarkingShare(m.threshold_offset_kb);
    leaf_marking_[m.rail] = std::min(leaf_marking_[m.rail], share);
    if (absl::Status s = AppendGroundTruth(
            options_.ground_truth_file,
            absl::StrFormat("{\"fault\": \"ecn_misconfig\", \"switch\": \"%s\", \"queue\": %d, "
                            "\"threshold_offset_kb\": %g, \"marking_share\": %g, "
                            "\"throughput_share\": %g, \"injected_at_unix_nano\": %d}",
                            m.switch_name, kRocePriority, m.threshold_offset_kb, share,
                            ThroughputUnderMarking(share), absl::ToUnixNanos(now)));
        !s.ok()) {
      return s;
    }
    spdlog::info("injected ECN misconfiguration: {} threshold {} KB too high, marks {:.2}% of normal",
                 m.switch_name, m.threshold_offset_kb, share * 100);
  }
  return absl::OkStatus();
}

void SysfsFabric::MoveTraffic(absl::Time now, double dt) {
  const int nics = options_.nics_per_host;
  const double line_bytes_per_s = options_.link_gbps * 1e9 / 8;
  // Background hosts: the training-step rhythm, all NICs bursting together in the AllReduce
  // (the phase of the tick's middle stands for the whole tick).
  const double step_s = absl::ToDoubleSeconds(options_.step);
  const double phase =
      std::fmod(absl::ToDoubleSeconds(now - start_) - dt / 2, step_s) / step_s;
  const double background_util = phase < options_.comm_fraction ? 0.85 : 0.02;
  // A job's collective runs at its slowest rail; every job has a NIC on every leaf (rail-
  // optimised), so a leaf that holds traffic back with PFC slows all of them. One noise draw per
  // job and tick keeps its NICs in lockstep.
  double slowest = 1;
  for (double marking : leaf_marking_) slowest = std::min(slowest, ThroughputUnderMarking(marking));
  std::normal_distribution<double> job_noise(1.0, 0.02), nic_noise(1.0, 0.01),
      background_noise(1.0, 0.05);
  std::vector<double> job_util(options_.jobs.size());
  for (size_t j = 0; j < job_util.size(); ++j) {
    job_util[j] = options_.jobs[j].util * slowest * std::max(0.0, job_noise(rng_));
  }

  // CNPs go back to the senders, which for rail-local collectives sit behind the same leaf:
  // each NIC handles the rail's CNPs in proportion to what it sent.
  std::vector<double> rail_cnps(nics, 0), rail_tx(nics, 0);
  std::vector<double> sent(ports_.size(), 0);
  for (size_t i = 0; i < ports_.size(); ++i) {
    Port& p = *ports_[i];
    if (!p.up) continue;
    const int host = static_cast<int>(i) / nics + 1;
    const int rail = static_cast<int>(i) % nics;
    double util, rx_ratio;
    if (const int job = job_of_host_[host]; job >= 0) {
      util = job_util[job] * std::max(0.0, nic_noise(rng_));
      rx_ratio = std::max(0.0, nic_noise(rng_));
    } else {
      util = background_util * std::max(0.0, background_noise(rng_)) *
             ThroughputUnderMarking(leaf_marking_[rail]);
      rx_ratio = std::max(0.0, background_noise(rng_));
    }
    // A NIC whose link renegotiated lower is saturated at its new speed, both ways.
    util *= p.speed_factor;
    const auto bytes = static_cast<uint64_t>(line_bytes_per_s * util * dt);
    const auto rx = static_cast<uint64_t>(static_cast<double>(bytes) * rx_ratio);
    // IB data counters count 4-byte words; RoCE MTU 4096.
    p["counters/port_xmit_data"] += bytes / 4;
    p["counters/port_rcv_data"] += rx / 4;
    p["counters/port_xmit_packets"] += bytes / 4096;
    p["counters/port_rcv_packets"] += rx / 4096;
    p["counters/unicast_xmit_packets"] += bytes / 4096;
    p["counters/unicast_rcv_packets"] += rx / 4096;
    p["hw_counters/rx_write_requests"] += rx / (1 << 20);
    // The leaf marks what it sends this NIC; the NIC (notification point) answers with CNPs.
    const uint64_t marks =
        DrawCount(rng_, static_cast<double>(rx) / 1e9 * kEcnMarksPerGb * leaf_marking_[rail]);
    const uint64_t cnps = DrawCount(rng_, static_cast<double>(marks) * kCnpsPerMark);
    p["hw_counters/np_ecn_marked_roce_packets"] += marks;
    p["hw_counters/np_cnp_sent"] += cnps;
    rail_cnps[rail] += static_cast<double>(cnps);
    rail_tx[rail] += static_cast<double>(bytes);
    sent[i] = static_cast<double>(bytes);
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    const int rail = static_cast<int>(i) % nics;
    if (sent[i] <= 0 || rail_tx[rail] <= 0) continue;
    (*ports_[i])["hw_counters/rp_cnp_handled"] +=
        DrawCount(rng_, rail_cnps[rail] * sent[i] / rail_tx[rail]);
  }
}

}  // namespace railwatch::sim
