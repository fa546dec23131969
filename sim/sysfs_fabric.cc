#include "sim/sysfs_fabric.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"
#include "common/text.h"
#include "sim/host_faults.h"
#include "sim/inspector_writer.h"
#include "sim/ras_server.h"
#include "sim/job_failures.h"
#include "sim/nccl_log_writer.h"
#include "sim/nic_port.h"

namespace railwatch::sim {
namespace fs = std::filesystem;

absl::StatusOr<std::unique_ptr<SimFile>> SimFile::Create(const std::string& path,
                                                         std::string_view content, bool keep_open,
                                                         std::string moved_to) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
  if (!content.empty() &&
      ::pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size())) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(err)));
  }
  if (!keep_open) {
    ::close(fd);
    fd = -1;
  }
  return std::unique_ptr<SimFile>(
      new SimFile(fd, moved_to.empty() ? path : std::move(moved_to), content.size()));
}

SimFile::~SimFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status SimFile::Write(std::string_view content) {
  const int fd = fd_ >= 0 ? fd_ : ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(path_, ": ", std::strerror(errno)));
  absl::Status status;
  if (::pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size()) ||
      (content.size() < length_ && ::ftruncate(fd, static_cast<off_t>(content.size())) != 0)) {
    status = absl::UnavailableError(absl::StrCat(path_, ": ", std::strerror(errno)));
  } else {
    length_ = content.size();
  }
  if (fd != fd_) ::close(fd);
  return status;
}

