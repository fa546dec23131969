#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gnmi/gnmi.grpc.pb.h"
#include "grpcpp/server.h"

namespace railwatch::testing {

// An in-process gNMI target: a real grpc::Server on 127.0.0.1 (port 0 unless told), one or
// many listening ports (each port stands for one switch), served with the callback API so
// that hundreds of open streams cost no thread each.
//
// STREAM subscriptions get sync_response at once and then whatever the test Broadcast()s;
// ONCE subscriptions get the snapshot, sync_response, and the end of the stream; POLL
// subscriptions get the snapshot and sync_response on each Poll.
class FakeGnmiTarget {
 public:
  struct Options {
    int ports = 1;
    // Bind exactly these ports instead (a restart on the same addresses).
    std::vector<int> fixed_ports;
    // TLS when set (PEM); with client_ca_pem, client certificates are required and verified.
    std::string server_cert_pem;
    std::string server_key_pem;
    std::string client_ca_pem;
    // A Subscribe that names a path containing one of these is refused with NOT_FOUND, as a
    // real target refuses a path it does not serve. By default the shipped profiles' optional
    // paths (port identity, transceivers, pre-FEC BER): most tests want the one stream that
    // carries what they broadcast.
    std::vector<std::string> refused_paths = {
        "/ethernet/state/mac-address", "/ethernet/state/port-speed", "/PORT_TABLE",
        "/components/", "/state/transceiver", "/pre-fec-ber", "/TRANSCEIVER_"};
  };

  explicit FakeGnmiTarget(Options options);
  ~FakeGnmiTarget();

  absl::Status Start();
  // Shuts the server down at once: open streams are cancelled (clients see the stream end).
  void Stop();

  const std::vector<int>& ports() const { return ports_; }
  std::string address(size_t i = 0) const;

  // Sends `response` to every open STREAM subscription; returns how many streams got it.
  int Broadcast(const ::gnmi::SubscribeResponse& response);
  // The same, to the STREAM subscriptions whose prefix names gNMI target `prefix_target` only.
  int Broadcast(const ::gnmi::SubscribeResponse& response, const std::string& prefix_target);
  int stream_count() const;
  // Subscribe calls taken since Start (a client that resubscribes counts again).
  int subscribes() const;
  // Subscribe calls refused for a path in Options::refused_paths.
  int refusals() const;
  bool WaitForStreams(int n, absl::Duration timeout) const;

  void SetSnapshot(std::vector<::gnmi::Notification> snapshot);
  std::multimap<std::string, std::string> last_metadata() const;
  ::gnmi::SubscribeRequest last_request() const;
  int polls() const;

  class Stream;
  class Service;

 private:
  friend class Stream;
  friend class Service;
  void Register(Stream* s);
  void Unregister(Stream* s);

  Options options_;
  std::vector<int> ports_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;

  mutable absl::Mutex mu_;
  std::vector<Stream*> streams_ ABSL_GUARDED_BY(mu_);
  std::vector<::gnmi::Notification> snapshot_ ABSL_GUARDED_BY(mu_);
  std::multimap<std::string, std::string> last_metadata_ ABSL_GUARDED_BY(mu_);
  ::gnmi::SubscribeRequest last_request_ ABSL_GUARDED_BY(mu_);
  int polls_ ABSL_GUARDED_BY(mu_) = 0;
  int subscribes_ ABSL_GUARDED_BY(mu_) = 0;
  int refusals_ ABSL_GUARDED_BY(mu_) = 0;
};

// A notification with one update: `path` (gNMI path string) = uint_val `value` at `time`.
::gnmi::SubscribeResponse UintUpdate(const std::string& path, uint64_t value, int64_t time);
::gnmi::SubscribeResponse StringUpdate(const std::string& path, const std::string& value,
                                       int64_t time);
::gnmi::SubscribeResponse DoubleUpdate(const std::string& path, double value, int64_t time);

}  // namespace railwatch::testing
