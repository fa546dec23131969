#include "collectors/optics_kernel.h"

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/labels.h"

namespace railwatch {
// Named, not anonymous: the unity build puts this file in one unit with ethtool_ioctl.cc.
namespace optics_kernel {

absl::Status ErrnoStatus(int err, const std::string& netdev, std::string_view what) {
  std::string msg = absl::StrCat(netdev, ": ", AsAbsl(what), ": ", std::strerror(err));
  switch (err) {
    case EOPNOTSUPP:
    case ENODEV:
    case ENXIO:
      return absl::NotFoundError(msg);
    case EPERM:
    case EACCES:
      return absl::PermissionDeniedError(
          absl::StrCat(msg, " (reading a module needs CAP_NET_ADMIN)"));
    default:
      return absl::UnavailableError(msg);
  }
}

// 0 or the errno of one SIOCETHTOOL ioctl on `netdev`.
int Ioctl(int fd, const std::string& netdev, void* data) {
  ifreq ifr = {};
  std::memcpy(ifr.ifr_name, netdev.data(), std::min(netdev.size(), size_t{IFNAMSIZ - 1}));
  ifr.ifr_data = static_cast<char*>(data);
  while (::ioctl(fd, SIOCETHTOOL, &ifr) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

// One request and its reply on a generic netlink socket of the "ethtool" family.
struct Exchange {
  int err = 0;  // errno the kernel answered, or of the socket
  bool done = false;
  std::function<void(nlmsghdr*)> on_reply;
};

int OnValid(nl_msg* msg, void* arg) {
  auto* x = static_cast<Exchange*>(arg);
  if (x->on_reply) x->on_reply(nlmsg_hdr(msg));
  return NL_OK;
}
int OnAck(nl_msg*, void* arg) {
  static_cast<Exchange*>(arg)->done = true;
  return NL_STOP;
}
int OnError(sockaddr_nl*, nlmsgerr* e, void* arg) {
  auto* x = static_cast<Exchange*>(arg);
  x->err = e->error < 0 ? -e->error : e->error;
  x->done = true;
  return NL_STOP;
}

}  // namespace optics_kernel

namespace ok = optics_kernel;

struct KernelModuleBackend::Impl {
  int ioctl_fd = -1;
  nl_sock* sock = nullptr;
  int family = -1;
  nl_cb* cb = nullptr;

  ~Impl() {
    Disconnect();
    if (ioctl_fd >= 0) ::close(ioctl_fd);
  }

  void Disconnect() {
    if (cb != nullptr) nl_cb_put(cb);
    if (sock != nullptr) nl_socket_free(sock);
    cb = nullptr;
    sock = nullptr;
  }

  // Connects (again, after a socket failure); false when the kernel has no "ethtool" family.
  bool Connect() {
    if (sock != nullptr) return true;
    sock = nl_socket_alloc();
    if (sock == nullptr) return false;
    if (genl_connect(sock) < 0) {
      Disconnect();
      return false;
    }
    family = genl_ctrl_resolve(sock, ETHTOOL_GENL_NAME);
    if (family < 0) {
      Disconnect();
      return false;
    }
    // A reply comes at once; a driver stuck behind the RTNL lock must not hold the agent.
    timeval timeout = {5, 0};
    setsockopt(nl_socket_get_fd(sock), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    cb = nl_cb_alloc(NL_CB_DEFAULT);
    if (cb == nullptr) {
      Disconnect();
      return false;
    }
    return true;
  }

  // Sends `cmd` for `netdev` (header attribute `header`, with `flags`) plus what `put` adds,
  // and hands each reply message to `on_reply`. 0 or an errno.
  int Request(uint8_t cmd, int header, const std::string& netdev, uint32_t flags,
              const std::function<bool(nl_msg*)>& put, std::function<void(nlmsghdr*)> on_reply) {
    if (!Connect()) return EOPNOTSUPP;
    nl_msg* msg = nlmsg_alloc();
    if (msg == nullptr) return ENOMEM;
    bool ok = genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST | NLM_F_ACK, cmd,
                          ETHTOOL_GENL_VERSION) != nullptr;
    nlattr* nest = ok ? nla_nest_start(msg, header) : nullptr;
    ok = nest != nullptr && nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, netdev.c_str()) == 0 &&
         (flags == 0 || nla_put_u32(msg, ETHTOOL_A_HEADER_FLAGS, flags) == 0);
    if (ok) nla_nest_end(msg, nest);
    ok = ok && (!put || put(msg));
    if (!ok) {
      nlmsg_free(msg);
      return EMSGSIZE;
    }
    const int sent = nl_send_auto(sock, msg);
    nlmsg_free(msg);
    if (sent < 0) {
      Disconnect();
      return EIO;
    }
    ok::Exchange x;
    x.on_reply = std::move(on_reply);
    nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, ok::OnValid, &x);
    nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, ok::OnAck, &x);
    nl_cb_err(cb, NL_CB_CUSTOM, ok::OnError, &x);
    while (!x.done) {
      const int r = nl_recvmsgs(sock, cb);
      if (r < 0 && !x.done) {
        // A timeout or a desynchronised socket: start afresh next time.
        Disconnect();
        return ETIMEDOUT;
      }
    }
    return x.err;
  }

