// The simulated switches' gNMI servers, through a raw gNMI stub.
#include <fstream>
#include <optional>

#include "nlohmann/json.hpp"
#include "unit/sim_gnmi/sim_gnmi_fixture.h"

namespace railwatch::sim::testing {
namespace gnmi_switch_test {

std::optional<uint64_t> SonicCounter(const ::gnmi::TypedValue& v, const std::string& field) {
  nlohmann::json j = nlohmann::json::parse(v.json_ietf_val(), nullptr, false);
  if (j.is_discarded() || !j.contains(field) || !j[field].is_string()) return std::nullopt;
  return std::stoull(j[field].get<std::string>());
}

struct CounterPaths {
  ::gnmi::Path subscribe;
  // Reads (in-octets, PFC pauses received on priority 3) from one notification.
  std::function<std::optional<std::pair<uint64_t, uint64_t>>(const ::gnmi::Notification&)> read;
};

// What each dialect is asked for: port 0's (host 1's) counters, as its network OS names them.
CounterPaths PathsFor(Dialect d) {
  if (d == Dialect::kSonic) {
    return {P("/COUNTERS/Ethernet0", "COUNTERS_DB"), [](const ::gnmi::Notification& n)
                -> std::optional<std::pair<uint64_t, uint64_t>> {
              if (n.update_size() != 1) return std::nullopt;
              auto octets = SonicCounter(n.update(0).val(), "SAI_PORT_STAT_IF_IN_OCTETS");
              auto pfc = SonicCounter(n.update(0).val(), "SAI_PORT_STAT_PFC_3_RX_PKTS");
              if (!octets || !pfc) return std::nullopt;
              return std::pair(*octets, *pfc);
            }};
  }
  const std::string port = d == Dialect::kCumulus ? "swp1" : "Ethernet1";
  std::string pfc_leaf;
  switch (d) {
    case Dialect::kAristaEos:
      pfc_leaf = "/interfaces/interface[name=" + port + "]/ethernet/pfc/priorities/priority[index=3]/state/in-frames";
      break;
    case Dialect::kCumulus:
      pfc_leaf = "/qos/interfaces/interface[interface-id=" + port +
                 "]/state/switch-priority[priority=3]/counters/in-pause-pkts";
      break;
    default:
      pfc_leaf = "/interfaces/interface[name=" + port + "]/ethernet/state/counters/in-mac-pause-frames";
  }
  const std::string octets_leaf = "/interfaces/interface[name=" + port + "]/state/counters/in-octets";
  // The whole interface subtree and the QoS tree: both leaves arrive in one notification.
  return {P("/..."), [=](const ::gnmi::Notification& n) -> std::optional<std::pair<uint64_t, uint64_t>> {
            auto leaves = Leaves(n);
            if (!leaves.contains(octets_leaf) || !leaves.contains(pfc_leaf)) return std::nullopt;
            return std::pair(leaves[octets_leaf].uint_val(), leaves[pfc_leaf].uint_val());
          }};
}

TEST_F(SimGnmiTest, CapabilitiesNameVersionModelsAndEncodings) {
  Start({"sonic", "arista-eos"});
  for (int i : {0, 1}) {
    ::gnmi::CapabilityResponse resp;
    grpc::Status s = Stub(i)->Capabilities(Context().get(), {}, &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(resp.gnmi_version(), "0.10.0");
    std::set<std::string> models;
    for (const auto& m : resp.supported_models()) models.insert(m.name());
    EXPECT_TRUE(models.contains("openconfig-interfaces"));
    EXPECT_EQ(models.contains("sonic-db"), i == 0);
    EXPECT_EQ(models.contains("arista-intf-augments"), i == 1);
    EXPECT_NE(std::find(resp.supported_encodings().begin(), resp.supported_encodings().end(),
                        ::gnmi::JSON_IETF),
              resp.supported_encodings().end());
  }
}

TEST_F(SimGnmiTest, StreamSampleFollowsTrafficInEveryDialect) {
  Start({"sonic", "arista-eos", "openconfig", "cumulus"});
  for (int i = 0; i < 4; ++i) {
    const Dialect d = fabric_->switches()[i].dialect;
    SCOPED_TRACE(DialectName(d));
    CounterPaths paths = PathsFor(d);
    auto ctx = Context();
    std::unique_ptr<Stream> stream = Stub(i)->Subscribe(ctx.get());
    ASSERT_TRUE(stream->Write(StreamRequest({paths.subscribe}, ::gnmi::SAMPLE, absl::Milliseconds(100))));
    std::vector<::gnmi::Notification> first = ReadUntilSync(*stream);
    ASSERT_EQ(first.size(), 1u);
    auto previous = paths.read(first[0]);
    ASSERT_TRUE(previous.has_value());
    EXPECT_EQ(previous->first, Nic(1, i).tx_bytes);  // the leaf port receives what the NIC sends
    EXPECT_GT(first[0].timestamp(), absl::ToUnixNanos(absl::Now() - absl::Minutes(1)));

    // Every sample is monotonic; the octets reach what the NIC sent after each step.
    for (int step = 0; step < 3; ++step) {
      Advance(absl::Seconds(2));
      const uint64_t want = Nic(1, i).tx_bytes;
      bool reached = false;
      ::gnmi::SubscribeResponse r;
      for (int reads = 0; reads < 50 && !reached && stream->Read(&r); ++reads) {
        ASSERT_TRUE(r.has_update());
        auto now = paths.read(r.update());
        ASSERT_TRUE(now.has_value());
        EXPECT_GE(now->first, previous->first);
        EXPECT_GE(now->second, previous->second);
        previous = now;
        reached = now->first == want;
      }
      EXPECT_TRUE(reached) << "in-octets never reached " << want;
    }
    // Benign pauses on priority 3 over 6 s: a healthy fabric is not all zeros.
    EXPECT_GT(previous->second, 0u);
    ctx->TryCancel();
  }
}

TEST_F(SimGnmiTest, OnChangeOperStatusGoesDownThenUpOnAFlap) {
  Start({"openconfig", "sonic"});
  struct Case {
    int sw;
    ::gnmi::Path path;
    std::string leaf;  // port 1 (host 2)'s oper-status
    std::string down, up;
    ::gnmi::SubscriptionMode mode;
  };
  const std::vector<Case> cases = {
      {0, P("/interfaces/interface[name=*]/state/oper-status"),
       "/interfaces/interface[name=Ethernet2]/state/oper-status", "DOWN", "UP", ::gnmi::ON_CHANGE},
      // TARGET_DEFINED, as the sonic profile asks: state leaves are sent on change.
      {1, P("/openconfig-interfaces:interfaces/interface[name=*]/state/oper-status", "OC-YANG"),
       "/openconfig-interfaces:interfaces/interface[name=Ethernet4]/state/oper-status",
       R"({"openconfig-interfaces:oper-status":"DOWN"})", R"({"openconfig-interfaces:oper-status":"UP"})",
       ::gnmi::TARGET_DEFINED}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.leaf);
    auto ctx = Context();
    std::unique_ptr<Stream> stream = Stub(c.sw)->Subscribe(ctx.get());
    ASSERT_TRUE(stream->Write(StreamRequest({c.path}, c.mode, absl::ZeroDuration())));
    std::vector<::gnmi::Notification> first = ReadUntilSync(*stream);
    ASSERT_EQ(first.size(), 1u);
    auto leaves = Leaves(first[0]);
    EXPECT_EQ(leaves.size(), 2u);  // both hosts' ports
    auto text = [](const ::gnmi::TypedValue& v) {
      return v.has_json_ietf_val() ? v.json_ietf_val() : v.string_val();
    };
    EXPECT_EQ(text(leaves[c.leaf]), c.up);

    const int nic = c.sw;  // leaf-r<k> holds NIC k
    for (bool up : {false, true}) {
      SetNicUp(2, nic, up);
      ::gnmi::SubscribeResponse r;
      ASSERT_TRUE(stream->Read(&r));
      auto changed = Leaves(r.update());
      ASSERT_EQ(changed.size(), 1u) << "only the flapped port changed";
      EXPECT_EQ(text(changed[c.leaf]), up ? c.up : c.down);
    }
    ctx->TryCancel();
  }
  // The flap counted two carrier transitions.
  ::gnmi::SubscribeRequest once = StreamRequest(
      {P("/interfaces/interface[name=Ethernet2]/state/counters/carrier-transitions")}, ::gnmi::SAMPLE,
      absl::ZeroDuration(), ::gnmi::SubscriptionList::ONCE);
  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
  ASSERT_TRUE(stream->Write(once));
  std::vector<::gnmi::Notification> got = ReadUntilSync(*stream);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].update(0).val().uint_val(), 2u);
}

