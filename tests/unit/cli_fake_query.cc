#include "cli_fake_query.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace railwatch::testing {

namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

class FakeQueryServer::Service : public v1::Query::CallbackService {
 public:
  explicit Service(FakeQueryData data) : data_(std::move(data)) {}

  grpc::ServerUnaryReactor* ListDiagnoses(grpc::CallbackServerContext* context,
                                          const v1::ListDiagnosesRequest* request,
                                          v1::ListDiagnosesResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      list_requests_.push_back(*request);
    }
    for (const v1::Diagnosis& d : data_.diagnoses) *response->add_diagnoses() = d;
    return Done(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* GetDiagnosis(grpc::CallbackServerContext* context,
                                         const v1::GetDiagnosisRequest* request,
                                         v1::Diagnosis* response) override {
    for (const v1::Diagnosis& d : data_.diagnoses) {
      if (d.id() == request->id()) {
        *response = d;
        return Done(context, grpc::Status::OK);
      }
    }
    return Done(context, grpc::Status(grpc::StatusCode::NOT_FOUND,
                                      "no diagnosis with id \"" + request->id() + "\""));
  }

  grpc::ServerWriteReactor<v1::DiagnosisEvent>* WatchDiagnoses(
      grpc::CallbackServerContext* /*context*/,
      const v1::WatchDiagnosesRequest* request) override {
    size_t call;
    {
      absl::MutexLock lock(&mu_);
      call = watch_requests_.size();
      watch_requests_.push_back(*request);
    }
    const FakeQueryData::WatchScript& script =
        data_.watches[std::min(call, data_.watches.size() - 1)];
    return new EventWriter(script);
  }

  grpc::ServerUnaryReactor* QuerySeries(grpc::CallbackServerContext* context,
                                        const v1::QuerySeriesRequest* request,
                                        v1::QuerySeriesResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      series_requests_.push_back(*request);
    }
    auto it = data_.series.find(request->query());
    if (it == data_.series.end()) {
      return Done(context, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                        "1:1: unknown query " + request->query()));
    }
    *response = it->second;
    return Done(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ListAgents(grpc::CallbackServerContext* context,
                                       const v1::ListAgentsRequest* /*request*/,
                                       v1::ListAgentsResponse* response) override {
    *response = data_.agents;
    return Done(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* Topology(grpc::CallbackServerContext* context,
                                     const v1::TopologyRequest* /*request*/,
                                     v1::TopologyResponse* response) override {
    *response = data_.topology;
    return Done(context, grpc::Status::OK);
  }

  grpc::ServerUnaryReactor* ListPlaybooks(grpc::CallbackServerContext* context,
                                          const v1::ListPlaybooksRequest* /*request*/,
                                          v1::ListPlaybooksResponse* response) override {
    *response = data_.playbooks;
    return Done(context, grpc::Status::OK);
  }

  mutable absl::Mutex mu_;
  std::vector<v1::ListDiagnosesRequest> list_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::WatchDiagnosesRequest> watch_requests_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::QuerySeriesRequest> series_requests_ ABSL_GUARDED_BY(mu_);

 private:
  // Writes the script's events one at a time, then ends the stream as scripted (or holds it
  // open until the client cancels).
  class EventWriter : public grpc::ServerWriteReactor<v1::DiagnosisEvent> {
   public:
    explicit EventWriter(const FakeQueryData::WatchScript& script) : script_(script) {
      absl::MutexLock lock(&mu_);
      NextLocked();
    }
    void OnWriteDone(bool ok) override {
      absl::MutexLock lock(&mu_);
      if (!ok) {
        FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
        return;
      }
      NextLocked();
    }
    void OnCancel() override {
      absl::MutexLock lock(&mu_);
      FinishLocked(grpc::Status::CANCELLED);
    }
    void OnDone() override { delete this; }

   private:
    void NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (next_ < script_.events.size()) {
        StartWrite(&script_.events[next_++]);
        return;
      }
      if (script_.end.has_value()) FinishLocked(*script_.end);
    }
    void FinishLocked(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      if (finished_) return;
      finished_ = true;
      Finish(std::move(status));
    }

    absl::Mutex mu_;
    const FakeQueryData::WatchScript& script_;
    size_t next_ ABSL_GUARDED_BY(mu_) = 0;
    bool finished_ ABSL_GUARDED_BY(mu_) = false;
  };

  const FakeQueryData data_;
};

FakeQueryServer::FakeQueryServer(FakeQueryData data, std::optional<FakeTls> tls)
    : service_(std::make_unique<Service>(std::move(data))) {
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (tls.has_value()) {
    grpc::SslServerCredentialsOptions ssl(
        tls->client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                   : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_root_certs = tls->client_ca_pem;
    ssl.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", credentials, &port);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ != nullptr && port > 0) address_ = "127.0.0.1:" + std::to_string(port);
}

FakeQueryServer::~FakeQueryServer() {
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
}

std::vector<v1::ListDiagnosesRequest> FakeQueryServer::list_requests() const {
  absl::MutexLock lock(&service_->mu_);
  return service_->list_requests_;
}

std::vector<v1::WatchDiagnosesRequest> FakeQueryServer::watch_requests() const {
  absl::MutexLock lock(&service_->mu_);
  return service_->watch_requests_;
}

std::vector<v1::QuerySeriesRequest> FakeQueryServer::series_requests() const {
  absl::MutexLock lock(&service_->mu_);
  return service_->series_requests_;
}

void AddLabel(google::protobuf::RepeatedPtrField<v1::Label>* labels, const std::string& name,
              const std::string& value) {
  v1::Label* l = labels->Add();
  l->set_name(name);
  l->set_value(value);
}

v1::Diagnosis MakeDiagnosis(const std::string& id, const std::string& playbook,
                            v1::Severity severity, v1::DiagnosisState state,
                            const std::vector<std::pair<std::string, std::string>>& culprit,
                            const std::string& summary) {
  v1::Diagnosis d;
  d.set_id(id);
  d.set_playbook(playbook);
  d.set_severity(severity);
  d.set_state(state);
  d.set_summary(summary);
  for (const auto& [name, value] : culprit) AddLabel(d.mutable_culprit(), name, value);
  return d;
}

v1::Series MakeSeries(const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& labels,
                      const std::vector<std::pair<int64_t, double>>& points) {
  v1::Series s;
  s.set_name(name);
  for (const auto& [n, v] : labels) AddLabel(s.mutable_labels(), n, v);
  for (const auto& [t, v] : points) {
    v1::EvidencePoint* p = s.add_points();
    p->set_time_unix_nano(t);
    p->set_value(v);
  }
  return s;
}

SharedOutput::Buffer::int_type SharedOutput::Buffer::overflow(int_type c) {
  if (c == traits_type::eof()) return traits_type::not_eof(c);
  absl::MutexLock lock(&mu);
  text.push_back(traits_type::to_char_type(c));
  return c;
}

std::streamsize SharedOutput::Buffer::xsputn(const char* s, std::streamsize n) {
  absl::MutexLock lock(&mu);
  text.append(s, n);
  return n;
}

std::string SharedOutput::Text() const {
  absl::MutexLock lock(&buffer_.mu);
  return buffer_.text;
}

bool SharedOutput::WaitForLines(int n, absl::Duration timeout) const {
  absl::MutexLock lock(&buffer_.mu);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(buffer_.mu) {
    return std::count(buffer_.text.begin(), buffer_.text.end(), '\n') >= n;
  };
  return buffer_.mu.AwaitWithTimeout(absl::Condition(&enough), timeout);
}

CliRun RunCli(const std::vector<std::string>& args, const CliOptions& options) {
  std::ostringstream out, err;
  int code = RunCommand(args, options, out, err);
  return {code, out.str(), err.str()};
}

CliOptions OptionsFor(const FakeQueryServer& server) {
  CliOptions o;
  o.server = server.address();
  o.timeout_seconds = 10;
  return o;
}

}  // namespace railwatch::testing
