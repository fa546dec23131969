// The range functions' table (engine/range_functions.h): each entry's arithmetic on a window,
// the minimum samples it needs, and that the parser finds every entry by name and prints it
// back.
#include "engine/range_functions.h"

#include <vector>

#include "engine/condition.h"
#include "gtest/gtest.h"

namespace railwatch::cond {
namespace {

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

TEST(RangeFunctions, EveryEntryParsesAndPrintsBack) {
  for (const RangeFunction& f : RangeFunctions()) {
    ASSERT_FALSE(f.name.empty());
    EXPECT_TRUE(f.input == RangeInput::kSamples ? f.of_samples != nullptr && f.min_samples >= 1
                : f.input == RangeInput::kCounter ? f.of_counter != nullptr
                                                  : true)
        << f.name;
    const std::string text = std::string(f.name) + "(fabric_rdma_link_downed_total[5m]) > 0";
    absl::StatusOr<std::unique_ptr<Condition>> c = ParseCondition(text);
    ASSERT_TRUE(c.ok()) << text << ": " << c.status();
    EXPECT_EQ((*c)->ToString(), text);
  }
  EXPECT_EQ(FindRangeFunction("rates"), nullptr);
  EXPECT_EQ(FindRangeFunction(""), nullptr);
  EXPECT_FALSE(LatestSample().windowed());
}

}  // namespace
}  // namespace railwatch::cond
