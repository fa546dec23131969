#include "sim/gnmi_switch.h"

#include <pthread.h>

#include <deque>

#include <grpcpp/grpcpp.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "gnmi/gnmi.grpc.pb.h"
#include "sim/switch_dialects.h"

namespace railwatch::sim {

struct GnmiSwitchFarm::Hub {
  const SwitchFabric* fabric = nullptr;
  GnmiServeOptions options;
  absl::Mutex mu;
  // STREAM subscriptions, pumped for samples and changes.
  absl::flat_hash_set<class SubscribeStream*> streams ABSL_GUARDED_BY(mu);
};

namespace {

using Hub = GnmiSwitchFarm::Hub;

grpc::Status CheckAuth(const grpc::CallbackServerContext& ctx, const GnmiServeOptions& o) {
  if (o.username.empty()) return grpc::Status::OK;
  const auto& md = ctx.client_metadata();
  auto get = [&md](const char* key) -> std::string {
    auto it = md.find(key);
    return it == md.end() ? std::string() : std::string(it->second.data(), it->second.size());
  };
  if (get("username") != o.username || get("password") != o.password) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "bad username or password");
  }
  return grpc::Status::OK;
}

// Whether two values are the same, without serialising them (the kinds a simulated switch
// sends; anything else by its bytes).
bool SameValue(const ::gnmi::TypedValue& a, const ::gnmi::TypedValue& b) {
  if (a.value_case() != b.value_case()) return false;
  switch (a.value_case()) {
    case ::gnmi::TypedValue::kUintVal: return a.uint_val() == b.uint_val();
    case ::gnmi::TypedValue::kIntVal: return a.int_val() == b.int_val();
    case ::gnmi::TypedValue::kBoolVal: return a.bool_val() == b.bool_val();
    case ::gnmi::TypedValue::kStringVal: return a.string_val() == b.string_val();
    case ::gnmi::TypedValue::kJsonVal: return a.json_val() == b.json_val();
    case ::gnmi::TypedValue::kJsonIetfVal: return a.json_ietf_val() == b.json_ietf_val();
    default: return a.SerializeAsString() == b.SerializeAsString();
  }
}

grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

}  // namespace

class SubscribeStream : public grpc::ServerBidiReactor<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse> {
 public:
  SubscribeStream(Hub* hub, int switch_index, grpc::CallbackServerContext* ctx)
      : hub_(hub), index_(switch_index) {
    sync_.set_sync_response(true);
    if (grpc::Status s = CheckAuth(*ctx, hub_->options); !s.ok()) {
      {
        absl::MutexLock lock(&mu_);
        finished_ = true;
      }
      Finish(s);
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    // !ok: the client closed its side; a STREAM goes on until it cancels.
    if (!ok) return;
    if (absl::Status s = Handle(request_); !s.ok()) {
      spdlog::info("{}: subscribe refused: {}", Name(), s.message());
      FinishWith(ToGrpc(s));
      return;
    }
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      if (!queue_.empty()) {
        if (queue_.front().sub != nullptr) queue_.front().sub->queued = false;
        queue_.pop_front();
      }
      writing_ = false;
      if (!ok) broken_ = true;
    }
    Drive();
  }

  void OnCancel() override {
    {
      absl::MutexLock lock(&mu_);
      broken_ = true;
    }
    Drive();
  }

  void OnDone() override {
    {
      absl::MutexLock lock(&hub_->mu);
      hub_->streams.erase(this);
    }
    delete this;
  }

