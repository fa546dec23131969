#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "gnmi/gnmi.grpc.pb.h"
#include "grpcpp/channel.h"
#include "gnmi/gnmi.pb.h"
#include "gnmi/profile.h"
#include "gnmi/targets.h"

namespace railwatch {

struct GnmiChannelOptions {
  // HTTP/2 keepalive: a target that died without closing the connection is noticed within
  // keepalive_time + keepalive_timeout.
  // (10 s + 10 s: common/grpc_keepalive.h.)
  absl::Duration keepalive_time = absl::Seconds(10);
  absl::Duration keepalive_timeout = absl::Seconds(10);
  // Between subscription attempts; also given to the channel as its reconnect backoff so
  // that a restarted target is found again as soon as our own backoff allows.
  Backoff::Options backoff;
  // When the target refuses a stream's paths (NOT_FOUND, INVALID_ARGUMENT, UNIMPLEMENTED
  // before any data: a dialect that does not serve an optional leaf), asking again sooner
  // would only repeat the refusal; a software upgrade that adds the path is found this late.
  absl::Duration refused_retry = absl::Minutes(5);
  // SONiC answers with whole COUNTERS_DB hashes as JSON: allow large messages.
  int max_receive_message_bytes = 64 << 20;
};

// A channel to `target` with its TLS (or plaintext) credentials and the options above: one
// connection of its own (never shared with another channel to the same address).
std::shared_ptr<grpc::Channel> MakeGnmiChannel(const GnmiTargetConfig& target,
                                               const GnmiChannelOptions& options);

// The keepalive interval for one connection carrying `requests`, so that the target's ping
// policy never sees abuse. gRPC's default server policy (C-core and grpc-go alike, and what
// sonic-gnmi runs) strikes a ping that comes less than 5 minutes after the previous one unless
// the server has sent data in between, and answers GOAWAY too_many_pings after two strikes.
// A connection whose subscriptions make the target send data at least every D (the shortest
// SAMPLE interval, or an ON_CHANGE heartbeat_interval) may ping every `configured` as long as
// that is at least D/2 (at most one strike between two data frames); one with no periodic
// data pings every 5 minutes and 10 seconds.
absl::Duration GnmiKeepaliveTime(const std::vector<::gnmi::SubscribeRequest>& requests,
                                 absl::Duration configured);
// username/password as call metadata, the way gNMI targets (SONiC, EOS, Cumulus) expect them.
void AddGnmiCredentials(const GnmiTargetConfig& target, grpc::ClientContext& ctx);

// The SubscribeRequests for a profile's subscriptions, one per gNMI `target` they name, with
// that target in the prefix: gNMI reads the target from the prefix only, so SONiC's
// COUNTERS_DB counters and its OC-YANG oper-status need a stream each. SAMPLE intervals of 0
// take the target's sample_interval. An optional subscription gets a request of its own, or
// shares one with the other optional subscriptions of its group (`optional: optics`) and gNMI
// target; `optional`, when given, says which requests are those.
std::vector<::gnmi::SubscribeRequest> MakeSubscribeRequests(
    const GnmiProfile& profile, const GnmiTargetConfig& target,
    ::gnmi::SubscriptionList::Mode mode, std::vector<bool>* optional = nullptr);

// One thread that runs delayed callbacks (the clients' reconnect timers), so that however
// many targets there are, waiting costs no thread per target.
class GnmiScheduler {
 public:
  GnmiScheduler();
  ~GnmiScheduler();
  GnmiScheduler(const GnmiScheduler&) = delete;
  GnmiScheduler& operator=(const GnmiScheduler&) = delete;

  // Runs `fn` on the scheduler's thread after `delay`; returns an id for Cancel.
  uint64_t After(absl::Duration delay, std::function<void()> fn);
  // True when `id` was removed before it ran (it will not run).
  bool Cancel(uint64_t id);

