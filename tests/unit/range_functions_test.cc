// The range functions' table (engine/range_functions.h): each entry's arithmetic on a window,
// the minimum samples it needs, and that the parser finds every entry by name and prints it
// back.
#include "engine/range_functions.h"

#include <optional>
#include <string>
#include <algorithm>
#include <vector>

#include "engine/condition.h"
#include "gtest/gtest.h"
#include "unit/condition_test_util.h"

namespace railwatch::cond {
namespace range_functions_test {

constexpr int64_t kSec = 1'000'000'000;

std::vector<Sample> Window(std::initializer_list<double> values) {
  std::vector<Sample> out;
  int64_t t = 10 * kSec;
  for (double v : values) out.push_back({t += kSec, v});
  return out;
}

double Of(std::string_view name, const std::vector<Sample>& window) {
  const RangeFunction* f = FindRangeFunction(name);
  EXPECT_NE(f, nullptr) << name;
  if (f == nullptr) return -1;
  EXPECT_EQ(f->input, RangeInput::kSamples) << name;
  EXPECT_GE(window.size(), f->min_samples) << name;
  return f->of_samples(window);
}

TEST(RangeFunctions, OverSamples) {
  const std::vector<Sample> w = Window({5, 5, 2, 9, 9, 4});
  EXPECT_DOUBLE_EQ(Of("delta", w), 4 - 5);
  EXPECT_DOUBLE_EQ(Of("changes", w), 3);
  EXPECT_DOUBLE_EQ(Of("avg_over_time", w), (5 + 5 + 2 + 9 + 9 + 4) / 6.0);
  EXPECT_DOUBLE_EQ(Of("min_over_time", w), 2);
  EXPECT_DOUBLE_EQ(Of("max_over_time", w), 9);
  // One sample: a level, but no change yet.
  EXPECT_EQ(FindRangeFunction("delta")->min_samples, 2u);
  EXPECT_EQ(FindRangeFunction("changes")->min_samples, 2u);
  EXPECT_DOUBLE_EQ(Of("max_over_time", Window({-3})), -3);
}

TEST(RangeFunctions, OverACountersWindow) {
  const RangeFunction* rate = FindRangeFunction("rate");
  const RangeFunction* increase = FindRangeFunction("increase");
  ASSERT_NE(rate, nullptr);
  ASSERT_NE(increase, nullptr);
  ASSERT_EQ(rate->input, RangeInput::kCounter);
  const CounterWindow w{.increase = 300, .first_time = 2 * kSec, .last_time = 8 * kSec,
                        .samples = 7};
  EXPECT_DOUBLE_EQ(*rate->of_counter(w), 50);
  EXPECT_DOUBLE_EQ(*increase->of_counter(w), 300);
  // Two samples at one instant have an increase but no rate.
  const CounterWindow instant{.increase = 3, .first_time = kSec, .last_time = kSec,
                              .samples = 2};
  EXPECT_FALSE(rate->of_counter(instant).has_value());
}

// A counter that moves at rates[k] per second during the k-th stretch of `stretch` seconds
// (oldest first), sampled every second; the last sample is at `end` seconds.
std::vector<Sample> CounterAtRates(std::initializer_list<double> rates, int stretch, int end) {
  std::vector<Sample> out;
  const int start = end - static_cast<int>(rates.size()) * stretch;
  double v = 1000;
  out.push_back({start * kSec, v});
  int t = start;
  for (double r : rates) {
    for (int i = 0; i < stretch; ++i) out.push_back({++t * kSec, v += r});
  }
  return out;
}

std::optional<double> OfStretches(const std::vector<Sample>& window, int stretch, size_t count,
                                  int end) {
  const RangeFunction* f = FindRangeFunction("median_rate");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return std::nullopt;
  EXPECT_EQ(f->input, RangeInput::kStretches);
  std::vector<double> scratch;
  return f->of_stretches(window, Stretches{end * kSec, stretch * kSec, count}, scratch);
}

TEST(RangeFunctions, MedianRateIsTheMedianOfTheStretchesRates) {
  // Three 10 s stretches at 1, 50 and 4 per second: the busy one does not move the median.
  EXPECT_DOUBLE_EQ(*OfStretches(CounterAtRates({1, 50, 4}, 10, 100), 10, 3, 100), 4);
  // An even count: the mean of the middle two.
  EXPECT_DOUBLE_EQ(*OfStretches(CounterAtRates({1, 50, 4, 8}, 10, 100), 10, 4, 100), (4 + 8) / 2.0);
  // A quiet stretch (a job compiling) does not pull it down either.
  EXPECT_DOUBLE_EQ(*OfStretches(CounterAtRates({0, 6, 6, 7, 6}, 10, 100), 10, 5, 100), 6);
  // The stretches are counted back from the window's end: the samples before the first whole
  // stretch are not read.
  EXPECT_DOUBLE_EQ(*OfStretches(CounterAtRates({900, 2, 3, 4}, 10, 100), 10, 3, 100), 3);
}

TEST(RangeFunctions, MedianRateNeedsThreeStretchesWithData) {
  const RangeFunction* f = FindRangeFunction("median_rate");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->min_stretches, 3u);
  // A series that began 25 s ago: two whole 10 s stretches and one half: it counts.
  std::vector<Sample> w = CounterAtRates({3, 3, 3}, 10, 100);
  w.erase(w.begin(), w.begin() + 5);
  EXPECT_DOUBLE_EQ(*OfStretches(w, 10, 6, 100), 3);
  // 24 s: the oldest spans under half of its stretch, and two are no median.
  w.erase(w.begin());
  EXPECT_FALSE(OfStretches(w, 10, 6, 100).has_value());
  // A gap (an agent away for most of a stretch) leaves that stretch out.
  std::vector<Sample> gap = CounterAtRates({1, 9, 9, 5}, 10, 100);
  EXPECT_DOUBLE_EQ(*OfStretches(gap, 10, 4, 100), (5 + 9) / 2.0);
  gap.erase(gap.begin() + 13, gap.begin() + 21);  // [70 s, 80 s] keeps 70-72 s: 2 s of data
  EXPECT_DOUBLE_EQ(*OfStretches(gap, 10, 4, 100), 5);
  EXPECT_FALSE(OfStretches({}, 10, 4, 100).has_value());
}

TEST(RangeFunctions, MedianRateParsesWithItsStretchAndChecksIt) {
  const std::string text = "median_rate(fabric_nccl_collective_microseconds_total[1h], 5m) > 0";
  absl::StatusOr<std::unique_ptr<Condition>> c = ParseCondition(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->ToString(), text);
  struct Bad {
    std::string text, message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"median_rate(x[1h]) > 0",
            "median_rate needs the length of its stretches after the window, as in "
            "median_rate(x[1h], 5m)"},
           {"median_rate(x[1h], 2) > 0", "median_rate needs the length of its stretches"},
           {"median_rate(x[10m], 5m) > 0",
            "median_rate's window must hold at least 3 stretches: [10m] holds 2 of 5m"},
           {"median_rate(x[1h], 0s) > 0", "the stretch must be longer than zero"},
           {"median_rate(x[1d], 1s) > 0",
            "median_rate cuts its window into at most 1000 stretches: take longer ones than 1s"},
           {"rate(x[1h], 5m) > 0", "expected ')'"},
       }) {
    ConditionError err;
    absl::StatusOr<std::unique_ptr<Condition>> r = ParseCondition(bad.text, {}, &err);
    ASSERT_FALSE(r.ok()) << bad.text;
    EXPECT_NE(err.message.find(bad.message), std::string::npos) << bad.text << ": " << err.message;
  }
}

