#include "engine/condition.h"

#include "gtest/gtest.h"

namespace railwatch {
namespace {

constexpr int64_t kSec = 1'000'000'000;

TEST(ParseCondition, RoundTrips) {
  auto c = ParseCondition("increase(fabric_rdma_link_downed_total[5m]) > 0");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->ToString(), "increase(fabric_rdma_link_downed_total[5m]) > 0");
  auto d = ParseCondition(
      "rate(x_total{host=\"a\",port!=\"2\"}[30s]) >= 1.5e3 and increase(y_total[1h30m]) > 0");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->ToString(),
            "(rate(x_total{host=\"a\",port!=\"2\"}[30s]) >= 1500 and increase(y_total[1h30m]) > 0)");
  std::vector<std::string> names;
  (*d)->CollectMetricNames(names);
  EXPECT_EQ(names, (std::vector<std::string>{"x_total", "y_total"}));
}

struct BadCase {
  const char* name;
  const char* text;
  size_t offset;
  const char* message_part;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.text; }

class BadConditionTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadConditionTest, ReportsWhereAndWhat) {
  ConditionError err;
  auto c = ParseCondition(GetParam().text, &err);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(err.offset, GetParam().offset) << err.message;
  EXPECT_NE(err.message.find(GetParam().message_part), std::string::npos) << err.message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConditionTest,
    ::testing::Values(BadCase{"UnclosedCall", "increase(x[5m] > 0", 15, "expected \")\""},
                      BadCase{"BadWindow", "increase(x[5q]) > 0", 11, "expected a window"},
                      BadCase{"MissingNumber", "x > ", 4, "expected a number"},
                      BadCase{"UnquotedValue", "x{host=a} > 1", 7, "expected a quoted label value"},
                      BadCase{"TrailingToken", "x > 1 y", 6, "expected \"and\", \"or\""},
                      BadCase{"UnterminatedString", "x{host=\"a} > 1", 7, "unterminated string"},
                      BadCase{"StrayCharacter", "x # 1", 2, "unexpected character"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

class ConditionEvalTest : public ::testing::Test {
 protected:
  SeriesRef Counter(const std::string& host, const std::string& device) {
    return store_.Intern("link_downed_total", {{"device", device}, {"host", host}, {"port", "1"}},
                         MetricKind::kCounter);
  }
  SeriesStore store_{SeriesStore::Options{.capacity = 64}};
};

TEST_F(ConditionEvalTest, IncreaseSelectsOnlyTheSeriesThatMoved) {
  SeriesRef a = Counter("h1", "mlx5_0");
  SeriesRef b = Counter("h1", "mlx5_1");
  SeriesRef c = Counter("h2", "mlx5_0");  // one sample only: absent from the result
  for (int t = 1; t <= 5; ++t) {
    store_.Append(a, t * kSec, 0);
    store_.Append(b, t * kSec, t >= 4 ? 1 : 0);
  }
  store_.Append(c, 5 * kSec, 9);
  auto cond = ParseCondition("increase(link_downed_total[5m]) > 0");
  ASSERT_TRUE(cond.ok());
  std::vector<VectorElement> out = (*cond)->Evaluate(store_, 5 * kSec);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*FindLabel(out[0].labels, "device"), "mlx5_1");
  EXPECT_DOUBLE_EQ(out[0].value, 1);
  ASSERT_EQ(out[0].evidence.size(), 1u);
  EXPECT_EQ(out[0].evidence[0].series, b);
  EXPECT_EQ(out[0].evidence[0].function, "increase");
}

TEST_F(ConditionEvalTest, MatchersAndSetOperators) {
  SeriesRef a = Counter("h1", "mlx5_0");
  SeriesRef b = Counter("h2", "mlx5_0");
  for (int t = 1; t <= 3; ++t) {
    store_.Append(a, t * kSec, t * 10);
    store_.Append(b, t * kSec, t);
  }
  auto only_h2 = ParseCondition("increase(link_downed_total{host=\"h2\"}[1m]) > 0");
  ASSERT_TRUE(only_h2.ok());
  EXPECT_EQ((*only_h2)->Evaluate(store_, 3 * kSec).size(), 1u);

  auto both = ParseCondition(
      "increase(link_downed_total[1m]) > 5 or increase(link_downed_total[1m]) > 1");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ((*both)->Evaluate(store_, 3 * kSec).size(), 2u);

  auto neither = ParseCondition(
      "increase(link_downed_total[1m]) > 5 and increase(link_downed_total[1m]) < 5");
  ASSERT_TRUE(neither.ok());
  EXPECT_TRUE((*neither)->Evaluate(store_, 3 * kSec).empty());

  auto latest = ParseCondition("link_downed_total >= 30");
  ASSERT_TRUE(latest.ok());
  std::vector<VectorElement> out = (*latest)->Evaluate(store_, 3 * kSec);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(*FindLabel(out[0].labels, "host"), "h1");
}

}  // namespace
}  // namespace railwatch
