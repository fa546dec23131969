#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "sim/switch_model.h"

namespace grpc {
class Server;
}

namespace railwatch::sim {

struct GnmiServeOptions {
  // Switch i listens on 127.0.0.1:<port_base + i>; 0: a free port each.
  int port_base = 0;
  // Non-empty: every RPC must carry gRPC metadata username/password equal to these, else
  // UNAUTHENTICATED.
  std::string username, password;
  absl::Duration default_sample_interval = absl::Seconds(1);
  absl::Duration min_sample_interval = absl::Milliseconds(100);
  // How often due samples and ON_CHANGE differences are looked for (besides Pump()).
  absl::Duration pump_period = absl::Milliseconds(20);
};

// One gNMI server per simulated switch, each on its own loopback port, all in one process.
// Subscribe runs on gRPC's callback API and one pump thread renders every due sample, so the
// thread count does not grow with switches or streams. Capabilities and Subscribe (STREAM with
// SAMPLE / ON_CHANGE / TARGET_DEFINED (ON_CHANGE for state leaves, SAMPLE for counters), ONCE,
// POLL) are served; Get and Set answer UNIMPLEMENTED.
class GnmiSwitchFarm {
 public:
  static absl::StatusOr<std::unique_ptr<GnmiSwitchFarm>> Start(const SwitchFabric* fabric,
                                                               GnmiServeOptions options);
  ~GnmiSwitchFarm();

  int port(int switch_index) const { return ports_[switch_index]; }
  std::string address(int switch_index) const;

  // Sends what is due now: call it after the fabric changed so that ON_CHANGE updates leave
  // at once (a flap's DOWN before its UP).
  void Pump();
  // Ends every stream and stops the servers; also done by the destructor.
  void Shutdown();

  struct Hub;

 private:
  GnmiSwitchFarm();

  std::unique_ptr<Hub> hub_;
  std::vector<std::unique_ptr<class SwitchService>> services_;
  std::vector<std::unique_ptr<grpc::Server>> servers_;
  std::vector<int> ports_;
  absl::Notification stop_;
  std::thread pump_;
  bool shut_down_ = false;
};

}  // namespace railwatch::sim
