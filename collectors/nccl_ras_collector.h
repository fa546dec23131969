#pragma once

// The host agent asks NCCL's RAS endpoints (NCCL 2.24+) how the jobs on this host are: which
// ranks are missing, dead or unresponsive, which communicators' collective counts disagree
// (a rank that stopped launching), which had asynchronous errors. docs/JOBS.md, "NCCL RAS".
//
// Where: every NCCL process of a job listens on 127.0.0.1:28028 unless NCCL_RAS_ADDR says
// otherwise (NCCL_RAS_ENABLE=0 turns it off); any one process answers for the whole job. The
// collector asks localhost:28028 and every distinct NCCL_RAS_ADDR (a numeric address) in the
// environment of a process on this host (<proc_root>/*/environ, readable by root), and asks
// nothing while no socket listens on its port (<proc_root>/net/tcp{,6}), so a host without a
// job costs no connection. An address no process names any more is forgotten.
//
// How: the RAS client protocol (text lines; src/ras/client_support.cc): "CLIENT PROTOCOL 2",
// "TIMEOUT <s>", "SET FORMAT json" (2.28.7+; older answer "ERROR: ..." and the report comes as
// text), "STATUS"; the server sends the report and closes. Every step is bounded by `timeout`,
// on a thread of its own, so a stuck job never holds the agent's poll loop.
//
// When: never in the first `init_grace` after an endpoint starts listening (a job's first
// communicators are being set up then, and NCCL before 2.27.3 could crash when asked during
// their init), then every `interval`. A new listening socket (a new job) waits `init_grace`
// again. A report from NCCL < 2.27.3 is logged once: a communicator that job creates later is
// not seen coming.
//
// What: events of the same kinds as a pasted report (logs/ras_parser.h, logs/ras_json.h).
// A collective-count MISMATCH is sent once two answers in a row show the same counts (the
// job stopped launching: counts taken while a healthy job runs can differ by one for a
// moment), then at every answer while they stay, with `stuck_for_s`; INCOMPLETE, ERROR and
// DEAD are sent at once. A report is sent when its `errors` change. RAS can say OK while the training framework times out: its word clears nothing.

#include <cstdint>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "common/clock.h"
#include "logs/log_event.h"

namespace railwatch {

struct RasEndpoint {
  std::string host;  // numeric IPv4 or IPv6 address, or "localhost"
  int port = 28028;
  std::string origin;  // "default", "NCCL_RAS_ADDR of pid 1234", "--nccl_ras"
  std::string Address() const;  // "127.0.0.1:28028", "[::1]:28028"
};

// "HOST:PORT" or "[IPV6]:PORT" (NCCL_RAS_ADDR's form); an error says what is wrong.
absl::StatusOr<RasEndpoint> ParseRasAddress(std::string_view text, std::string origin);

// What `spec` names: "auto" (localhost:28028 and each distinct NCCL_RAS_ADDR with a numeric
// address found in <proc_root>/<pid>/environ), "off" (none), or a comma list of HOST:PORT.
absl::StatusOr<std::vector<RasEndpoint>> RasEndpoints(std::string_view spec,
                                                      const std::string& proc_root);

// Listening TCP sockets by port: their inodes (<proc_root>/net/tcp and tcp6). Several when
// processes share a port (SO_REUSEPORT: two NCCL jobs of one user on 28028).
std::map<int, std::set<uint64_t>> ListeningSockets(const std::string& proc_root);
// The lowest inode listening on `port`, 0 when none.
uint64_t ListeningSocketInode(const std::string& proc_root, int port);

struct RasAnswer {
  bool json = false;     // the server took SET FORMAT json
  std::string protocol;  // "2" from "SERVER PROTOCOL 2"
  std::string report;    // what STATUS answered, up to the server's close
};

// One STATUS query: connect, the protocol's greeting, TIMEOUT, SET FORMAT json when `json`,
// STATUS, and the report until the server closes, all within `timeout`. At most 16 MiB.
absl::StatusOr<RasAnswer> QueryRasStatus(const RasEndpoint& endpoint, absl::Duration timeout,
                                         bool json = true);

// Events from one answer, in the order a pasted report gives them.
std::vector<logs::LogEvent> RasAnswerEvents(const RasAnswer& answer, const std::string& source,
                                            std::vector<std::string>& problems);

class NcclRasCollector final : public Collector {
 public:
  struct Options {
    std::string endpoints = "auto";
    std::string proc_root = "/proc";
    absl::Duration interval = absl::Seconds(30);
    absl::Duration timeout = absl::Seconds(5);
    absl::Duration init_grace = absl::Seconds(60);
    // Query on a thread of its own every interval (false: only when QueryOnce is called).
    bool background = true;
  };

  NcclRasCollector(Options options, const Clock& clock);
  ~NcclRasCollector() override;

  std::string_view name() const override { return "nccl_ras"; }
  // Sends what the query thread learnt since the last cycle; starts the thread on first use.
  absl::Status Collect(Emitter& emitter) override;

  // One round of queries on the calling thread (tests; the thread calls it every interval).
  void QueryOnce();

  // "2.26.2" -> true; "2.28.9" -> false.
  static bool OlderThan2273(const std::string& version);

 private:
  struct Mismatch {
    std::string counts;  // op_counts|status_counts
    absl::Time since;    // first answer with these counts
  };
  struct EndpointState {
    RasEndpoint endpoint;
    std::set<uint64_t> sockets;  // listening on the endpoint's port at the last round
    absl::Time listening_since = absl::InfinitePast();
    std::string nccl_version;
    std::string last_errors;
    // comm_hash -> the last answer's MISMATCH counts, to confirm a stopped job.
    std::map<std::string, Mismatch> last_mismatch;
    uint64_t ok = 0, refused = 0, failed = 0, skipped_init = 0;
    bool up = false;
  };
  struct Series {
    uint32_t ok = 0, failed = 0, refused = 0, up = 0;
  };

  void Run();
  void Query(const RasEndpoint& endpoint, absl::Time now);


  Options options_;
  const Clock& clock_;
  absl::Mutex mu_;
  std::map<std::string, EndpointState> endpoints_ ABSL_GUARDED_BY(mu_);  // by address
  std::vector<EventRecord> pending_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Series> series_;  // poll thread only
  std::thread thread_;
  absl::Notification stop_;
};

}  // namespace railwatch
