#include "gnmi/client.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/grpc_keepalive.h"
#include "common/labels.h"
#include "common/logging.h"
#include "gnmi/decode.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace railwatch {
namespace {

int Millis(absl::Duration d) {
  return static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 1, INT32_MAX));
}

}  // namespace

std::shared_ptr<grpc::Channel> MakeGnmiChannel(const GnmiTargetConfig& target,
                                               const GnmiChannelOptions& options) {
  grpc::ChannelArguments args;
  SetClientKeepalive(args, Millis(options.keepalive_time), Millis(options.keepalive_timeout));
  // Not between subscriptions: a switch's gNMI server (gRPC's default policy) takes pings on a
  // connection without calls for abuse and answers GOAWAY too_many_pings. With calls, the
  // interval is GnmiKeepaliveTime's.
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, Millis(options.backoff.initial));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, Millis(options.backoff.max));
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  // Each switch gets its own connection even when two switches share an address (a proxy),
  // so that one switch's GOAWAY does not reset another's streams.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (target.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = target.tls->ca_pem;
    ssl.pem_private_key = target.tls->key_pem;
    ssl.pem_cert_chain = target.tls->cert_pem;
    creds = grpc::SslCredentials(ssl);
    if (!target.tls->server_name.empty()) {
      args.SetSslTargetNameOverride(target.tls->server_name);
    }
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(target.address, creds, args);
}

absl::Duration GnmiKeepaliveTime(const std::vector<::gnmi::SubscribeRequest>& requests,
                                 absl::Duration configured) {
  // Past the default policy's minimum interval between pings without data (5 minutes).
  const absl::Duration kWithoutData = absl::Seconds(5 * 60 + 10);
  absl::Duration data_every = absl::InfiniteDuration();
  for (const ::gnmi::SubscribeRequest& request : requests) {
    for (const ::gnmi::Subscription& sub : request.subscribe().subscription()) {
      uint64_t every = 0;
      if (sub.mode() == ::gnmi::SAMPLE) every = sub.sample_interval();
      if (sub.mode() == ::gnmi::ON_CHANGE) every = sub.heartbeat_interval();
      if (every > 0) {
        data_every = std::min(data_every, absl::Nanoseconds(static_cast<int64_t>(every)));
      }
    }
  }
  if (data_every == absl::InfiniteDuration()) return kWithoutData;
  return std::min(std::max(configured, data_every / 2), kWithoutData);
}

void AddGnmiCredentials(const GnmiTargetConfig& target, grpc::ClientContext& ctx) {
  if (!target.username.empty()) ctx.AddMetadata("username", target.username);
  if (!target.password.empty()) ctx.AddMetadata("password", target.password);
}

std::vector<::gnmi::SubscribeRequest> MakeSubscribeRequests(
    const GnmiProfile& profile, const GnmiTargetConfig& target,
    ::gnmi::SubscriptionList::Mode mode, std::vector<bool>* optional) {
  std::vector<::gnmi::SubscribeRequest> requests;
  std::vector<bool> alone;  // per request: optional (one subscription, or one group's)
  std::vector<std::string> groups;  // per request: the optional group ("" when none)
  for (const GnmiSubscriptionSpec& spec : profile.subscriptions()) {
    // An optional subscription goes alone, or with the others of its group; the rest share
    // their gNMI target's stream.
    auto it = requests.end();
    const bool shares = !spec.optional || !spec.optional_group.empty();
    for (size_t i = 0; i < requests.size() && shares; ++i) {
      if (alone[i] == spec.optional && groups[i] == spec.optional_group &&
          requests[i].subscribe().prefix().target() == spec.path.target()) {
        it = requests.begin() + static_cast<std::ptrdiff_t>(i);
        break;
      }
    }
    if (it == requests.end()) {
      alone.push_back(spec.optional);
      groups.push_back(spec.optional_group);
      ::gnmi::SubscriptionList& list = *requests.emplace_back().mutable_subscribe();
      list.set_mode(mode);
      list.set_encoding(profile.encoding());
      if (!spec.path.target().empty()) list.mutable_prefix()->set_target(spec.path.target());
      it = requests.end() - 1;
    }
    ::gnmi::Subscription& sub = *it->mutable_subscribe()->add_subscription();
    *sub.mutable_path() = spec.path;
    sub.mutable_path()->clear_target();
    sub.set_mode(spec.mode);
    if (spec.mode == ::gnmi::SAMPLE) {
      const absl::Duration interval = spec.sample_interval > absl::ZeroDuration()
                                          ? spec.sample_interval
                                          : target.sample_interval;
      sub.set_sample_interval(static_cast<uint64_t>(absl::ToInt64Nanoseconds(interval)));
    }
    sub.set_suppress_redundant(spec.suppress_redundant);
    if (spec.heartbeat_interval > absl::ZeroDuration()) {
      sub.set_heartbeat_interval(
          static_cast<uint64_t>(absl::ToInt64Nanoseconds(spec.heartbeat_interval)));
    }
  }
  if (optional != nullptr) *optional = std::move(alone);
  return requests;
}

