// Counter traps, one test per kind (issue 9 item 5; docs/STORE.md, "Counter semantics"): a
// reset, a wrap, a width change, a replaced NIC, readings out of order or too close never give
// rate() or increase() a rate above line rate, and never make the stored counter go down.
// The random traces are in counter_traps_property_test.cc.
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>

#include "gtest/gtest.h"
#include "store/counter_math.h"
#include "store/line_rate.h"
#include "store/series_store.h"

namespace railwatch {
namespace counter_traps_test {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr double k100G = 100e9 / 8;  // bytes per second
constexpr double kTwoTo32 = 4294967296.0;

class CounterTrapsTest : public ::testing::Test {
 protected:
  // A port's transmit bytes (a bytes counter: bounded by line rate).
  SeriesRef Bytes(uint32_t width_bits = 0) {
    return store_.Intern("fabric_rdma_port_transmit_bytes_total", port_,
                         TraitsOf("fabric_rdma_port_transmit_bytes_total", MetricKind::kCounter,
                                  width_bits));
  }
  // Tells the store the port's negotiated rate, as the RDMA collector does.
  void PortRate(double bytes_per_second, int64_t t = 0) {
    store_.Append(store_.Intern(kPortRateSeries, port_, TraitsOf(kPortRateSeries, MetricKind::kGauge)), t,
                  bytes_per_second);
  }
  double Increase(SeriesRef r, int64_t from = 0, int64_t to = 1'000 * kSec) {
    std::optional<CounterWindow> w = store_.Increase(r, from, to);
    EXPECT_TRUE(w.has_value());
    return w ? w->increase : -1;
  }
  double Latest(SeriesRef r) { return store_.Latest(r)->value; }
  // Appends (seconds, reading) pairs in the order given.
  void Feed(SeriesRef r, std::initializer_list<std::pair<int64_t, double>> samples) {
    for (const auto& [seconds, reading] : samples) store_.Append(r, seconds * kSec, reading);
  }

  Labels port_ = {{"device", "mlx5_0"}, {"host", "h1"}, {"port", "1"}};
  SeriesStore store_{SeriesStore::Options{.capacity = 64}};
};

TEST_F(CounterTrapsTest, ResetToZeroCountsFromZero) {
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 5e9);
  store_.Append(r, 2 * kSec, 6e9);
  store_.Append(r, 3 * kSec, 0);  // driver reload
  store_.Append(r, 4 * kSec, 2e9);
  EXPECT_DOUBLE_EQ(Increase(r), 1e9 + 0 + 2e9);
  EXPECT_DOUBLE_EQ(Latest(r), 8e9);  // never went down
  EXPECT_EQ(store_.stats().counter_resets, 1u);
}

TEST_F(CounterTrapsTest, ResetToSmallValueCountsTheValue) {
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 5e12);
  store_.Append(r, 2 * kSec, 1e9);  // reloaded and counted 1 GB since
  EXPECT_DOUBLE_EQ(Increase(r), 1e9);
  EXPECT_EQ(store_.stats().counter_resets, 1u);
  EXPECT_EQ(store_.stats().counter_steps_above_line_rate, 0u);
}

TEST_F(CounterTrapsTest, ThirtyTwoBitWrapCountsTheWrappedDistance) {
  SeriesRef r = Bytes(32);
  store_.Append(r, 1 * kSec, kTwoTo32 - 1000);
  store_.Append(r, 2 * kSec, 3000);
  EXPECT_DOUBLE_EQ(Increase(r), 4000);
  EXPECT_EQ(store_.stats().counter_wraps, 1u);
  EXPECT_EQ(store_.stats().counter_resets, 0u);
}

TEST_F(CounterTrapsTest, ResetThatLooksLikeAWrapAboveLineRateIsAReset) {
  // A 32-bit counter at 3e9 reloaded to 100: as a wrap that is 1.29e9 bytes in a second, more
  // than a 0.5 GB/s port carries (with its tolerance and burst: 1.05e9); as a reset, 100.
  PortRate(5e8);
  SeriesRef r = Bytes(32);
  store_.Append(r, 1 * kSec, 3e9);
  store_.Append(r, 2 * kSec, 100);
  EXPECT_DOUBLE_EQ(Increase(r), 100);
  EXPECT_EQ(store_.stats().counter_resets, 1u);
  EXPECT_EQ(store_.stats().counter_wraps, 0u);
}

