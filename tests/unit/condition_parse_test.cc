// The condition language: parsing, printing, errors with offsets, and the store calls it
// reads through.
#include "engine/condition.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"
#include "topology/topology.h"
#include "unit/condition_test_util.h"

namespace railwatch {
namespace condition_parse_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// ---- Parsing and printing -----------------------------------------------------------------

TEST(ParseCondition, RoundTrips) {
  auto c = MustParse("increase(fabric_rdma_link_downed_total[5m]) > 0");
  EXPECT_EQ(c->ToString(), "increase(fabric_rdma_link_downed_total[5m]) > 0");
  auto d = MustParse(
      "rate(x_total{host=\"a\",port!=\"2\"}[30s]) >= 1.5e3 and increase(y_total[1h30m]) > 0");
  EXPECT_EQ(d->ToString(),
            "rate(x_total{host=\"a\",port!=\"2\"}[30s]) >= 1500 and increase(y_total[1h30m]) > 0");
  std::vector<std::string> names;
  d->CollectMetricNames(names);
  EXPECT_EQ(names, (std::vector<std::string>{"x_total", "y_total"}));
}

TEST(ParseCondition, CanonicalTextKeepsOnlyTheParenthesesThatMatter) {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"(a + b) * c", "(a + b) * c"},
      {"a + (b * c)", "a + b * c"},
      {"a - (b - c)", "a - (b - c)"},
      {"(a or b) and c", "(a or b) and c"},
      {"a or (b and c)", "a or b and c"},
      {"-(a + b)", "-(a + b)"},
      {"x * -1", "x * -1"},
      {"2 * 3 + x", "6 + x"},  // constants fold
      {"x > bool 1", "x > bool 1"},
      {"sum(x) by (b, a)", "sum by (a, b) (x)"},
      {"avg without (port) (x)", "avg without (port) (x)"},
      {"a / on(host) b", "a / on(host) b"},
      {"a unless ignoring(port, device) b", "a unless ignoring(device, port) b"},
      {"peer_ratio(topology(rate(x[5s])), by (rail)) < 0.7",
       "peer_ratio(topology(rate(x[5s])), by (rail)) < 0.7"},
      {"x{a=~\"nccl\\.ib.*\", b!~\"z\", c in (\"1\", \"2\"), d not in (\"3\")}",
       "x{a=~\"nccl\\\\.ib.*\",b!~\"z\",c in (\"1\", \"2\"),d not in (\"3\")}"},
      {"count_over_time(events{kind=\"nccl.call_failed\"}[5m]) > 0",
       "count_over_time(events{kind=\"nccl.call_failed\"}[5m]) > 0"},
      {"stale(x[30s])", "stale(x[30s])"},
      {"abs(delta(g[1m])) > 5", "abs(delta(g[1m])) > 5"},
      {"label(x > 1, \"part\", \"optic\")", "label(x > 1, \"part\", \"optic\")"},
      {"x > 1e9", "x > 1e+09"},
  };
  for (const Case& c : cases) {
    auto parsed = MustParse(c.in);
    ASSERT_NE(parsed, nullptr);
    EXPECT_EQ(parsed->ToString(), c.out) << c.in;
    // The canonical text parses back to itself.
    auto again = MustParse(parsed->ToString());
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->ToString(), c.out);
  }
}

TEST(ParseCondition, CommentsRunToTheEndOfTheLine) {
  auto c = MustParse(
      "# a NIC that sends pauses\n"
      "rate(p_total{direction=\"tx\"}[5s]) > 1000  # storm rate\n"
      "  unless on(node) rate(p_total{direction=\"rx\"}[5s]) > 100 # relay\n");
  EXPECT_EQ(c->ToString(),
            "rate(p_total{direction=\"tx\"}[5s]) > 1000 unless on(node) "
            "rate(p_total{direction=\"rx\"}[5s]) > 100");
  // A '#' inside a string is not a comment.
  auto s = MustParse("x{a=\"b#c\"}");
  EXPECT_EQ(s->ToString(), "x{a=\"b#c\"}");
}

TEST(ParseCondition, ListsExpandInMatchers) {
  ParseEnv env;
  env.lists["lossless_priorities"] = {"3", "4"};
  auto c = MustParse("x{priority in (lossless_priorities)}", env);
  EXPECT_EQ(c->ToString(), "x{priority in (\"3\", \"4\")}");
}

