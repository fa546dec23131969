#include "collectors/optics_collector.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectors/optics_dir_backend.h"
#include "collectors/optics_kernel.h"
#include "common/labels.h"
#include "common/logging.h"
#include "common/text.h"
#include "common/vocabulary.h"
#include "optics/eeprom.h"

namespace railwatch {
// Named, not anonymous: the unity build puts collectors in one unit.
namespace optics_collector {

constexpr std::string_view kFecTotals[3] = {"fabric_netdev_fec_corrected_blocks_total",
                                            "fabric_netdev_fec_uncorrectable_blocks_total",
                                            "fabric_netdev_fec_corrected_bits_total"};
constexpr std::string_view kFecLanes[3] = {"fabric_netdev_fec_lane_corrected_blocks_total",
                                           "fabric_netdev_fec_lane_uncorrectable_blocks_total",
                                           "fabric_netdev_fec_lane_corrected_bits_total"};
constexpr std::string_view kLevels[4] = {"alarm_high", "warning_high", "warning_low", "alarm_low"};

// Whether the vocabulary maps `series` from `ethtool -S` for `driver`.
bool EthtoolMaps(std::string_view series, const std::string& driver) {
  if (driver.empty()) return false;
  const MetricSpec* spec = FindMetric(series);
  if (spec == nullptr) return false;
  for (const EthtoolSource& source : spec->ethtool) {
    if (source.driver == driver) return true;
  }
  return false;
}

Labels WithInterface(const std::string& netdev, Labels more = {}) {
  more.push_back({"interface", netdev});
  return more;
}

std::string LaneLabel(size_t index) { return absl::StrCat(index + 1); }

}  // namespace optics_collector

namespace oc = optics_collector;

OpticsCollector::OpticsCollector(Options options, NetdevSelector selector,
                                 std::unique_ptr<ModuleBackend> backend, const Clock& clock)
    : options_(std::move(options)),
      selector_(std::move(selector)),
      backend_(std::move(backend)),
      clock_(clock) {}

uint64_t OpticsCollector::read_errors(const std::string& what) const {
  auto it = read_errors_.find(what);
  return it == read_errors_.end() ? 0 : it->second;
}

void OpticsCollector::CountError(const std::string& what, uint64_t n) { read_errors_[what] += n; }

void OpticsCollector::Discover() {
  std::vector<Netdev> previous = std::move(netdevs_);
  netdevs_.clear();
  for (const std::string& name : selector_.List()) {
    auto it = std::find_if(previous.begin(), previous.end(),
                           [&](const Netdev& n) { return n.name == name; });
    if (it != previous.end()) {
      if (!it->speed) {
        if (absl::StatusOr<PreadFile> f =
                PreadFile::Open(absl::StrCat(options_.sysfs_root, "/class/net/", name, "/speed"));
            f.ok()) {
          it->speed = *std::move(f);
        }
      }
      netdevs_.push_back(std::move(*it));
      continue;
    }
    Netdev netdev;
    netdev.name = name;
    if (absl::StatusOr<PreadFile> f =
            PreadFile::Open(absl::StrCat(options_.sysfs_root, "/class/net/", name, "/speed"));
        f.ok()) {
      netdev.speed = *std::move(f);
    }
    if (options_.defer_to_ethtool) {
      const std::string driver = backend_->Driver(name);
      for (int i = 0; i < 3; ++i)
        netdev.fec_deferred[i] = oc::EthtoolMaps(oc::kFecTotals[i], driver);
    }
    netdevs_.push_back(std::move(netdev));
  }
}

void OpticsCollector::ReadSpeed(Netdev& netdev, Emitter& emitter, int64_t t) {
  if (!netdev.speed) return;
  char buf[32];
  absl::StatusOr<size_t> n = netdev.speed->Read(buf, sizeof(buf) - 1);
  // A link that is down reads EINVAL (or -1, SPEED_UNKNOWN): the series is absent then.
  if (!n.ok()) {
    if (absl::IsNotFound(n.status())) next_rescan_ = absl::InfinitePast();
    return;
  }
  int64_t mbps = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::string_view(buf, *n)), &mbps) ||
      mbps <= 0 || mbps >= int64_t{0xFFFFFFFF}) {
    return;
  }
  if (!netdev.speed_id) {
    netdev.speed_id = emitter.DefineSeries("fabric_netdev_speed_bytes_per_second",
                                           MetricKind::kGauge, oc::WithInterface(netdev.name));
  }
  emitter.Gauge(*netdev.speed_id, static_cast<double>(mbps) * 125000.0, t);
}

