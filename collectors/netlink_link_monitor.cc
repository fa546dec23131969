#include "collectors/netlink_link_monitor.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace railwatch {
namespace {

// Dump replies come in datagrams of at most 32 KiB (the kernel's cap on its dump
// allocations); notifications are a few KiB.
constexpr size_t kReceiveBufferBytes = 64 * 1024;
// The initial dump is answered at once; this only bounds a kernel that never answers.
constexpr int kDumpReplyTimeoutMs = 10'000;

int64_t RealtimeNanos() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

absl::Status NlError(const char* what, int err) {
  return absl::UnavailableError(absl::StrCat("netlink ", what, ": ", nl_geterror(err)));
}

// nullopt for messages that are not about a link as such (AF_BRIDGE port messages share the
// RTNLGRP_LINK group) or that do not parse.
std::optional<LinkSnapshot> ParseLink(nlmsghdr* hdr) {
  if (hdr->nlmsg_len < NLMSG_LENGTH(sizeof(ifinfomsg))) return std::nullopt;
  const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(hdr));
  if (ifi->ifi_family != AF_UNSPEC) return std::nullopt;
  nlattr* tb[IFLA_MAX + 1] = {};
  if (nlmsg_parse(hdr, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return std::nullopt;
  LinkSnapshot link;
  link.ifindex = ifi->ifi_index;
  link.flags = ifi->ifi_flags;
  if (tb[IFLA_IFNAME] != nullptr) {
    const char* name = static_cast<const char*>(nla_data(tb[IFLA_IFNAME]));
    link.name.assign(name, strnlen(name, nla_len(tb[IFLA_IFNAME])));
  }
  if (tb[IFLA_OPERSTATE] != nullptr) link.operstate = nla_get_u8(tb[IFLA_OPERSTATE]);
  if (tb[IFLA_CARRIER_CHANGES] != nullptr) {
    link.carrier_changes = nla_get_u32(tb[IFLA_CARRIER_CHANGES]);
  }
  if (tb[IFLA_CARRIER_UP_COUNT] != nullptr) {
    link.carrier_up_count = nla_get_u32(tb[IFLA_CARRIER_UP_COUNT]);
  }
  if (tb[IFLA_CARRIER_DOWN_COUNT] != nullptr) {
    link.carrier_down_count = nla_get_u32(tb[IFLA_CARRIER_DOWN_COUNT]);
  }
  return link;
}

}  // namespace

NetlinkLinkMonitor::NetlinkLinkMonitor(Options options)
    : options_(std::move(options)),
      tracker_(options_.selected ? options_.selected : [](const std::string&) { return true; }) {}

absl::StatusOr<std::unique_ptr<NetlinkLinkMonitor>> NetlinkLinkMonitor::Start(Options options) {
  std::unique_ptr<NetlinkLinkMonitor> m(new NetlinkLinkMonitor(std::move(options)));
  if (absl::Status s = m->Open(); !s.ok()) return s;
  if (absl::Status s = m->RequestDump(); !s.ok()) return s;
  if (absl::Status s = m->Receive(/*until_dump_done=*/true); !s.ok()) return s;
  m->Enqueue(m->pending_);
  spdlog::debug("link monitor: {} links at start", m->tracker_.links());
  if (m->options_.run_thread) m->thread_ = std::thread(&NetlinkLinkMonitor::Run, m.get());
  return m;
}

NetlinkLinkMonitor::~NetlinkLinkMonitor() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    if (::write(wake_fd_, &one, sizeof(one)) != sizeof(one)) {
      spdlog::error("link monitor: cannot wake the thread: {}", std::strerror(errno));
    }
    thread_.join();
  }
  if (sock_ != nullptr) nl_socket_free(sock_);  // closes fd_
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

absl::Status NetlinkLinkMonitor::Open() {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return absl::UnavailableError(absl::StrCat("eventfd: ", std::strerror(errno)));
  sock_ = nl_socket_alloc();
  if (sock_ == nullptr) return absl::ResourceExhaustedError("nl_socket_alloc failed");
  // Notifications carry the kernel's sequence numbers, not ours.
  nl_socket_disable_seq_check(sock_);
  if (int err = nl_connect(sock_, NETLINK_ROUTE); err < 0) return NlError("connect", err);
  if (int err = nl_socket_add_membership(sock_, RTNLGRP_LINK); err < 0) {
    return NlError("join RTNLGRP_LINK", err);
  }
  fd_ = nl_socket_get_fd(sock_);
  // FORCE goes past net.core.rmem_max but needs CAP_NET_ADMIN; without it, take what the
  // sysctl allows.
  const int size = options_.receive_buffer_bytes;
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0 &&
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) != 0) {
    spdlog::warn("link monitor: SO_RCVBUF {}: {}", size, std::strerror(errno));
  }
  buffer_.resize(kReceiveBufferBytes);
  return absl::OkStatus();
}

