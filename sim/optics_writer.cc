// What the simulated NICs' modules and PHYs show the host agent's optics collector
// (collectors/optics_dir_backend.h): each module's EEPROM pages, as the same encoder a test
// round-trips writes them (optics/eeprom_encode.h), and the PHY's FEC statistics, under
// <root>/<host>/optics/<netdev>/. Every file is written whole and renamed into place.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "optics/eeprom_encode.h"
#include "sim/nic_port.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {
namespace fs = std::filesystem;
namespace {

absl::Status ReplaceFile(const fs::path& path, std::string_view data) {
  const std::string tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(tmp, ": ", std::strerror(errno)));
  const ssize_t n = ::write(fd, data.data(), data.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(data.size())) {
    return absl::UnavailableError(absl::StrCat(tmp, ": ", n < 0 ? std::strerror(err) : "short write"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat(path.string(), ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

std::string_view Bytes(const std::vector<uint8_t>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size()};
}

}  // namespace

absl::Status SysfsFabric::WriteOptics(absl::Time now) {
  if (!options_.optics || now - last_optics_ < options_.optics_interval) return absl::OkStatus();
  last_optics_ = now;
  for (auto& port : ports_) {
    NicPort& p = *port;
    if (p.gone) continue;
    const fs::path dir =
        fs::path(HostRoot(HostName(p.host))) / "optics" / p.netdev;
    const fs::path module = dir / "module";
    if (!p.optics_written) {
      std::error_code ec;
      fs::create_directories(module, ec);
      if (ec) return absl::UnavailableError(absl::StrCat(module.string(), ": ", ec.message()));
      if (absl::Status s = ReplaceFile(dir / "driver", "mlx5_core\n"); !s.ok()) return s;
    }
    absl::StatusOr<optics::ModuleEeprom> eeprom = optics::EncodeEeprom(p.optics.Read(rng_, p.util));
    if (!eeprom.ok()) return eeprom.status();
    if (absl::Status s = ReplaceFile(module / "page00", Bytes(eeprom->page00)); !s.ok()) return s;
    for (const auto& [page, bytes] : eeprom->upper) {
      // Advertising and thresholds never change: written once.
      const bool lanes = page >= 0x10;
      if (p.optics_written && !lanes) continue;
      if (absl::Status s = ReplaceFile(module / absl::StrFormat("page%02x", page), Bytes(bytes));
          !s.ok()) {
        return s;
      }
    }
    p.optics_written = true;
    // mlx5's FEC statistics (ETHTOOL_MSG_FEC_GET) have blocks, not bits: its corrected bits
    // are rx_corrected_bits_phy in ethtool -S.
    if (absl::Status s = ReplaceFile(
            dir / "fec", absl::StrFormat("active: RS\ncorrected_blocks: %d\nuncorrectable_blocks: %d\n",
                                         p.fec_corrected_blocks, p.fec_uncorrectable_blocks));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace railwatch::sim