TEST_F(SimGnmiTest, OnChangeCounterFollowsEveryTickAndStateWaitsForAChange) {
  Start({"openconfig"}, 2, 1);
  const std::string octets = "/interfaces/interface[name=Ethernet1]/state/counters/in-octets";
  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
  ASSERT_TRUE(stream->Write(StreamRequest({P(octets), P("/interfaces/interface/state/oper-status")},
                                          ::gnmi::ON_CHANGE, absl::ZeroDuration())));
  ASSERT_EQ(ReadUntilSync(*stream).size(), 2u);
  for (int i = 0; i < 3; ++i) {
    Advance(absl::Milliseconds(100));
    ::gnmi::SubscribeResponse r;
    ASSERT_TRUE(stream->Read(&r));
    auto changed = Leaves(r.update());
    ASSERT_EQ(changed.size(), 1u) << "the counter moved; the ports' states did not";
    EXPECT_EQ(changed[octets].uint_val(), CountersOf(*fabric_, 0, 0).in_octets);
  }
  SetNicUp(2, 0, false);
  // The tick of the flap moved the counter and took port 2 down: both changes, in order.
  std::map<std::string, ::gnmi::TypedValue> changed;
  while (!changed.contains("/interfaces/interface[name=Ethernet2]/state/oper-status")) {
    ::gnmi::SubscribeResponse r;
    ASSERT_TRUE(stream->Read(&r));
    changed.merge(Leaves(r.update()));
  }
  EXPECT_EQ(changed["/interfaces/interface[name=Ethernet2]/state/oper-status"].string_val(), "DOWN");
  ctx->TryCancel();
}