TEST(RangeFunctions, EveryEntryParsesAndPrintsBack) {
  for (const RangeFunction& f : RangeFunctions()) {
    ASSERT_FALSE(f.name.empty());
    EXPECT_TRUE(f.input == RangeInput::kSamples ? f.of_samples != nullptr && f.min_samples >= 1
                : f.input == RangeInput::kCounter ? f.of_counter != nullptr
                : f.input == RangeInput::kStretches
                    ? f.of_stretches != nullptr && f.min_stretches >= 1
                    : true)
        << f.name;
    const std::string text =
        std::string(f.name) +
        (f.input == RangeInput::kStretches ? "(fabric_rdma_link_downed_total[5m], 1m) > 0"
                                           : "(fabric_rdma_link_downed_total[5m]) > 0");
    absl::StatusOr<std::unique_ptr<Condition>> c = ParseCondition(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status();
    EXPECT_EQ((*c)->ToString(), text);
  }
  EXPECT_EQ(FindRangeFunction("rates"), nullptr);
  EXPECT_EQ(FindRangeFunction(""), nullptr);
  EXPECT_FALSE(LatestSample().windowed());
}

}  // namespace range_functions_test
}  // namespace railwatch::cond

namespace railwatch::range_functions_test {

// Through the evaluator and the store: the stretches are counted back from now, a series that
// began inside the window without three stretches of data is unknown (not absent), and the
// evidence says what was computed.
TEST_F(ConditionEvalTest, MedianRateReadsTheStoreAndWaitsForItsStretches) {
  const SeriesRef steady = Counter("coll_us_total", {{"rank", "0"}});
  const SeriesRef young = Counter("coll_us_total", {{"rank", "1"}});
  const SeriesRef away = Counter("coll_us_total", {{"rank", "2"}});
  store_.KeepSpans({{"coll_us_total", absl::ToInt64Nanoseconds(absl::Minutes(5))}});
  // 1/s until 300 s, then 5/s: at 400 s the 1-minute stretches of the last 5 minutes read 5,
  // 3.67, 1, 1, 1.
  Fill(steady, 0, 400, [](int t) { return t <= 300 ? t : 300 + 5 * (t - 300); });
  Fill(young, 350, 400, [](int t) { return t; });
  Fill(away, 0, 100, [](int t) { return t; });
  Fill(away, 390, 400, [](int t) { return t; });
  const std::string text = "median_rate(coll_us_total[5m], 1m) >= 0";
  std::vector<VectorElement> all = EvalAll(text, 400);
  ASSERT_EQ(all.size(), 2u);
  std::sort(all.begin(), all.end(), [](const VectorElement& a, const VectorElement& b) {
    return Get(a, "rank") < Get(b, "rank");
  });
  EXPECT_EQ(Get(all[0], "rank"), "0");
  EXPECT_FALSE(all[0].unknown);
  EXPECT_DOUBLE_EQ(all[0].value, 1);
  ASSERT_EQ(all[0].evidence.size(), 1u);
  EXPECT_EQ(all[0].evidence[0].function, "median_rate of 1m stretches");
  EXPECT_EQ(all[0].evidence[0].window, absl::Minutes(5));
  EXPECT_EQ(Get(all[1], "rank"), "1");
  EXPECT_TRUE(all[1].unknown) << "50 s of data: one stretch, no baseline yet";
  // The rate now against the baseline: 5/s is five times what the counter usually does.
  std::vector<VectorElement> ratio =
      Eval("rate(coll_us_total[1m]) / median_rate(coll_us_total[5m], 1m) > 2", 400);
  ASSERT_EQ(ratio.size(), 1u);
  EXPECT_DOUBLE_EQ(ratio[0].value, 5);
  // Two minutes on, the fault fills three of the five stretches: it is the baseline now.
  Fill(steady, 401, 520, [](int t) { return 300 + 5 * (t - 300); });
  EXPECT_DOUBLE_EQ(Eval(text, 520).at(0).value, 5);
}

}  // namespace railwatch::range_functions_test
