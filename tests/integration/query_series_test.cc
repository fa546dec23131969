// QuerySeries: selectors (with and without a name, every matcher kind) against expressions,
// range bounds and defaults, truncation, and the errors.
#include "daemon/series_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query_test_server.h"

namespace railwatch::testing {
namespace query_series_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Label(const v1::Series& s, const std::string& name) {
  for (const v1::Label& l : s.labels()) {
    if (l.name() == name) return l.value();
  }
  return "";
}

class QuerySeriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Four hosts x 2 devices of a tx byte counter and a temperature gauge per host, 400 s of
    // samples one second apart: counter = 1000 * host number * seconds.
    for (int h = 1; h <= 4; ++h) {
      const std::string host = "gpu-node-00" + std::to_string(h);
      for (int d = 0; d < 2; ++d) {
        bytes_.push_back({h, server_.Counter("fabric_rdma_port_transmit_bytes_total",
                                             {{"host", host},
                                              {"device", "mlx5_" + std::to_string(d)},
                                              {"port", "1"}})});
      }
      temp_.push_back(server_.Gauge("node_temperature_celsius", {{"host", host}}));
    }
    start_ = server_.clock.NowNanos();
    for (int t = 1; t <= 400; ++t) {
      server_.clock.Advance(absl::Seconds(1));
      const int64_t now = server_.clock.NowNanos();
      for (const auto& [h, ref] : bytes_) server_.store.Append(ref, now, 1000.0 * h * t);
      for (size_t i = 0; i < temp_.size(); ++i) server_.store.Append(temp_[i], now, 40 + i);
    }
  }

  int64_t At(int second) const { return start_ + int64_t{second} * 1'000'000'000; }

  grpc::Status Query(const std::string& q, v1::QuerySeriesResponse& r, int64_t start = 0,
                     int64_t end = 0, uint32_t limit = 0) {
    v1::QuerySeriesRequest req;
    req.set_query(q);
    req.set_start_unix_nano(start);
    req.set_end_unix_nano(end);
    req.set_limit(limit);
    grpc::ClientContext ctx;
    return server_.stub().QuerySeries(&ctx, req, &r);
  }

  QueryTestServer server_;
  std::vector<std::pair<int, SeriesRef>> bytes_;
  std::vector<SeriesRef> temp_;
  int64_t start_ = 0;
};

TEST_F(QuerySeriesTest, SelectorGivesStoredSamplesOfTheDefaultFiveMinutes) {
  v1::QuerySeriesResponse r;
  ASSERT_TRUE(Query("fabric_rdma_port_transmit_bytes_total{host=\"gpu-node-002\"}", r).ok());
  EXPECT_EQ(r.query_type(), "selector");
  EXPECT_EQ(r.matched(), 2u);
  EXPECT_FALSE(r.truncated());
  ASSERT_EQ(r.series_size(), 2);
  const v1::Series& s = r.series(0);
  EXPECT_EQ(s.name(), "fabric_rdma_port_transmit_bytes_total");
  EXPECT_EQ(s.kind(), v1::SERIES_KIND_COUNTER);
  EXPECT_EQ(Label(s, "device"), "mlx5_0");
  EXPECT_EQ(Label(r.series(1), "device"), "mlx5_1");
  ASSERT_EQ(s.labels_size(), 3);
  EXPECT_EQ(s.labels(0).name(), "device") << "labels sorted by name";
  // end = now (t=400), start = end - 5m (t=100): both ends included.
  ASSERT_EQ(s.points_size(), 301);
  EXPECT_EQ(s.points(0).time_unix_nano(), At(100));
  EXPECT_DOUBLE_EQ(s.points(0).value(), 2000.0 * 100);
  EXPECT_EQ(s.points(300).time_unix_nano(), At(400));
  EXPECT_DOUBLE_EQ(s.points(300).value(), 2000.0 * 400);
}