TEST(ParseCondition, MacrosExpandAsIfParenthesised) {
  ParseEnv env;
  env.macros["either"] = "a > 1 or b > 1";
  env.macros["storm_rate"] = "1000";
  env.macros["tx_rate"] = "rate(p_total{direction=\"tx\"}[5s])";
  env.macros["storm"] = "tx_rate > storm_rate";
  auto c = MustParse("either and c", env);
  EXPECT_EQ(c->ToString(), "(a > 1 or b > 1) and c");
  auto d = MustParse("storm unless on(host) x", env);
  EXPECT_EQ(d->ToString(), "rate(p_total{direction=\"tx\"}[5s]) > 1000 unless on(host) x");
  std::vector<std::string> names;
  d->CollectMetricNames(names);
  EXPECT_THAT(names, ElementsAre("p_total", "x"));
}

TEST(ParseCondition, MacroCycleIsAnError) {
  ParseEnv env;
  env.macros["a"] = "b > 1";
  env.macros["b"] = "rate(x[1m]) + a";
  ConditionError err;
  auto c = ParseCondition("y and a", env, &err);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(err.message, HasSubstr("macro cycle a -> b -> a"));
  EXPECT_EQ(err.offset, 6u);  // the use of `a` in the condition itself
  env.macros["self"] = "self + 1";
  EXPECT_FALSE(ParseCondition("self", env, &err).ok());
  EXPECT_THAT(err.message, HasSubstr("macro cycle self -> self"));
}

TEST(ParseCondition, ErrorInsideAMacroNamesItAndPointsAtTheUse) {
  ParseEnv env;
  env.macros["broken"] = "rate(x[5m] > 0";
  ConditionError err;
  auto c = ParseCondition("y > 1 and broken", env, &err);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(err.offset, 10u);
  EXPECT_THAT(err.message, HasSubstr("in macro 'broken'"));
  EXPECT_THAT(err.message, HasSubstr("expected ')' to close 'rate(' opened at offset 0"));
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("at offset 10"));
}

