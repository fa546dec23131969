#pragma once

// A fake railwatchd Query service on 127.0.0.1:0 for the CLI's tests: canned answers, every
// request recorded, WatchDiagnoses scripted (events, then an end status or an open stream
// until the client cancels), optionally over TLS.
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch::testing {

// What the fake answers. Set before Start(); the fake copies it.
struct FakeQueryData {
  std::vector<v1::Diagnosis> diagnoses;  // ListDiagnoses returns them all; GetDiagnosis by id
  v1::ListAgentsResponse agents;
  v1::TopologyResponse topology;
  v1::ListPlaybooksResponse playbooks;
  // QuerySeries by the exact query text; any other query is INVALID_ARGUMENT.
  std::map<std::string, v1::QuerySeriesResponse> series;
  // WatchDiagnoses: each call plays the next script (the last one repeats).
  struct WatchScript {
    std::vector<v1::DiagnosisEvent> events;
    // How the stream ends after the events; nullopt: it stays open until the client cancels.
    std::optional<grpc::Status> end = grpc::Status::OK;
  };
  std::vector<WatchScript> watches = {WatchScript{}};
};

struct FakeTls {
  std::string cert_pem, key_pem;
  std::string client_ca_pem;  // non-empty: require and verify a client certificate
};

class FakeQueryServer {
 public:
  explicit FakeQueryServer(FakeQueryData data, std::optional<FakeTls> tls = std::nullopt);
  ~FakeQueryServer();

  // "127.0.0.1:PORT"; empty if the server did not start.
  const std::string& address() const { return address_; }

  std::vector<v1::ListDiagnosesRequest> list_requests() const;
  std::vector<v1::WatchDiagnosesRequest> watch_requests() const;
  std::vector<v1::QuerySeriesRequest> series_requests() const;

 private:
  class Service;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

// Small builders for canned data.
v1::Diagnosis MakeDiagnosis(const std::string& id, const std::string& playbook,
                            v1::Severity severity, v1::DiagnosisState state,
                            const std::vector<std::pair<std::string, std::string>>& culprit,
                            const std::string& summary);
v1::Series MakeSeries(const std::string& name,
                      const std::vector<std::pair<std::string, std::string>>& labels,
                      const std::vector<std::pair<int64_t, double>>& points);
void AddLabel(google::protobuf::RepeatedPtrField<v1::Label>* labels, const std::string& name,
              const std::string& value);

// An ostream that a command writes from one thread while a test waits for its lines on
// another.
class SharedOutput : public std::ostream {
 public:
  SharedOutput() : std::ostream(&buffer_) {}
  std::string Text() const;
  // Waits until `n` lines were written.
  bool WaitForLines(int n, absl::Duration timeout) const;

 private:
  class Buffer : public std::streambuf {
   public:
    mutable absl::Mutex mu;
    std::string text ABSL_GUARDED_BY(mu);

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
  };
  Buffer buffer_;
};

// One command run in-process, as the binary would run it.
struct CliRun {
  int code;
  std::string out, err;
};
CliRun RunCli(const std::vector<std::string>& args, const CliOptions& options);
// Options that talk to `server` with a short deadline.
CliOptions OptionsFor(const FakeQueryServer& server);

}  // namespace railwatch::testing