TEST_F(CounterTrapsTest, WrapOfACounterOfUnknownWidthUndercountsNeverOvercounts) {
  SeriesRef r = Bytes();  // 64-bit as far as the store knows; the driver's is 32-bit
  store_.Append(r, 1 * kSec, kTwoTo32 - 1000);
  store_.Append(r, 2 * kSec, 3000);
  EXPECT_DOUBLE_EQ(Increase(r), 3000);  // a reset: the 1000 before the wrap are lost
}

TEST_F(CounterTrapsTest, DriverReloadThatChangesTheWidth) {
  SeriesRef r = Bytes();  // 64-bit before the reload
  store_.Append(r, 1 * kSec, 9e12);
  EXPECT_EQ(Bytes(32), r);  // the agent defines it again, now 32-bit
  EXPECT_EQ(store_.Meta(r).width_bits, 32u);
  store_.Append(r, 2 * kSec, 1e6);  // reloaded: counts from 0
  store_.Append(r, 3 * kSec, kTwoTo32 - 10);
  store_.Append(r, 4 * kSec, 90);  // and now wraps at 2^32
  EXPECT_DOUBLE_EQ(Increase(r), 1e6 + (kTwoTo32 - 10 - 1e6) + 100);
  EXPECT_EQ(store_.stats().counter_wraps, 1u);
}

TEST_F(CounterTrapsTest, ReplacedNicWhoseCounterStartsHigherIsRejected) {
  // The nasty one: the new NIC's counter is above the old one's, so it looks like traffic.
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 1e9);
  store_.Append(r, 2 * kSec, 2e9);
  store_.Append(r, 3 * kSec, 7e15);  // new NIC, same device name, counters since its boot
  store_.Append(r, 4 * kSec, 7e15 + 5e9);
  EXPECT_DOUBLE_EQ(Increase(r), 1e9 + 0 + 5e9);
  EXPECT_DOUBLE_EQ(Latest(r), 2e9 + 5e9);
  EXPECT_EQ(store_.stats().counter_steps_above_line_rate, 1u);
  const std::optional<CounterWindow> w = store_.Increase(r, 0, 10 * kSec);
  ASSERT_TRUE(w.has_value());
  EXPECT_LE(w->increase / (static_cast<double>(w->last_time - w->first_time) / 1e9),
            kDefaultLineRateBytesPerSecond);
}

TEST_F(CounterTrapsTest, ReplacedNicWhoseCounterStartsLowerButLargeIsRejected) {
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 9e15);
  store_.Append(r, 2 * kSec, 3e14);  // a reset, but 3e14 bytes in a second is no traffic
  store_.Append(r, 3 * kSec, 3e14 + 1e9);
  EXPECT_DOUBLE_EQ(Increase(r), 1e9);
  EXPECT_EQ(store_.stats().counter_steps_above_line_rate, 1u);
  EXPECT_EQ(store_.stats().counter_resets, 0u);
}

TEST_F(CounterTrapsTest, KnownPortRateBoundsTighterThanTheDefault) {
  PortRate(k100G);
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 2 * kSec, 12e9);  // 96 Gb/s: fits a 100 Gb/s port
  store_.Append(r, 3 * kSec, 12e9 + 40e9);  // 320 Gb/s: fits 800 Gb/s, not this port
  EXPECT_DOUBLE_EQ(Increase(r), 12e9);
  EXPECT_EQ(store_.stats().counter_steps_above_line_rate, 1u);
}

TEST_F(CounterTrapsTest, PortKeepsTheFastestRateItReported) {
  // A link that renegotiated down keeps the higher bound: traffic counted before the drop
  // is never rejected.
  PortRate(4 * k100G, 0);
  PortRate(k100G, 1 * kSec);
  PortRate(0, 2 * kSec);  // link down
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 2 * kSec, 40e9);
  EXPECT_DOUBLE_EQ(Increase(r), 40e9);
}

