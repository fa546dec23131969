#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collectors/collector.h"
#include "collectors/link_state.h"

struct nl_sock;

namespace railwatch {

// Watches link changes on a libnl route socket (RTNLGRP_LINK) in a thread of its own and turns
// carrier transitions into events (see LinkStateTracker), timestamped with CLOCK_REALTIME
// when the notification is received: the thread sleeps in poll() on the socket, so that is
// within scheduling latency of the kernel's notification.
//
// Start() reads the current state with a dump before it returns, so no event is reported for
// the state links are already in, and every change after Start() returns is seen. When the
// socket overruns (ENOBUFS: notifications were lost because this process fell behind) the
// monitor dumps again, reports what changed in between from the carrier counters, and counts
// the overrun. Events wait for the collector in a bounded queue; beyond its size new events
// are dropped and counted.
//
// Needs no privileges. The socket, and so the links watched, belong to the network namespace
// of the thread that calls Start().
class NetlinkLinkMonitor {
 public:
  struct Options {
    // Which links produce events (by name); every link when empty.
    std::function<bool(const std::string&)> selected;
    size_t max_queued_events = 4096;
    // SO_RCVBUF(FORCE) for the socket: room for a burst of notifications (a host bringing up
    // dozens of VFs) before the kernel drops them.
    int receive_buffer_bytes = 4 << 20;
    // false: no thread; the owner calls ReceiveNow(). Tests use it to let the socket overrun.
    bool run_thread = true;
  };

  static absl::StatusOr<std::unique_ptr<NetlinkLinkMonitor>> Start(Options options);
  ~NetlinkLinkMonitor();
  NetlinkLinkMonitor(const NetlinkLinkMonitor&) = delete;
  NetlinkLinkMonitor& operator=(const NetlinkLinkMonitor&) = delete;

  // Moves the queued events, oldest first, to the end of `out`.
  void Drain(std::vector<EventRecord>& out);

  // Only without a thread (run_thread = false): handles what the socket holds now and, when
  // that starts a dump (after an overrun), everything up to the end of the dump.
  absl::Status ReceiveNow();

  // Times the socket overran and the state was read again.
  uint64_t overruns() const { return overruns_.load(std::memory_order_relaxed); }
  // Events dropped because the queue was full.
  uint64_t dropped_events() const { return dropped_.load(std::memory_order_relaxed); }
  // Links whose state is known (for tests and logs).
  size_t links() const;

 private:
  explicit NetlinkLinkMonitor(Options options);
  absl::Status Open();
  absl::Status RequestDump();
  // Reads what the socket has; with `until_dump_done`, blocks until the dump in progress ends.
  absl::Status Receive(bool until_dump_done);
  void HandleDatagram(char* data, size_t size, int64_t now);
  void Enqueue(std::vector<EventRecord>& events);
  void Run();

  Options options_;
  nl_sock* sock_ = nullptr;
  int fd_ = -1;
  int wake_fd_ = -1;  // eventfd: tells the thread to stop
  std::vector<char> buffer_;
  // Only the monitor thread touches these after Start() returns.
  LinkStateTracker tracker_;
  bool dump_in_progress_ = false;
  bool dump_again_ = false;  // overrun or an interrupted dump: dump again when this one ends
  std::vector<EventRecord> pending_;

  mutable absl::Mutex mu_;
  std::deque<EventRecord> queue_ ABSL_GUARDED_BY(mu_);
  size_t links_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> overruns_{0};
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

}  // namespace railwatch
