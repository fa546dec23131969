#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/link_netdevs.h"
#include "collectors/optics_backend.h"
#include "collectors/pread_file.h"
#include "common/clock.h"
#include "optics/module.h"

namespace railwatch {

// The selected netdevs' pluggable modules, FEC statistics and link speed (docs/LINK_HEALTH.md,
// "Host optics" and "FEC and BER"):
//
// - every `module_interval` (--optics_interval, 10 s: a module read is a few I2C transfers of
//   128 bytes, milliseconds each): each netdev's module EEPROM through the ModuleBackend,
//   decoded (optics/eeprom.h) into fabric_optics_temperature_celsius,
//   fabric_optics_supply_voltage_volts, fabric_optics_tx_bias_milliamperes{lane},
//   fabric_optics_tx_power_dbm{lane}, fabric_optics_rx_power_dbm{lane},
//   fabric_optics_threshold{quantity,level}, fabric_optics_alarm_flags{flags} and
//   fabric_optics_module_info{form_factor,spec,vendor,part_number,serial,media}; and its FEC
//   statistics into fabric_netdev_fec_{corrected,uncorrectable}_blocks_total,
//   fabric_netdev_fec_corrected_bits_total, their per-lane fabric_netdev_fec_lane_* and
//   fabric_netdev_fec_mode_info{mode}. A FEC counter the vocabulary maps from `ethtool -S` for
//   the netdev's driver is left to the ethtool collector while `defer_to_ethtool` (one series,
//   one source);
// - every cycle: fabric_netdev_speed_bytes_per_second from <sysfs_root>/class/net/<if>/speed
//   (opened once, pread), absent while the link is down;
// - self-metrics railwatch_optics_module_reads_total, railwatch_optics_read_errors_total{what}
//   and railwatch_optics_modules_absent.
//
// Every series carries `interface` (the agent adds `host`). A netdev without a module (or
// whose driver has no module access: veth) counts as absent, not as an error; a module that
// cannot be read or decoded is logged (once while the reason stays the same) and counted, and
// the other netdevs go on. The collector fails a cycle only when every module and FEC read
// that found something failed.
// Netdevs are listed again every `rescan_interval`.
class OpticsCollector final : public Collector {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    absl::Duration module_interval = absl::Seconds(10);
    absl::Duration rescan_interval = absl::Seconds(30);
    bool defer_to_ethtool = true;
  };

  OpticsCollector(Options options, NetdevSelector selector, std::unique_ptr<ModuleBackend> backend,
                  const Clock& clock);

  std::string_view name() const override { return "optics"; }
  absl::Status Collect(Emitter& emitter) override;

  // Totals since start (the self-metrics' values), for tests and logs.
  uint64_t module_reads() const { return module_reads_; }
  uint64_t read_errors(const std::string& what) const;
  size_t modules_absent() const { return modules_absent_; }
  size_t netdevs() const { return netdevs_.size(); }

 private:
  struct Netdev {
    std::string name;
    std::optional<PreadFile> speed;
    std::optional<uint32_t> speed_id;
    // FEC counters left to the ethtool collector: corrected blocks, uncorrectable, bits.
    bool fec_deferred[3] = {false, false, false};
    std::string last_module_error, last_fec_error;
    std::vector<std::string> last_fec_problems;
    bool had_module = false;
  };

  enum class Outcome { kAbsent, kRead, kFailed };

  void Discover();
  void ReadSpeed(Netdev& netdev, Emitter& emitter, int64_t t);
  Outcome ReadModule(Netdev& netdev, Emitter& emitter, int64_t t);
  Outcome ReadFec(Netdev& netdev, Emitter& emitter, int64_t t);
  void EmitModule(const Netdev& netdev, const optics::ModuleReading& m, Emitter& emitter,
                  int64_t t);
  void CountError(const std::string& what, uint64_t n = 1);
  void EmitSelf(Emitter& emitter, int64_t t);

  Options options_;
  NetdevSelector selector_;
  std::unique_ptr<ModuleBackend> backend_;
  const Clock& clock_;
  std::vector<Netdev> netdevs_;
  absl::Time next_rescan_ = absl::InfinitePast();
  absl::Time next_module_ = absl::InfinitePast();
  uint64_t module_reads_ = 0;
  std::map<std::string, uint64_t> read_errors_;  // by what: module, fec, speed
  size_t modules_absent_ = 0;
};

// What the agent's --optics, --optics_dir and --optics_interval flags say, with the netdev
// selection and cadence the other netdev collectors use.
struct OpticsCollectorSetup {
  // auto: the kernel on a real host (sysfs_root /sys), the files when `dir` is given, else
  // off (a simulated tree is not this machine's modules); on; off.
  std::string mode = "auto";
  std::string dir;  // DirModuleBackend's directory (--optics_dir)
  absl::Duration interval = absl::Seconds(10);
  std::string sysfs_root = "/sys";
  std::string netdevs;  // NetdevSelector pattern (--netdevs)
  absl::Duration rescan_interval = absl::Seconds(30);
  bool ethtool = true;  // the ethtool collector runs: defer its FEC counters to it
};

// The collector the setup asks for; nullptr when off. InvalidArgument for a bad mode,
// interval or netdev pattern.
absl::StatusOr<std::unique_ptr<Collector>> MakeOpticsCollector(const OpticsCollectorSetup& setup,
                                                               const Clock& clock);

}  // namespace railwatch