void OpticsCollector::EmitModule(const Netdev& netdev, const optics::ModuleReading& m,
                                 Emitter& emitter, int64_t t) {
  // Series are defined as the module has them: DefineSeries hands back the same id for the
  // same labels, and this runs every --optics_interval, not every cycle.
  auto gauge = [&](std::string_view name, Labels labels, double v) {
    emitter.Gauge(emitter.DefineSeries(name, MetricKind::kGauge,
                                       oc::WithInterface(netdev.name, std::move(labels))),
                  v, t);
  };
  gauge("fabric_optics_module_info",
        {{"form_factor", m.form_factor},
         {"spec", std::string(optics::ModuleSpecName(m.spec))},
         {"vendor", m.vendor},
         {"part_number", m.part_number},
         {"serial", m.serial},
         {"media", m.media}},
        1.0);
  if (m.temperature_c) gauge("fabric_optics_temperature_celsius", {}, *m.temperature_c);
  if (m.supply_voltage_v) gauge("fabric_optics_supply_voltage_volts", {}, *m.supply_voltage_v);
  for (auto [name, lanes] : {std::pair{"fabric_optics_tx_bias_milliamperes", &m.tx_bias_ma},
                             std::pair{"fabric_optics_tx_power_dbm", &m.tx_power_dbm},
                             std::pair{"fabric_optics_rx_power_dbm", &m.rx_power_dbm}}) {
    for (size_t i = 0; i < lanes->size(); ++i) {
      if ((*lanes)[i]) gauge(name, {{"lane", oc::LaneLabel(i)}}, *(*lanes)[i]);
    }
  }
  for (int qi = 0; qi < optics::kQuantityCount; ++qi) {
    const optics::Thresholds& th = m.thresholds[qi];
    const std::optional<double>* levels[4] = {&th.alarm_high, &th.warning_high, &th.warning_low,
                                              &th.alarm_low};
    for (int l = 0; l < 4; ++l) {
      if (!levels[l]->has_value()) continue;
      gauge("fabric_optics_threshold",
            {{"quantity", std::string(optics::QuantityName(static_cast<optics::Quantity>(qi)))},
             {"level", std::string(oc::kLevels[l])}},
            **levels[l]);
    }
  }
  gauge("fabric_optics_alarm_flags", {{"flags", absl::StrJoin(m.flags, ",")}},
        static_cast<double>(m.flags.size()));
}

OpticsCollector::Outcome OpticsCollector::ReadModule(Netdev& netdev, Emitter& emitter, int64_t t) {
  absl::StatusOr<optics::ModuleEeprom> eeprom = backend_->ReadModule(netdev.name);
  absl::Status failure;
  if (!eeprom.ok()) {
    if (absl::IsNotFound(eeprom.status())) {
      ++modules_absent_;
      if (netdev.had_module)
        spdlog::info("optics: {}: module gone ({})", netdev.name, eeprom.status().message());
      netdev.had_module = false;
      netdev.last_module_error.clear();
      return Outcome::kAbsent;
    }
    failure = eeprom.status();
  } else {
    absl::StatusOr<optics::ModuleReading> reading = optics::DecodeEeprom(*eeprom);
    if (reading.ok()) {
      ++module_reads_;
      if (!netdev.had_module || !netdev.last_module_error.empty()) {
        spdlog::info("optics: {}: {} {} {} {} (serial {})", netdev.name, reading->form_factor,
                     optics::ModuleSpecName(reading->spec), reading->vendor, reading->part_number,
                     reading->serial);
      }
      netdev.had_module = true;
      netdev.last_module_error.clear();
      EmitModule(netdev, *reading, emitter, t);
      return Outcome::kRead;
    }
    failure = absl::InvalidArgumentError(
        absl::StrCat(netdev.name, ": module EEPROM: ", reading.status().message()));
  }
  CountError("module");
  const std::string message(failure.message());
  if (message != netdev.last_module_error) {
    spdlog::warn("optics: {}", message);
    netdev.last_module_error = message;
  }
  return Outcome::kFailed;
}

OpticsCollector::Outcome OpticsCollector::ReadFec(Netdev& netdev, Emitter& emitter, int64_t t) {
  absl::StatusOr<FecStats> fec = backend_->ReadFec(netdev.name);
  if (!fec.ok()) {
    if (absl::IsNotFound(fec.status())) return Outcome::kAbsent;
    CountError("fec");
    const std::string message(fec.status().message());
    if (message != netdev.last_fec_error) {
      spdlog::warn("optics: {}", message);
      netdev.last_fec_error = message;
    }
    return Outcome::kFailed;
  }
  netdev.last_fec_error.clear();
  if (!fec->problems.empty()) {
    CountError("fec", fec->problems.size());
    if (fec->problems != netdev.last_fec_problems) {
      for (const std::string& p : fec->problems) spdlog::warn("optics: {}", p);
    }
  }
  netdev.last_fec_problems = std::move(fec->problems);
  const FecStats::Counter* counters[3] = {&fec->corrected_blocks, &fec->uncorrectable_blocks,
                                          &fec->corrected_bits};
  for (int i = 0; i < 3; ++i) {
    const FecStats::Counter& c = *counters[i];
    if (c.total && !netdev.fec_deferred[i]) {
      emitter.Counter(emitter.DefineSeries(oc::kFecTotals[i], MetricKind::kCounter,
                                           oc::WithInterface(netdev.name)),
                      *c.total, t);
    }
    for (size_t lane = 0; lane < c.lanes.size(); ++lane) {
      emitter.Counter(
          emitter.DefineSeries(oc::kFecLanes[i], MetricKind::kCounter,
                               oc::WithInterface(netdev.name, {{"lane", oc::LaneLabel(lane)}})),
          c.lanes[lane], t);
    }
  }
  if (!fec->active_mode.empty()) {
    emitter.Gauge(
        emitter.DefineSeries("fabric_netdev_fec_mode_info", MetricKind::kGauge,
                             oc::WithInterface(netdev.name, {{"mode", fec->active_mode}})),
        1.0, t);
  }
  return Outcome::kRead;
}

