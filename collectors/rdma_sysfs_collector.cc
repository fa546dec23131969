#include "collectors/rdma_sysfs_collector.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectors/rdma_attributes.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {
namespace fs = std::filesystem;

RdmaSysfsCollector::RdmaSysfsCollector(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

RdmaSysfsCollector::~RdmaSysfsCollector() = default;

namespace {

std::vector<fs::path> SortedChildren(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Every port-relative path some canonical metric reads, preferred or not: those files are
// never reported again as driver counters (mlx4's 32-bit port_xmit_data next to the 64-bit
// one it loses to, for example).
const absl::flat_hash_set<std::string>& CanonicalSysfsPaths() {
  static const auto* paths = [] {
    auto* set = new absl::flat_hash_set<std::string>();
    for (const MetricSpec& spec : CanonicalMetrics()) {
      for (const SysfsSource& source : spec.sysfs) set->insert(std::string(source.path));
    }
    return set;
  }();
  return *paths;
}

// hw_counters that are levels rather than counts.
bool IsDriverGauge(absl::string_view name) {
  return absl::StartsWith(name, "active_") || absl::StartsWith(name, "watermark_");
}

std::unique_ptr<PreadFile> OpenOptional(const fs::path& path) {
  absl::StatusOr<PreadFile> file = PreadFile::Open(path.string());
  if (!file.ok()) return nullptr;
  return std::make_unique<PreadFile>(std::move(*file));
}

absl::StatusOr<std::string> ReadSmall(const PreadFile& file) {
  char buf[128];
  absl::StatusOr<size_t> n = file.Read(buf, sizeof(buf));
  if (!n.ok()) return n.status();
  return std::string(FirstLine(absl::string_view(buf, *n)));
}

void AddLabel(Labels& labels, const char* name, const std::string& value) {
  if (!value.empty()) labels.push_back({name, value});
}

}  // namespace

std::vector<std::string> RdmaSysfsCollector::DeviceNames() {
  verbs_devices_.clear();
  if (options_.use_verbs && options_.sysfs_root == "/sys") {
    absl::StatusOr<std::vector<std::string>> names = ListVerbsDevices();
    if (names.ok() && !names->empty()) {
      for (const std::string& name : *names) {
        absl::StatusOr<std::unique_ptr<VerbsDevice>> device = VerbsDevice::Open(name);
        if (device.ok()) {
          verbs_devices_.push_back(std::move(*device));
        } else {
          spdlog::warn("rdma_sysfs: {}; reading its port state from sysfs",
                       device.status().message());
        }
      }
      return *names;
    }
    if (!verbs_unavailable_logged_) {
      verbs_unavailable_logged_ = true;
      spdlog::debug("rdma_sysfs: libibverbs lists no devices ({}); reading sysfs",
                    names.ok() ? "empty list" : names.status().message());
    }
  }
  std::vector<std::string> names;
  for (const fs::path& dir :
       SortedChildren(fs::path(options_.sysfs_root) / "class" / "infiniband")) {
    names.push_back(dir.filename().string());
  }
  return names;
}

void RdmaSysfsCollector::AddDriverCounters(Emitter& emitter, const std::string& dir,
                                           const Labels& labels) {
  const std::string group = fs::path(dir).filename().string();
  for (const fs::path& path : SortedChildren(dir)) {
    const std::string counter = path.filename().string();
    // lifespan is the driver's cache interval in ms, not a counter.
    if (counter == "lifespan") continue;
    if (CanonicalSysfsPaths().contains(absl::StrCat(group, "/", counter))) continue;
    absl::StatusOr<PreadFile> file = PreadFile::Open(path.string());
    if (!file.ok()) continue;
    absl::StatusOr<std::optional<uint64_t>> value = file->ReadCounter();
    if (!value.ok() || !value->has_value()) continue;
    Labels series_labels = labels;
    series_labels.push_back({"counter", counter});
    const bool gauge = IsDriverGauge(counter);
    uint32_t id = gauge ? emitter.DefineSeries("fabric_rdma_driver_gauge", MetricKind::kGauge,
                                               std::move(series_labels))
                        : emitter.DefineSeries("fabric_rdma_driver_stat_total",
                                               MetricKind::kCounter, std::move(series_labels));
    counters_.push_back({std::move(*file), id, 1, gauge, /*detail=*/true, 0, -1, {}});
  }
}

void RdmaSysfsCollector::DiscoverPort(Emitter& emitter, const std::string& device,
                                      const std::string& port_dir_name, int port,
                                      const std::vector<std::string>& device_netdevs) {
  const fs::path port_dir(port_dir_name);
  const std::string port_label = std::to_string(port);
  const Labels labels = {{"device", device}, {"port", port_label}};

  PortState state;
  state.device = device;
  state.port = port;
  for (const auto& verbs : verbs_devices_) {
    if (verbs->name() == device) state.verbs = verbs.get();
  }
  if (state.verbs == nullptr) {
    state.state_file = OpenOptional(port_dir / "state");
    state.physical_state_file = OpenOptional(port_dir / "phys_state");
  }
  state.rate_file = OpenOptional(port_dir / "rate");
  state.state_id = emitter.DefineSeries("fabric_rdma_port_state", MetricKind::kGauge, labels);
  state.physical_state_id =
      emitter.DefineSeries("fabric_rdma_port_physical_state", MetricKind::kGauge, labels);
  state.rate_id =
      emitter.DefineSeries("fabric_rdma_port_rate_bytes_per_second", MetricKind::kGauge, labels);

  // NIC -> netdev: RoCE ports name theirs through the GID table; otherwise the PCI function's.
  std::vector<std::string> netdevs = ReadPortNetdevs(port_dir.string());
  if (netdevs.empty()) netdevs = device_netdevs;
  Labels info = labels;
  absl::StatusOr<std::string> link_layer = ReadFile((port_dir / "link_layer").string());
  if (link_layer.ok()) AddLabel(info, "link_layer", std::string(FirstLine(*link_layer)));
  AddLabel(info, "netdev", absl::StrJoin(netdevs, ","));
  // What LLDP may announce for this port (topology discovery, docs/TOPOLOGY.md): the netdev's
  // MAC, and on InfiniBand the port GUID (the low 64 bits of GID 0).
  if (!netdevs.empty()) {
    absl::StatusOr<std::string> mac = ReadFile(
        (fs::path(options_.sysfs_root) / "class" / "net" / netdevs.front() / "address").string());
    if (mac.ok()) AddLabel(info, "mac", std::string(FirstLine(*mac)));
  }
  if (link_layer.ok() && FirstLine(*link_layer) == "InfiniBand") {
    absl::StatusOr<std::string> gid = ReadFile((port_dir / "gids" / "0").string());
    if (gid.ok()) {
      const auto g = FirstLine(*gid);
      // fe80:0000:0000:0000:0c42:a103:0065:8c4a -> 0c42:a103:0065:8c4a
      if (g.size() == 39) AddLabel(info, "port_guid", std::string(g.substr(20)));
    }
  }
  info_series_.push_back(
      emitter.DefineSeries("fabric_rdma_port_info", MetricKind::kGauge, std::move(info)));
  ports_.push_back(std::move(state));

  for (const MetricSpec& spec : CanonicalMetrics()) {
    for (const SysfsSource& source : spec.sysfs) {
      absl::StatusOr<PreadFile> file = PreadFile::Open((port_dir / source.path).string());
      if (!file.ok()) {
        if (!absl::IsNotFound(file.status())) spdlog::warn("{}", file.status().message());
        continue;
      }
      absl::StatusOr<std::optional<uint64_t>> value = file->ReadCounter();
      // "N/A (no PMA)" and friends: the device does not have this counter.
      if (!value.ok() || !value->has_value()) continue;
      uint32_t id = emitter.DefineSeries(spec.name, spec.kind, labels);
      OpenCounter counter{std::move(*file), id, source.scale, spec.kind == MetricKind::kGauge,
                          spec.detail,
                          source.pma_bits ? (uint64_t{1} << source.pma_bits) - 1 : 0, -1, {}};
      if (counter.saturated_at != 0) {
        counter.saturation_labels = labels;
        counter.saturation_labels.push_back(
            {"counter", fs::path(std::string(source.path)).filename().string()});
      }
      counters_.push_back(std::move(counter));
      break;  // the first present source wins
    }
  }
  if (options_.driver_counters) {
    for (const char* group : {"counters", "counters_ext", "hw_counters"}) {
      AddDriverCounters(emitter, (port_dir / group).string(), labels);
    }
  }
}

absl::Status RdmaSysfsCollector::Discover(Emitter& emitter) {
  counters_.clear();
  ports_.clear();
  info_series_.clear();
  const fs::path class_dir = fs::path(options_.sysfs_root) / "class" / "infiniband";
  // No RDMA devices (or no RDMA in this kernel): nothing to collect, not a failure.
  for (const std::string& device : DeviceNames()) {
    const fs::path device_dir = class_dir / device;
    std::error_code ec;
    if (!fs::is_directory(device_dir, ec)) continue;
    const RdmaDeviceInfo info = ReadRdmaDeviceInfo(device_dir.string());
    Labels info_labels = {{"device", device}};
    AddLabel(info_labels, "driver", info.driver);
    AddLabel(info_labels, "fw_ver", info.fw_ver);
    AddLabel(info_labels, "board_id", info.board_id);
    AddLabel(info_labels, "hca_type", info.hca_type);
    AddLabel(info_labels, "node_guid", info.node_guid);
    AddLabel(info_labels, "pci_address", info.pci_address);
    AddLabel(info_labels, "numa_node", info.numa_node);
    AddLabel(info_labels, "netdevs", absl::StrJoin(info.netdevs, ","));
    info_series_.push_back(emitter.DefineSeries("fabric_rdma_device_info", MetricKind::kGauge,
                                                std::move(info_labels)));
    if (options_.driver_counters) {
      AddDriverCounters(emitter, (device_dir / "hw_counters").string(), {{"device", device}});
    }
    for (const fs::path& port_dir : SortedChildren(device_dir / "ports")) {
      int port;
      if (!absl::SimpleAtoi(port_dir.filename().string(), &port)) continue;
      DiscoverPort(emitter, device, port_dir.string(), port, info.netdevs);
    }
  }
  spdlog::debug("rdma_sysfs: {} ports, {} counters under {}{}", ports_.size(), counters_.size(),
                class_dir.string(), verbs_devices_.empty() ? "" : " (port state from verbs)");
  return absl::OkStatus();
}

absl::Status RdmaSysfsCollector::ReadPort(Emitter& emitter, const PortState& port, int64_t t,
                                          bool read_detail) {
  if (port.verbs != nullptr) {
    absl::StatusOr<VerbsPortAttributes> attr = port.verbs->QueryPort(port.port);
    if (!attr.ok()) return attr.status();
    emitter.Gauge(port.state_id, attr->state, t);
    emitter.Gauge(port.physical_state_id, attr->physical_state, t);
    if (std::optional<double> rate = VerbsRateBitsPerSecond(attr->active_speed,
                                                            attr->active_width)) {
      emitter.Gauge(port.rate_id, *rate / 8, t);  // Prometheus base unit: bytes
      return absl::OkStatus();
    }
  } else {
    // The physical state is a detail series (no playbook reads it); the state is read always.
    for (const auto& [file, id] :
         {std::pair{port.state_file.get(), port.state_id},
          std::pair{read_detail ? port.physical_state_file.get() : nullptr,
                    port.physical_state_id}}) {
      if (file == nullptr) continue;
      absl::StatusOr<std::string> text = ReadSmall(*file);
      if (!text.ok()) return text.status();
      // The procfs fixture's mlx5 phys_state reads "4: ACTIVE": trust the number either way.
      if (std::optional<NumberedState> state = ParseNumberedState(*text)) {
        emitter.Gauge(id, state->number, t);
      }
    }
  }
  if (port.rate_file != nullptr) {
    absl::StatusOr<std::string> text = ReadSmall(*port.rate_file);
    if (!text.ok()) return text.status();
    if (std::optional<double> rate = ParseRateBitsPerSecond(*text)) {
      emitter.Gauge(port.rate_id, *rate / 8, t);  // Prometheus base unit: bytes
    }
  }
  return absl::OkStatus();
}

absl::Status RdmaSysfsCollector::Collect(Emitter& emitter) {
  absl::Time now = clock_.Now();
  if (now >= next_rescan_) {
    if (absl::Status s = Discover(emitter); !s.ok()) return s;
    next_rescan_ = now + options_.rescan_interval;
    next_detail_ = absl::InfinitePast();  // a new device's detail series get their first point
  }
  const bool read_detail = now >= next_detail_;
  if (read_detail) next_detail_ = now + options_.detail_interval;
  const int64_t t = absl::ToUnixNanos(now);
  size_t failed = 0;
  absl::Status first_error;
  for (OpenCounter& c : counters_) {
    if (c.detail && !read_detail) continue;
    absl::StatusOr<std::optional<uint64_t>> value = c.file.ReadCounter();
    if (!value.ok()) {
      if (failed++ == 0) first_error = value.status();
      continue;
    }
    if (!value->has_value()) continue;  // became unavailable: absent this cycle
    const uint64_t raw = **value;
    if (c.gauge) {
      emitter.Gauge(c.series_id, static_cast<double>(raw), t);
      continue;
    }
    emitter.Counter(c.series_id, raw * c.scale, t);
    if (c.saturated_at == 0) continue;
    const bool saturated = raw == c.saturated_at;
    if (saturated && c.saturated_series < 0) {
      spdlog::warn("rdma_sysfs: {} is saturated at {}: it no longer counts until cleared "
                   "(perfquery -R, or a driver reload)",
                   c.file.path(), raw);
      c.saturated_series =
          emitter.DefineSeries("fabric_rdma_counter_saturated", MetricKind::kGauge,
                               c.saturation_labels);
    }
    if (c.saturated_series >= 0) {
      emitter.Gauge(static_cast<uint32_t>(c.saturated_series), saturated ? 1 : 0, t);
    }
  }
  for (const PortState& port : ports_) {
    if (absl::Status s = ReadPort(emitter, port, t, read_detail); !s.ok()) {
      if (failed++ == 0) first_error = s;
    }
  }
  for (uint32_t id : info_series_) emitter.Gauge(id, 1, t);
  if (failed > 0) {
    // Most likely the device went away; find out what is there now on the next cycle.
    next_rescan_ = absl::InfinitePast();
    return absl::UnavailableError(
        absl::StrCat(failed, " reads failed, first: ", first_error.message()));
  }
  return absl::OkStatus();
}

}  // namespace railwatch