size_t SpareFileDescriptors() {
  struct rlimit limit;
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  size_t open = 0;
  std::error_code ec;
  for (fs::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
    ++open;
  return limit.rlim_cur > open ? limit.rlim_cur - open : 0;
}

std::vector<LinkFlap> ExpandRepeatedFlap(const RepeatedFlap& r, absl::Duration down_for) {
  std::vector<LinkFlap> out;
  for (int i = 0; i < r.count; ++i) {
    out.push_back({r.host, r.device, r.port, r.at + i * r.period, down_for, i + 1, r.count});
  }
  return out;
}

absl::Status AppendGroundTruth(const std::string& file, std::string_view json_line) {
  if (file.empty()) return absl::OkStatus();
  std::ofstream out(file, std::ios::app);
  out << json_line << "\n";
  if (!out) return absl::UnavailableError("cannot append to " + file);
  return absl::OkStatus();
}

absl::Status FaultTruth::Write(const std::string& file, const FaultStarted& started) const {
  if (line == nullptr) return absl::OkStatus();
  return AppendGroundTruth(file, line(started));
}

FaultStarted StartedAt(absl::Time now) {
  FaultStarted started;
  started.now = now;
  return started;
}

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

SysfsFabric::SysfsFabric(Options options) : options_(std::move(options)), rng_(options_.seed) {}
SysfsFabric::~SysfsFabric() = default;

std::string SysfsFabric::HostName(int index) { return absl::StrFormat("gpu-node-%03d", index); }

std::string SysfsFabric::NetdevName(int nic) {
  return absl::StrFormat("enp%ds0np0", 0x18 + nic * 0x10);
}

std::string SysfsFabric::HostRoot(const std::string& host) const {
  return (fs::path(options_.root) / host).string();
}

int SysfsFabric::LeafOf(int host, int nic) const {
  const int group = options_.hosts_per_leaf > 0 ? (host - 1) / options_.hosts_per_leaf : 0;
  return group * options_.nics_per_host + nic;
}

NicPort* SysfsFabric::Find(const std::string& host, const std::string& device) const {
  for (const auto& p : ports_) {
    if (p->host_name == host && p->device == device) return p.get();
  }
  return nullptr;
}

namespace {

absl::Status WriteStatic(const fs::path& path, std::string_view content) {
  std::ofstream out(path);
  out << content;
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// A host's tree is built under a staging directory and then renamed: files that are opened for
// each write must know where they end up.
struct TreePaths {
  fs::path staging, final_root;
  std::string Final(const fs::path& p) const {
    return (final_root / p.lexically_relative(staging)).string();
  }
};

absl::Status OpenSimFile(const TreePaths& tree, const fs::path& path, std::string_view content,
                         std::unique_ptr<SimFile>& into, bool keep_open = false) {
  absl::StatusOr<std::unique_ptr<SimFile>> f =
      SimFile::Create(path.string(), content, keep_open, tree.Final(path));
  if (!f.ok()) return f.status();
  into = std::move(*f);
  return absl::OkStatus();
}

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
  // As the kernel lays it out: the function names its RDMA device, and bus/pci/devices/<bdf>
  // leads to the function (the kmsg collector goes from a message's PCI address to the NIC).
  fs::create_directories(function / "infiniband" / absl::StrCat("mlx5_", nic), ec);
  fs::create_directories(root / "bus" / "pci" / "devices", ec);
  fs::create_directories(driver, ec);
  fs::create_directories(port_dir / "gid_attrs" / "ndevs", ec);
  if (ec) return absl::UnavailableError(absl::StrCat(function.string(), ": ", ec.message()));
  // Relative links, so the tree still resolves after the staging directory is renamed.
  fs::create_symlink("../../../bus/pci/drivers/mlx5_core", function / "driver", ec);
  fs::create_symlink(fs::path("../../..") / "devices" / "pci0000:00" / address,
                     root / "bus" / "pci" / "devices" / address, ec);
  fs::create_symlink(fs::path("../../..") / "devices" / "pci0000:00" / address, rdma_dev / "device",
                     ec);
  if (ec) return absl::UnavailableError(absl::StrCat(rdma_dev.string(), ": ", ec.message()));
  if (absl::Status s = WriteStatic(function / "numa_node", nic < nics / 2 ? "0\n" : "1\n");
      !s.ok()) {
    return s;
  }
  for (int gid = 0; gid < 2; ++gid) {
    if (absl::Status s =
            WriteStatic(port_dir / "gid_attrs" / "ndevs" / std::to_string(gid), netdev + "\n");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// The netdev of that PCI function: class/net/<netdev> links to it (as in real sysfs), it has a
// `device` link back to the function (the agent's netdev selector looks for one), and its
// carrier files move with the link.
absl::Status CreateNetdev(const TreePaths& tree, NicPort& port) {
  const fs::path& root = tree.staging;
  const std::string address = absl::StrFormat("0000:%02x:00.0", 0x18 + port.nic * 0x10);
  const fs::path relative = fs::path("devices") / "pci0000:00" / address / "net" / port.netdev;
  const fs::path dir = root / relative;
  std::error_code ec;
  fs::create_directories(root / "class" / "net", ec);
  fs::create_symlink(fs::path("../..") / relative, root / "class" / "net" / port.netdev, ec);
  fs::create_symlink(fs::path("../../..") / address, dir / "device", ec);
  if (ec) return absl::UnavailableError(absl::StrCat(dir.string(), ": ", ec.message()));
  for (auto [name, content] : {std::pair{"mtu", "9000\n"}, std::pair{"type", "1\n"}}) {
    if (absl::Status s = WriteStatic(dir / name, content); !s.ok()) return s;
  }
  // As of a link that came up once at boot; SetUp keeps them from here.
  const std::string speed = port.SpeedText();
  for (auto [member, name, content] :
       {std::tuple{&port.carrier, "carrier", "1\n"},
        std::tuple{&port.operstate, "operstate", "up\n"},
        std::tuple{&port.carrier_changes, "carrier_changes", "1\n"},
        std::tuple{&port.carrier_up, "carrier_up_count", "1\n"},
        std::tuple{&port.carrier_down, "carrier_down_count", "0\n"},
        std::tuple{&port.speed, "speed", speed.c_str()}}) {
    if (absl::Status s = OpenSimFile(tree, dir / name, content, *member); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SysfsFabric::Create(absl::Time start) {
  start_ = last_ = last_ethtool_ = last_cold_flush_ = start;
  if (absl::Status s = Validate(); !s.ok()) return s;
  // Keep the files written every tick open while descriptors last (some for the NCCL logs, the
  // gNMI servers and the agent's own needs aside); the rest are opened for each write.
  const size_t reserve = 1024 + static_cast<size_t>(options_.hosts) * options_.jobs.size();
  // First the files written every tick (and the ethtool dump) of every NIC, then the other
  // busy counters of as many NICs as there are descriptors left.
  const size_t nics = static_cast<size_t>(options_.hosts) * options_.nics_per_host;
  size_t spare = SpareFileDescriptors();
  spare = spare > reserve ? spare - reserve : 0;
  hot_open_nics_ = std::min(nics, spare / (kHotCounters + 1));
  busy_open_nics_ = std::min(nics, (spare - hot_open_nics_ * (kHotCounters + 1)) / kBusyCounters);
  if (busy_open_nics_ < nics) {
    spdlog::info("{} spare descriptors: counter files of {} of {} NICs are opened for each write",
                 spare, nics - busy_open_nics_, nics);
  }
  for (int h = 1; h <= options_.hosts; ++h) {
    if (absl::Status s = CreateHost(h); !s.ok()) return s;
  }
  job_of_host_.assign(options_.hosts + 1, -1);
  for (size_t j = 0; j < options_.jobs.size(); ++j) {
    for (int h = options_.jobs[j].first_host; h <= options_.jobs[j].last_host; ++h) {
      job_of_host_[h] = static_cast<int>(j);
    }
  }
  const int groups = options_.hosts_per_leaf > 0
                         ? (options_.hosts + options_.hosts_per_leaf - 1) / options_.hosts_per_leaf
                         : 1;
  leaf_marking_.assign(groups * options_.nics_per_host, 1.0);
  flap_started_.assign(options_.flaps.size(), false);
  flap_ended_.assign(options_.flaps.size(), false);
  job_stalled_.assign(options_.jobs.size(), false);
  job_slowdown_.assign(options_.jobs.size(), 1.0);
  job_failed_.assign(options_.jobs.size(), false);
  job_hung_.assign(options_.jobs.size(), false);
  job_burst_.assign(options_.jobs.size(), 1.0);
  job_burst_until_.assign(options_.jobs.size(), start);
  progress_ = std::make_unique<FaultProgress>(options_);
  for (const StormingNic& x : options_.storms)
    progress_->storm_port.push_back(Find(x.host, x.device));
  for (const PfcDeadlock& x : options_.deadlocks) {
    progress_->deadlock_port.push_back(Find(x.host, x.device));
  }
  if (options_.nccl_logs && !options_.jobs.empty()) {
    nccl_ = std::make_unique<NcclLogs>(options_.root, options_.jobs, options_.nics_per_host,
                                       options_.seed);
    if (absl::Status s = nccl_->Create(start); !s.ok()) return s;
    if (options_.nccl_inspector) {
      inspector_ = std::make_unique<InspectorRecords>(
          options_.root, options_.jobs, options_.nics_per_host, options_.step,
          options_.comm_fraction, options_.link_gbps, options_.seed, *nccl_);
      if (absl::Status s = inspector_->Create(start); !s.ok()) return s;
      if (options_.nccl_ras) {
        ras_ = std::make_unique<RasServer>(options_.root, options_.jobs, options_.nics_per_host,
                                           *nccl_);
        if (absl::Status s = ras_->Start(); !s.ok()) return s;
      }
    }
  }
  failures_ = std::make_unique<JobFailures>(options_.jobs, job_of_host_, nccl_.get(),
                                            options_.ground_truth_file);
  return absl::OkStatus();
}

absl::Status SysfsFabric::CreateHost(int h) {
  const std::string host = HostName(h);
  // Each host's tree is built under a staging name and renamed into place when complete, so
  // an agent never discovers a half-written tree. Open files stay valid across the rename.
  const fs::path staging = fs::path(options_.root) / absl::StrCat(".", host, ".staging");
  const TreePaths tree{staging, HostRoot(host)};
  std::error_code rm_ec;
  fs::remove_all(staging, rm_ec);
  fs::remove_all(HostRoot(host), rm_ec);
  for (int n = 0; n < options_.nics_per_host; ++n) {
    auto port = std::make_unique<NicPort>();
    port->host = h;
    port->nic = n;
    port->leaf = LeafOf(h, n);
    port->link_gbps = options_.link_gbps;
    port->host_name = host;
    port->device = absl::StrCat("mlx5_", n);
    port->netdev = NetdevName(n);
    const fs::path dev = staging / "class" / "infiniband" / port->device;
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
    if (absl::Status s = WriteStatic(port_dir / "link_layer",
                                        options_.infiniband ? "InfiniBand\n" : "Ethernet\n"); !s.ok()) return s;
    if (options_.infiniband) {
      // GID 0: the link-local prefix and the port GUID (the node GUID on a one-port HCA), as
      // the subnet manager and the fabric scanner know the port.
      std::error_code gid_ec;
      fs::create_directories(port_dir / "gids", gid_ec);
      if (absl::Status s = WriteStatic(
              port_dir / "gids" / "0",
              absl::StrFormat("fe80:0000:0000:0000:b83f:d203:00%02x:%04x\n", h % 256, n));
          !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = WriteStatic(port_dir / "hw_counters" / "lifespan", "10\n"); !s.ok()) {
      return s;
    }
    if (absl::Status s = CreatePciFunction(staging, dev, port_dir, n, options_.nics_per_host);
        !s.ok()) {
      return s;
    }
    const bool keep_open = ports_.size() < hot_open_nics_;
    const bool keep_busy_open = ports_.size() < busy_open_nics_;
    // Start from a plausible uptime's worth of traffic, different per NIC.
    (*port)[kPortXmitData] = rng_() % (uint64_t{1} << 40);
    (*port)[kPortRcvData] = rng_() % (uint64_t{1} << 40);
    for (int i = 0; i < kSysfsCounterCount; ++i) {
      if (absl::Status s =
              OpenSimFile(tree, port_dir / kSysfsCounterNames[i],
                          absl::StrCat(port->counters[i], "\n"), port->files[i],
                          (keep_open && IsHotCounter(i)) || (keep_busy_open && IsBusyCounter(i)));
          !s.ok()) {
        return s;
      }
    }
    port->written = port->counters;
    port->eth.tx_prio_bytes[kRocePriority] = (*port)[kPortXmitData] * 4;
    port->eth.rx_prio_bytes[kRocePriority] = (*port)[kPortRcvData] * 4;
    port->eth.tx_rdma_bytes = port->eth.tx_prio_bytes[kRocePriority];
    port->eth.rx_rdma_bytes = port->eth.rx_prio_bytes[kRocePriority];
    // Its module, and its PHY's pre-FEC BER: a healthy PAM4 link's FEC corrects some bits all
    // the time, a little more on some links.
    port->optics = NicOptics::Draw(rng_, h * 100 + n);
    const std::string rate = RateText(options_.link_gbps);
    for (auto [member, fname, content] :
         {std::tuple{&port->state, "state", std::string_view("4: ACTIVE\n")},
          std::tuple{&port->phys_state, "phys_state", std::string_view("5: LinkUp\n")},
          std::tuple{&port->rate, "rate", std::string_view(rate)}}) {
      if (absl::Status s = OpenSimFile(tree, port_dir / fname, content, *member); !s.ok()) return s;
    }
    if (absl::Status s = CreateNetdev(tree, *port); !s.ok()) return s;
    if (options_.ethtool) {
      absl::StatusOr<std::unique_ptr<EthtoolDump>> dump =
          EthtoolDump::Create((staging / "ethtool").string(), tree.Final(staging / "ethtool"),
                              port->netdev, port->eth, keep_open);
      if (!dump.ok()) return dump.status();
      port->ethtool = std::move(*dump);
    }
    ports_.push_back(std::move(port));
  }
  std::error_code ec;
  fs::rename(staging, HostRoot(host), ec);
  if (ec)
    return absl::UnavailableError(absl::StrCat("rename to ", HostRoot(host), ": ", ec.message()));
  if (options_.kmsg) {
    // Up a few days, different per host, and its NICs' boot messages.
    const absl::Time boot = start_ - absl::Hours(72 + h);
    auto kmsg = std::make_unique<KmsgWriter>((fs::path(HostRoot(host)) / "kmsg").string(), boot);
    if (absl::Status s = kmsg->Create(options_.nics_per_host); !s.ok()) return s;
    kmsg_.push_back(std::move(kmsg));
  }
  return absl::OkStatus();
}

void SysfsFabric::ReadTraffic(std::vector<NicTraffic>& out) const {
  out.resize(ports_.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    const NicPort& p = *ports_[i];
    NicTraffic& t = out[i];
    t.host = p.host;
    t.nic = p.nic;
    // IB data counters count 4-byte words.
    t.tx_bytes = p[kPortXmitData] * 4;
    t.rx_bytes = p[kPortRcvData] * 4;
    t.tx_packets = p[kPortXmitPackets];
    t.rx_packets = p[kPortRcvPackets];
    t.up = p.up;
    t.ecn_marked = p[kNpEcnMarkedRocePackets];
    t.priority = p.priority;
    t.gone = p.gone;
    t.corrupted_packets = p.corrupted_packets;
  }
}

absl::Status SysfsFabric::Tick(absl::Time now) {
  const double dt = absl::ToDoubleSeconds(now - last_);
  if (dt <= 0) return absl::OkStatus();
  last_ = now;
  if (absl::Status s = ApplyFlaps(now); !s.ok()) return s;
  if (absl::Status s = ApplyFaults(now); !s.ok()) return s;
  if (absl::Status s = ApplyLinksAtRisk(now); !s.ok()) return s;
  if (absl::Status s = ApplyKernelFaults(now); !s.ok()) return s;
  MoveTraffic(now, dt);
  MovePauses(dt);
  MoveErrors(dt);
  const bool cold = now - last_cold_flush_ >= options_.cold_flush_interval;
  if (cold) last_cold_flush_ = now;
  for (auto& port : ports_) {
    if (absl::Status s = port->Flush(cold); !s.ok()) return s;
  }
  if (absl::Status s = failures_->Tick(now); !s.ok()) return s;
  if (inspector_ != nullptr) {
    if (absl::Status s = inspector_->Tick(now, JobPace()); !s.ok()) return s;
    if (ras_ != nullptr) {
      for (size_t j = 0; j < options_.jobs.size(); ++j) {
        ras_->SetCounts(static_cast<int>(j), inspector_->LaunchCounts(static_cast<int>(j)));
      }
    }
  }
  if (absl::Status s = WriteOptics(now); !s.ok()) return s;
  return WriteEthtool(now);
}

absl::Status SysfsFabric::WriteEthtool(absl::Time now) {
  if (!options_.ethtool || now - last_ethtool_ < options_.ethtool_interval) return absl::OkStatus();
  last_ethtool_ = now;
  for (auto& port : ports_) {
    if (port->ethtool == nullptr || !port->eth_dirty) continue;
    if (absl::Status s = port->ethtool->Write(port->eth); !s.ok()) return s;
    port->eth_dirty = false;
  }
  return absl::OkStatus();
}

absl::Status SysfsFabric::ApplyFlaps(absl::Time now) {
  for (size_t i = 0; i < options_.flaps.size(); ++i) {
    const LinkFlap& f = options_.flaps[i];
    NicPort* p = Find(f.host, f.device);
    if (!flap_started_[i] && now >= start_ + f.at) {
      flap_started_[i] = true;
      if (p->gone) continue;
      if (absl::Status s = p->SetUp(false); !s.ok()) return s;
      if (absl::Status s = f.truth.Write(options_.ground_truth_file, StartedAt(now)); !s.ok()) {
        return s;
      }
      spdlog::info("injected link flap: {}/{} port {} down", f.host, f.device, f.port);
    }
    if (flap_started_[i] && !flap_ended_[i] && now >= start_ + f.at + f.down_for) {
      flap_ended_[i] = true;
      if (p->gone) continue;
      if (absl::Status s = p->SetUp(true); !s.ok()) return s;
      spdlog::info("link {}/{} port {} up again", f.host, f.device, f.port);
    }
  }
  return absl::OkStatus();
}

}  // namespace railwatch::sim
