// railwatch-loadgen's simulated host (bench/loadgen_plan.h): the series it defines and the
// values it sends must look like a real, healthy host agent's.
#include "bench/loadgen_plan.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace railwatch::loadgen {
namespace loadgen_plan_test {

std::string Key(const v1::SeriesDefinition& d) {
  std::string k = d.name();
  for (const v1::Label& l : d.labels()) k += "," + l.name() + "=" + l.value();
  return k;
}

TEST(LoadgenPlanTest, ExactlyTheSeriesAskedForEachOnceWithSortedLabelsAndTheHost) {
  for (int series : {1, 7, 1000, 3000}) {
    const HostPlan plan(series);
    ASSERT_EQ(plan.size(), static_cast<size_t>(series));
    v1::Batch batch;
    plan.FillDefinitions("load-00042", batch);
    ASSERT_EQ(batch.definitions_size(), series);
    std::set<std::string> keys;
    for (int i = 0; i < batch.definitions_size(); ++i) {
      const v1::SeriesDefinition& d = batch.definitions(i);
      EXPECT_EQ(d.id(), static_cast<uint32_t>(i));
      EXPECT_TRUE(keys.insert(Key(d)).second) << "defined twice: " << Key(d);
      bool has_host = false;
      for (int j = 0; j < d.labels_size(); ++j) {
        if (j > 0) {
          EXPECT_LT(d.labels(j - 1).name(), d.labels(j).name()) << Key(d);
        }
        has_host |= d.labels(j).name() == "host" && d.labels(j).value() == "load-00042";
      }
      EXPECT_TRUE(has_host) << Key(d);
      EXPECT_FALSE(d.help().empty()) << Key(d);
    }
  }
}

TEST(LoadgenPlanTest, SeriesAreSpreadOverEightNicsWithTrafficAndPfcFirst) {
  const HostPlan plan(1000);
  std::set<std::string> devices, interfaces, names;
  for (const SeriesTemplate& t : plan.series()) {
    names.insert(t.name);
    if (const std::string* d = FindLabel(t.labels, "device")) devices.insert(*d);
    if (const std::string* i = FindLabel(t.labels, "interface")) interfaces.insert(*i);
  }
  EXPECT_EQ(devices.size(), 8u);
  EXPECT_EQ(interfaces.size(), 8u);
  for (const char* n :
       {"fabric_rdma_port_transmit_bytes_total", "fabric_rdma_port_state",
        "fabric_pfc_pause_frames_total", "fabric_netdev_priority_transmit_bytes_total",
        "fabric_roce_ecn_marked_packets_total", "fabric_rdma_link_downed_total"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  EXPECT_FALSE(names.count("fabric_rdma_driver_stat_total"));  // only past the catalog
}

TEST(LoadgenPlanTest, ValuesAreAQuietHealthyFabric) {
  const HostPlan plan(1000);
  HostValues values(plan, 7);
  v1::Batch first, second;
  const int64_t t0 = 1'800'000'000'000'000'000;
  values.Advance(t0, first);
  values.Advance(t0 + 1'000'000'000, second);
  ASSERT_EQ(first.points_size(), 1000);
  ASSERT_EQ(second.points_size(), 1000);
  for (size_t i = 0; i < plan.size(); ++i) {
    const SeriesTemplate& t = plan.series()[i];
    const v1::Point& a = first.points(static_cast<int>(i));
    const v1::Point& b = second.points(static_cast<int>(i));
    EXPECT_EQ(b.series_id(), i);
    EXPECT_EQ(b.time_unix_nano(), t0 + 1'000'000'000);
    if (t.kind == MetricKind::kGauge) {
      EXPECT_EQ(a.gauge(), b.gauge()) << t.name;
      if (t.name == "fabric_rdma_port_state") {
        EXPECT_EQ(b.gauge(), 4);
      }
      continue;
    }
    const double increase = static_cast<double>(b.counter() - a.counter());
    ASSERT_GE(b.counter(), a.counter()) << t.name;
    if (t.behaviour.rate_per_second == 0) {
      EXPECT_EQ(increase, 0) << t.name;  // errors, pauses, events: constant
    } else {
      // +-10% noise, and a fraction of a count rounded either way.
      EXPECT_GE(increase, std::floor(0.9 * t.behaviour.rate_per_second)) << t.name;
      EXPECT_LE(increase, std::ceil(1.1 * t.behaviour.rate_per_second)) << t.name;
    }
    const bool quiet = t.name.starts_with("fabric_pfc_") ||
                       t.name.find("error") != std::string::npos ||
                       t.name == "fabric_rdma_link_downed_total";
    if (quiet) {
      EXPECT_EQ(t.behaviour.rate_per_second, 0) << t.name;
    }
  }
}

TEST(LoadgenPlanTest, SlowCountersKeepTheirMeanRate) {
  // Priority 0 carries a few packets a second: rounding each step down would lose a sixth.
  const HostPlan plan(1000);
  size_t slow = plan.size();
  for (size_t i = 0; i < plan.size(); ++i) {
    const double r = plan.series()[i].behaviour.rate_per_second;
    if (r > 0 && r < 10) {
      slow = i;
      break;
    }
  }
  ASSERT_LT(slow, plan.size());
  HostValues values(plan, 11);
  v1::Batch batch;
  const int64_t t0 = 1'800'000'000'000'000'000;
  values.Advance(t0, batch);
  const uint64_t first = batch.points(static_cast<int>(slow)).counter();
  constexpr int kSteps = 1000;
  for (int s = 1; s <= kSteps; ++s) values.Advance(t0 + s * int64_t{1'000'000'000}, batch);
  const uint64_t last = batch.points(static_cast<int>(slow)).counter();
  const double rate = static_cast<double>(last - first) / kSteps;
  EXPECT_NEAR(rate, plan.series()[slow].behaviour.rate_per_second,
              0.02 * plan.series()[slow].behaviour.rate_per_second);
}

}  // namespace
}  // namespace railwatch::loadgen