TEST_F(SimGnmiTest, OnceSendsOneSetThenEndsAndRefusesUnknownPaths) {
  Start({"arista-eos"}, 2, 1);
  {
    auto ctx = Context();
    std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
    ASSERT_TRUE(stream->Write(StreamRequest({P("/interfaces/interface[name=Ethernet1]/ethernet/pfc")},
                                            ::gnmi::SAMPLE, absl::ZeroDuration(),
                                            ::gnmi::SubscriptionList::ONCE)));
    std::vector<::gnmi::Notification> got = ReadUntilSync(*stream);
    ASSERT_EQ(got.size(), 1u);
    // 8 priorities x in/out frames, plus the watchdog's stuck and recovery counts on queues 3, 4.
    EXPECT_EQ(got[0].update_size(), 8 * 2 + 2 * 2);
    EXPECT_TRUE(Leaves(got[0]).contains(
        "/interfaces/interface[name=Ethernet1]/ethernet/pfc/watchdog/tx-queues/tx-queue[queue=3]/state/stuck-count"));
    ::gnmi::SubscribeResponse r;
    EXPECT_FALSE(stream->Read(&r));
    EXPECT_TRUE(stream->Finish().ok());
  }
  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
  ASSERT_TRUE(stream->Write(StreamRequest({P("/interfaces/interface[name=Ethernet99]/state")}, ::gnmi::SAMPLE,
                                          absl::ZeroDuration(), ::gnmi::SubscriptionList::ONCE)));
  ::gnmi::SubscribeResponse r;
  EXPECT_FALSE(stream->Read(&r));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SimGnmiTest, PollSendsOneSetPerPoll) {
  Start({"cumulus"}, 2, 1);
  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
  ASSERT_TRUE(stream->Write(StreamRequest({P("/interfaces/interface[name=swp1]/state/counters/in-octets")},
                                          ::gnmi::SAMPLE, absl::ZeroDuration(),
                                          ::gnmi::SubscriptionList::POLL)));
  uint64_t last = ReadUntilSync(*stream).at(0).update(0).val().uint_val();
  for (int poll = 0; poll < 2; ++poll) {
    Advance(absl::Seconds(1));
    ::gnmi::SubscribeRequest p;
    p.mutable_poll();
    ASSERT_TRUE(stream->Write(p));
    std::vector<::gnmi::Notification> got = ReadUntilSync(*stream);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].update(0).val().uint_val(), Nic(1, 0).tx_bytes);
    EXPECT_GT(got[0].update(0).val().uint_val(), last);
    last = got[0].update(0).val().uint_val();
  }
  ctx->TryCancel();
}

