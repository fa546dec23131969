#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "optics/eeprom.h"

namespace railwatch {

// A netdev's FEC statistics, as ETHTOOL_MSG_FEC_GET gives them (`ethtool -I --show-fec`).
struct FecStats {
  // The active encoding: "RS", "BaseR", "LLRS", "Off"; "" when the netdev does not say.
  std::string active_mode;
  struct Counter {
    std::optional<uint64_t> total;  // absent: the driver does not count it
    std::vector<uint64_t> lanes;    // per PHY lane, lane 1 first, where the driver counts so
  };
  Counter corrected_blocks, uncorrectable_blocks, corrected_bits;
  // What could not be read, "SOURCE:LINE: why" (the dir backend's `fec` file); the rest is
  // used.
  std::vector<std::string> problems;
};

// Where module EEPROMs and FEC statistics come from: the kernel (KernelModuleBackend, generic
// netlink with the SIOCETHTOOL ioctl as fallback) or the simulator's files (DirModuleBackend,
// the agent's --optics_dir).
class ModuleBackend {
 public:
  virtual ~ModuleBackend() = default;
  // The pages of `netdev`'s module that its decoder needs (optics::NextPageReads).
  // NotFound: no module in the cage, or the netdev has no module EEPROM at all (veth, virtio,
  // a driver without the operation: EOPNOTSUPP) or is gone (ENODEV): not a failure.
  // PermissionDenied: the agent lacks CAP_NET_ADMIN, which reading a module EEPROM needs.
  // Other errors: the read failed (the module did not answer).
  virtual absl::StatusOr<optics::ModuleEeprom> ReadModule(const std::string& netdev) = 0;
  // NotFound: the netdev reports no FEC (EOPNOTSUPP, ENODEV).
  virtual absl::StatusOr<FecStats> ReadFec(const std::string& netdev) = 0;
  // The netdev's driver as `ethtool -i` names it ("mlx5_core"); "" when unknown.
  virtual std::string Driver(const std::string& netdev) = 0;
};

}  // namespace railwatch