TEST_F(QuerySeriesTest, ExplicitRangeBoundsAreInclusive) {
  v1::QuerySeriesResponse r;
  ASSERT_TRUE(
      Query("node_temperature_celsius{host=\"gpu-node-003\"}", r, At(10), At(14)).ok());
  ASSERT_EQ(r.series_size(), 1);
  ASSERT_EQ(r.series(0).points_size(), 5);
  EXPECT_EQ(r.series(0).points(0).time_unix_nano(), At(10));
  EXPECT_EQ(r.series(0).points(4).time_unix_nano(), At(14));
  EXPECT_EQ(r.series(0).kind(), v1::SERIES_KIND_GAUGE);
  EXPECT_DOUBLE_EQ(r.series(0).points(0).value(), 42);

  // Only an end: the five minutes before it.
  ASSERT_TRUE(Query("node_temperature_celsius{host=\"gpu-node-003\"}", r, 0, At(200)).ok());
  ASSERT_EQ(r.series(0).points_size(), 200) << "t=1 .. t=200 (the store starts at t=1)";
  // A range with no sample leaves the series out.
  ASSERT_TRUE(Query("node_temperature_celsius", r, At(500), At(600)).ok());
  EXPECT_EQ(r.matched(), 0u);
  EXPECT_EQ(r.series_size(), 0);
}

TEST_F(QuerySeriesTest, SelectorWithoutNameMatchesEveryMetric) {
  v1::QuerySeriesResponse r;
  ASSERT_TRUE(Query("{host=\"gpu-node-004\"}", r, At(399), At(400)).ok());
  EXPECT_EQ(r.query_type(), "selector");
  ASSERT_EQ(r.series_size(), 3);
  EXPECT_EQ(r.series(0).name(), "fabric_rdma_port_transmit_bytes_total");
  EXPECT_EQ(r.series(2).name(), "node_temperature_celsius") << "sorted by name";
}

TEST_F(QuerySeriesTest, EveryMatcherKind) {
  v1::QuerySeriesResponse r;
  auto hosts = [&](const std::string& q) {
    EXPECT_TRUE(Query(q, r, At(400), At(400)).ok()) << q;
    std::vector<std::string> out;
    for (const v1::Series& s : r.series()) out.push_back(Label(s, "host"));
    return out;
  };
  EXPECT_THAT(hosts("node_temperature_celsius{host!=\"gpu-node-001\"}"),
              ElementsAre("gpu-node-002", "gpu-node-003", "gpu-node-004"));
  EXPECT_THAT(hosts("node_temperature_celsius{host=~\"gpu-node-00[12]\"}"),
              ElementsAre("gpu-node-001", "gpu-node-002"));
  EXPECT_THAT(hosts("node_temperature_celsius{host!~\"gpu-node-00[12]\"}"),
              ElementsAre("gpu-node-003", "gpu-node-004"));
  EXPECT_THAT(hosts("node_temperature_celsius{host in (\"gpu-node-004\", \"gpu-node-001\")}"),
              ElementsAre("gpu-node-001", "gpu-node-004"));
  EXPECT_THAT(hosts("{host=~\".*3\", device=\"mlx5_1\"}"), ElementsAre("gpu-node-003"));
}

TEST_F(QuerySeriesTest, ExpressionIsEvaluatedOnceAtEnd) {
  v1::QuerySeriesResponse r;
  ASSERT_TRUE(Query("rate(fabric_rdma_port_transmit_bytes_total[1m]) > 2500", r).ok());
  EXPECT_EQ(r.query_type(), "expression");
  EXPECT_EQ(r.matched(), 4u) << "hosts 3 and 4 (3000/s and 4000/s), two devices each";
  ASSERT_EQ(r.series_size(), 4);
  EXPECT_EQ(r.series(0).name(), "") << "a rate has no metric name";
  EXPECT_EQ(Label(r.series(0), "host"), "gpu-node-003");
  ASSERT_EQ(r.series(0).points_size(), 1);
  EXPECT_EQ(r.series(0).points(0).time_unix_nano(), At(400));
  EXPECT_DOUBLE_EQ(r.series(0).points(0).value(), 3000);

  // At an earlier end, over what was stored then.
  ASSERT_TRUE(Query("sum by (host) (rate(fabric_rdma_port_transmit_bytes_total[1m]))", r, 0,
                    At(100))
                  .ok());
  ASSERT_EQ(r.series_size(), 4);
  EXPECT_EQ(r.series(0).points(0).time_unix_nano(), At(100));
  EXPECT_DOUBLE_EQ(r.series(0).points(0).value(), 2000);
  EXPECT_EQ(r.series(0).labels_size(), 1);

  // A filtered selector keeps its name, as in PromQL.
  ASSERT_TRUE(Query("node_temperature_celsius > 42", r).ok());
  EXPECT_EQ(r.query_type(), "expression");
  ASSERT_EQ(r.series_size(), 1);
  EXPECT_EQ(r.series(0).name(), "node_temperature_celsius");
  EXPECT_DOUBLE_EQ(r.series(0).points(0).value(), 43);
}

