#include "store/series_store.h"

#include "gtest/gtest.h"
#include "store/counter_math.h"

namespace railwatch {
namespace series_store_test {

constexpr int64_t kSec = 1'000'000'000;

TEST(CounterDelta, PlainIncrease) {
  CounterStep s = CounterDelta(100, 250, 0);
  EXPECT_EQ(s.delta, 150u);
  EXPECT_FALSE(s.reset);
  EXPECT_FALSE(s.wrapped);
}

TEST(CounterDelta, ResetCountsFromZero) {
  CounterStep s = CounterDelta(1'000'000, 42, 0);
  EXPECT_TRUE(s.reset);
  EXPECT_EQ(s.delta, 42u);
}

TEST(CounterDelta, ThirtyTwoBitWrap) {
  CounterStep s = CounterDelta(4294967290u, 5, 32);
  EXPECT_TRUE(s.wrapped);
  EXPECT_FALSE(s.reset);
  EXPECT_EQ(s.delta, 11u);  // 6 to reach 2^32, then 5
}

TEST(CounterDelta, LargeDropOnThirtyTwoBitCounterIsAReset) {
  // From the middle of the range back to near zero: a wrap would mean 2^31 increments in one
  // step, so this is a reset.
  CounterStep s = CounterDelta(2'000'000'000u, 10, 32);
  EXPECT_TRUE(s.reset);
  EXPECT_EQ(s.delta, 10u);
}

TEST(CounterDelta, SixtyFourBitNeverWraps) {
  CounterStep s = CounterDelta(UINT64_MAX - 1, 3, 64);
  EXPECT_TRUE(s.reset);
  EXPECT_EQ(s.delta, 3u);
}

class SeriesStoreTest : public ::testing::Test {
 protected:
  SeriesStore store_{SeriesStore::Options{.capacity = 16}};
  Labels labels_ = {{"device", "mlx5_0"}, {"host", "h1"}, {"port", "1"}};
};

TEST_F(SeriesStoreTest, InternIsIdempotent) {
  SeriesRef a = store_.Intern("fabric_rdma_link_downed_total", labels_, MetricKind::kCounter);
  SeriesRef b = store_.Intern("fabric_rdma_link_downed_total", labels_, MetricKind::kCounter);
  Labels other = {{"device", "mlx5_1"}, {"host", "h1"}, {"port", "1"}};
  SeriesRef c = store_.Intern("fabric_rdma_link_downed_total", other, MetricKind::kCounter);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(store_.size(), 2u);
}

TEST_F(SeriesStoreTest, IncreaseAndRateAcrossReset) {
  SeriesRef r = store_.Intern("x_total", labels_, MetricKind::kCounter);
  store_.Append(r, 1 * kSec, 100);
  store_.Append(r, 2 * kSec, 160);
  store_.Append(r, 3 * kSec, 10);  // driver reload: counted as 10, not -150
  store_.Append(r, 4 * kSec, 40);
  std::optional<CounterWindow> w = store_.Increase(r, 0, 10 * kSec);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->increase, 60 + 10 + 30);
  EXPECT_EQ(w->samples, 4u);
  // What rate() divides by (engine/range_functions.h): the first and last samples' times.
  EXPECT_EQ(w->first_time, 1 * kSec);
  EXPECT_EQ(w->last_time, 4 * kSec);
  EXPECT_EQ(store_.stats().counter_resets, 1u);
}

TEST_F(SeriesStoreTest, ThirtyTwoBitWrapIsNotAReset) {
  SeriesRef r = store_.Intern("x_total", labels_, MetricKind::kCounter, 32);
  store_.Append(r, 1 * kSec, 4294967000.0);
  store_.Append(r, 2 * kSec, 704);
  std::optional<CounterWindow> w = store_.Increase(r, 0, 3 * kSec);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->increase, 296 + 704);
  EXPECT_EQ(store_.stats().counter_resets, 0u);
  EXPECT_EQ(store_.stats().counter_wraps, 1u);
}

TEST_F(SeriesStoreTest, AbsentOrSingleSampleHasNoIncrease) {
  SeriesRef r = store_.Intern("x_total", labels_, MetricKind::kCounter);
  EXPECT_FALSE(store_.Increase(r, 0, 10 * kSec).has_value());
  EXPECT_FALSE(store_.Latest(r).has_value());
  store_.Append(r, 1 * kSec, 7);
  EXPECT_FALSE(store_.Increase(r, 0, 10 * kSec).has_value());
  EXPECT_TRUE(store_.Select("no_such_metric").empty());
}

TEST_F(SeriesStoreTest, WindowExcludesOlderSamples) {
  SeriesRef r = store_.Intern("x_total", labels_, MetricKind::kCounter);
  store_.Append(r, 1 * kSec, 0);
  store_.Append(r, 2 * kSec, 1);  // the flap, outside the window below
  store_.Append(r, 10 * kSec, 1);
  store_.Append(r, 11 * kSec, 1);
  std::optional<CounterWindow> w = store_.Increase(r, 5 * kSec, 11 * kSec);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->increase, 0);
}