void OpticsCollector::EmitSelf(Emitter& emitter, int64_t t) {
  emitter.Counter(
      emitter.DefineSeries("railwatch_optics_module_reads_total", MetricKind::kCounter, {}),
      module_reads_, t);
  for (const char* what : {"module", "fec"}) {
    emitter.Counter(emitter.DefineSeries("railwatch_optics_read_errors_total", MetricKind::kCounter,
                                         {{"what", what}}),
                    read_errors(what), t);
  }
  emitter.Gauge(emitter.DefineSeries("railwatch_optics_modules_absent", MetricKind::kGauge, {}),
                static_cast<double>(modules_absent_), t);
}

absl::Status OpticsCollector::Collect(Emitter& emitter) {
  const absl::Time now = clock_.Now();
  if (now >= next_rescan_) {
    Discover();
    next_rescan_ = now + options_.rescan_interval;
  }
  const int64_t t = absl::ToUnixNanos(now);
  for (Netdev& netdev : netdevs_) ReadSpeed(netdev, emitter, t);
  if (now < next_module_) return absl::OkStatus();
  next_module_ = now + options_.module_interval;

  modules_absent_ = 0;
  size_t read = 0, failed = 0;
  std::string first_error;
  for (Netdev& netdev : netdevs_) {
    const Outcome module = ReadModule(netdev, emitter, t);
    const Outcome fec = ReadFec(netdev, emitter, t);
    for (auto [outcome, error] :
         {std::pair{module, &netdev.last_module_error}, std::pair{fec, &netdev.last_fec_error}}) {
      if (outcome == Outcome::kRead) ++read;
      if (outcome == Outcome::kFailed && failed++ == 0) first_error = *error;
    }
  }
  EmitSelf(emitter, t);
  if (failed > 0 && read == 0) {
    return absl::UnavailableError(
        absl::StrCat("every optics read failed (", failed, "), first: ", first_error));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Collector>> MakeOpticsCollector(const OpticsCollectorSetup& setup,
                                                               const Clock& clock) {
  if (setup.mode != "auto" && setup.mode != "on" && setup.mode != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--optics=", setup.mode, ": expected auto, on or off"));
  }
  if (setup.interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--optics_interval must be positive");
  }
  if (setup.mode == "off") return nullptr;
  const bool real_host = setup.sysfs_root == "/sys";
  if (setup.mode == "auto" && setup.dir.empty() && !real_host) return nullptr;

  absl::StatusOr<NetdevSelector> selector =
      NetdevSelector::Create({setup.sysfs_root, setup.netdevs});
  if (!selector.ok()) return selector.status();
  std::unique_ptr<ModuleBackend> backend;
  if (!setup.dir.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(setup.dir, ec)) {
      spdlog::warn("--optics_dir={}: no such directory (yet); its netdevs have no modules",
                   setup.dir);
    }
    backend = std::make_unique<DirModuleBackend>(setup.dir);
  } else {
    absl::StatusOr<std::unique_ptr<KernelModuleBackend>> kernel = KernelModuleBackend::Create();
    if (!kernel.ok()) {
      spdlog::warn("optics off: {}", kernel.status().message());
      return nullptr;
    }
    if (!(*kernel)->has_netlink()) {
      spdlog::info(
          "optics: no ethtool netlink family (kernel before 5.6): modules through "
          "SIOCETHTOOL, no FEC statistics");
    }
    backend = *std::move(kernel);
  }
  OpticsCollector::Options options;
  options.sysfs_root = setup.sysfs_root;
  options.module_interval = setup.interval;
  options.rescan_interval = setup.rescan_interval;
  options.defer_to_ethtool = setup.ethtool;
  return std::unique_ptr<Collector>(std::make_unique<OpticsCollector>(
      std::move(options), *std::move(selector), std::move(backend), clock));
}

}  // namespace railwatch