  // Renders due samples and ON_CHANGE differences of a STREAM subscription.
  void Pump(absl::Time now) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_ || broken_) return;
      hub_->fabric->WithSwitch(index_, [&](const SimSwitch& sw) {
        for (Sub& sub : subs_) {
          if (sub.mode == ::gnmi::ON_CHANGE) {
            // Only what may have changed is looked at again: state leaves after a port went
            // up or down, counters after a tick.
            const uint64_t version = VersionFor(sw, sub);
            if (!sub.queued && version != sub.seen_version) {
              sub.seen_version = version;
              QueueChanges(sw, sub, now);
            }
            continue;
          }
          if (now < sub.next_due) continue;
          sub.next_due += sub.interval;
          if (sub.next_due < now) sub.next_due = now + sub.interval;  // fell behind: no burst
          // A client that has not taken the last sample yet gets the next one instead.
          if (sub.queued) continue;
          Render(sw, sub, sub.response, now);
          sub.queued = true;
          queue_.push_back({&sub.response, nullptr, &sub});
        }
      });
    }
    Drive();
  }

 private:
  struct Sub {
    std::unique_ptr<PathQuery> query;
    ::gnmi::SubscriptionMode mode = ::gnmi::SAMPLE;
    absl::Duration interval;
    absl::Time next_due;
    ::gnmi::SubscribeResponse response;  // last rendered values (SAMPLE: what is sent)
    ::gnmi::SubscribeResponse delta;     // ON_CHANGE: what changed since the last send
    std::vector<::gnmi::TypedValue> last;  // ON_CHANGE: values last sent
    bool state_only = false;             // ON_CHANGE on state leaves only (oper-status, LLDP)
    uint64_t seen_version = ~uint64_t{0};  // ON_CHANGE: the switch's version last looked at
    bool queued = false;                 // its message is in the write queue: hands off
  };
  struct Pending {
    const ::gnmi::SubscribeResponse* msg;
    std::unique_ptr<::gnmi::SubscribeResponse> owned;
    Sub* sub;
  };

  std::string Name() const { return hub_->fabric->switches()[index_].name; }

  void Render(const SimSwitch& sw, Sub& sub, ::gnmi::SubscribeResponse& out, absl::Time now) {
    ::gnmi::Notification& n = *out.mutable_update();
    sub.query->Render(sw, n);
    n.set_timestamp(absl::ToUnixNanos(now));
  }

  static uint64_t VersionFor(const SimSwitch& sw, const Sub& sub) {
    return sub.state_only ? sw.state_version : sw.counters_version;
  }

  // ON_CHANGE's baseline: the values just rendered into `n`, and the switch's version.
  static void Remember(const SimSwitch& sw, Sub& sub, const ::gnmi::Notification& n) {
    sub.last.resize(n.update_size());
    for (int i = 0; i < n.update_size(); ++i) sub.last[i] = n.update(i).val();
    sub.seen_version = VersionFor(sw, sub);
  }

  void QueueChanges(const SimSwitch& sw, Sub& sub, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Render(sw, sub, sub.response, now);
    const ::gnmi::Notification& n = sub.response.update();
    ::gnmi::Notification& d = *sub.delta.mutable_update();
    d.clear_update();
    sub.last.resize(n.update_size());
    for (int i = 0; i < n.update_size(); ++i) {
      if (SameValue(n.update(i).val(), sub.last[i])) continue;
      sub.last[i] = n.update(i).val();
      *d.add_update() = n.update(i);
    }
    if (d.update_size() == 0) return;
    *d.mutable_prefix() = n.prefix();
    d.set_timestamp(n.timestamp());
    sub.queued = true;
    queue_.push_back({&sub.delta, nullptr, &sub});
  }

  // Queues one full set (every subscription's current values), then sync_response.
  void QueueFullSet(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    hub_->fabric->WithSwitch(index_, [&](const SimSwitch& sw) {
      for (Sub& sub : subs_) {
        auto msg = std::make_unique<::gnmi::SubscribeResponse>();
        Render(sw, sub, *msg, now);
        if (sub.mode == ::gnmi::ON_CHANGE) Remember(sw, sub, msg->update());
        const ::gnmi::SubscribeResponse* p = msg.get();
        queue_.push_back({p, std::move(msg), nullptr});
      }
    });
    queue_.push_back({&sync_, nullptr, nullptr});
  }

  absl::Status Handle(const ::gnmi::SubscribeRequest& req) {
    const absl::Time now = absl::Now();
    if (req.has_poll()) {
      absl::MutexLock lock(&mu_);
      if (!subscribed_ || list_mode_ != ::gnmi::SubscriptionList::POLL) {
        return absl::InvalidArgumentError("Poll on a stream that is not a POLL subscription");
      }
      QueueFullSet(now);
    } else if (req.has_subscribe()) {
      if (absl::Status s = Setup(req.subscribe(), now); !s.ok()) return s;
    } else {
      return absl::InvalidArgumentError("a SubscribeRequest needs subscribe or poll");
    }
    Drive();
    return absl::OkStatus();
  }

  absl::Status Setup(const ::gnmi::SubscriptionList& list, absl::Time now) {
    const SimSwitch& sw = hub_->fabric->switches()[index_];
    const std::vector<::gnmi::Encoding> encodings = SupportedEncodings(sw.dialect);
    if (std::find(encodings.begin(), encodings.end(), list.encoding()) == encodings.end()) {
      return absl::UnimplementedError(absl::StrCat(
          "encoding ", ::gnmi::Encoding_Name(list.encoding()), " is not supported by ", sw.name));
    }
    const GnmiServeOptions& o = hub_->options;
    std::vector<Sub> subs;
    absl::Status unknown;
    for (const ::gnmi::Subscription& s : list.subscription()) {
      // The topology part of the switch never changes: no lock needed to resolve paths.
      absl::StatusOr<std::unique_ptr<PathQuery>> q = ResolvePath(sw, list.prefix(), s.path());
      if (!q.ok()) {
        if (list.mode() != ::gnmi::SubscriptionList::STREAM) return q.status();
        spdlog::info("{}: STREAM subscription ignored: {}", sw.name, q.status().message());
        unknown = q.status();
        continue;
      }
      Sub& sub = subs.emplace_back();
      sub.query = std::move(*q);
      const bool on_change = s.mode() == ::gnmi::ON_CHANGE ||
                             (s.mode() == ::gnmi::TARGET_DEFINED && sub.query->StateOnly());
      sub.mode = on_change ? ::gnmi::ON_CHANGE : ::gnmi::SAMPLE;
      sub.state_only = sub.query->StateOnly();
      sub.interval = s.sample_interval() == 0 ? o.default_sample_interval
                                              : absl::Nanoseconds(s.sample_interval());
      if (sub.interval < o.min_sample_interval) {
        spdlog::info("{}: sample_interval {} raised to {}", sw.name, absl::FormatDuration(sub.interval),
                     absl::FormatDuration(o.min_sample_interval));
        sub.interval = o.min_sample_interval;
      }
      sub.next_due = now + sub.interval;
    }
    // A STREAM with some unknown paths serves the rest; one that serves nothing is refused,
    // as targets refuse a Subscribe for paths they do not have.
    if (subs.empty() && !unknown.ok()) return unknown;
    bool stream = false;
    {
      absl::MutexLock lock(&mu_);
      if (subscribed_) return absl::InvalidArgumentError("a second SubscriptionList on one stream");
      subscribed_ = true;
      list_mode_ = list.mode();
      subs_ = std::move(subs);
      stream = list_mode_ == ::gnmi::SubscriptionList::STREAM;
      if (stream && list.updates_only()) {
        queue_.push_back({&sync_, nullptr, nullptr});
        // ON_CHANGE with updates_only: the current values are the baseline, not sent.
        hub_->fabric->WithSwitch(index_, [&](const SimSwitch& s) {
          for (Sub& sub : subs_) {
            if (sub.mode != ::gnmi::ON_CHANGE) continue;
            Render(s, sub, sub.response, now);
            Remember(s, sub, sub.response.update());
          }
        });
      } else {
        QueueFullSet(now);
      }
      if (list_mode_ == ::gnmi::SubscriptionList::ONCE) finish_after_writes_ = true;
    }
    if (stream) {
      absl::MutexLock lock(&hub_->mu);
      hub_->streams.insert(this);
    }
    return absl::OkStatus();
  }

  void FinishWith(grpc::Status s) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
    }
    Finish(s);
  }

  // Starts the next write, or finishes the RPC when there is nothing more to do.
  void Drive() {
    const ::gnmi::SubscribeResponse* next = nullptr;
    bool finish = false;
    grpc::Status status = grpc::Status::OK;
    {
      absl::MutexLock lock(&mu_);
      if (writing_ || finished_) return;
      if (broken_) {
        finished_ = finish = true;
        status = grpc::Status(grpc::StatusCode::CANCELLED, "stream cancelled");
      } else if (!queue_.empty()) {
        writing_ = true;
        next = queue_.front().msg;
      } else if (finish_after_writes_) {
        finished_ = finish = true;
      }
    }
    if (next != nullptr) StartWrite(next);
    if (finish) Finish(status);
  }

  Hub* hub_;
  const int index_;
  ::gnmi::SubscribeRequest request_;
  ::gnmi::SubscribeResponse sync_;
  absl::Mutex mu_;
  std::vector<Sub> subs_ ABSL_GUARDED_BY(mu_);
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool subscribed_ ABSL_GUARDED_BY(mu_) = false;
  ::gnmi::SubscriptionList::Mode list_mode_ ABSL_GUARDED_BY(mu_) = ::gnmi::SubscriptionList::STREAM;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool broken_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_after_writes_ ABSL_GUARDED_BY(mu_) = false;
};

