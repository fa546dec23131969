#include "collectors/ethtool_ioctl.h"

#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace railwatch {

struct IoctlEthtoolBackend::Socket {
  explicit Socket(int fd) : fd(fd) {}
  ~Socket() { ::close(fd); }
  const int fd;
};

namespace {

static_assert(sizeof(ethtool_stats) == sizeof(uint64_t),
              "GSTATS values must start one uint64_t into the buffer");

// Kernels without a December 2025 fix to net/ethtool/ioctl.c (backported to the stable trees)
// size what GSTRINGS and GSTATS write by the count they have *now*, not by the count the caller
// passes, so a netdev that gained statistics since it was opened (more channels, PFC enabled on
// mlx5) writes past a buffer of the old size. Buffers leave this much room. Either way the
// count written back differs (fixed kernels write 0 and no values), which says "open it again".
size_t Headroom(size_t count) { return 2 * count + 64; }

// 0 or the errno of the SIOCETHTOOL ioctl.
int EthtoolIoctl(int fd, const ifreq& base, void* data) {
  ifreq ifr = base;
  ifr.ifr_data = static_cast<char*>(data);
  while (::ioctl(fd, SIOCETHTOOL, &ifr) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

absl::Status ErrnoStatus(int err, const char* netdev, const char* what) {
  std::string msg = absl::StrCat(netdev, ": ", what, ": ", std::strerror(err));
  switch (err) {
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(msg);
    case EOPNOTSUPP:
      return absl::UnimplementedError(msg);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

class IoctlDevice final : public EthtoolDevice {
 public:
  IoctlDevice(std::shared_ptr<const void> socket, int fd, const ifreq& base, std::string driver,
              std::vector<std::string> names)
      : socket_(std::move(socket)),
        fd_(fd),
        base_(base),
        driver_(std::move(driver)),
        names_(std::move(names)),
        // One uint64_t for the ethtool_stats header, then the values.
        buffer_(1 + Headroom(names_.size())) {}

  const std::string& driver() const override { return driver_; }
  const std::vector<std::string>& stat_names() const override { return names_; }

  absl::StatusOr<std::span<const uint64_t>> Read() override {
    ethtool_stats header = {};
    header.cmd = ETHTOOL_GSTATS;
    header.n_stats = static_cast<uint32_t>(names_.size());
    std::memcpy(buffer_.data(), &header, sizeof(header));
    if (int err = EthtoolIoctl(fd_, base_, buffer_.data()); err != 0) {
      return ErrnoStatus(err, base_.ifr_name, "ETHTOOL_GSTATS");
    }
    std::memcpy(&header, buffer_.data(), sizeof(header));
    if (header.n_stats != names_.size()) {
      return absl::FailedPreconditionError(
          absl::StrCat(base_.ifr_name, ": its statistics changed since they were listed (",
                       names_.size(), " then, GSTATS answered ", header.n_stats, ")"));
    }
    return std::span<const uint64_t>(buffer_.data() + 1, names_.size());
  }

 private:
  std::shared_ptr<const void> socket_;
  const int fd_;
  const ifreq base_;
  const std::string driver_;
  const std::vector<std::string> names_;
  std::vector<uint64_t> buffer_;
};

// The number of ETH_SS_STATS strings, or Unimplemented when the netdev has none.
absl::StatusOr<uint32_t> StatsCount(int fd, const ifreq& base, const ethtool_drvinfo& drvinfo) {
  // ethtool_sset_info followed by one u32 for the one set asked for.
  alignas(ethtool_sset_info) unsigned char buf[sizeof(ethtool_sset_info) + sizeof(uint32_t)] = {};
  ethtool_sset_info info = {};
  info.cmd = ETHTOOL_GSSET_INFO;
  info.sset_mask = uint64_t{1} << ETH_SS_STATS;
  std::memcpy(buf, &info, sizeof(info));
  uint32_t count = 0;
  if (int err = EthtoolIoctl(fd, base, buf); err == EOPNOTSUPP) {
    count = drvinfo.n_stats;  // kernels older than 2.6.33
  } else if (err != 0) {
    return ErrnoStatus(err, base.ifr_name, "ETHTOOL_GSSET_INFO");
  } else {
    std::memcpy(&info, buf, sizeof(info));
    if (info.sset_mask & (uint64_t{1} << ETH_SS_STATS)) {
      std::memcpy(&count, buf + sizeof(info), sizeof(count));
    }
  }
  if (count == 0) {
    return absl::UnimplementedError(absl::StrCat(base.ifr_name, ": no ethtool statistics"));
  }
  return count;
}

absl::StatusOr<std::vector<std::string>> StatNames(int fd, const ifreq& base,
                                                   const ethtool_drvinfo& drvinfo) {
  // A netdev whose count keeps changing under us is retried a few times, then reported.
  for (int attempt = 0; attempt < 3; ++attempt) {
    // Asked again on every attempt: fixed kernels answer a stale count with len 0, and a len
    // of 0 in the request would mean "whatever you have".
    absl::StatusOr<uint32_t> asked = StatsCount(fd, base, drvinfo);
    if (!asked.ok()) return asked.status();
    const uint32_t count = *asked;
    const size_t capacity = Headroom(count);
    std::vector<uint64_t> storage(
        (sizeof(ethtool_gstrings) + capacity * ETH_GSTRING_LEN + sizeof(uint64_t) - 1) /
        sizeof(uint64_t));
    auto* bytes = reinterpret_cast<unsigned char*>(storage.data());
    ethtool_gstrings header = {};
    header.cmd = ETHTOOL_GSTRINGS;
    header.string_set = ETH_SS_STATS;
    header.len = count;
    std::memcpy(bytes, &header, sizeof(header));
    if (int err = EthtoolIoctl(fd, base, bytes); err != 0) {
      return ErrnoStatus(err, base.ifr_name, "ETHTOOL_GSTRINGS");
    }
    std::memcpy(&header, bytes, sizeof(header));
    if (header.len > capacity) {
      return absl::InternalError(absl::StrCat(base.ifr_name, ": statistics grew from ", count,
                                              " to ", header.len, " while reading names"));
    }
    if (header.len != count) continue;
    std::vector<std::string> names;
    names.reserve(count);
    const char* data = reinterpret_cast<const char*>(bytes + sizeof(header));
    for (uint32_t i = 0; i < count; ++i) {
      const char* s = data + size_t{i} * ETH_GSTRING_LEN;
      names.emplace_back(s, strnlen(s, ETH_GSTRING_LEN));
    }
    return names;
  }
  return absl::UnavailableError(
      absl::StrCat(base.ifr_name, ": statistics count kept changing while reading names"));
}

}  // namespace

IoctlEthtoolBackend::IoctlEthtoolBackend(std::shared_ptr<const Socket> socket)
    : socket_(std::move(socket)) {}

IoctlEthtoolBackend::~IoctlEthtoolBackend() = default;

absl::StatusOr<std::unique_ptr<IoctlEthtoolBackend>> IoctlEthtoolBackend::Create() {
  // Any socket will do for SIOCETHTOOL; ethtool(8) tries these in the same order, for kernels
  // built without IPv4.
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("socket for SIOCETHTOOL: ", std::strerror(errno)));
  }
  return std::unique_ptr<IoctlEthtoolBackend>(
      new IoctlEthtoolBackend(std::make_shared<const Socket>(fd)));
}

absl::StatusOr<std::unique_ptr<EthtoolDevice>> IoctlEthtoolBackend::Open(
    const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError(absl::StrCat("bad netdev name \"", netdev, "\""));
  }
  ifreq base = {};
  std::memcpy(base.ifr_name, netdev.data(), netdev.size());
  ethtool_drvinfo drvinfo = {};
  drvinfo.cmd = ETHTOOL_GDRVINFO;
  if (int err = EthtoolIoctl(socket_->fd, base, &drvinfo); err != 0) {
    return ErrnoStatus(err, base.ifr_name, "ETHTOOL_GDRVINFO");
  }
  std::string driver(drvinfo.driver, strnlen(drvinfo.driver, sizeof(drvinfo.driver)));
  absl::StatusOr<std::vector<std::string>> names = StatNames(socket_->fd, base, drvinfo);
  if (!names.ok()) return names.status();
  return std::make_unique<IoctlDevice>(socket_, socket_->fd, base, std::move(driver),
                                       std::move(*names));
}

}  // namespace railwatch
