// What the simulated NICs tell their leaf ports beyond bytes and packets (NicTraffic): the
// priority their traffic rides, a NIC gone from its host, frames corrupted on the link, and
// counters that restart from 0.
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "unit/sim_gnmi/sim_gnmi_fixture.h"

namespace railwatch::sim::testing {
namespace switch_nic_inputs_test {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

std::unique_ptr<SwitchFabric> Fabric(int hosts, int nics, int spines) {
  SwitchFabric::Options o;
  o.hosts = hosts;
  o.nics_per_host = nics;
  o.spines = spines;
  absl::StatusOr<std::unique_ptr<SwitchFabric>> f = SwitchFabric::Create(o, kStart);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? std::move(*f) : nullptr;
}

// Ticks `f` over seconds (from, to] with every NIC at 4 GB/s each way and 1000 ECN marks a
// second; `edit` changes the NICs' traffic before each tick.
void Tick(SwitchFabric& f, std::vector<NicTraffic>& nics, int from, int to,
         const std::function<void(std::vector<NicTraffic>&)>& edit = {}) {
  for (int s = from + 1; s <= to; ++s) {
    for (NicTraffic& n : nics) {
      n.tx_bytes += 4'000'000'000;
      n.rx_bytes += 4'000'000'000;
      n.tx_packets += 1'000'000;
      n.rx_packets += 1'000'000;
      n.ecn_marked += 1000;
    }
    if (edit) edit(nics);
    ASSERT_TRUE(f.Update(kStart + absl::Seconds(s), nics).ok());
  }
}

TEST(SwitchNicInputs, WrongPriorityTrafficRidesQueueZeroWithoutMarks) {
  auto f = Fabric(2, 1, 1);
  ASSERT_NE(f, nullptr);
  std::vector<NicTraffic> nics = EveryNic(2, 1, 0, 0);
  Tick(*f, nics, 0, 5);
  const PortCounters before = CountersOf(*f, 0, 1), uplink_before = CountersOf(*f, 0, 2);
  // gpu-node-002 loses its QoS: its traffic leaves on priority 0 (and the NIC still counts
  // marks of its own, which no leaf queue made).
  Tick(*f, nics, 5, 10, [](std::vector<NicTraffic>& t) { t[1].priority = 0; });
  const PortCounters after = CountersOf(*f, 0, 1), uplink_after = CountersOf(*f, 0, 2);
  EXPECT_EQ(after.queue_octets[kRocePriority], before.queue_octets[kRocePriority]);
  EXPECT_EQ(after.queue_ecn_marked[kRocePriority], before.queue_ecn_marked[kRocePriority]);
  EXPECT_EQ(after.queue_ecn_marked[0], 0u);
  EXPECT_GE(after.queue_octets[0] - before.queue_octets[0], 20'000'000'000u);
  EXPECT_EQ(after.out_octets - before.out_octets, 20'000'000'000u);
  // The healthy host's port keeps queue 3.
  EXPECT_EQ(CountersOf(*f, 0, 0).queue_octets[kRocePriority], 40'000'000'000u);
  // The uplink carries 5% of what each NIC sent (4 GB/s x 5 s), each in its queue (queue 0
  // also has its best-effort trickle).
  EXPECT_NEAR(static_cast<double>(uplink_after.queue_octets[kRocePriority] - uplink_before.queue_octets[kRocePriority]),
              1e9, 1e3);
  EXPECT_GE(uplink_after.queue_octets[0] - uplink_before.queue_octets[0], 1'000'000'000u);
}

TEST(SwitchNicInputs, AGoneNicTakesItsPortDownForGood) {
  auto f = Fabric(2, 1, 0);
  ASSERT_NE(f, nullptr);
  std::vector<NicTraffic> nics = EveryNic(2, 1, 0, 0);
  Tick(*f, nics, 0, 3);
  const PortCounters before = CountersOf(*f, 0, 0);
  // Gone at 4 s: the sysfs device is gone, its counters with it (the NIC side may report 0).
  Tick(*f, nics, 3, 10, [](std::vector<NicTraffic>& t) {
    t[0].gone = true;
    t[0].tx_bytes = t[0].rx_bytes = 0;
  });
  bool up = true;
  f->WithSwitch(0, [&](const SimSwitch& s) { up = s.ports[0].up; });
  EXPECT_FALSE(up);
  const PortCounters after = CountersOf(*f, 0, 0);
  EXPECT_EQ(after.carrier_transitions, 1u);
  EXPECT_EQ(after.in_octets, before.in_octets);
  EXPECT_EQ(after.out_octets, before.out_octets);
  EXPECT_EQ(after.in_pfc, before.in_pfc) << "a down port sees no pauses";
  // Whatever the NIC side says later, the port stays down.
  Tick(*f, nics, 10, 12, [](std::vector<NicTraffic>& t) {
    t[0].gone = false;
    t[0].up = true;
  });
  f->WithSwitch(0, [&](const SimSwitch& s) { up = s.ports[0].up; });
  EXPECT_FALSE(up);
  EXPECT_EQ(CountersOf(*f, 0, 0).carrier_transitions, 1u);
  EXPECT_GT(CountersOf(*f, 0, 1).in_octets, after.in_octets) << "the other host carries on";
}

TEST(SwitchNicInputs, ARestartedNicKeepsItsPortCounting) {
  auto f = Fabric(1, 1, 0);
  ASSERT_NE(f, nullptr);
  std::vector<NicTraffic> nics = EveryNic(1, 1, 0, 0);
  Tick(*f, nics, 0, 5);
  // A driver reload: the NIC's counters restart from 0, the switch port's never go back.
  for (NicTraffic& n : nics) n = {n.host, n.nic};
  Tick(*f, nics, 5, 7);
  const PortCounters c = CountersOf(*f, 0, 0);
  EXPECT_EQ(c.in_octets, 7 * 4'000'000'000ull);
  EXPECT_EQ(c.out_ucast_pkts, 7'000'000u);
  EXPECT_EQ(c.queue_ecn_marked[kRocePriority], 7000u);
}

TEST_F(SimGnmiTest, CorruptedFramesAreInErrorsAndTheDialectsCrcLeaf) {
  Start({"sonic", "arista-eos", "openconfig", "cumulus"}, 1, 4);
  for (NicTraffic& n : traffic_) n.corrupted_packets = 120;
  Advance(absl::Milliseconds(100));
  for (int sw = 0; sw < 4; ++sw) {
    const PortCounters c = CountersOf(*fabric_, sw, 0);
    EXPECT_EQ(c.in_errors, 120u) << sw;
    EXPECT_EQ(c.in_crc_errors, 120u) << sw;
  }
  const ::gnmi::Notification sonic = Once(P("/COUNTERS/Ethernet0", "COUNTERS_DB"), Stub(0), Context());
  ASSERT_EQ(sonic.update_size(), 1);
  const nlohmann::json j = nlohmann::json::parse(sonic.update(0).val().json_ietf_val());
  EXPECT_EQ(j["SAI_PORT_STAT_ETHER_STATS_CRC_ALIGN_ERRORS"], "120");
  EXPECT_EQ(j["SAI_PORT_STAT_IF_IN_ERRORS"], "120");
  for (int sw = 1; sw < 4; ++sw) {
    const std::string port = sw == 3 ? "swp1" : "Ethernet1";
    const std::string crc = "/interfaces/interface[name=" + port + "]/ethernet/state/counters/in-crc-errors";
    const std::string errors = "/interfaces/interface[name=" + port + "]/state/counters/in-errors";
    auto leaves = Leaves(Once(P("/interfaces/interface[name=" + port + "]"), Stub(sw), Context()));
    EXPECT_EQ(leaves[crc].uint_val(), 120u) << sw;
    EXPECT_EQ(leaves[errors].uint_val(), 120u) << sw;
  }
}

}  // namespace
}  // namespace railwatch::sim::testing
