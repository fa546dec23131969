#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collectors/optics_backend.h"

namespace railwatch {

// Module EEPROMs and FEC statistics from the kernel:
//
// - ETHTOOL_MSG_MODULE_EEPROM_GET over generic netlink (family "ethtool", kernel 5.13+): 128
//   bytes at a time by I2C address, page and bank, which CMIS needs (pages 01h, 02h, 11h);
//   the pages asked for are optics::NextPageReads'. A page other than 00h that cannot be read
//   is gone without (the decoder needs only 00h).
// - Where the kernel has no such message, or the driver answers EOPNOTSUPP to it, the legacy
//   SIOCETHTOOL ETHTOOL_GMODULEINFO + ETHTOOL_GMODULEEEPROM: the whole EEPROM as the driver
//   lays it out (SFF-8079 256 bytes, SFF-8472 A0h + A2h 512, SFF-8636 page 00h and pages 01h
//   to 03h up to 640).
// - ETHTOOL_MSG_FEC_GET with ETHTOOL_FLAG_STATS (kernel 5.14+): the active encoding and the
//   corrected, uncorrectable and corrected-bit counters, per lane where the driver has them.
// - ETHTOOL_GDRVINFO for the driver.
//
// Reading a module EEPROM needs CAP_NET_ADMIN (in the netdev's network namespace); FEC and the
// driver do not. EOPNOTSUPP (veth, virtio, a driver without module access) and ENODEV (no
// module, or the netdev went) are NotFound, as optics_backend.h says. Sockets belong to the
// network namespace of the thread that called Create().
class KernelModuleBackend final : public ModuleBackend {
 public:
  static absl::StatusOr<std::unique_ptr<KernelModuleBackend>> Create();
  ~KernelModuleBackend() override;

  absl::StatusOr<optics::ModuleEeprom> ReadModule(const std::string& netdev) override;
  absl::StatusOr<FecStats> ReadFec(const std::string& netdev) override;
  std::string Driver(const std::string& netdev) override;

  // False on kernels without the "ethtool" generic netlink family (before 5.6): modules then
  // come from the ioctl alone, and there are no FEC statistics.
  bool has_netlink() const;

 private:
  struct Impl;
  explicit KernelModuleBackend(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace railwatch