TEST_F(SimGnmiTest, WildcardsExpandToWhatTheSwitchHas) {
  Start({"openconfig", "sonic"}, 3, 2, 1);
  // 3 host ports and 1 uplink per leaf.
  auto n = Once(P("/qos/interfaces/interface[interface-id=*]/output/queues/queue[name=3]/state/ecn-marked-pkts"),
                Stub(0), Context());
  EXPECT_EQ(n.update_size(), 4);
  n = Once(P("/interfaces/interface/state/oper-status"), Stub(0), Context());
  EXPECT_EQ(n.update_size(), 4);
  n = Once(P("/lldp/interfaces/interface[name=Ethernet4]/neighbors/neighbor/state/system-name"), Stub(0),
           Context());
  ASSERT_EQ(n.update_size(), 1);
  EXPECT_EQ(n.update(0).val().string_val(), "spine-0");
  n = Once(P("/interfaces/*/state/counters/in-octets"), Stub(0), Context());
  EXPECT_EQ(n.update_size(), 4);

  // SONiC: Ethernet* inside the name, one blob keyed by port, counters as strings.
  n = Once(P("/COUNTERS/Ethernet*/SAI_PORT_STAT_PFC_3_RX_PKTS", "COUNTERS_DB"), Stub(1), Context());
  ASSERT_EQ(n.update_size(), 1);
  EXPECT_EQ(n.prefix().target(), "COUNTERS_DB");
  EXPECT_EQ(n.update(0).path().elem(1).name(), "Ethernet*");
  nlohmann::json j = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  std::set<std::string> ports;
  for (auto& [port, fields] : j.items()) {
    ports.insert(port);
    EXPECT_TRUE(fields["SAI_PORT_STAT_PFC_3_RX_PKTS"].is_string());
  }
  EXPECT_EQ(ports, (std::set<std::string>{"Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"}));
  n = Once(P("/COUNTERS/Ethernet*/Queues", "COUNTERS_DB"), Stub(1), Context());
  j = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  EXPECT_EQ(j.size(), 4u * kQueues);
  EXPECT_TRUE(j.contains("Ethernet8:3"));
  EXPECT_TRUE(j["Ethernet8:3"]["SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"].is_string());
  EXPECT_EQ(j["Ethernet8:3"]["PFC_WD_STATUS"], "operational");
}

TEST_F(SimGnmiTest, SonicServesStringsInsideJsonIetfAsTheRealTargetDoes) {
  Start({"sonic"}, 2, 1);
  auto n = Once(P("/COUNTERS/Ethernet4", "COUNTERS_DB"), Stub(0), Context());
  ASSERT_EQ(n.update_size(), 1);
  ASSERT_TRUE(n.update(0).val().has_json_ietf_val());
  nlohmann::json port = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  EXPECT_EQ(port["SAI_PORT_STAT_IF_IN_OCTETS"], std::to_string(Nic(2, 0).tx_bytes));
  for (auto& [name, value] : port.items()) EXPECT_TRUE(value.is_string()) << name;
  // The same field names as a real SONiC's port hash (sonic-gnmi's test data).
  std::ifstream in(std::string(RAILWATCH_FIXTURES_DIR) + "/gnmi/sonic_testdata_COUNTERS_Ethernet68_port_counters_incl_PFC.json");
  nlohmann::json real = nlohmann::json::parse(in);
  // Link-level pause counters (SAI_PORT_STAT_PAUSE_*) and the FEC counters
  // (SAI_PORT_STAT_IF_IN_FEC_*, polled since sonic-swss#1994) are SAI port stats the sample's
  // build does not poll; the rest must be names a real SONiC uses.
  for (auto& [name, value] : port.items()) {
    if (name.rfind("SAI_PORT_STAT_PAUSE_", 0) == 0) continue;
    if (name.rfind("SAI_PORT_STAT_IF_IN_FEC_", 0) == 0) continue;
    EXPECT_TRUE(real.contains(name)) << name;
  }

  n = Once(P("/COUNTERS/Ethernet4/SAI_PORT_STAT_PFC_3_TX_PKTS", "COUNTERS_DB"), Stub(0), Context());
  ASSERT_EQ(n.update_size(), 1);
  EXPECT_TRUE(n.update(0).val().has_string_val());

  // Pfcwd: the lossless queues with the fields sonic-gnmi's test data has.
  n = Once(P("/COUNTERS/Ethernet4/Pfcwd", "COUNTERS_DB"), Stub(0), Context());
  nlohmann::json wd = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  std::ifstream real_in(std::string(RAILWATCH_FIXTURES_DIR) + "/gnmi/sonic_testdata_COUNTERS_Ethernet68_Pfcwd.json");
  nlohmann::json real_wd = nlohmann::json::parse(real_in);
  ASSERT_EQ(wd.size(), real_wd.size());
  for (const char* q : {"3", "4"}) {
    ASSERT_TRUE(wd.contains(std::string("Ethernet4:") + q));
    for (auto& [name, value] : wd[std::string("Ethernet4:") + q].items()) {
      EXPECT_TRUE(real_wd[std::string("Ethernet68:") + q].contains(name)) << name;
    }
  }
}

