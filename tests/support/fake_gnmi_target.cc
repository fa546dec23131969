#include "fake_gnmi_target.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "gnmi/decode.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace railwatch::testing {

class FakeGnmiTarget::Stream final
    : public grpc::ServerBidiReactor<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse> {
 public:
  Stream(FakeGnmiTarget& owner, grpc::CallbackServerContext* ctx) : owner_(owner) {
    std::multimap<std::string, std::string> md;
    for (const auto& [k, v] : ctx->client_metadata()) {
      md.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
    }
    {
      absl::MutexLock lock(&owner_.mu_);
      owner_.last_metadata_ = std::move(md);
    }
    StartRead(&request_);
  }

  void Enqueue(const ::gnmi::SubscribeResponse& r) {
    absl::MutexLock lock(&mu_);
    if (finishing_) return;
    queue_.push_back(r);
    if (!writing_) {
      writing_ = true;
      StartWrite(&queue_.front());
    }
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      FinishOnce(grpc::Status::OK);
      return;
    }
    if (request_.has_subscribe()) {
      if (const std::string refused = RefusedPath(); !refused.empty()) {
        {
          absl::MutexLock lock(&owner_.mu_);
          ++owner_.refusals_;
        }
        FinishOnce(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                absl::StrCat("no data at ", refused)));
        return;
      }
      mode_ = request_.subscribe().mode();
      prefix_target_ = request_.subscribe().prefix().target();
      {
        absl::MutexLock lock(&owner_.mu_);
        owner_.last_request_ = request_;
        ++owner_.subscribes_;
      }
      if (mode_ == ::gnmi::SubscriptionList::STREAM) {
        Enqueue(Sync());
        owner_.Register(this);
      } else if (mode_ == ::gnmi::SubscriptionList::ONCE) {
        SendSnapshot();
        absl::MutexLock lock(&mu_);
        finish_after_writes_ = true;
        if (!writing_) FinishLocked(grpc::Status::OK);
        return;  // no more reads: ONCE ends with the snapshot
      }
    } else if (request_.has_poll()) {
      {
        absl::MutexLock lock(&owner_.mu_);
        ++owner_.polls_;
      }
      SendSnapshot();
    }
    StartRead(&request_);
  }

  // The first subscribed path the target refuses to serve, as a path string; "" for none.
  std::string RefusedPath() const {
    for (const ::gnmi::Subscription& sub : request_.subscribe().subscription()) {
      const std::string path = GnmiPathString(sub.path());
      for (const std::string& r : owner_.options_.refused_paths) {
        if (path.find(r) != std::string::npos) return path;
      }
    }
    return "";
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    queue_.pop_front();
    if (!ok) {
      writing_ = false;
      FinishLocked(grpc::Status::CANCELLED);
      return;
    }
    if (!queue_.empty() && !finishing_) {
      StartWrite(&queue_.front());
      return;
    }
    writing_ = false;
    if (finish_after_writes_ || finish_pending_) FinishLocked(grpc::Status::OK);
  }

  void OnCancel() override { FinishOnce(grpc::Status::CANCELLED); }

  // The gNMI target its subscription's prefix names (set before the stream is registered;
  // request_ is the read buffer, reused by the next read).
  const std::string& prefix_target() const { return prefix_target_; }

  void OnDone() override {
    owner_.Unregister(this);
    delete this;
  }

 private:
  static ::gnmi::SubscribeResponse Sync() {
    ::gnmi::SubscribeResponse r;
    r.set_sync_response(true);
    return r;
  }

  void SendSnapshot() {
    std::vector<::gnmi::Notification> snapshot;
    {
      absl::MutexLock lock(&owner_.mu_);
      snapshot = owner_.snapshot_;
    }
    for (auto& n : snapshot) {
      ::gnmi::SubscribeResponse r;
      *r.mutable_update() = std::move(n);
      Enqueue(r);
    }
    Enqueue(Sync());
  }

  void FinishOnce(grpc::Status s) {
    absl::MutexLock lock(&mu_);
    FinishLocked(std::move(s));
  }

  void FinishLocked(grpc::Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finishing_ = true;
    // A write in flight completes first (OnWriteDone finishes then).
    if (writing_) {
      finish_pending_ = true;
      return;
    }
    finished_ = true;
    Finish(std::move(s));
  }

  FakeGnmiTarget& owner_;
  ::gnmi::SubscribeRequest request_;
  ::gnmi::SubscriptionList::Mode mode_ = ::gnmi::SubscriptionList::STREAM;
  std::string prefix_target_;
  absl::Mutex mu_;
  std::deque<::gnmi::SubscribeResponse> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_pending_ ABSL_GUARDED_BY(mu_) = false;
  bool finish_after_writes_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

class FakeGnmiTarget::Service final : public ::gnmi::gNMI::CallbackService {
 public:
  explicit Service(FakeGnmiTarget& owner) : owner_(owner) {}

