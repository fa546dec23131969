#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/time/time.h"
#include "gnmi/gnmi.grpc.pb.h"
#include "gtest/gtest.h"
#include "sim/gnmi_switch.h"
#include "sim/switch_model.h"

namespace railwatch::sim::testing {

// "/interfaces/interface[name=Ethernet1]/state" -> gnmi::Path (no escapes: test paths only).
::gnmi::Path P(std::string_view text, std::string_view target = {});
// The path of an update (prefix + path) as text, keys in map order.
std::string PathText(const ::gnmi::Path& prefix, const ::gnmi::Path& path);
// Every update of a notification by path text.
std::map<std::string, ::gnmi::TypedValue> Leaves(const ::gnmi::Notification& n);

::gnmi::SubscribeRequest StreamRequest(const std::vector<::gnmi::Path>& paths,
                                       ::gnmi::SubscriptionMode mode, absl::Duration interval,
                                       ::gnmi::SubscriptionList::Mode list_mode =
                                           ::gnmi::SubscriptionList::STREAM);

using Stream = grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>;

// Notifications up to the next sync_response (which must come).
std::vector<::gnmi::Notification> ReadUntilSync(Stream& s);
// One ONCE subscription to `path`: its one notification.
::gnmi::Notification Once(const ::gnmi::Path& path, std::unique_ptr<::gnmi::gNMI::Stub> stub,
                          std::unique_ptr<grpc::ClientContext> ctx);

// Every NIC of `hosts` x `nics` at these byte counts so far (packets of 4096 bytes), link up.
std::vector<NicTraffic> EveryNic(int hosts, int nics, uint64_t tx_bytes, uint64_t rx_bytes);
// A copy of one port's counters, read under the fabric's lock.
PortCounters CountersOf(const SwitchFabric& f, int switch_index, int port);

// A fabric of simulated switches with gNMI servers, whose NIC traffic the test moves by hand.
class SimGnmiTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> dialects, int hosts = 2, int nics = 4, int spines = 0,
             GnmiServeOptions options = {}, SwitchFabric::Options extra = {});
  void TearDown() override;
  // Moves every NIC's traffic on by `d` at full rate (link up NICs only) and the model with it.
  void Advance(absl::Duration d);
  void SetNicUp(int host, int nic, bool up);
  std::unique_ptr<::gnmi::gNMI::Stub> Stub(int switch_index);
  std::unique_ptr<grpc::ClientContext> Context(absl::Duration deadline = absl::Seconds(10));
  const NicTraffic& Nic(int host, int nic) const;

  std::unique_ptr<SwitchFabric> fabric_;
  std::unique_ptr<GnmiSwitchFarm> farm_;
  std::vector<NicTraffic> traffic_;
  absl::Time now_;
  int nics_ = 0;
  std::string username_, password_;
};

}  // namespace railwatch::sim::testing
