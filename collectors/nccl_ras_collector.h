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
//
// MONITOR (NCCL 2.29+): once a report says the endpoint runs 2.29 or later (the handshake
// does not say: "SERVER PROTOCOL 2" from 2.24 on), one connection per endpoint stays open on
// a thread of its own: the greeting, "SET FORMAT json", "MONITOR lifecycle,trace" -> "OK", then
// NCCL writes one JSON object per event as it happens. Events that mean a process died or
// stopped answering (PEER_DEAD, PEER_UNRESPONSIVE, PEER_RECOVERED ...: RasMonitorEventSent) are
// sent as nccl_ras.event, with the communicators and ranks the last report gave that process;
// the chatter of the RAS network's own connections is counted and dropped. A dropped
// connection is opened again after a backoff (doubling, capped), never during the init grace
// of a new socket nor before a report of the new job has given its version.

#include <atomic>
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
#include "logs/ras_json.h"

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

// MONITOR mode came with NCCL 2.29: "2.29.2" -> true, "2.28.9" -> false, "" -> false.
bool RasSupportsMonitor(const std::string& version);

// The MONITOR events sent as nccl_ras.event (the others are counted as ignored): LIFECYCLE's
// PEER_DEAD and, of TRACE, those that say a peer stopped answering or answers again.
// PEER_NEW, PEER_CONNECTING/CONNECTED/DISCONNECTED and PEER_RETRY come with every job start,
// idle connection and STATUS query.
bool RasMonitorEventSent(std::string_view event);

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
    // Keep a MONITOR connection open to each endpoint that runs NCCL 2.29+.
    bool monitor = true;
    // Wait before opening a MONITOR connection again: doubles up to the max, back to the
    // initial one after a connection that stayed up for a minute.
    absl::Duration monitor_backoff_initial = absl::Seconds(1);
    absl::Duration monitor_backoff_max = absl::Seconds(60);
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
    // "HOST/PID" -> its communicators and ranks, from the last JSON report.
    std::map<std::string, logs::RasProcess> processes;
    // MONITOR: connections made; events sent, ignored, malformed; errors by reason.
    uint64_t monitor_connections = 0, monitor_sent = 0, monitor_ignored = 0,
             monitor_malformed = 0, monitor_failed = 0, monitor_unsupported = 0,
             monitor_dropped = 0;
    bool monitor_up = false;
    bool monitor_refused = false;  // answered ERROR to MONITOR: not again until a new socket
  };
  struct Series {
    uint32_t ok = 0, failed = 0, refused = 0, up = 0;
    uint32_t m_connections = 0, m_sent = 0, m_ignored = 0, m_malformed = 0, m_failed = 0,
             m_unsupported = 0, m_dropped = 0, m_up = 0;
    bool monitor_defined = false;
  };
  struct Monitor {
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void Run();
  void Query(const RasEndpoint& endpoint, absl::Time now);
  // May a MONITOR connection be opened to this endpoint now?
  bool MonitorAllowed(const EndpointState& state, absl::Time now) const;
  // Starts a MONITOR thread for each endpoint that may have one and has none.
  void StartMonitors();
  // One endpoint's MONITOR connection, opened again with backoff while it is allowed.
  void RunMonitor(const std::string& address);
  // Reads events from an open MONITOR connection until it closes or the collector stops.
  // Returns why it ended (OK: stopping).
  absl::Status StreamMonitor(int fd, std::string buffer, const RasEndpoint& endpoint);
  void MonitorEvents(const RasEndpoint& endpoint, std::string_view object, uint64_t number);
  // Waits `d` or until the collector stops; false when it stops.
  bool Sleep(absl::Duration d);


  Options options_;
  const Clock& clock_;
  absl::Mutex mu_;
  std::map<std::string, EndpointState> endpoints_ ABSL_GUARDED_BY(mu_);  // by address
  std::vector<EventRecord> pending_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Series> series_;  // poll thread only
  std::thread thread_;
  absl::Notification stop_;
  int wake_fd_ = -1;  // an eventfd, readable once the collector stops: wakes MONITOR reads
  absl::Mutex monitors_mu_;  // never held with mu_
  std::map<std::string, std::unique_ptr<Monitor>> monitors_ ABSL_GUARDED_BY(monitors_mu_);
};

}  // namespace railwatch