// Each port's own identity, as each network OS serves it: openconfig-if-ethernet's
// mac-address and port-speed (an identityref with its module), SONiC's APPL_DB PORT_TABLE
// (speed in Mb/s). The simulated Cumulus switch serves neither leaf: a stream that asks for
// nothing else is refused, as the switch agent's optional subscriptions expect.
TEST_F(SimGnmiTest, PortsOwnMacAndSpeedAsEachDialectServesThem) {
  Start({"openconfig", "sonic", "cumulus"}, 2, 3);
  auto n = Once(P("/interfaces/interface[name=Ethernet1]/ethernet/state/port-speed"), Stub(0), Context());
  ASSERT_EQ(n.update_size(), 1);
  EXPECT_EQ(n.update(0).val().string_val(), "openconfig-if-ethernet:SPEED_400GB");
  n = Once(P("/interfaces/interface[name=*]/ethernet/state/mac-address"), Stub(0), Context());
  ASSERT_EQ(n.update_size(), 2);
  std::set<std::string> macs;
  for (const ::gnmi::Update& u : n.update()) {
    EXPECT_EQ(u.val().string_val().size(), 17u) << u.val().string_val();
    macs.insert(u.val().string_val());
  }
  EXPECT_EQ(macs.size(), 2u);  // one MAC per port

  n = Once(P("/PORT_TABLE/Ethernet*", "APPL_DB"), Stub(1), Context());
  ASSERT_EQ(n.update_size(), 1);
  const nlohmann::json ports = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  ASSERT_EQ(ports.size(), 2u);
  for (auto& [port, fields] : ports.items()) {
    EXPECT_EQ(fields["speed"], "400000") << port;
    EXPECT_EQ(fields["oper_status"], "up") << port;
  }

  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(2)->Subscribe(ctx.get());
  ASSERT_TRUE(stream->Write(StreamRequest({P("/interfaces/interface[name=*]/ethernet/state/mac-address")},
                                          ::gnmi::ON_CHANGE, absl::ZeroDuration())));
  ::gnmi::SubscribeResponse r;
  EXPECT_FALSE(stream->Read(&r));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(SimGnmiTest, WrongCredentialsAreUnauthenticated) {
  GnmiServeOptions o;
  o.username = "admin";
  o.password = "s3cret";
  Start({"openconfig"}, 1, 1, 0, o);
  ::gnmi::CapabilityResponse resp;
  EXPECT_TRUE(Stub(0)->Capabilities(Context().get(), {}, &resp).ok());
  password_ = "wrong";
  EXPECT_EQ(Stub(0)->Capabilities(Context().get(), {}, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
  stream->Write(StreamRequest({P("/interfaces")}, ::gnmi::SAMPLE, absl::Seconds(1)));
  ::gnmi::SubscribeResponse r;
  EXPECT_FALSE(stream->Read(&r));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(SimGnmiTest, StreamIgnoresUnknownPathsAndServesTheRest) {
  Start({"openconfig"}, 1, 1);
  auto ctx = Context();
  std::unique_ptr<Stream> stream = Stub(0)->Subscribe(ctx.get());
  ASSERT_TRUE(stream->Write(StreamRequest({P("/no/such/thing"), P("/interfaces/interface[name=Ethernet1]/state/oper-status")},
                                          ::gnmi::SAMPLE, absl::Milliseconds(10))));
  std::vector<::gnmi::Notification> got = ReadUntilSync(*stream);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].update(0).val().string_val(), "UP");
  // A 10 ms interval is raised to the 100 ms minimum: 5 intervals span at least ~500 ms (each
  // sample may leave up to one pump period late, the schedule does not drift).
  ::gnmi::SubscribeResponse a, b;
  ASSERT_TRUE(stream->Read(&a));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(stream->Read(&b));
  EXPECT_GE(b.update().timestamp() - a.update().timestamp(), 450'000'000);
  ctx->TryCancel();
}

TEST_F(SimGnmiTest, PfcStormPausesTheLeafRelaysAndTripsTheWatchdog) {
  SwitchFabric::Options extra;
  extra.storms.push_back({"gpu-node-001", "mlx5_0", absl::Seconds(1), absl::Seconds(10)});
  extra.storms.push_back({"gpu-node-002", "mlx5_1", absl::Seconds(1), absl::Seconds(10)});
  Start({"sonic", "arista-eos"}, 3, 2, 1, {}, extra);
  auto before = Once(P("/COUNTERS/Ethernet*", "COUNTERS_DB"), Stub(0), Context());
  for (int i = 0; i < 40; ++i) Advance(absl::Milliseconds(100));
  auto after = Once(P("/COUNTERS/Ethernet*", "COUNTERS_DB"), Stub(0), Context());
  nlohmann::json b = nlohmann::json::parse(before.update(0).val().json_ietf_val());
  nlohmann::json a = nlohmann::json::parse(after.update(0).val().json_ietf_val());
  auto delta = [&](const char* port, const char* field) {
    return std::stoull(a[port][field].get<std::string>()) - std::stoull(b[port][field].get<std::string>());
  };
  // The source's port receives a storm; the leaf's other ports (hosts and uplink) relay it.
  EXPECT_GT(delta("Ethernet0", "SAI_PORT_STAT_PFC_3_RX_PKTS"), 10000u);
  EXPECT_GT(delta("Ethernet4", "SAI_PORT_STAT_PFC_3_TX_PKTS"), 1000u);
  EXPECT_GT(delta("Ethernet12", "SAI_PORT_STAT_PFC_3_TX_PKTS"), 1000u);
  EXPECT_LT(delta("Ethernet4", "SAI_PORT_STAT_PFC_3_RX_PKTS"), 100u);
  auto wd = Once(P("/COUNTERS/Ethernet0/Pfcwd", "COUNTERS_DB"), Stub(0), Context());
  nlohmann::json w = nlohmann::json::parse(wd.update(0).val().json_ietf_val());
  EXPECT_EQ(w["Ethernet0:3"]["PFC_WD_STATUS"], "stormed");
  EXPECT_GE(std::stoull(w["Ethernet0:3"]["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"].get<std::string>()), 2u);
  EXPECT_EQ(w["Ethernet0:4"]["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"], "0");

  // Arista: host 2 is Ethernet2 on leaf-r1.
  auto eos = Once(P("/interfaces/interface[name=Ethernet2]/ethernet/pfc"), Stub(1), Context());
  auto leaves = Leaves(eos);
  EXPECT_GT(leaves["/interfaces/interface[name=Ethernet2]/ethernet/pfc/priorities/priority[index=3]/state/in-frames"]
                .uint_val(), 10000u);
  EXPECT_GE(leaves["/interfaces/interface[name=Ethernet2]/ethernet/pfc/watchdog/tx-queues/tx-queue[queue=3]/state/stuck-count"]
                .uint_val(), 1u);

  // Over: the watchdog restores and the storm stops.
  for (int i = 0; i < 80; ++i) Advance(absl::Milliseconds(100));
  wd = Once(P("/COUNTERS/Ethernet0/Pfcwd", "COUNTERS_DB"), Stub(0), Context());
  w = nlohmann::json::parse(wd.update(0).val().json_ietf_val());
  EXPECT_EQ(w["Ethernet0:3"]["PFC_WD_STATUS"], "operational");
  EXPECT_EQ(w["Ethernet0:3"]["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"],
            w["Ethernet0:3"]["PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"]);
}

int ThreadCount() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

TEST_F(SimGnmiTest, ThirtyTwoSwitchesWithStreamsKeepTheThreadCountBounded) {
  const int before = ThreadCount();
  Start({"sonic", "arista-eos", "openconfig", "cumulus"}, 4, 32);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int i = 0; i < 32; ++i) {
    const Dialect d = fabric_->switches()[i].dialect;
    contexts.push_back(Context());
    streams.push_back(Stub(i)->Subscribe(contexts.back().get()));
    ASSERT_TRUE(streams.back()->Write(StreamRequest({PathsFor(d).subscribe}, ::gnmi::SAMPLE, absl::Seconds(1))));
    ReadUntilSync(*streams.back());
  }
  const int after = ThreadCount();
  std::printf("threads: %d before, %d with 32 switches and 32 streams\n", before, after);
  EXPECT_LT(after - before, 32) << "a thread per switch or per stream";
  for (auto& c : contexts) c->TryCancel();
}

}  // namespace
}  // namespace railwatch::sim::testing