class SwitchService final : public ::gnmi::gNMI::CallbackService {
 public:
  SwitchService(Hub* hub, int index) : hub_(hub), index_(index) {}

  grpc::ServerUnaryReactor* Capabilities(grpc::CallbackServerContext* ctx,
                                         const ::gnmi::CapabilityRequest* /*request*/,
                                         ::gnmi::CapabilityResponse* response) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    if (grpc::Status s = CheckAuth(*ctx, hub_->options); !s.ok()) {
      reactor->Finish(s);
      return reactor;
    }
    const Dialect d = hub_->fabric->switches()[index_].dialect;
    for (const ::gnmi::ModelData& m : SupportedModels(d)) *response->add_supported_models() = m;
    for (::gnmi::Encoding e : SupportedEncodings(d)) response->add_supported_encodings(e);
    response->set_gnmi_version("0.10.0");
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerBidiReactor<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>* Subscribe(
      grpc::CallbackServerContext* ctx) override {
    return new SubscribeStream(hub_, index_, ctx);
  }

 private:
  Hub* hub_;
  const int index_;
};

absl::StatusOr<std::unique_ptr<GnmiSwitchFarm>> GnmiSwitchFarm::Start(const SwitchFabric* fabric,
                                                                      GnmiServeOptions options) {
  std::unique_ptr<GnmiSwitchFarm> farm(new GnmiSwitchFarm());
  farm->hub_ = std::make_unique<Hub>();
  farm->hub_->fabric = fabric;
  farm->hub_->options = options;
  const auto& switches = fabric->switches();
  for (size_t i = 0; i < switches.size(); ++i) {
    auto service = std::make_unique<SwitchService>(farm->hub_.get(), static_cast<int>(i));
    grpc::ServerBuilder builder;
    int selected = 0;
    const int want = options.port_base == 0 ? 0 : options.port_base + static_cast<int>(i);
    builder.AddListeningPort(absl::StrCat("127.0.0.1:", want), grpc::InsecureServerCredentials(),
                             &selected);
    builder.RegisterService(service.get());
    std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
    if (server == nullptr || selected == 0) {
      return absl::UnavailableError(
          absl::StrCat("gNMI server for ", switches[i].name, " cannot listen on 127.0.0.1:", want));
    }
    farm->services_.push_back(std::move(service));
    farm->servers_.push_back(std::move(server));
    farm->ports_.push_back(selected);
  }
  GnmiSwitchFarm* f = farm.get();
  farm->pump_ = std::thread([f] {
    pthread_setname_np(pthread_self(), "gnmi-pump");  // tells it apart in top -H and perf
    while (!f->stop_.WaitForNotificationWithTimeout(f->hub_->options.pump_period)) f->Pump();
  });
  return farm;
}

std::string GnmiSwitchFarm::address(int switch_index) const {
  return absl::StrCat("127.0.0.1:", ports_[switch_index]);
}

void GnmiSwitchFarm::Pump() {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&hub_->mu);
  for (SubscribeStream* s : hub_->streams) s->Pump(now);
}

void GnmiSwitchFarm::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  stop_.Notify();
  if (pump_.joinable()) pump_.join();
  // Open streams are cancelled at the deadline; their reactors finish and delete themselves.
  for (auto& s : servers_) s->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  for (auto& s : servers_) s->Wait();
}

GnmiSwitchFarm::GnmiSwitchFarm() = default;
GnmiSwitchFarm::~GnmiSwitchFarm() { Shutdown(); }

}  // namespace railwatch::sim