absl::Status NetlinkLinkMonitor::RequestDump() {
  if (int err = nl_rtgen_request(sock_, RTM_GETLINK, AF_UNSPEC, NLM_F_DUMP); err < 0) {
    return NlError("RTM_GETLINK dump", err);
  }
  dump_in_progress_ = true;
  tracker_.BeginDump();
  return absl::OkStatus();
}

void NetlinkLinkMonitor::HandleDatagram(char* data, size_t size, int64_t now) {
  int remaining = static_cast<int>(size);
  for (auto* hdr = reinterpret_cast<nlmsghdr*>(data); nlmsg_ok(hdr, remaining);
       hdr = nlmsg_next(hdr, &remaining)) {
    if (hdr->nlmsg_flags & NLM_F_DUMP_INTR) dump_again_ = true;  // the dump may be inconsistent
    switch (hdr->nlmsg_type) {
      case RTM_NEWLINK:
        if (std::optional<LinkSnapshot> link = ParseLink(hdr)) {
          tracker_.OnNewLink(*link, now, pending_);
        }
        break;
      case RTM_DELLINK:
        if (std::optional<LinkSnapshot> link = ParseLink(hdr)) tracker_.OnDelLink(link->ifindex);
        break;
      case NLMSG_DONE:
        if (!dump_in_progress_) break;
        dump_in_progress_ = false;
        tracker_.EndDump();
        if (dump_again_) {
          dump_again_ = false;
          if (absl::Status s = RequestDump(); !s.ok()) {
            spdlog::warn("link monitor: {}", s.message());
          }
        }
        break;
      case NLMSG_ERROR: {
        const auto* err = static_cast<const nlmsgerr*>(nlmsg_data(hdr));
        if (err->error == 0) break;  // an ack
        spdlog::warn("link monitor: netlink error {}", std::strerror(-err->error));
        if (dump_in_progress_) {
          dump_in_progress_ = false;
          tracker_.AbortDump();
        }
        break;
      }
      default:
        break;
    }
  }
}

absl::Status NetlinkLinkMonitor::Receive(bool until_dump_done) {
  for (;;) {
    if (until_dump_done && !dump_in_progress_) return absl::OkStatus();
    const ssize_t n = ::recv(fd_, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
    const int64_t now = RealtimeNanos();
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) {
        if (!until_dump_done) return absl::OkStatus();
        pollfd p = {fd_, POLLIN, 0};
        if (::poll(&p, 1, kDumpReplyTimeoutMs) == 0) {
          return absl::DeadlineExceededError("netlink: no reply to the link dump");
        }
        continue;
      }
      if (err == ENOBUFS) {
        // The kernel dropped notifications for this socket: read the whole state again.
        overruns_.fetch_add(1, std::memory_order_relaxed);
        spdlog::warn("link monitor: netlink socket overrun, reading every link again");
        if (dump_in_progress_) {
          dump_again_ = true;
        } else if (absl::Status s = RequestDump(); !s.ok()) {
          return s;
        }
        continue;
      }
      return absl::UnavailableError(absl::StrCat("netlink recv: ", std::strerror(err)));
    }
    if (static_cast<size_t>(n) > buffer_.size()) {
      // Part of a datagram was lost: as good as an overrun.
      overruns_.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("link monitor: {}-byte netlink datagram truncated", n);
      dump_again_ = true;
      if (!dump_in_progress_) {
        dump_again_ = false;
        if (absl::Status s = RequestDump(); !s.ok()) return s;
      }
      continue;
    }
    HandleDatagram(buffer_.data(), static_cast<size_t>(n), now);
    Enqueue(pending_);
  }
}

absl::Status NetlinkLinkMonitor::ReceiveNow() {
  if (options_.run_thread) return absl::FailedPreconditionError("the monitor thread receives");
  if (absl::Status s = Receive(/*until_dump_done=*/false); !s.ok()) return s;
  return Receive(/*until_dump_done=*/true);
}

void NetlinkLinkMonitor::Enqueue(std::vector<EventRecord>& events) {
  absl::MutexLock lock(&mu_);
  links_ = tracker_.links();
  for (EventRecord& e : events) {
    if (queue_.size() >= options_.max_queued_events) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    queue_.push_back(std::move(e));
  }
  events.clear();
}

void NetlinkLinkMonitor::Drain(std::vector<EventRecord>& out) {
  absl::MutexLock lock(&mu_);
  for (EventRecord& e : queue_) out.push_back(std::move(e));
  queue_.clear();
}

size_t NetlinkLinkMonitor::links() const {
  absl::MutexLock lock(&mu_);
  return links_;
}

void NetlinkLinkMonitor::Run() {
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("link monitor: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents != 0) {
      if (absl::Status s = Receive(/*until_dump_done=*/false); !s.ok()) {
        spdlog::warn("link monitor: {}", s.message());
        // A socket that keeps failing must not spin this thread.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }
}

}  // namespace railwatch