TEST_F(SeriesStoreTest, RingKeepsNewestAndRejectsOutOfOrder) {
  SeriesRef r = store_.Intern("g", labels_, MetricKind::kGauge);
  for (int i = 1; i <= 40; ++i) store_.Append(r, i * kSec, i);
  std::vector<Sample> all = store_.Range(r, 0, 100 * kSec);
  ASSERT_EQ(all.size(), 16u);
  EXPECT_EQ(all.front().value, 25);
  EXPECT_EQ(all.back().value, 40);
  store_.Append(r, 40 * kSec, 99);  // same timestamp: dropped
  store_.Append(r, 39 * kSec, 99);  // older: dropped
  EXPECT_EQ(store_.Latest(r)->value, 40);
  EXPECT_EQ(store_.stats().samples_out_of_order, 2u);
}

TEST_F(SeriesStoreTest, SelectWithMatchers) {
  store_.Intern("m", {{"host", "a"}, {"port", "1"}}, MetricKind::kCounter);
  store_.Intern("m", {{"host", "b"}, {"port", "1"}}, MetricKind::kCounter);
  store_.Intern("m", {{"host", "b"}, {"port", "2"}}, MetricKind::kCounter);
  EXPECT_EQ(store_.Select("m").size(), 3u);
  EXPECT_EQ(store_.Select("m", {{"host", "b"}}).size(), 2u);
  EXPECT_EQ(store_.Select("m", {{"host", "b", false}, {"port", "1", true}}).size(), 1u);
  EXPECT_EQ(store_.Select("m", {{"rail", ""}}).size(), 3u);  // absent label equals ""
}

TEST_F(SeriesStoreTest, WatchedSeriesAreReported) {
  SeriesRef a = store_.Intern("watched_total", labels_, MetricKind::kCounter);
  SeriesRef b = store_.Intern("other_total", labels_, MetricKind::kCounter);
  store_.Watch({"watched_total"});
  EXPECT_TRUE(store_.Append(a, 1 * kSec, 1));
  EXPECT_FALSE(store_.Append(b, 1 * kSec, 1));
  // A series interned after Watch picks it up too.
  SeriesRef c = store_.Intern("watched_total", {{"host", "z"}}, MetricKind::kCounter);
  EXPECT_TRUE(store_.Append(c, 1 * kSec, 1));
}