// ---------------------------------------------------------------------------------------------
// GnmiScheduler

GnmiScheduler::GnmiScheduler() : thread_([this] { Run(); }) {}

GnmiScheduler::~GnmiScheduler() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

uint64_t GnmiScheduler::After(absl::Duration delay, std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  const uint64_t id = next_id_++;
  const absl::Time at = absl::Now() + delay;
  due_.emplace(at, id);
  tasks_.emplace(id, std::make_pair(at, std::move(fn)));
  return id;
}

bool GnmiScheduler::Cancel(uint64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  auto [first, last] = due_.equal_range(it->second.first);
  for (auto d = first; d != last; ++d) {
    if (d->second == id) {
      due_.erase(d);
      break;
    }
  }
  tasks_.erase(it);
  return true;
}

void GnmiScheduler::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (due_.empty()) {
      // The wake-up is a condition on the queue or on stopping_, re-checked each time.
      mu_.AwaitWithTimeout(absl::Condition(
                               +[](GnmiScheduler* s) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                 return s->stopping_ || !s->due_.empty();
                               },
                               this),
                           absl::Seconds(1));
      continue;
    }
    const absl::Time at = due_.begin()->first;
    if (absl::Now() < at) {
      const size_t n = due_.size();
      const absl::Time first = at;
      struct Wake {
        GnmiScheduler* s;
        size_t n;
        absl::Time first;
      } wake{this, n, first};
      // Wake early when a sooner task arrives or on stop.
      mu_.AwaitWithDeadline(absl::Condition(
                                +[](Wake* w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                  return w->s->stopping_ || w->s->due_.empty() ||
                                         w->s->due_.begin()->first < w->first;
                                },
                                &wake),
                            at);
      continue;
    }
    const uint64_t id = due_.begin()->second;
    due_.erase(due_.begin());
    auto it = tasks_.find(id);
    std::function<void()> fn = std::move(it->second.second);
    tasks_.erase(it);
    mu_.Unlock();
    fn();
    mu_.Lock();
  }
}

// ---------------------------------------------------------------------------------------------
// GnmiClient

// One Subscribe stream. Deleted by itself when gRPC reports the stream done.
class GnmiClient::Call final
    : public grpc::ClientBidiReactor<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse> {
 public:
  explicit Call(GnmiClient& client) : client_(client) {
    AddGnmiCredentials(client.target_, ctx_);
  }

  void Begin() {
    client_.stub_->async()->Subscribe(&ctx_, this);
    StartWrite(&client_.request_);
    StartRead(&response_);
    StartCall();
  }

  void Cancel() { ctx_.TryCancel(); }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows with its status
    client_.OnResponse(response_);
    StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    GnmiClient& client = client_;
    {
      absl::MutexLock lock(&client.mu_);
      client.active_ = nullptr;
    }
    delete this;
    client.OnCallDone(status);
  }

 private:
  GnmiClient& client_;
  grpc::ClientContext ctx_;
  ::gnmi::SubscribeResponse response_;
};

GnmiClient::GnmiClient(GnmiTargetConfig target, ::gnmi::SubscribeRequest request,
                       GnmiChannelOptions options, GnmiScheduler& scheduler,
                       GnmiStreamHandler& handler)
    : GnmiClient(target, std::move(request), options, MakeGnmiChannel(target, options),
                 scheduler, handler) {}

GnmiClient::GnmiClient(GnmiTargetConfig target, ::gnmi::SubscribeRequest request,
                       GnmiChannelOptions options, std::shared_ptr<grpc::Channel> channel,
                       GnmiScheduler& scheduler, GnmiStreamHandler& handler)
    : target_(std::move(target)),
      request_(std::move(request)),
      options_(std::move(options)),
      scheduler_(scheduler),
      handler_(handler),
      channel_(std::move(channel)),
      stub_(::gnmi::gNMI::NewStub(channel_)),
      backoff_(options_.backoff) {}