TEST_F(QuerySeriesTest, LimitTruncatesAndCountsEveryMatch) {
  v1::QuerySeriesResponse r;
  ASSERT_TRUE(Query("fabric_rdma_port_transmit_bytes_total", r, 0, 0, 3).ok());
  EXPECT_TRUE(r.truncated());
  EXPECT_EQ(r.matched(), 8u);
  ASSERT_EQ(r.series_size(), 3);
  // The first series the daemon saw: gpu-node-001's two devices, then gpu-node-002's first.
  std::vector<std::string> kept;
  for (const v1::Series& s : r.series()) kept.push_back(Label(s, "host") + "/" + Label(s, "device"));
  EXPECT_THAT(kept, ElementsAre("gpu-node-001/mlx5_0", "gpu-node-002/mlx5_0",
                                "gpu-node-001/mlx5_1"))
      << "sorted by labels once chosen";
  ASSERT_TRUE(Query("rate(fabric_rdma_port_transmit_bytes_total[1m])", r, 0, 0, 5).ok());
  EXPECT_TRUE(r.truncated());
  EXPECT_EQ(r.matched(), 8u);
  EXPECT_EQ(r.series_size(), 5);
  ASSERT_TRUE(Query("node_temperature_celsius", r, 0, 0, 4).ok());
  EXPECT_FALSE(r.truncated());
}

TEST_F(QuerySeriesTest, ErrorsAreInvalidArgumentWithLineAndColumn) {
  v1::QuerySeriesResponse r;
  auto error = [&](const std::string& q, int64_t start = 0, int64_t end = 0, uint32_t limit = 0) {
    grpc::Status s = Query(q, r, start, end, limit);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << q;
    return s.error_message();
  };
  EXPECT_EQ(error("rate(x[1m]) + rat(x[1m])"),
            "1:15: unknown function 'rat' (did you mean 'rate'?)");
  EXPECT_EQ(error("sum(\n  rate(x[1m])\n  +)"),
            "3:4: expected a selector, a number, a function or '(', found ')'");
  EXPECT_THAT(error("{}"), HasSubstr("1:1: a selector without a metric name needs a label"));
  EXPECT_THAT(error("{host=\"a\"} > 1"), HasSubstr("1:12: expected the end of the selector"));
  EXPECT_THAT(error("x{host=~\"(\"}"), HasSubstr("1:9: invalid regex"));
  EXPECT_THAT(error("  "), HasSubstr("query is empty"));
  EXPECT_THAT(error("x", -1), HasSubstr("must not be negative"));
  EXPECT_THAT(error("x", At(10), At(5)), HasSubstr("is after end_unix_nano"));
  EXPECT_THAT(error("x", 0, 0, kMaxSeriesLimit + 1), HasSubstr("above the maximum, 100000"));
  EXPECT_THAT(error("rate"), HasSubstr("1:1: 'rate' is a function"));
}

TEST(TextPositionTest, LinesAndColumnsFromOne) {
  EXPECT_EQ(TextPosition("abc", 0), "1:1");
  EXPECT_EQ(TextPosition("abc", 2), "1:3");
  EXPECT_EQ(TextPosition("ab\ncd", 3), "2:1");
  EXPECT_EQ(TextPosition("ab\ncd", 99), "2:3");
}

}  // namespace
}  // namespace railwatch::testing