  grpc::ServerUnaryReactor* Capabilities(grpc::CallbackServerContext* ctx,
                                         const ::gnmi::CapabilityRequest*,
                                         ::gnmi::CapabilityResponse* response) override {
    {
      std::multimap<std::string, std::string> md;
      for (const auto& [k, v] : ctx->client_metadata()) {
        md.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
      }
      absl::MutexLock lock(&owner_.mu_);
      owner_.last_metadata_ = std::move(md);
    }
    response->set_gnmi_version("0.10.0");
    response->add_supported_encodings(::gnmi::JSON_IETF);
    response->add_supported_encodings(::gnmi::PROTO);
    auto* model = response->add_supported_models();
    model->set_name("openconfig-interfaces");
    model->set_organization("OpenConfig working group");
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  grpc::ServerBidiReactor<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>* Subscribe(
      grpc::CallbackServerContext* ctx) override {
    return new Stream(owner_, ctx);
  }

 private:
  FakeGnmiTarget& owner_;
};

FakeGnmiTarget::FakeGnmiTarget(Options options) : options_(std::move(options)) {}

FakeGnmiTarget::~FakeGnmiTarget() { Stop(); }

absl::Status FakeGnmiTarget::Start() {
  service_ = std::make_unique<Service>(*this);
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (!options_.server_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions ssl(
        options_.client_ca_pem.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = options_.client_ca_pem;
    ssl.pem_key_cert_pairs.push_back({options_.server_key_pem, options_.server_cert_pem});
    creds = grpc::SslServerCredentials(ssl);
  } else {
    creds = grpc::InsecureServerCredentials();
  }
  grpc::ServerBuilder builder;
  std::vector<int> wanted = options_.fixed_ports;
  if (wanted.empty()) wanted.assign(static_cast<size_t>(options_.ports), 0);
  std::vector<std::unique_ptr<int>> bound;
  for (int port : wanted) {
    bound.push_back(std::make_unique<int>(0));
    builder.AddListeningPort(absl::StrCat("127.0.0.1:", port), creds, bound.back().get());
  }
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (!server_) return absl::UnavailableError("fake gNMI target: cannot start the server");
  ports_.clear();
  for (const auto& p : bound) {
    if (*p == 0) return absl::UnavailableError("fake gNMI target: a port did not bind");
    ports_.push_back(*p);
  }
  return absl::OkStatus();
}

void FakeGnmiTarget::Stop() {
  if (!server_) return;
  // A deadline in the past cancels the open streams instead of waiting for them to end.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  server_.reset();
  service_.reset();
}

std::string FakeGnmiTarget::address(size_t i) const {
  return absl::StrCat("127.0.0.1:", ports_.at(i));
}

void FakeGnmiTarget::Register(Stream* s) {
  absl::MutexLock lock(&mu_);
  streams_.push_back(s);
}

void FakeGnmiTarget::Unregister(Stream* s) {
  absl::MutexLock lock(&mu_);
  std::erase(streams_, s);
}

int FakeGnmiTarget::Broadcast(const ::gnmi::SubscribeResponse& response) {
  absl::MutexLock lock(&mu_);
  for (Stream* s : streams_) s->Enqueue(response);
  return static_cast<int>(streams_.size());
}

int FakeGnmiTarget::Broadcast(const ::gnmi::SubscribeResponse& response,
                              const std::string& prefix_target) {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (Stream* s : streams_) {
    if (s->prefix_target() != prefix_target) continue;
    s->Enqueue(response);
    ++n;
  }
  return n;
}

int FakeGnmiTarget::subscribes() const {
  absl::MutexLock lock(&mu_);
  return subscribes_;
}

int FakeGnmiTarget::stream_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(streams_.size());
}

bool FakeGnmiTarget::WaitForStreams(int n, absl::Duration timeout) const {
  struct Arg {
    const FakeGnmiTarget* t;
    int n;
  } arg{this, n};
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(
                                  +[](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                    return static_cast<int>(a->t->streams_.size()) >= a->n;
                                  },
                                  &arg),
                              timeout);
}

void FakeGnmiTarget::SetSnapshot(std::vector<::gnmi::Notification> snapshot) {
  absl::MutexLock lock(&mu_);
  snapshot_ = std::move(snapshot);
}

std::multimap<std::string, std::string> FakeGnmiTarget::last_metadata() const {
  absl::MutexLock lock(&mu_);
  return last_metadata_;
}

int FakeGnmiTarget::refusals() const {
  absl::MutexLock lock(&mu_);
  return refusals_;
}

::gnmi::SubscribeRequest FakeGnmiTarget::last_request() const {
  absl::MutexLock lock(&mu_);
  return last_request_;
}

int FakeGnmiTarget::polls() const {
  absl::MutexLock lock(&mu_);
  return polls_;
}

namespace {

::gnmi::SubscribeResponse Update(const std::string& path, int64_t time,
                                 ::gnmi::TypedValue value) {
  ::gnmi::SubscribeResponse r;
  ::gnmi::Notification& n = *r.mutable_update();
  n.set_timestamp(time);
  ::gnmi::Update& u = *n.add_update();
  absl::StatusOr<::gnmi::Path> p = ParseGnmiPath(path);
  if (p.ok()) *u.mutable_path() = *p;
  *u.mutable_val() = std::move(value);
  return r;
}

}  // namespace

::gnmi::SubscribeResponse UintUpdate(const std::string& path, uint64_t value, int64_t time) {
  ::gnmi::TypedValue v;
  v.set_uint_val(value);
  return Update(path, time, std::move(v));
}

::gnmi::SubscribeResponse StringUpdate(const std::string& path, const std::string& value,
                                       int64_t time) {
  ::gnmi::TypedValue v;
  v.set_string_val(value);
  return Update(path, time, std::move(v));
}

::gnmi::SubscribeResponse DoubleUpdate(const std::string& path, double value, int64_t time) {
  ::gnmi::TypedValue v;
  v.set_double_val(value);
  return Update(path, time, std::move(v));
}

}  // namespace railwatch::testing