GnmiClient::~GnmiClient() { Stop(); }

void GnmiClient::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_ || stopping_) return;
    started_ = true;
    busy_ = true;
  }
  StartAttempt();
}

void GnmiClient::StartAttempt() {
  Call* call = new Call(*this);
  {
    absl::MutexLock lock(&mu_);
    timer_ = 0;
    if (stopping_) {
      delete call;
      busy_ = false;
      return;
    }
    active_ = call;
    got_response_on_stream_.store(false, std::memory_order_relaxed);
  }
  call->Begin();
}

void GnmiClient::OnResponse(const ::gnmi::SubscribeResponse& response) {
  responses_.fetch_add(1, std::memory_order_relaxed);
  last_response_unix_nano_.store(absl::ToUnixNanos(absl::Now()), std::memory_order_relaxed);
  if (!got_response_on_stream_.exchange(true, std::memory_order_relaxed)) {
    absl::MutexLock lock(&mu_);
    // The target answers: the next failure starts from the initial delay again.
    backoff_.Reset();
    failed_attempts_ = 0;
    spdlog::info("gnmi target {} ({}): subscribed", target_.name, target_.address);
    if (ever_connected_) ++reconnects_;
    ever_connected_ = true;
    refused_ = false;
  }
  handler_.OnResponse(response);
}

void GnmiClient::OnCallDone(const grpc::Status& status) {
  const bool was_connected = got_response_on_stream_.exchange(false, std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  if (stopping_) {
    busy_ = false;
    return;
  }
  const grpc::StatusCode code = status.error_code();
  refused_ = !was_connected && (code == grpc::StatusCode::NOT_FOUND ||
                                code == grpc::StatusCode::INVALID_ARGUMENT ||
                                code == grpc::StatusCode::UNIMPLEMENTED);
  // A stream that ends without an error still ends: a STREAM subscription is meant to last.
  // A refusal is no error of the stream: the paths are not served (Stats::refused says so).
  if (!refused_) ++errors_;
  last_error_ = status.ok() ? "stream ended by the target"
                            : absl::StrCat(absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())), ": ",
                                           status.error_message());
  const absl::Duration delay = refused_ ? options_.refused_retry : backoff_.Next();
  // A lost stream is worth a line; an unreachable target says so on attempts 1, 2, 4, 8 ...
  // so that a switch that is down for a day does not flood the log.
  ++failed_attempts_;
  if (refused_) {
    if ((failed_attempts_ & (failed_attempts_ - 1)) == 0) {
      std::string paths;
      for (const ::gnmi::Subscription& sub : request_.subscribe().subscription()) {
        absl::StrAppend(&paths, paths.empty() ? "" : ", ", GnmiPathString(sub.path()));
      }
      spdlog::warn("gnmi target {} ({}) refuses {}: {}; asking again in {}s", target_.name,
                   target_.address, paths, last_error_, absl::ToInt64Seconds(delay));
    }
  } else if (was_connected || (failed_attempts_ & (failed_attempts_ - 1)) == 0) {
    spdlog::warn("gnmi target {} ({}): {}; resubscribing in {}ms (attempt {})", target_.name,
                 target_.address, last_error_, absl::ToInt64Milliseconds(delay),
                 failed_attempts_);
  }
  if (was_connected) failed_attempts_ = 0;
  timer_ = scheduler_.After(delay, [this] { StartAttempt(); });
}

void GnmiClient::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  if (timer_ != 0 && scheduler_.Cancel(timer_)) {
    timer_ = 0;
    busy_ = false;
  }
  if (active_ != nullptr) active_->Cancel();
  mu_.Await(absl::Condition(
      +[](bool* busy) { return !*busy; }, &busy_));
}

GnmiClient::Stats GnmiClient::stats() const {
  Stats s;
  s.responses = responses_.load(std::memory_order_relaxed);
  s.last_response_unix_nano = last_response_unix_nano_.load(std::memory_order_relaxed);
  s.connected = got_response_on_stream_.load(std::memory_order_relaxed);
  absl::MutexLock lock(&mu_);
  s.errors = errors_;
  s.reconnects = reconnects_;
  s.refused = refused_;
  s.last_error = last_error_;
  return s;
}

}  // namespace railwatch
