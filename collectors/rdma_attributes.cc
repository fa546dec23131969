#include "collectors/rdma_attributes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/text.h"

namespace railwatch {
namespace fs = std::filesystem;

namespace {

std::string ReadAttribute(const fs::path& path) {
  absl::StatusOr<std::string> text = ReadFile(path.string());
  if (!text.ok()) return "";
  return std::string(absl::StripAsciiWhitespace(FirstLine(*text)));
}

std::string LinkTargetBasename(const fs::path& link) {
  std::error_code ec;
  fs::path target = fs::read_symlink(link, ec);
  if (ec) return "";
  return target.filename().string();
}

std::vector<std::string> SortedEntryNames(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

RdmaDeviceInfo ReadRdmaDeviceInfo(const std::string& device_dir) {
  const fs::path dir(device_dir);
  RdmaDeviceInfo info;
  info.name = dir.filename().string();
  info.fw_ver = ReadAttribute(dir / "fw_ver");
  info.board_id = ReadAttribute(dir / "board_id");
  info.hca_type = ReadAttribute(dir / "hca_type");
  info.node_guid = ReadAttribute(dir / "node_guid");
  // device -> ../../../0000:3b:00.0 (on real systems a path under /sys/devices/pci...).
  info.pci_address = LinkTargetBasename(dir / "device");
  info.driver = LinkTargetBasename(dir / "device" / "driver");
  std::string numa = ReadAttribute(dir / "device" / "numa_node");
  int numa_node;
  if (absl::SimpleAtoi(numa, &numa_node) && numa_node >= 0) info.numa_node = numa;
  info.netdevs = SortedEntryNames(dir / "device" / "net");
  return info;
}

std::vector<std::string> ReadPortNetdevs(const std::string& port_dir) {
  // One file per GID index, each holding the netdev name; a port with 256 GID slots names the
  // same netdev (and its VLANs) many times.
  std::vector<std::string> out;
  const fs::path ndevs = fs::path(port_dir) / "gid_attrs" / "ndevs";
  for (const std::string& entry : SortedEntryNames(ndevs)) {
    std::string name = ReadAttribute(ndevs / entry);
    if (!name.empty()) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::optional<NumberedState> ParseNumberedState(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  size_t colon = text.find(':');
  if (colon == absl::string_view::npos) return std::nullopt;
  NumberedState state;
  // The kernel prints an 8-bit code ("%d: %s"); anything else is not a state (found by
  // tests/fuzz/sysfs_fuzz: "-5: LinkUp" became a port state of -5).
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(text.substr(0, colon)), &state.number) ||
      state.number < 0 || state.number > 255) {
    return std::nullopt;
  }
  state.name = std::string(absl::StripAsciiWhitespace(text.substr(colon + 1)));
  return state;
}

std::optional<double> ParseRateBitsPerSecond(absl::string_view text) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(absl::StripAsciiWhitespace(text), ' ', absl::SkipEmpty());
  if (parts.size() < 2) return std::nullopt;
  double value;
  if (!absl::SimpleAtod(parts[0], &value) || value < 0) return std::nullopt;
  double bits;
  if (parts[1] == "Gb/sec") {
    bits = value * 1e9;
  } else if (parts[1] == "Mb/sec") {
    bits = value * 1e6;
  } else {
    return std::nullopt;
  }
  // SimpleAtod reads "inf", "nan" and 1e400 too (found by tests/fuzz/sysfs_fuzz): a port
  // rate that is not a number, or beyond any port's, is no rate.
  if (!std::isfinite(bits) || bits > kMaxPortBitsPerSecond) return std::nullopt;
  return bits;
}

std::optional<double> VerbsRateBitsPerSecond(int active_speed, int active_width) {
  // Per-lane data rates as the kernel's sysfs `rate` prints them (drivers/infiniband/core/
  // sysfs.c rate_show), and lanes per IB_WIDTH_* code.
  double lane_gbps;
  switch (active_speed) {
    case 1: lane_gbps = 2.5; break;   // SDR
    case 2: lane_gbps = 5; break;     // DDR
    case 4: lane_gbps = 10; break;    // QDR
    case 8: lane_gbps = 10; break;    // FDR10
    case 16: lane_gbps = 14; break;   // FDR
    case 32: lane_gbps = 25; break;   // EDR
    case 64: lane_gbps = 50; break;   // HDR
    case 128: lane_gbps = 100; break; // NDR
    default: return std::nullopt;
  }
  int lanes;
  switch (active_width) {
    case 1: lanes = 1; break;
    case 2: lanes = 4; break;
    case 4: lanes = 8; break;
    case 8: lanes = 12; break;
    case 16: lanes = 2; break;
    default: return std::nullopt;
  }
  return lane_gbps * lanes * 1e9;
}

}  // namespace railwatch
