#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace railwatch::testing {

// A user-space TCP proxy on 127.0.0.1 (a free port) in front of `upstream` (host:port), with
// one thread of its own. It stands in for the network between two peers:
//  - Freeze(): every connection open now stops forwarding in both directions while its
//    sockets stay open: each peer sees a connection that is up but silent (a hung host, a
//    dead middlebox), the case only keepalives can notice. Later connections are forwarded.
//  - CutAll(): every connection open now is closed on both sides (each peer sees it end).
class FreezingProxy {
 public:
  explicit FreezingProxy(std::string upstream);
  ~FreezingProxy();
  FreezingProxy(const FreezingProxy&) = delete;
  FreezingProxy& operator=(const FreezingProxy&) = delete;

  absl::Status Start();
  std::string address() const;  // "127.0.0.1:<port>"

  // Both return once the proxy's thread has done it.
  void Freeze();
  void CutAll();

  int accepted() const;        // connections accepted so far
  int forwarding() const;      // connections forwarded now (neither frozen nor closed)

 private:
  struct Pipe;
  enum class Command { kNone, kFreeze, kCut };
  void Run();
  void Accept();
  // Moves bytes on `p` where poll said so; false when the connection is over.
  bool Pump(Pipe& p, short client_events, short upstream_events);
  void Do(Command c);

  const std::string upstream_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: commands and shutdown
  int port_ = 0;
  std::vector<std::unique_ptr<Pipe>> live_;    // the thread's
  std::vector<std::unique_ptr<Pipe>> frozen_;  // the thread's: open, never read again

  mutable absl::Mutex mu_;
  Command command_ ABSL_GUARDED_BY(mu_) = Command::kNone;
  uint64_t done_ ABSL_GUARDED_BY(mu_) = 0;  // commands carried out
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int accepted_ ABSL_GUARDED_BY(mu_) = 0;
  int forwarding_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace railwatch::testing