 private:
  void Run();
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::multimap<absl::Time, uint64_t> due_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::pair<absl::Time, std::function<void()>>> tasks_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// Receives what a GnmiClient's stream delivers. Called on gRPC's callback threads, one call
// at a time per client (never concurrently for the same client).
class GnmiStreamHandler {
 public:
  virtual ~GnmiStreamHandler() = default;
  virtual void OnResponse(const ::gnmi::SubscribeResponse& response) = 0;
};

// One long-lived STREAM subscription to one target, kept alive forever: when the stream ends
// (GOAWAY, a reset stream, the target restarting, an unreachable address) it subscribes again
// after capped, jittered backoff. Runs on gRPC's callback API: no thread of its own.
class GnmiClient {
 public:
  struct Stats {
    bool connected = false;            // a response has arrived on the current stream
    uint64_t responses = 0;            // SubscribeResponses received, all streams
    uint64_t errors = 0;               // attempts and streams that ended with an error
    uint64_t reconnects = 0;           // streams that delivered data after an earlier one
    bool refused = false;              // the last attempt: the target refused the paths
    int64_t last_response_unix_nano = 0;
    std::string last_error;
  };

  // On a channel (a connection) of its own.
  GnmiClient(GnmiTargetConfig target, ::gnmi::SubscribeRequest request,
             GnmiChannelOptions options, GnmiScheduler& scheduler, GnmiStreamHandler& handler);
  // On `channel`, which the other streams to the same switch share: one HTTP/2 connection per
  // switch, so that the data of its SAMPLE streams keeps the connection's keepalive pings
  // within the target's ping policy even for a stream that carries no data (SONiC's OC-YANG
  // ON_CHANGE stream after its first answer).
  GnmiClient(GnmiTargetConfig target, ::gnmi::SubscribeRequest request,
             GnmiChannelOptions options, std::shared_ptr<grpc::Channel> channel,
             GnmiScheduler& scheduler, GnmiStreamHandler& handler);
  ~GnmiClient();  // Stop()
  GnmiClient(const GnmiClient&) = delete;
  GnmiClient& operator=(const GnmiClient&) = delete;

  void Start();
  // Cancels the stream and any pending retry; returns once no callback can touch the client.
  void Stop();
  Stats stats() const;
  const GnmiTargetConfig& target() const { return target_; }

 private:
  class Call;
  void StartAttempt();
  void OnResponse(const ::gnmi::SubscribeResponse& response);
  void OnCallDone(const grpc::Status& status);

  const GnmiTargetConfig target_;
  const ::gnmi::SubscribeRequest request_;
  const GnmiChannelOptions options_;
  GnmiScheduler& scheduler_;
  GnmiStreamHandler& handler_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::gnmi::gNMI::Stub> stub_;

  // Hot path (one per response) without the mutex.
  std::atomic<uint64_t> responses_{0};
  std::atomic<int64_t> last_response_unix_nano_{0};
  std::atomic<bool> got_response_on_stream_{false};

  mutable absl::Mutex mu_;
  Backoff backoff_ ABSL_GUARDED_BY(mu_);
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // A call in flight or a retry scheduled: the chain of attempts that Stop() must end.
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  Call* active_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t timer_ ABSL_GUARDED_BY(mu_) = 0;
  bool ever_connected_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t failed_attempts_ ABSL_GUARDED_BY(mu_) = 0;  // since the last stream with data
  uint64_t reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  bool refused_ ABSL_GUARDED_BY(mu_) = false;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
};

// One-off checks for a CLI or a test, on the synchronous API.

absl::StatusOr<::gnmi::CapabilityResponse> GnmiCapabilities(const GnmiTargetConfig& target,
                                                            absl::Duration timeout);

// Subscribes in ONCE mode and collects the notifications until sync_response.
absl::StatusOr<std::vector<::gnmi::Notification>> GnmiSubscribeOnce(
    const GnmiTargetConfig& target, ::gnmi::SubscriptionList list, absl::Duration timeout);

// A POLL subscription: each Poll() asks the target for the current values and collects the
// notifications until sync_response. `timeout` bounds the whole session.
class GnmiPollSession {
 public:
  static absl::StatusOr<std::unique_ptr<GnmiPollSession>> Open(const GnmiTargetConfig& target,
                                                               ::gnmi::SubscriptionList list,
                                                               absl::Duration timeout);
  ~GnmiPollSession();
  absl::StatusOr<std::vector<::gnmi::Notification>> Poll();

 private:
  GnmiPollSession() = default;
  std::string target_name_;
  std::string target_address_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<::gnmi::gNMI::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>>
      stream_;
};

}  // namespace railwatch