TEST(ParseCondition, EventKindsForTheEngineToWatch) {
  auto kinds = [](std::string_view text) {
    std::vector<std::string> out;
    MustParse(text)->CollectEventKinds(out);
    return out;
  };
  EXPECT_THAT(kinds("count_over_time(events{kind=\"nccl.call_failed\",host=\"h\"}[5m]) > 0"),
              ElementsAre("nccl.call_failed"));
  EXPECT_THAT(kinds("count_over_time(events{kind in (\"a.x\", \"b.y\")}[5m])"),
              ElementsAre("a.x", "b.y"));
  EXPECT_THAT(kinds("count_over_time(events{kind=~\"nccl\\.ib_.*\"}[5m])"), ElementsAre("nccl."));
  EXPECT_THAT(kinds("count_over_time(events{kind=~\"(nccl|pytorch)\\..*\"}[5m])"),
              ElementsAre(""));
  EXPECT_THAT(kinds("count_over_time(events{host=\"h\"}[5m]) and x"), ElementsAre(""));
  EXPECT_THAT(kinds("rate(x[5m]) > 0"), ElementsAre());
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
  ParseEnv env;
  env.lists["prios"] = {"3"};
  env.macros["m"] = "x > 1";
  ConditionError err;
  auto c = ParseCondition(GetParam().text, env, &err);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(err.offset, GetParam().offset) << err.message;
  EXPECT_THAT(err.message, HasSubstr(GetParam().message_part));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadConditionTest,
    ::testing::Values(
        BadCase{"LabelWithoutValue", "label(x, \"part\")", 15,
                "label() needs (expr, \"name\", \"value\"), as in label(x > 1, \"part\", "
                "\"optic\")"},
        BadCase{"LabelBadName", "label(x, \"a-b\", \"v\")", 0,
                "label(): 'a-b' is not a label name"},
        BadCase{"UnclosedCall", "increase(x[5m] > 0", 15,
                "expected ')' to close 'increase(' opened at offset 0, found '>'"},
        BadCase{"UnclosedAggregation", "1 + sum(rate(x[1m]) > 0", 23,
                "expected ')' to close 'sum(' opened at offset 4"},
        BadCase{"UnclosedParen", "(x > 1", 6, "expected ')' to close '(' opened at offset 0"},
        BadCase{"BadWindow", "increase(x[5q]) > 0", 11, "is neither a number nor a duration"},
        BadCase{"WindowWithoutUnit", "increase(x[5]) > 0", 11, "expected a window such as"},
        BadCase{"ZeroWindow", "rate(x[0s])", 7, "longer than zero"},
        BadCase{"NoRange", "rate(x) > 0", 6, "range functions need a [duration]"},
        BadCase{"RangeOutsideFunction", "x[5m] > 0", 1, "needs a range function"},
        BadCase{"RangeOfExpression", "rate(sum(x)[5m])", 5, "a series selector with a range"},
        BadCase{"UnknownFunction", "rat(x[5m]) > 0", 0,
                "unknown function 'rat' (did you mean 'rate'?)"},
        BadCase{"UnknownFunctionNoHint", "frobnicate(x)", 0, "unknown function 'frobnicate'"},
        BadCase{"PeerWithoutBy", "peer_ratio(rate(x[5s])) < 0.7", 22,
                "peer_ratio needs `by (labels)`"},
        BadCase{"PeerWithoutGrouping", "peer_median(x, rail)", 15,
                "peer_median needs `by (labels)`"},
        BadCase{"MissingOperand", "x > ", 4, "expected a selector, a number, a function or '('"},
        BadCase{"DurationAsNumber", "x > 5m", 4, "found duration '5m'"},
        BadCase{"UnquotedValue", "x{host=a} > 1", 7, "expected a quoted label value"},
        BadCase{"BadMatcherOp", "x{host>\"a\"}", 6, "expected '=', '!=', '=~', '!~' or 'in'"},
        BadCase{"BadRegex", "x{host=~\"(a\"}", 8, "invalid regex"},
        BadCase{"UnknownList", "x{priority in (nope)}", 15, "unknown list 'nope'"},
        BadCase{"NotWithoutIn", "x{priority not (\"3\")}", 15, "expected 'in' after 'not'"},
        BadCase{"TrailingToken", "x > 1 y", 6, "expected an operator or the end"},
        BadCase{"ChainedComparison", "1 < x < 5", 6, "comparisons do not chain"},
        BadCase{"UnterminatedString", "x{host=\"a} > 1", 7, "unterminated string"},
        BadCase{"StrayCharacter", "x % 1", 2, "unexpected character '%'"},
        BadCase{"Constant", "1 + 2", 0, "the condition is a constant"},
        BadCase{"CompareNumbers", "x and 1 > 2", 8, "comparing two numbers needs 'bool'"},
        BadCase{"SetOpOnNumber", "x and 1", 2, "'and' needs vectors on both sides"},
        BadCase{"MatchingOnNumber", "x > on(host) 1", 4, "'on' needs vectors on both sides"},
        BadCase{"AggregateNumber", "sum(1)", 3, "sum() needs a vector"},
        BadCase{"TwoGroupings", "sum by (a) (x) by (b)", 15, "two groupings"},
        BadCase{"EventsOutsideCount", "events{kind=\"x\"}", 0, "events can only be counted"},
        BadCase{"CountOverTimeOfSeries", "count_over_time(x[5m])", 16,
                "count_over_time counts events"},
        BadCase{"MacroAsFunction", "m(x)", 0, "'m' is a macro, not a function"},
        BadCase{"KeywordAsOperand", "x and or y", 6, "expected a selector"},
        BadCase{"DivisionByZeroConstant", "x > 1 / 0", 6, "no finite result"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return std::string(info.param.name); });

// ---- Store batch reads --------------------------------------------------------------------

TEST(SeriesStoreBatch, ManyReadsAgreeWithSingleReads) {
  SeriesStore store(SeriesStore::Options{.capacity = 64});
  std::vector<SeriesRef> refs;
  for (int s = 0; s < 5; ++s) {
    refs.push_back(store.Intern("c_total", {{"s", std::to_string(s)}}, MetricKind::kCounter));
  }
  // 100 samples into a ring of 64 (the ring wraps); series 2 resets at t=50; series 4 has none.
  for (int t = 1; t <= 100; ++t) {
    for (int s = 0; s < 4; ++s) {
      const double v = s == 2 && t >= 50 ? (t - 50) * 3 : t * (s + 1);
      store.Append(refs[s], t * kSec, v);
    }
  }
  // Short windows walk back from the head; long ones (> 8 samples) binary-search.
  for (int64_t window : {2, 5, 9, 30, 63, 200}) {
    const int64_t from = 100 * kSec - window * kSec;
    std::vector<std::optional<CounterWindow>> increases;
    store.IncreaseMany(refs, from, 100 * kSec, increases);
    for (size_t i = 0; i < refs.size(); ++i) {
      auto single = store.Increase(refs[i], from, 100 * kSec);
      ASSERT_EQ(increases[i].has_value(), single.has_value());
      if (single) {
        EXPECT_EQ(increases[i]->increase, single->increase);
        EXPECT_EQ(increases[i]->samples, single->samples);
        EXPECT_EQ(increases[i]->first_time, single->first_time) << window << " " << i;
        EXPECT_EQ(increases[i]->last_time, single->last_time) << window << " " << i;
        // The window holds every retained sample in it.
        EXPECT_EQ(single->samples, std::min<size_t>(window + 1, 64)) << window;
        // And the increase is the sum of the steps, a reset counting from zero.
        std::vector<Sample> samples = store.Range(refs[i], from, 100 * kSec);
        double expected = 0;
        for (size_t k = 1; k < samples.size(); ++k) {
          const double step = samples[k].value - samples[k - 1].value;
          expected += step >= 0 ? step : samples[k].value;
        }
        EXPECT_EQ(single->increase, expected) << window << " " << i;
      }
    }
    EXPECT_FALSE(increases[4].has_value());
  }
  std::vector<std::optional<Sample>> latest;
  store.LatestMany(refs, latest);
  EXPECT_EQ(latest[0]->value, 100);
  // The counter as the store counts it: 147 before the reset, plus 150 since.
  EXPECT_EQ(latest[2]->value, 297);
  EXPECT_FALSE(latest[4].has_value());
}

TEST(SeriesStoreBatch, WindowsOverIrregularSamples) {
  // Gaps and bursts: the window's start is guessed from the recent interval, and must be
  // found right when the guess is wrong.
  SeriesStore store(SeriesStore::Options{.capacity = 200});
  SeriesRef ref = store.Intern("c_total", {{"s", "1"}}, MetricKind::kCounter);
  std::vector<int64_t> times;
  int64_t t = 0;
  for (int i = 0; i < 150; ++i) {
    t += (i % 37 == 0) ? 20 * kSec : (i % 5 == 0 ? kSec / 10 : kSec);
    times.push_back(t);
    store.Append(ref, t, i * 3);
  }
  const std::vector<Sample> all = store.Range(ref, 0, t);
  ASSERT_EQ(all.size(), 150u);
  for (int64_t back = 1; back < 200; back += 3) {
    const int64_t from = t - back * kSec;
    size_t expected = 0;
    for (const Sample& sample : all) expected += sample.time_unix_nano >= from;
    std::vector<std::optional<CounterWindow>> w;
    std::vector<SeriesRef> refs = {ref};
    store.IncreaseMany(refs, from, t, w);
    if (expected < 2) {
      EXPECT_FALSE(w[0].has_value()) << back;
      continue;
    }
    ASSERT_TRUE(w[0].has_value()) << back;
    EXPECT_EQ(w[0]->samples, expected) << back;
    EXPECT_EQ(w[0]->increase, 3.0 * static_cast<double>(expected - 1)) << back;
  }
}

TEST(SeriesStoreBatch, GenerationAndNamedSeries) {
  SeriesStore a(SeriesStore::Options{.capacity = 4});
  SeriesStore b(SeriesStore::Options{.capacity = 4});
  EXPECT_NE(a.generation() >> 32, b.generation() >> 32);  // stores are told apart
  const uint64_t g0 = a.generation();
  a.Intern("x", {{"k", "1"}}, MetricKind::kGauge);
  a.Intern("y", {{"k", "1"}}, MetricKind::kGauge);
  a.Intern("x", {{"k", "2"}}, MetricKind::kGauge);
  const uint64_t g1 = a.generation();
  EXPECT_NE(g0, g1);
  a.Intern("x", {{"k", "2"}}, MetricKind::kGauge);  // not new
  EXPECT_EQ(a.generation(), g1);
  std::vector<std::string> seen;
  EXPECT_EQ(a.ForEachSeriesNamed("x", 1, [&](SeriesRef, const Labels& l) {
    seen.push_back(Str(l));
  }),
            2u);
  EXPECT_THAT(seen, ElementsAre("k=\"2\""));
  EXPECT_EQ(a.ForEachSeriesNamed("nope", 0, [&](SeriesRef, const Labels&) {}), 0u);
}

}  // namespace
}  // namespace railwatch