TEST_F(CounterTrapsTest, TinyStepMayCountNoMoreThanTheBurst) {
  PortRate(k100G);
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 1 * kSec + 1 * kMs, 2e10);  // 20 GB in 1 ms: more than 1 s of line rate
  store_.Append(r, 1 * kSec + 2 * kMs, 2e10 + 1e7);  // 10 MB: a stale counter catching up
  EXPECT_DOUBLE_EQ(Increase(r), 1e7);
  EXPECT_EQ(store_.stats().counter_steps_above_line_rate, 1u);
}

TEST_F(CounterTrapsTest, StaleCounterCatchingUpIsKeptSustainedOverrunIsNot) {
  // A switch refreshing its counters every 2 s, read every second at 96 Gb/s of 100: a flat
  // step, then one with two seconds of traffic. Twice line rate for two steps is no refresh.
  PortRate(k100G);
  SeriesRef r = Bytes();
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 2 * kSec, 0);
  store_.Append(r, 3 * kSec, 24e9);
  EXPECT_DOUBLE_EQ(Increase(r), 24e9);
  store_.Append(r, 4 * kSec, 48e9);
  EXPECT_DOUBLE_EQ(Increase(r), 24e9);
  EXPECT_EQ(store_.stats().counter_steps_above_line_rate, 1u);
}

TEST_F(CounterTrapsTest, EqualAndEarlierTimestampsAreDropped) {
  SeriesRef r = Bytes();
  Feed(r, {{2, 1e9}, {2, 9e15} /* same time */, {1, 0} /* earlier */, {3, 2e9}});
  EXPECT_DOUBLE_EQ(Increase(r), 1e9);
  EXPECT_EQ(store_.stats().samples_out_of_order, 2u);
}

TEST_F(CounterTrapsTest, InvalidReadingsAreDroppedAndCounted) {
  SeriesRef r = Bytes();
  Feed(r, {{1, 1e9},
           {2, std::numeric_limits<double>::quiet_NaN()},
           {3, -5},
           {4, std::numeric_limits<double>::infinity()},
           {5, 2e9}});
  EXPECT_DOUBLE_EQ(Increase(r), 1e9);
  EXPECT_EQ(store_.Range(r, 0, 10 * kSec).size(), 2u);
  EXPECT_EQ(store_.stats().counter_values_invalid, 3u);
}

TEST_F(CounterTrapsTest, PauseDurationCannotOutrunTheClock) {
  constexpr std::string_view kName = "fabric_pfc_pause_duration_microseconds_total";
  SeriesRef r = store_.Intern(kName, {{"host", "h1"}, {"interface", "eth0"}, {"priority", "3"}},
                              TraitsOf(kName, MetricKind::kCounter));
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 2 * kSec, 1e6);  // paused the whole second
  store_.Append(r, 3 * kSec, 1e6 + 5e6);  // paused 5 s in 1 s: a reset to a stale value
  EXPECT_DOUBLE_EQ(Increase(r), 1e6);
}

TEST_F(CounterTrapsTest, PauseFramesAreBoundedByTheMinimumFrame) {
  // 800 Gb/s / 84-byte frames = 1.19e9 frames a second at most.
  constexpr std::string_view kName = "fabric_pfc_pause_frames_total";
  SeriesRef r = store_.Intern(kName,
                              {{"direction", "tx"}, {"host", "h1"}, {"interface", "eth0"},
                               {"priority", "3"}},
                              TraitsOf(kName, MetricKind::kCounter));
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 2 * kSec, 1e9);
  store_.Append(r, 3 * kSec, 1e9 + 3e9);  // more than 1.1 s + 1 s of them
  EXPECT_DOUBLE_EQ(Increase(r), 1e9);
}

TEST_F(CounterTrapsTest, UnboundedCountersStillCorrectResetsAndWraps) {
  // Events have no line rate: any increase is taken; a reset still counts from 0.
  SeriesRef r = store_.Intern("fabric_rdma_link_downed_total", port_,
                              TraitsOf("fabric_rdma_link_downed_total", MetricKind::kCounter, 8));
  store_.Append(r, 1 * kSec, 250);
  store_.Append(r, 2 * kSec, 3);  // 8-bit wrap
  store_.Append(r, 3 * kSec, 1e12);
  EXPECT_DOUBLE_EQ(Increase(r), 9 + (1e12 - 3));
}

