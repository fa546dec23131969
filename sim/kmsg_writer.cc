#include "sim/kmsg_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace railwatch::sim {
namespace {

absl::Status WriteAll(const std::string& path, std::string_view data, bool truncate) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND),
                        0644);
  if (fd < 0) return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
  // One write() per call: a reader sees whole records (appends of a few hundred bytes to a
  // local file are not split).
  const ssize_t n = ::write(fd, data.data(), data.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(data.size())) {
    return absl::UnavailableError(absl::StrCat(path, ": ", n < 0 ? std::strerror(err) : "short write"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string SimNicPciAddress(int nic) { return absl::StrFormat("0000:%02x:00.0", 0x18 + nic * 0x10); }

KmsgWriter::KmsgWriter(std::string path, absl::Time boot) : path_(std::move(path)), boot_(boot) {}

absl::Status KmsgWriter::Create(int nics) {
  if (absl::Status s = WriteAll(path_, "", /*truncate=*/true); !s.ok()) return s;
  const absl::Time t = boot_ + absl::Seconds(5);
  for (int nic = 0; nic < nics; ++nic) {
    const std::string pci = SimNicPciAddress(nic);
    if (absl::Status s = Append(t, 6, absl::StrCat("mlx5_core ", pci, ": firmware version: 28.39.1002"), pci);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Append(t, 6,
                                absl::StrCat("mlx5_core ", pci,
                                             ": 252.048 Gb/s available PCIe bandwidth (16.0 GT/s "
                                             "PCIe x16 link)"),
                                pci);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status KmsgWriter::Append(absl::Time now, int level, const std::string& message,
                                const std::string& pci) {
  // Facility kernel (0): the priority is the level. Timestamps in microseconds since boot.
  const int64_t us = std::max<int64_t>(0, absl::ToInt64Microseconds(now - boot_));
  std::string record = absl::StrCat(level, ",", sequence_++, ",", us, ",-;", message, "\n");
  if (!pci.empty()) absl::StrAppend(&record, " SUBSYSTEM=pci\n DEVICE=+pci:", pci, "\n");
  return WriteAll(path_, record, /*truncate=*/false);
}

absl::Status KmsgWriter::Mlx5HealthCompromised(absl::Time now, const std::string& pci) {
  const std::string p = absl::StrCat("mlx5_core ", pci, ": ");
  // As mlx5_core 6.x prints them (shared/realworld kmsg_01).
  const std::string lines[] = {
      absl::StrCat(p, "poll_health:801:(pid 0): device's health compromised - reached miss count"),
      absl::StrCat(p, "print_health_info:431:(pid 0): Health issue observed, firmware internal "
                      "error, severity(3) ERROR:"),
      absl::StrCat(p, "print_health_info:435:(pid 0): assert_var[0] 0x0521945b"),
      absl::StrCat(p, "print_health_info:438:(pid 0): assert_exit_ptr 0x21492f38"),
      absl::StrCat(p, "print_health_info:439:(pid 0): assert_callra 0x2102d5f0"),
      absl::StrCat(p, "print_health_info:440:(pid 0): fw_ver 28.39.1002"),
      absl::StrCat(p, "print_health_info:443:(pid 0): hw_id 0x00000212"),
      absl::StrCat(p, "print_health_info:445:(pid 0): severity 3 (ERROR)"),
      absl::StrCat(p, "print_health_info:446:(pid 0): irisc_index 3"),
      absl::StrCat(p, "print_health_info:447:(pid 0): synd 0x1: firmware internal error"),
      absl::StrCat(p, "print_health_info:449:(pid 0): ext_synd 0x8f7a"),
  };
  for (const std::string& line : lines) {
    if (absl::Status s = Append(now, 3, line, pci); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status KmsgWriter::AerCorrected(absl::Time now, const std::string& pci,
                                      const std::string& root_port) {
  // The AER driver's wording since Linux 5.x (shared/realworld kmsg_08).
  const std::string port = absl::StrCat("pcieport ", root_port, ": ");
  const std::string dev = absl::StrCat("mlx5_core ", pci, ": ");
  const std::string lines[] = {
      absl::StrCat(port, "AER: Correctable error message received from ", pci),
      absl::StrCat(dev, "PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)"),
      absl::StrCat(dev, "  device [15b3:1021] error status/mask=00000001/00002000"),
      absl::StrCat(dev, "   [ 0] RxErr                  (First)"),
  };
  for (size_t i = 0; i < std::size(lines); ++i) {
    if (absl::Status s = Append(now, 4, lines[i], i == 0 ? root_port : pci); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace railwatch::sim
