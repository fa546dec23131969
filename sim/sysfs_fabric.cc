#include "sim/sysfs_fabric.h"

#include <fcntl.h>
#include <unistd.h>

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
  std::unique_ptr<SimFile> state, phys_state;

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
      if (absl::Status s = WriteStatic(port_dir / "rate", "400 Gb/sec (4X NDR)\n"); !s.ok()) return s;
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
      for (auto* member : {&port->state, &port->phys_state}) {
        const char* fname = member == &port->state ? "state" : "phys_state";
        absl::StatusOr<std::unique_ptr<SimFile>> f =
            SimFile::Create((port_dir / fname).string());
        if (!f.ok()) return f.status();
        *member = std::move(*f);
      }
      if (absl::Status s = port->SetUp(true); !s.ok()) return s;
      if (absl::Status s = port->Flush(); !s.ok()) return s;
      by_name_[absl::StrCat(host, "/", device, "/1")] = port.get();
      ports_.push_back(std::move(port));
    }
    std::error_code ec;
    fs::rename(staging, HostRoot(host), ec);
    if (ec) return absl::UnavailableError(absl::StrCat("rename to ", HostRoot(host), ": ", ec.message()));
  }
  for (const LinkFlap& f : options_.flaps) {
    if (!by_name_.contains(absl::StrCat(f.host, "/", f.device, "/", f.port))) {
      return absl::InvalidArgumentError(absl::StrCat("flap target ", f.host, "/", f.device, "/",
                                                     f.port, " is not a simulated port"));
    }
  }
  flap_started_.assign(options_.flaps.size(), false);
  flap_ended_.assign(options_.flaps.size(), false);
  return absl::OkStatus();
}

absl::Status AppendGroundTruth(const std::string& file, std::string_view json_line) {
  if (file.empty()) return absl::OkStatus();
  std::ofstream out(file, std::ios::app);
  out << json_line << "\n";
  if (!out) return absl::UnavailableError("cannot append to " + file);
  return absl::OkStatus();
}

absl::Status SysfsFabric::WriteGroundTruth(const LinkFlap& f, absl::Time at) {
  return AppendGroundTruth(
      options_.ground_truth_file,
      absl::StrFormat("{\"fault\": \"link_flap\", \"host\": \"%s\", \"device\": \"%s\", "
                      "\"port\": \"%d\", \"injected_at_unix_nano\": %d, \"down_for_ms\": %d}",
                      f.host, f.device, f.port, absl::ToUnixNanos(at),
                      absl::ToInt64Milliseconds(f.down_for)));
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
  }
}

absl::Status SysfsFabric::Tick(absl::Time now) {
  const double dt = absl::ToDoubleSeconds(now - last_);
  if (dt <= 0) return absl::OkStatus();
  last_ = now;

  for (size_t i = 0; i < options_.flaps.size(); ++i) {
    const LinkFlap& f = options_.flaps[i];
    Port* p = by_name_[absl::StrCat(f.host, "/", f.device, "/", f.port)];
    if (!flap_started_[i] && now >= start_ + f.at) {
      flap_started_[i] = true;
      // The PMA counts the failed link the moment it goes down.
      (*p)["counters/link_downed"] += 1;
      (*p)["counters/link_error_recovery"] += 1;
      if (absl::Status s = p->SetUp(false); !s.ok()) return s;
      if (absl::Status s = WriteGroundTruth(f, now); !s.ok()) return s;
      spdlog::info("injected link flap: {}/{} port {} down", f.host, f.device, f.port);
    }
    if (flap_started_[i] && !flap_ended_[i] && now >= start_ + f.at + f.down_for) {
      flap_ended_[i] = true;
      if (absl::Status s = p->SetUp(true); !s.ok()) return s;
      spdlog::info("link {}/{} port {} up again", f.host, f.device, f.port);
    }
  }

  // Training-step rhythm: all NICs of the job burst together during the AllReduce phase.
  const double step_s = absl::ToDoubleSeconds(options_.step);
  const double phase = std::fmod(absl::ToDoubleSeconds(now - start_), step_s) / step_s;
  const bool communicating = phase < options_.comm_fraction;
  std::normal_distribution<double> noise(1.0, 0.05);
  const double line_bytes_per_s = options_.link_gbps * 1e9 / 8;
  for (auto& port : ports_) {
    Port& p = *port;
    if (p.up) {
      const double util = communicating ? 0.85 : 0.02;
      const auto bytes = static_cast<uint64_t>(line_bytes_per_s * util * dt * std::max(0.0, noise(rng_)));
      const uint64_t rx = static_cast<uint64_t>(bytes * std::max(0.0, noise(rng_)));
      // IB data counters count 4-byte words; RoCE MTU 4096.
      p["counters/port_xmit_data"] += bytes / 4;
      p["counters/port_rcv_data"] += rx / 4;
      p["counters/port_xmit_packets"] += bytes / 4096;
      p["counters/port_rcv_packets"] += rx / 4096;
      p["counters/unicast_xmit_packets"] += bytes / 4096;
      p["counters/unicast_rcv_packets"] += rx / 4096;
      p["hw_counters/rx_write_requests"] += rx / (1 << 20);
      // A healthy lossless fabric still marks a little ECN under incast.
      if (communicating && rng_() % 10 == 0) {
        p["hw_counters/np_ecn_marked_roce_packets"] += rng_() % 50;
        p["hw_counters/np_cnp_sent"] += rng_() % 5;
      }
    }
    if (absl::Status s = p.Flush(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace railwatch::sim