TEST_F(CounterTrapsTest, GaugesAreKeptAsRead) {
  SeriesRef g = store_.Intern("fabric_rdma_port_state", port_, MetricKind::kGauge);
  store_.Append(g, 1 * kSec, 4);
  store_.Append(g, 2 * kSec, 1);
  store_.Append(g, 3 * kSec, -2.5);
  EXPECT_DOUBLE_EQ(Latest(g), -2.5);
  EXPECT_EQ(store_.stats().counter_values_invalid, 0u);
}

TEST(CounterMathTest, AdvanceCounterPrefersAWrapThenAResetThenRejects) {
  EXPECT_EQ(AdvanceCounter(kTwoTo32 - 10, 5, 32, 100).trap, CounterTrap::kWrap);
  EXPECT_EQ(AdvanceCounter(kTwoTo32 - 10, 5, 32, 100).increase, 15);
  EXPECT_EQ(AdvanceCounter(kTwoTo32 - 10, 5, 32, 10).trap, CounterTrap::kReset);
  EXPECT_EQ(AdvanceCounter(kTwoTo32 - 10, 50, 32, 10).trap, CounterTrap::kAboveLineRate);
  EXPECT_EQ(AdvanceCounter(10, 500, 64, 100).increase, 0);
  EXPECT_EQ(AdvanceCounter(10, 500, 64).increase, 490);
  EXPECT_EQ(AdvanceCounter(10, -1, 64).trap, CounterTrap::kInvalidValue);
  // Fractions (a seconds counter) and integers beyond 2^53.
  EXPECT_DOUBLE_EQ(AdvanceCounter(1.5, 2.75, 0).increase, 1.25);
  EXPECT_EQ(AdvanceCounter(9007199254740992.0 * 4, 9007199254740992.0 * 4 + 8, 0).increase, 8);
  EXPECT_EQ(CounterTrapName(CounterTrap::kAboveLineRate), "above_line_rate");
}

TEST(LineRateTest, BoundsFollowTheUnit) {
  EXPECT_EQ(CounterBoundOf("fabric_rdma_port_transmit_bytes_total"), CounterBound::kBytes);
  EXPECT_EQ(CounterBoundOf("fabric_rdma_port_transmit_packets_total"),
            CounterBound::kRdmaPackets);
  EXPECT_EQ(CounterBoundOf("fabric_pfc_pause_frames_total"), CounterBound::kEthernetFrames);
  EXPECT_EQ(CounterBoundOf("fabric_switch_interface_receive_packets_total"),
            CounterBound::kEthernetFrames);
  EXPECT_EQ(CounterBoundOf("fabric_netdev_fec_corrected_bits_total"), CounterBound::kBits);
  EXPECT_EQ(CounterBoundOf("fabric_link_pause_duration_microseconds_total"),
            CounterBound::kMicroseconds);
  EXPECT_EQ(CounterBoundOf("fabric_rdma_link_downed_total"), CounterBound::kNone);
  EXPECT_EQ(CounterBoundOf("fabric_rdma_port_rate_bytes_per_second"), CounterBound::kNone);
  EXPECT_EQ(CounterBoundOf("no_such_total"), CounterBound::kNone);
  EXPECT_DOUBLE_EQ(MaxCounterRate(CounterBound::kBytes, 0), kDefaultLineRateBytesPerSecond);
  EXPECT_DOUBLE_EQ(MaxCounterRate(CounterBound::kBytes, k100G), k100G);
  EXPECT_DOUBLE_EQ(MaxCounterRate(CounterBound::kEthernetFrames, 84e9), 1e9);
  EXPECT_DOUBLE_EQ(MaxCounterRate(CounterBound::kMicroseconds, k100G), 1e6);
  EXPECT_TRUE(std::isinf(MaxCounterRate(CounterBound::kNone, k100G)));
}

TEST(LineRateTest, AllowanceCarriesAtMostTheBurst) {
  CounterAllowance a{0};
  const double allowed = a.Allowed(100, 2);  // 2 s at 100/s with the tolerance
  EXPECT_DOUBLE_EQ(allowed, 220);
  a.Spend(100, allowed, 20);
  EXPECT_DOUBLE_EQ(a.credit, 100 * kCounterBurstSeconds);  // 200 unused, capped
  a.Spend(100, a.Allowed(100, 1), 200);
  EXPECT_DOUBLE_EQ(a.credit, 10);
}

}  // namespace
}  // namespace railwatch