  // One read of a module page; 0 or an errno.
  int ReadPage(const std::string& netdev, const optics::PageRead& read, std::vector<uint8_t>& out) {
    out.clear();
    const int err = Request(
        ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_A_MODULE_EEPROM_HEADER, netdev, 0,
        [&](nl_msg* msg) {
          return nla_put_u32(msg, ETHTOOL_A_MODULE_EEPROM_OFFSET, read.offset) == 0 &&
                 nla_put_u32(msg, ETHTOOL_A_MODULE_EEPROM_LENGTH, read.length) == 0 &&
                 nla_put_u8(msg, ETHTOOL_A_MODULE_EEPROM_PAGE, read.page) == 0 &&
                 nla_put_u8(msg, ETHTOOL_A_MODULE_EEPROM_BANK, 0) == 0 &&
                 nla_put_u8(msg, ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, read.i2c_address) == 0;
        },
        [&](nlmsghdr* hdr) {
          nlattr* tb[ETHTOOL_A_MODULE_EEPROM_MAX + 1] = {};
          if (genlmsg_parse(hdr, 0, tb, ETHTOOL_A_MODULE_EEPROM_MAX, nullptr) < 0) return;
          if (nlattr* data = tb[ETHTOOL_A_MODULE_EEPROM_DATA]) {
            const auto* bytes = static_cast<const uint8_t*>(nla_data(data));
            out.assign(bytes, bytes + nla_len(data));
          }
        });
    if (err == 0 && out.size() != read.length) return EIO;
    return err;
  }

  // The legacy path: the whole EEPROM in the driver's layout.
  absl::StatusOr<optics::ModuleEeprom> ReadLegacy(const std::string& netdev) {
    ethtool_modinfo info = {};
    info.cmd = ETHTOOL_GMODULEINFO;
    if (int err = ok::Ioctl(ioctl_fd, netdev, &info); err != 0) {
      return ok::ErrnoStatus(err, netdev, "ETHTOOL_GMODULEINFO");
    }
    const uint32_t len = std::min<uint32_t>(info.eeprom_len, 1024);
    if (len == 0) return absl::NotFoundError(absl::StrCat(netdev, ": module EEPROM of 0 bytes"));
    std::vector<uint64_t> storage((sizeof(ethtool_eeprom) + len + 7) / 8);
    auto* request = reinterpret_cast<ethtool_eeprom*>(storage.data());
    request->cmd = ETHTOOL_GMODULEEEPROM;
    request->offset = 0;
    request->len = len;
    if (int err = ok::Ioctl(ioctl_fd, netdev, request); err != 0) {
      return ok::ErrnoStatus(err, netdev, "ETHTOOL_GMODULEEEPROM");
    }
    const uint8_t* data = request->data;
    const uint32_t got = std::min(request->len, len);
    optics::ModuleEeprom e;
    e.page00.assign(data, data + std::min<uint32_t>(got, 256));
    if (info.type == ETH_MODULE_SFF_8472) {
      if (got > 256) e.a2.assign(data + 256, data + std::min<uint32_t>(got, 512));
    } else if (info.type != ETH_MODULE_SFF_8079) {
      // SFF-8636 and SFF-8436 (and CMIS, which drivers lay out alike): upper pages 01h, 02h
      // and 03h after page 00h, 128 bytes each.
      for (uint8_t page = 1; page <= 3 && 256u + 128u * page <= got; ++page) {
        const uint8_t* from = data + 256 + 128 * (page - 1);
        e.upper[page].assign(from, from + 128);
      }
    }
    return e;
  }
};

KernelModuleBackend::KernelModuleBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KernelModuleBackend::~KernelModuleBackend() = default;

absl::StatusOr<std::unique_ptr<KernelModuleBackend>> KernelModuleBackend::Create() {
  auto impl = std::make_unique<Impl>();
  impl->ioctl_fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (impl->ioctl_fd < 0) impl->ioctl_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (impl->ioctl_fd < 0) {
    return absl::UnavailableError(absl::StrCat("socket for SIOCETHTOOL: ", std::strerror(errno)));
  }
  impl->Connect();  // may fail: an old kernel; the ioctl serves modules then
  return std::unique_ptr<KernelModuleBackend>(new KernelModuleBackend(std::move(impl)));
}