// A name that a long window reads keeps its series as far back as the window reaches, past
// `capacity`, and no further; other names keep `capacity`; `max_capacity` bounds both.
TEST_F(SeriesStoreTest, SpansKeepALongWindowsSamplesPastCapacity) {
  SeriesRef slow = store_.Intern("symbol_errors_total", labels_, MetricKind::kCounter);
  SeriesRef other = store_.Intern("other_total", labels_, MetricKind::kCounter);
  store_.KeepSpans({{"symbol_errors_total", 125 * kSec}});
  // Samples every 10 s: 125 s needs 13 of them (t-120 .. t) and the one at t-125 if any.
  for (int i = 1; i <= 40; ++i) {
    store_.Append(slow, i * 10 * kSec, i);
    store_.Append(other, i * 10 * kSec, i);
  }
  EXPECT_EQ(store_.Range(other, 0, 1000 * kSec).size(), 16u);  // capacity
  // 16 is already more than the 13 the span needs: capacity still rules.
  EXPECT_EQ(store_.Range(slow, 0, 1000 * kSec).size(), 16u);
  store_.KeepSpans({{"symbol_errors_total", 300 * kSec}});
  for (int i = 41; i <= 100; ++i) store_.Append(slow, i * 10 * kSec, i);
  std::vector<Sample> kept = store_.Range(slow, 0, 2000 * kSec);
  // t = 1000 s; the span reaches back to 700 s: samples 70..100.
  ASSERT_EQ(kept.size(), 31u);
  EXPECT_EQ(kept.front().time_unix_nano, 700 * kSec);
  std::optional<CounterWindow> w = store_.Increase(slow, 700 * kSec, 1000 * kSec);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->increase, 30);
  // A series interned after KeepSpans gets its name's span too.
  SeriesRef late = store_.Intern("symbol_errors_total", {{"host", "h2"}}, MetricKind::kCounter);
  for (int i = 1; i <= 40; ++i) store_.Append(late, i * 10 * kSec, i);
  EXPECT_EQ(store_.Range(late, 0, 1000 * kSec).size(), 31u);
}

TEST(SeriesStore, SpansAreBoundedByMaxCapacityAndDoNotMakeASeriesYoung) {
  SeriesStore store(SeriesStore::Options{.capacity = 8, .max_capacity = 20});
  SeriesRef r = store.Intern("x_total", {{"host", "h"}}, MetricKind::kCounter);
  store.KeepSpans({{"x_total", 3600 * kSec}});
  for (int i = 1; i <= 100; ++i) store.Append(r, i * kSec, i);
  std::vector<Sample> kept = store.Range(r, 0, 1000 * kSec);
  ASSERT_EQ(kept.size(), 20u);
  EXPECT_EQ(kept.front().value, 81);
  // It has dropped samples: a window that starts before its oldest is not "not yet held".
  std::vector<bool> young;
  const SeriesRef refs[] = {r};
  store.BeganAfterMany(refs, 50 * kSec, young);
  EXPECT_FALSE(young[0]);
  // One that has dropped none, with more than `capacity` samples, is still young.
  SeriesRef fresh = store.Intern("x_total", {{"host", "g"}}, MetricKind::kCounter);
  for (int i = 90; i <= 100; ++i) store.Append(fresh, i * kSec, i);
  store.BeganAfterMany(std::span(&fresh, 1), 50 * kSec, young);
  EXPECT_TRUE(young[0]);
}

TEST(SeriesStore, AppendManyStoresABatchAsAppendWouldAndReportsWatchedSeries) {
  SeriesStore store(SeriesStore::Options{.capacity = 8});
  const SeriesRef quiet = store.Intern("rdma_quiet_total", {{"host", "a"}}, MetricKind::kCounter);
  const SeriesRef busy = store.Intern("rdma_busy_total", {{"host", "a"}}, MetricKind::kCounter);
  store.Watch({"rdma_busy_total"});
  const SeriesStore::PendingSample quiet_only[] = {{quiet, 1 * kSec, 5}, {quiet, 2 * kSec, 7}};
  EXPECT_FALSE(store.AppendMany(quiet_only));
  const SeriesStore::PendingSample both[] = {
      {quiet, 3 * kSec, 9}, {busy, 3 * kSec, 1}, {quiet, 2 * kSec, 100}};  // last: stale
  EXPECT_TRUE(store.AppendMany(both));
  const std::vector<Sample> got = store.Range(quiet, 0, 10 * kSec);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].value, 9);
  EXPECT_EQ(store.stats().samples_appended, 4u);
  EXPECT_EQ(store.stats().samples_out_of_order, 1u);
}

}  // namespace
}  // namespace railwatch