bool KernelModuleBackend::has_netlink() const { return impl_->Connect(); }

absl::StatusOr<optics::ModuleEeprom> KernelModuleBackend::ReadModule(const std::string& netdev) {
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    return absl::InvalidArgumentError(absl::StrCat("bad netdev name \"", netdev, "\""));
  }
  optics::ModuleEeprom eeprom;
  std::vector<optics::PageRead> tried;
  std::vector<uint8_t> data;
  // Page 00h (two halves), then what its identifier needs: a few rounds at most.
  for (int round = 0; round < 6; ++round) {
    const std::vector<optics::PageRead> reads = optics::NextPageReads(eeprom, tried);
    if (reads.empty()) break;
    for (const optics::PageRead& read : reads) {
      tried.push_back(read);
      const int err = impl_->ReadPage(netdev, read, data);
      if (err == 0) {
        optics::StorePageRead(read, std::move(data), eeprom);
        continue;
      }
      // Pages other than 00h are optional, and so is the upper half of an SFP's A0h (vendor
      // data): go without them.
      if (read.page != 0 || read.i2c_address != 0x50) continue;
      if (read.offset == 128 && !eeprom.page00.empty() &&
          optics::SpecOfIdentifier(eeprom.page00[0]) == optics::ModuleSpec::kSff8472) {
        continue;
      }
      if (err == EOPNOTSUPP && eeprom.page00.empty()) return impl_->ReadLegacy(netdev);
      return ok::ErrnoStatus(err, netdev,
                             absl::StrCat("module EEPROM page 00h bytes ", read.offset, "-",
                                          read.offset + read.length - 1));
    }
  }
  return eeprom;
}

absl::StatusOr<FecStats> KernelModuleBackend::ReadFec(const std::string& netdev) {
  FecStats stats;
  const int err = impl_->Request(
      ETHTOOL_MSG_FEC_GET, ETHTOOL_A_FEC_HEADER, netdev, ETHTOOL_FLAG_STATS, nullptr,
      [&](nlmsghdr* hdr) {
        nlattr* tb[ETHTOOL_A_FEC_MAX + 1] = {};
        if (genlmsg_parse(hdr, 0, tb, ETHTOOL_A_FEC_MAX, nullptr) < 0) return;
        if (nlattr* active = tb[ETHTOOL_A_FEC_ACTIVE]) {
          switch (nla_get_u32(active)) {
            case ETHTOOL_LINK_MODE_FEC_NONE_BIT:
              stats.active_mode = "Off";
              break;
            case ETHTOOL_LINK_MODE_FEC_RS_BIT:
              stats.active_mode = "RS";
              break;
            case ETHTOOL_LINK_MODE_FEC_BASER_BIT:
              stats.active_mode = "BaseR";
              break;
            case ETHTOOL_LINK_MODE_FEC_LLRS_BIT:
              stats.active_mode = "LLRS";
              break;
            default:
              break;
          }
        }
        nlattr* st[ETHTOOL_A_FEC_STAT_MAX + 1] = {};
        if (tb[ETHTOOL_A_FEC_STATS] == nullptr ||
            nla_parse_nested(st, ETHTOOL_A_FEC_STAT_MAX, tb[ETHTOOL_A_FEC_STATS], nullptr) < 0) {
          return;
        }
        // Each: an array of u64, the total then one per lane (empty: not counted).
        for (auto [type, counter] :
             {std::pair{ETHTOOL_A_FEC_STAT_CORRECTED, &stats.corrected_blocks},
              std::pair{ETHTOOL_A_FEC_STAT_UNCORR, &stats.uncorrectable_blocks},
              std::pair{ETHTOOL_A_FEC_STAT_CORR_BITS, &stats.corrected_bits}}) {
          nlattr* a = st[type];
          if (a == nullptr) continue;
          const size_t n = static_cast<size_t>(nla_len(a)) / sizeof(uint64_t);
          const auto* bytes = static_cast<const uint8_t*>(nla_data(a));
          for (size_t i = 0; i < n; ++i) {
            uint64_t v = 0;
            std::memcpy(&v, bytes + i * sizeof(v), sizeof(v));
            if (i == 0) {
              counter->total = v;
            } else {
              counter->lanes.push_back(v);
            }
          }
        }
      });
  if (err != 0) return ok::ErrnoStatus(err, netdev, "ETHTOOL_MSG_FEC_GET");
  return stats;
}

std::string KernelModuleBackend::Driver(const std::string& netdev) {
  ethtool_drvinfo info = {};
  info.cmd = ETHTOOL_GDRVINFO;
  if (ok::Ioctl(impl_->ioctl_fd, netdev, &info) != 0) return "";
  return std::string(info.driver, strnlen(info.driver, sizeof(info.driver)));
}

}  // namespace railwatch
