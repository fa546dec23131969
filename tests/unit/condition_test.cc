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

namespace railwatch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr int64_t kSec = 1'000'000'000;

std::string Str(const Labels& labels) { return FormatLabels(labels); }

std::string Get(const VectorElement& e, const std::string& label) {
  const std::string* v = FindLabel(e.labels, label);
  return v ? *v : "<absent>";
}

std::unique_ptr<Condition> MustParse(std::string_view text, const ParseEnv& env = {}) {
  ConditionError err;
  auto c = ParseCondition(text, env, &err);
  EXPECT_TRUE(c.ok()) << text << ": " << c.status();
  return c.ok() ? std::move(*c) : nullptr;
}

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
    std::vector<std::optional<double>> rates;
    std::vector<std::optional<CounterWindow>> increases;
    store.RateMany(refs, from, 100 * kSec, rates);
    store.IncreaseMany(refs, from, 100 * kSec, increases);
    for (size_t i = 0; i < refs.size(); ++i) {
      EXPECT_EQ(rates[i], store.Rate(refs[i], from, 100 * kSec)) << window << " " << i;
      auto single = store.Increase(refs[i], from, 100 * kSec);
      ASSERT_EQ(increases[i].has_value(), single.has_value());
      if (single) {
        EXPECT_EQ(increases[i]->increase, single->increase);
        EXPECT_EQ(increases[i]->samples, single->samples);
        EXPECT_EQ(increases[i]->resets, single->resets);
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
    EXPECT_FALSE(rates[4].has_value());
  }
  std::vector<std::optional<Sample>> latest;
  store.LatestMany(refs, latest);
  EXPECT_EQ(latest[0]->value, 100);
  EXPECT_EQ(latest[2]->value, 150);
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

// ---- Evaluation ---------------------------------------------------------------------------

class ConditionEvalTest : public ::testing::Test {
 protected:
  SeriesRef Counter(const std::string& name, Labels labels) {
    NormalizeLabels(labels);
    return store_.Intern(name, labels, MetricKind::kCounter);
  }
  SeriesRef Gauge(const std::string& name, Labels labels) {
    NormalizeLabels(labels);
    return store_.Intern(name, labels, MetricKind::kGauge);
  }
  SeriesRef LinkDowned(const std::string& host, const std::string& device) {
    return Counter("link_downed_total", {{"device", device}, {"host", host}, {"port", "1"}});
  }
  // Appends value_at(t) for t = from..to seconds.
  template <typename Fn>
  void Fill(SeriesRef ref, int from, int to, Fn value_at) {
    for (int t = from; t <= to; ++t) store_.Append(ref, t * kSec, value_at(t));
  }
  std::vector<VectorElement> Eval(std::string_view text, int64_t now_sec,
                                  const ParseEnv& env = {}) {
    auto c = MustParse(text, env);
    if (!c) return {};
    return c->Evaluate(EvalContext{store_, &events_, fabric_.get(), now_sec * kSec});
  }
  // host -> value, sorted by host: compact expectations.
  std::vector<std::string> Values(const std::vector<VectorElement>& v, const std::string& label) {
    std::vector<std::string> out;
    for (const VectorElement& e : v) out.push_back(Get(e, label) + "=" + FormatValue(e.value));
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string FormatValue(double v) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%g", v);
    return buf;
  }

  SeriesStore store_{SeriesStore::Options{.capacity = 64}};
  EventStore events_{EventStore::Options{.capacity = 1000}};
  std::unique_ptr<FabricMap> fabric_;
};

TEST_F(ConditionEvalTest, IncreaseSelectsOnlyTheSeriesThatMoved) {
  SeriesRef a = LinkDowned("h1", "mlx5_0");
  SeriesRef b = LinkDowned("h1", "mlx5_1");
  SeriesRef c = LinkDowned("h2", "mlx5_0");  // one sample only: absent from the result
  Fill(a, 1, 5, [](int) { return 0; });
  Fill(b, 1, 5, [](int t) { return t >= 4 ? 1 : 0; });
  store_.Append(c, 5 * kSec, 9);
  std::vector<VectorElement> out = Eval("increase(link_downed_total[5m]) > 0", 5);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "device"), "mlx5_1");
  EXPECT_DOUBLE_EQ(out[0].value, 1);
  ASSERT_EQ(out[0].evidence.size(), 1u);
  EXPECT_EQ(out[0].evidence[0].series, b);
  EXPECT_EQ(out[0].evidence[0].function, "increase");
  EXPECT_EQ(out[0].evidence[0].window, absl::Minutes(5));
  // Absent, not zero: the one-sample series yields nothing even for >= 0.
  EXPECT_EQ(Eval("increase(link_downed_total[5m]) >= 0", 5).size(), 2u);
}

TEST_F(ConditionEvalTest, RateAndIncreaseSurviveACounterReset) {
  SeriesRef r = Counter("bytes_total", {{"host", "h1"}});
  // +100/s, then the driver reloads at t=6 and counts from 0 again at +100/s.
  Fill(r, 1, 10, [](int t) { return t <= 5 ? 1000 + t * 100 : (t - 5) * 100; });
  std::vector<VectorElement> inc = Eval("increase(bytes_total[9s])", 10);
  ASSERT_EQ(inc.size(), 1u);
  EXPECT_DOUBLE_EQ(inc[0].value, 900);  // 4 steps of 100, the reset step (100), 4 more
  std::vector<VectorElement> rate = Eval("rate(bytes_total[9s])", 10);
  ASSERT_EQ(rate.size(), 1u);
  EXPECT_DOUBLE_EQ(rate[0].value, 100);
  EXPECT_TRUE(Eval("rate(bytes_total[9s]) < 0", 10).empty());
}

TEST_F(ConditionEvalTest, PlainSelectorReadsTheNewestSampleWithinTheLookback) {
  SeriesRef fresh = Gauge("up", {{"host", "h1"}});
  SeriesRef old = Gauge("up", {{"host", "h2"}});
  store_.Append(old, 10 * kSec, 1);
  store_.Append(fresh, 10 * kSec, 0);
  store_.Append(fresh, 200 * kSec, 1);
  EXPECT_THAT(Values(Eval("up", 400), "host"), ElementsAre("h1=1"));
  EXPECT_THAT(Values(Eval("up", 300), "host"), ElementsAre("h1=1", "h2=1"));
}

TEST_F(ConditionEvalTest, MatchersRegexesAndLists) {
  for (const char* dev : {"mlx5_0", "mlx5_1", "mlx5_10", "bnxt_re0"}) {
    Fill(Gauge("g", {{"device", dev}, {"host", "h1"}}), 1, 2, [](int) { return 1; });
  }
  auto devices = [&](std::string_view text, const ParseEnv& env = {}) {
    std::vector<std::string> out;
    for (const VectorElement& e : Eval(text, 2, env)) out.push_back(Get(e, "device"));
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_THAT(devices("g{device=\"mlx5_1\"}"), ElementsAre("mlx5_1"));
  EXPECT_THAT(devices("g{device!=\"mlx5_1\"}"), ElementsAre("bnxt_re0", "mlx5_0", "mlx5_10"));
  // Regexes are anchored at both ends.
  EXPECT_THAT(devices("g{device=~\"mlx5_1\"}"), ElementsAre("mlx5_1"));
  EXPECT_THAT(devices("g{device=~\"mlx5_1.*\"}"), ElementsAre("mlx5_1", "mlx5_10"));
  EXPECT_THAT(devices("g{device!~\"mlx5_.*\"}"), ElementsAre("bnxt_re0"));
  EXPECT_THAT(devices("g{device in (\"mlx5_0\", \"bnxt_re0\")}"), ElementsAre("bnxt_re0", "mlx5_0"));
  EXPECT_THAT(devices("g{device not in (\"mlx5_0\", \"bnxt_re0\")}"),
              ElementsAre("mlx5_1", "mlx5_10"));
  ParseEnv env;
  env.lists["broadcom"] = {"bnxt_re0", "bnxt_re1"};
  EXPECT_THAT(devices("g{device in (broadcom)}", env), ElementsAre("bnxt_re0"));
  // A missing label matches as "".
  EXPECT_THAT(devices("g{rail=\"\"}"), ElementsAre("bnxt_re0", "mlx5_0", "mlx5_1", "mlx5_10"));
  EXPECT_THAT(devices("g{rail!=\"\"}"), ElementsAre());
}

TEST_F(ConditionEvalTest, SelectionFollowsNewSeries) {
  auto cond = MustParse("rate(c_total{host=~\"h.*\"}[10s]) > 0");
  auto eval = [&](int now) {
    return cond->Evaluate(EvalContext{store_, nullptr, nullptr, now * kSec}).size();
  };
  Fill(Counter("c_total", {{"host", "h1"}}), 1, 5, [](int t) { return t; });
  EXPECT_EQ(eval(5), 1u);
  Fill(Counter("c_total", {{"host", "h2"}}), 1, 5, [](int t) { return t; });
  Fill(Counter("c_total", {{"host", "x3"}}), 1, 5, [](int t) { return t; });
  Fill(Counter("other_total", {{"host", "h4"}}), 1, 5, [](int t) { return t; });
  EXPECT_EQ(eval(5), 2u);
  // The same parsed condition against another store.
  SeriesStore other(SeriesStore::Options{.capacity = 8});
  SeriesRef r = other.Intern("c_total", {{"host", "h9"}}, MetricKind::kCounter);
  other.Append(r, 1 * kSec, 0);
  other.Append(r, 2 * kSec, 5);
  auto out = cond->Evaluate(EvalContext{other, nullptr, nullptr, 2 * kSec});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "host"), "h9");
}

TEST_F(ConditionEvalTest, ArithmeticAndDivisionByZero) {
  SeriesRef a = Gauge("a", {{"host", "h1"}});
  SeriesRef b = Gauge("a", {{"host", "h2"}});
  SeriesRef c = Gauge("b", {{"host", "h1"}});
  SeriesRef d = Gauge("b", {{"host", "h2"}});
  store_.Append(a, kSec, 10);
  store_.Append(b, kSec, 4);
  store_.Append(c, kSec, 2);
  store_.Append(d, kSec, 0);
  EXPECT_THAT(Values(Eval("a * 8 + 1", 1), "host"), ElementsAre("h1=81", "h2=33"));
  EXPECT_THAT(Values(Eval("100 / a", 1), "host"), ElementsAre("h1=10", "h2=25"));
  EXPECT_THAT(Values(Eval("-a", 1), "host"), ElementsAre("h1=-10", "h2=-4"));
  EXPECT_THAT(Values(Eval("abs(b - a)", 1), "host"), ElementsAre("h1=8", "h2=4"));
  // Vector / vector, one-to-one by labels; b{h2} is 0, so h2 has no element (never Inf).
  std::vector<VectorElement> ratio = Eval("a / b", 1);
  ASSERT_EQ(ratio.size(), 1u);
  EXPECT_EQ(Get(ratio[0], "host"), "h1");
  EXPECT_DOUBLE_EQ(ratio[0].value, 5);
  // Both operands are evidence.
  std::vector<SeriesRef> ev;
  for (const EvidenceRef& e : ratio[0].evidence) ev.push_back(e.series);
  EXPECT_THAT(ev, UnorderedElementsAre(a, c));
  EXPECT_TRUE(Eval("a / 0", 1).empty());
  // Comparisons: filter, or 0/1 with bool; a number on the left turns around.
  EXPECT_THAT(Values(Eval("a > 5", 1), "host"), ElementsAre("h1=10"));
  EXPECT_THAT(Values(Eval("5 < a", 1), "host"), ElementsAre("h1=10"));
  EXPECT_THAT(Values(Eval("a > bool 5", 1), "host"), ElementsAre("h1=1", "h2=0"));
  EXPECT_THAT(Values(Eval("a > b * 4", 1), "host"), ElementsAre("h1=10", "h2=4"));
  EXPECT_THAT(Values(Eval("a > bool b * 4", 1), "host"), ElementsAre("h1=1", "h2=1"));
  EXPECT_THAT(Values(Eval("a == 4", 1), "host"), ElementsAre("h2=4"));
}

TEST_F(ConditionEvalTest, VectorMatchingOnAndIgnoring) {
  // Per-direction pause counts on two hosts, and one per-host gauge.
  store_.Append(Gauge("p", {{"host", "h1"}, {"direction", "tx"}}), kSec, 100);
  store_.Append(Gauge("p", {{"host", "h1"}, {"direction", "rx"}}), kSec, 1);
  store_.Append(Gauge("p", {{"host", "h2"}, {"direction", "tx"}}), kSec, 5);
  store_.Append(Gauge("p", {{"host", "h2"}, {"direction", "rx"}}), kSec, 50);
  store_.Append(Gauge("w", {{"host", "h1"}}), kSec, 2);
  // No common label sets without on/ignoring.
  EXPECT_TRUE(Eval("p{direction=\"tx\"} / p{direction=\"rx\"}", 1).empty());
  EXPECT_THAT(Values(Eval("p{direction=\"tx\"} / ignoring(direction) p{direction=\"rx\"}", 1),
                     "host"),
              ElementsAre("h1=100", "h2=0.1"));
  EXPECT_THAT(Values(Eval("p{direction=\"tx\"} > on(host) p{direction=\"rx\"}", 1), "host"),
              ElementsAre("h1=100"));
  // The left element's labels are kept.
  std::vector<VectorElement> out = Eval("p{direction=\"tx\"} * on(host) w", 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Str(out[0].labels), R"(direction="tx",host="h1")");
  EXPECT_DOUBLE_EQ(out[0].value, 200);
}

TEST_F(ConditionEvalTest, AndOrUnless) {
  store_.Append(Gauge("tx", {{"host", "h1"}, {"device", "d0"}}), kSec, 10);
  store_.Append(Gauge("tx", {{"host", "h2"}, {"device", "d0"}}), kSec, 20);
  store_.Append(Gauge("tx", {{"host", "h3"}, {"device", "d0"}}), kSec, 30);
  store_.Append(Gauge("rx", {{"host", "h2"}, {"device", "d0"}}), kSec, 1);
  store_.Append(Gauge("alive", {{"host", "h3"}}), kSec, 1);
  EXPECT_THAT(Values(Eval("tx and rx", 1), "host"), ElementsAre("h2=20"));
  EXPECT_THAT(Values(Eval("tx unless rx", 1), "host"), ElementsAre("h1=10", "h3=30"));
  EXPECT_THAT(Values(Eval("tx and on(host) alive", 1), "host"), ElementsAre("h3=30"));
  EXPECT_THAT(Values(Eval("tx unless on(host) alive", 1), "host"), ElementsAre("h1=10", "h2=20"));
  EXPECT_THAT(Values(Eval("tx and ignoring(device) alive", 1), "host"), ElementsAre("h3=30"));
  EXPECT_THAT(Values(Eval("rx or tx", 1), "host"), ElementsAre("h1=10", "h2=1", "h3=30"));
  EXPECT_THAT(Values(Eval("tx > 15 or on(host) alive", 1), "host"), ElementsAre("h2=20", "h3=30"));
  // "and" carries the right side's evidence too.
  std::vector<VectorElement> both = Eval("tx and on(host) alive", 1);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].evidence.size(), 2u);
  // Precedence: and binds tighter than or.
  EXPECT_THAT(Values(Eval("tx > 25 or tx < 15 and rx", 1), "host"), ElementsAre("h3=30"));
}

TEST_F(ConditionEvalTest, AggregationsByAndWithout) {
  const std::vector<std::tuple<std::string, std::string, double>> nics = {
      {"h1", "d0", 1}, {"h1", "d1", 3}, {"h2", "d0", 10}, {"h2", "d1", 20}, {"h2", "d2", 30}};
  for (const auto& [host, dev, v] : nics) {
    store_.Append(Gauge("bw", {{"host", host}, {"device", dev}, {"port", "1"}}), kSec, v);
  }
  EXPECT_THAT(Values(Eval("sum by (host) (bw)", 1), "host"), ElementsAre("h1=4", "h2=60"));
  EXPECT_THAT(Values(Eval("sum(bw) by (host)", 1), "host"), ElementsAre("h1=4", "h2=60"));
  EXPECT_THAT(Values(Eval("avg by (host) (bw)", 1), "host"), ElementsAre("h1=2", "h2=20"));
  EXPECT_THAT(Values(Eval("min by (host) (bw)", 1), "host"), ElementsAre("h1=1", "h2=10"));
  EXPECT_THAT(Values(Eval("max by (host) (bw)", 1), "host"), ElementsAre("h1=3", "h2=30"));
  EXPECT_THAT(Values(Eval("count by (host) (bw)", 1), "host"), ElementsAre("h1=2", "h2=3"));
  EXPECT_THAT(Values(Eval("sum by (device) (bw)", 1), "device"),
              ElementsAre("d0=11", "d1=23", "d2=30"));
  // without keeps every other label; by keeps only the listed ones.
  std::vector<VectorElement> w = Eval("sum without (device) (bw) > 5", 1);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(Str(w[0].labels), R"(host="h2",port="1")");
  std::vector<VectorElement> all = Eval("sum(bw)", 1);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].labels.empty());
  EXPECT_DOUBLE_EQ(all[0].value, 64);
  EXPECT_EQ(all[0].evidence.size(), 5u);
  EXPECT_THAT(Values(Eval("sum by (host) (bw) / on(host) count by (host) (bw)", 1), "host"),
              ElementsAre("h1=2", "h2=20"));
}

TEST_F(ConditionEvalTest, GroupingsStayRightAcrossEvaluations) {
  // The nodes remember each series' group between evaluations; new series, new groups and
  // another store must not confuse them.
  auto cond = MustParse("sum by (host) (g) / on(host) count by (host) (g) > 0");
  auto eval = [&](const SeriesStore& store) {
    std::vector<std::string> out;
    for (const VectorElement& e : cond->Evaluate(EvalContext{store, nullptr, nullptr, kSec})) {
      out.push_back(Get(e, "host") + "=" + FormatValue(e.value));
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  store_.Append(Gauge("g", {{"host", "h1"}, {"device", "d0"}}), kSec, 2);
  store_.Append(Gauge("g", {{"host", "h1"}, {"device", "d1"}}), kSec, 4);
  EXPECT_THAT(eval(store_), ElementsAre("h1=3"));
  store_.Append(Gauge("g", {{"host", "h2"}, {"device", "d0"}}), kSec, 10);
  store_.Append(Gauge("g", {{"host", "h1"}, {"device", "d2"}}), kSec, 9);
  EXPECT_THAT(eval(store_), ElementsAre("h1=5", "h2=10"));
  EXPECT_THAT(eval(store_), ElementsAre("h1=5", "h2=10"));
  // Another store, whose series take the same places in the selection with other hosts.
  SeriesStore other(SeriesStore::Options{.capacity = 4});
  other.Append(other.Intern("g", {{"device", "d0"}, {"host", "h7"}}, MetricKind::kGauge), kSec, 1);
  other.Append(other.Intern("g", {{"device", "d1"}, {"host", "h8"}}, MetricKind::kGauge), kSec, 3);
  EXPECT_THAT(eval(other), ElementsAre("h7=1", "h8=3"));
  EXPECT_THAT(eval(store_), ElementsAre("h1=5", "h2=10"));
}

TEST_F(ConditionEvalTest, AggregatedEvidenceKeepsTheLargestSixteen) {
  for (int i = 0; i < 40; ++i) {
    store_.Append(Gauge("q", {{"queue", std::to_string(i)}}), kSec, i);
  }
  std::vector<VectorElement> out = Eval("sum(q) > 0", 1);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].evidence.size(), 16u);
  // Largest first: 39 down to 24.
  for (size_t i = 0; i < 16; ++i) EXPECT_DOUBLE_EQ(out[0].evidence[i].value, 39 - i);
  // The same series read twice is one piece of evidence.
  std::vector<VectorElement> twice = Eval("q{queue=\"3\"} and q > 2", 1);
  ASSERT_EQ(twice.size(), 1u);
  EXPECT_EQ(twice[0].evidence.size(), 1u);
}

TEST_F(ConditionEvalTest, PeerMedianAndRatioFindTheOutlier) {
  // Rail 0: four NICs at ~10 GB/s and one at 4; rail 1 has one NIC only; rail 2 has a peer
  // group whose median is zero.
  const std::vector<std::tuple<std::string, std::string, double>> nics = {
      {"h1", "0", 10e9}, {"h2", "0", 11e9}, {"h3", "0", 9e9}, {"h4", "0", 10e9},
      {"h5", "0", 4e9},  {"h1", "1", 10e9}, {"h1", "2", 5},   {"h2", "2", 0},  {"h3", "2", 0}};
  for (const auto& [host, rail, rate] : nics) {
    SeriesRef r = Counter("tx_bytes_total", {{"host", host}, {"rail", rail}});
    Fill(r, 1, 6, [&, rate = rate](int t) { return rate * t; });
  }
  std::vector<VectorElement> slow =
      Eval("peer_ratio(rate(tx_bytes_total{rail!=\"2\"}[5s]), by (rail)) < 0.7", 6);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(Get(slow[0], "host"), "h5");
  EXPECT_EQ(Get(slow[0], "rail"), "0");
  EXPECT_DOUBLE_EQ(slow[0].value, 0.4);  // 4 / median(10, 11, 9, 10)
  ASSERT_EQ(slow[0].evidence.size(), 1u);
  EXPECT_EQ(slow[0].evidence[0].function, "rate");
  // The median of the others: for h2 (11) the others are 10, 9, 10, 4 -> 9.5.
  std::vector<VectorElement> med =
      Eval("peer_median(rate(tx_bytes_total{rail=\"0\"}[5s]), by (rail))", 6);
  EXPECT_THAT(Values(med, "host"),
              ElementsAre("h1=9.5e+09", "h2=9.5e+09", "h3=1e+10", "h4=9.5e+09", "h5=1e+10"));
  // Rail 1 (a group of one) yields nothing; rail 2's zero median drops the ratio.
  EXPECT_TRUE(Eval("peer_ratio(rate(tx_bytes_total{rail=\"1\"}[5s]), by (rail))", 6).empty());
  EXPECT_THAT(Values(Eval("peer_ratio(rate(tx_bytes_total{rail=\"2\"}[5s]), by (rail))", 6),
                     "host"),
              ElementsAre("h2=0", "h3=0"));  // median of (5, 0) = 2.5; h1's others are 0, 0
  EXPECT_THAT(Values(Eval("peer_median(rate(tx_bytes_total{rail=\"2\"}[5s]), by (rail))", 6),
                     "host"),
              ElementsAre("h1=0", "h2=2.5", "h3=2.5"));
  // without (host, rail): every NIC against all the others: h5 (4e9 / 9.5e9) and the three
  // rail-2 NICs (5 and 0 against 9.5e9).
  EXPECT_EQ(Eval("peer_ratio(rate(tx_bytes_total[5s]), without (host, rail)) < 0.5", 6).size(),
            4u);
}

TEST_F(ConditionEvalTest, PeerMedianMatchesABruteForceMedianOfTheOthers) {
  // Groups of 1 to 9 elements with many ties (values 0-4).
  std::map<std::string, std::vector<std::pair<std::string, double>>> groups;
  uint32_t seed = 12345;
  auto next = [&seed] { return (seed = seed * 1103515245 + 12345) >> 16; };
  for (int g = 0; g < 30; ++g) {
    const int n = 1 + g % 9;
    for (int i = 0; i < n; ++i) {
      const double v = next() % 5;
      const std::string host = "h" + std::to_string(i);
      store_.Append(Gauge("v", {{"group", std::to_string(g)}, {"host", host}}), kSec, v);
      groups[std::to_string(g)].emplace_back(host, v);
    }
  }
  std::map<std::string, double> got;
  for (const VectorElement& e : Eval("peer_median(v, by (group))", 1)) {
    got[Get(e, "group") + "/" + Get(e, "host")] = e.value;
  }
  size_t expected_elements = 0;
  for (const auto& [group, members] : groups) {
    if (members.size() < 2) continue;
    for (size_t i = 0; i < members.size(); ++i) {
      std::vector<double> others;
      for (size_t j = 0; j < members.size(); ++j) {
        if (j != i) others.push_back(members[j].second);
      }
      std::sort(others.begin(), others.end());
      const size_t m = others.size();
      const double median = m % 2 ? others[m / 2] : (others[m / 2 - 1] + others[m / 2]) / 2;
      const std::string key = group + "/" + members[i].first;
      ASSERT_TRUE(got.contains(key)) << key;
      EXPECT_DOUBLE_EQ(got[key], median) << key;
      ++expected_elements;
    }
  }
  EXPECT_EQ(got.size(), expected_elements);
}

TEST_F(ConditionEvalTest, StaleNamesSeriesThatStopped) {
  SeriesRef gone = Gauge("port_state", {{"host", "h1"}, {"device", "mlx5_3"}});
  SeriesRef here = Gauge("port_state", {{"host", "h1"}, {"device", "mlx5_0"}});
  SeriesRef agent = Gauge("collector_success", {{"host", "h1"}});
  Fill(gone, 1, 10, [](int) { return 4; });
  Fill(here, 1, 60, [](int) { return 4; });
  Fill(agent, 1, 60, [](int) { return 1; });
  std::vector<VectorElement> out = Eval("stale(port_state[30s])", 60);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "device"), "mlx5_3");
  EXPECT_DOUBLE_EQ(out[0].value, 50);
  EXPECT_EQ(out[0].evidence[0].function, "stale");
  // The NIC is gone while its host's agent still reports.
  EXPECT_EQ(Eval("stale(port_state[30s]) unless on(host) stale(collector_success[30s])", 60)
                .size(),
            1u);
  EXPECT_TRUE(Eval("stale(port_state[30s])", 35).empty());
}

TEST_F(ConditionEvalTest, WindowFunctionsOverGauges) {
  SeriesRef oper = Gauge("oper_up", {{"switch", "leaf-1"}, {"interface", "Ethernet0"}});
  SeriesRef calm = Gauge("oper_up", {{"switch", "leaf-1"}, {"interface", "Ethernet4"}});
  SeriesRef single = Gauge("oper_up", {{"switch", "leaf-1"}, {"interface", "Ethernet8"}});
  // 1 1 0 0 1 0 1 1 1 1: four changes.
  const double seq[] = {1, 1, 0, 0, 1, 0, 1, 1, 1, 1};
  Fill(oper, 1, 10, [&](int t) { return seq[t - 1]; });
  Fill(calm, 1, 10, [](int) { return 1; });
  store_.Append(single, 10 * kSec, 1);
  EXPECT_THAT(Values(Eval("changes(oper_up[1m])", 10), "interface"),
              ElementsAre("Ethernet0=4", "Ethernet4=0"));  // one sample: no element
  EXPECT_THAT(Values(Eval("changes(oper_up[1m]) > 0", 10), "interface"),
              ElementsAre("Ethernet0=4"));
  SeriesRef temp = Gauge("temp", {{"host", "h1"}});
  Fill(temp, 1, 10, [](int t) { return 40 + t; });
  EXPECT_THAT(Values(Eval("delta(temp[4s])", 10), "host"), ElementsAre("h1=4"));
  EXPECT_THAT(Values(Eval("avg_over_time(temp[4s])", 10), "host"), ElementsAre("h1=48"));
  EXPECT_THAT(Values(Eval("min_over_time(temp[4s])", 10), "host"), ElementsAre("h1=46"));
  EXPECT_THAT(Values(Eval("max_over_time(temp[1m])", 10), "host"), ElementsAre("h1=50"));
  EXPECT_THAT(Values(Eval("avg_over_time(oper_up{interface=\"Ethernet8\"}[1m])", 10), "host"),
              ElementsAre("<absent>=1"));
  EXPECT_TRUE(Eval("delta(temp[4s])", 30).empty());  // nothing in the window
}

class ConditionEventsTest : public ConditionEvalTest {
 protected:
  void Event(std::string kind, int64_t t_sec, Labels labels, std::string raw = "") {
    StoredEvent e;
    e.kind = std::move(kind);
    e.time_unix_nano = t_sec * kSec;
    e.labels = std::move(labels);
    e.raw = std::move(raw);
    events_.Append(std::move(e));
  }
};

TEST_F(ConditionEventsTest, CountOverTimeGroupsByKindAndLabels) {
  for (int i = 0; i < 12; ++i) {
    Event("nccl.ib_completion_error", 1000 + i, {{"host", "h1"}},
          "NET/IB : Got completion with error 12 #" + std::to_string(i));
  }
  Event("nccl.ib_completion_error", 1005, {{"host", "h2"}}, "h2 line");
  Event("nccl.call_failed", 1006, {{"host", "h1"}}, "call failed");
  Event("pytorch.watchdog_timeout", 1007, {{"host", "h2"}}, "watchdog");
  Event("nccl.ib_completion_error", 10, {{"host", "h3"}}, "too old");

  std::vector<VectorElement> out =
      Eval("count_over_time(events{kind=\"nccl.ib_completion_error\"}[5m]) > 0", 1020);
  ASSERT_EQ(out.size(), 2u);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return Get(a, "host") < Get(b, "host"); });
  EXPECT_EQ(Str(out[0].labels), R"(host="h1",kind="nccl.ib_completion_error")");
  EXPECT_DOUBLE_EQ(out[0].value, 12);
  // The newest eight, oldest of them first, with their raw lines.
  ASSERT_EQ(out[0].event_evidence.size(), 8u);
  EXPECT_EQ(out[0].event_evidence.front().raw, "NET/IB : Got completion with error 12 #4");
  EXPECT_EQ(out[0].event_evidence.back().raw, "NET/IB : Got completion with error 12 #11");
  EXPECT_EQ(out[0].event_evidence.back().kind, "nccl.ib_completion_error");
  EXPECT_EQ(out[0].event_evidence.back().time_unix_nano, 1011 * kSec);
  EXPECT_TRUE(out[0].evidence.empty());

  // A family by regex, a label matcher, and `in`.
  EXPECT_THAT(Values(Eval("count_over_time(events{kind=~\"nccl\\..*\",host=\"h1\"}[5m])", 1020),
                     "kind"),
              ElementsAre("nccl.call_failed=1", "nccl.ib_completion_error=12"));
  EXPECT_THAT(Values(Eval("sum by (host) (count_over_time(events{kind in "
                          "(\"nccl.ib_completion_error\", \"pytorch.watchdog_timeout\")}[5m]))",
                          1020),
                     "host"),
              ElementsAre("h1=12", "h2=2"));
  // A bare family string is a plain kind here: nothing is called "nccl.".
  EXPECT_TRUE(Eval("count_over_time(events{kind=\"nccl.\"}[5m])", 1020).empty());
  // The window counts: h3's one event is at t=10.
  EXPECT_THAT(Values(Eval("count_over_time(events{host=\"h3\"}[2m])", 1020), "host"),
              ElementsAre());
  EXPECT_THAT(Values(Eval("count_over_time(events{host=\"h3\"}[2m])", 100), "host"),
              ElementsAre("h3=1"));
  // Event evidence survives aggregation and "and".
  std::vector<VectorElement> joined =
      Eval("sum by (host) (count_over_time(events{kind=\"pytorch.watchdog_timeout\"}[5m])) and "
           "on(host) count_over_time(events{kind=\"nccl.ib_completion_error\"}[5m])",
           1020);
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(Get(joined[0], "host"), "h2");
  ASSERT_EQ(joined[0].event_evidence.size(), 2u);
  EXPECT_EQ(joined[0].event_evidence[0].raw, "h2 line");
  EXPECT_EQ(joined[0].event_evidence[1].raw, "watchdog");
}

TEST(ConditionKeys, KeysThatComeAndGoDoNotPileUpOrGetConfused) {
  // Each tick brings 100 new pids. The left aggregation, keyed by pid, starts its keys over
  // now and then (it would otherwise keep every pid ever seen); the "unless" above it, which
  // also sees 5,000 pids that never change, does not start over as often, and must not take
  // the aggregation's new key numbers for the old ones.
  SeriesStore store(SeriesStore::Options{.capacity = 4});
  EventStore events(EventStore::Options{.capacity = 12'000});
  auto event = [&](const char* kind, int t, int pid) {
    StoredEvent e;
    e.kind = kind;
    e.time_unix_nano = t * kSec;
    e.labels = {{"pid", std::to_string(pid)}};
    events.Append(std::move(e));
  };
  auto cond = MustParse(
      "count by (pid) (count_over_time(events{kind=\"a\"}[500ms]))"
      " unless on(pid) count by (pid) (count_over_time(events{kind=\"b\"}[500ms]))");
  for (int t = 1; t <= 100; ++t) {
    for (int p = t * 100; p < t * 100 + 100; ++p) {
      event("a", t, p);
      if (p % 2 == 0) event("b", t, p);
    }
    for (int p = 1'000'000; p < 1'005'000; ++p) event("b", t, p);
    std::vector<VectorElement> out = cond->Evaluate(EvalContext{store, &events, nullptr, t * kSec});
    ASSERT_EQ(out.size(), 50u) << "tick " << t;
    for (const VectorElement& e : out) {
      const int pid = std::stoi(Get(e, "pid"));
      ASSERT_EQ(pid % 2, 1) << "tick " << t;
      ASSERT_GE(pid, t * 100) << "tick " << t;
      ASSERT_LT(pid, t * 100 + 100) << "tick " << t;
    }
  }
}

TEST_F(ConditionEventsTest, NoEventStoreYieldsNothing) {
  Event("nccl.call_failed", 1, {{"host", "h1"}});
  auto c = MustParse("count_over_time(events[5m])");
  EXPECT_EQ(c->Evaluate(EvalContext{store_, &events_, nullptr, 2 * kSec}).size(), 1u);
  EXPECT_TRUE(c->Evaluate(EvalContext{store_, nullptr, nullptr, 2 * kSec}).empty());
}

// ---- Topology ----------------------------------------------------------------------------

// Two hosts with a NIC each on rail 0, cabled to leaf-r0.
constexpr char kTopology[] = R"(
switches:
  - name: leaf-r0
    role: leaf
    links:
      - {port: Ethernet64, peer: spine-0, peer_port: Ethernet0}
  - {name: spine-0, role: spine}
hosts:
  - name: gpu-node-001
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet0}
  - name: gpu-node-002
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet4}
jobs:
  - name: train-a
    hosts: [gpu-node-001, gpu-node-002]
)";

class ConditionTopologyTest : public ConditionEvalTest {
 protected:
  void SetUp() override {
    absl::StatusOr<Topology> t = Topology::LoadString(kTopology, "fabric.yaml");
    ASSERT_TRUE(t.ok()) << t.status();
    topology_ = std::make_shared<const Topology>(*std::move(t));
    jobs_.SetStatic(topology_->jobs());
    fabric_ = std::make_unique<FabricMap>(topology_, &jobs_);
  }
  std::shared_ptr<const Topology> topology_;
  JobRegistry jobs_;
};

TEST_F(ConditionTopologyTest, TopologyAddsRailLeafAndJob) {
  Fill(Counter("tx_bytes_total", {{"host", "gpu-node-001"}, {"device", "mlx5_0"}}), 1, 3,
       [](int t) { return t * 100; });
  std::vector<VectorElement> out = Eval("topology(rate(tx_bytes_total[5s]))", 3);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "rail"), "0");
  EXPECT_EQ(Get(out[0], "leaf"), "leaf-r0");
  EXPECT_EQ(Get(out[0], "job"), "train-a");
  EXPECT_EQ(Get(out[0], "node"), "gpu-node-001/mlx5_0");
  EXPECT_EQ(out[0].evidence.size(), 1u);
  EXPECT_THAT(Values(Eval("sum by (leaf) (topology(rate(tx_bytes_total[5s])))", 3), "leaf"),
              ElementsAre("leaf-r0=100"));
  // Without a fabric map: elements pass through unchanged.
  fabric_.reset();
  std::vector<VectorElement> bare = Eval("topology(rate(tx_bytes_total[5s]))", 3);
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(Str(bare[0].labels), R"(device="mlx5_0",host="gpu-node-001")");
}

TEST_F(ConditionTopologyTest, TopologyLabelsFollowTheJobsAsTheyChange) {
  Fill(Counter("tx_bytes_total", {{"host", "gpu-node-001"}, {"device", "mlx5_0"}}), 1, 3,
       [](int t) { return t * 100; });
  Fill(Counter("tx_bytes_total", {{"host", "gpu-node-002"}, {"device", "mlx5_0"}}), 1, 3,
       [](int t) { return t * 300; });
  auto cond = MustParse("sum by (job) (topology(rate(tx_bytes_total[5s])))");
  auto eval = [&] {
    return Values(cond->Evaluate(EvalContext{store_, nullptr, fabric_.get(), 3 * kSec}), "job");
  };
  EXPECT_THAT(eval(), ElementsAre("train-a=400"));
  // gpu-node-002 moves to another job: the same parsed condition groups it there.
  jobs_.SetStatic({TopologyJob{"train-a", {"gpu-node-001"}, 8},
                   TopologyJob{"train-b", {"gpu-node-002"}, 8}});
  EXPECT_THAT(eval(), ElementsAre("train-a=100", "train-b=300"));
}

TEST_F(ConditionTopologyTest, PeerNamesTheNicBehindASwitchPort) {
  // The leaf port facing gpu-node-002 receives pauses at storm rate; the one facing
  // gpu-node-001 at a benign rate; an uplink relays.
  auto port = [&](const std::string& iface, double per_sec) {
    SeriesRef r = Counter("pfc_total", {{"switch", "leaf-r0"}, {"interface", iface},
                                        {"priority", "3"}, {"direction", "rx"}});
    Fill(r, 1, 3, [per_sec](int t) { return per_sec * t; });
  };
  port("Ethernet0", 2);
  port("Ethernet4", 20000);
  port("Ethernet64", 3000);
  std::vector<VectorElement> out = Eval("peer(rate(pfc_total{switch!=\"\"}[2s]) > 1000)", 3);
  // The NIC (it has a host) first.
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return FindLabel(a.labels, "host") != nullptr &&
                                                      FindLabel(b.labels, "host") == nullptr; });
  ASSERT_EQ(out.size(), 2u);
  // The NIC: what its leaf port received, it sent.
  EXPECT_EQ(Get(out[0], "host"), "gpu-node-002");
  EXPECT_EQ(Get(out[0], "device"), "mlx5_0");
  EXPECT_EQ(Get(out[0], "interface"), "enp12s0np0");
  EXPECT_EQ(Get(out[0], "direction"), "tx");
  EXPECT_EQ(Get(out[0], "priority"), "3");
  EXPECT_DOUBLE_EQ(out[0].value, 20000);
  // The uplink's far end is the spine.
  EXPECT_EQ(Get(out[1], "switch"), "spine-0");
  EXPECT_EQ(Get(out[1], "interface"), "Ethernet0");
  // A port the topology does not know has no peer.
  port("Ethernet99", 50000);
  EXPECT_EQ(Eval("peer(rate(pfc_total[2s]) > 1000)", 3).size(), 2u);
  // Without a fabric map, peer() yields nothing.
  fabric_.reset();
  EXPECT_TRUE(Eval("peer(rate(pfc_total[2s]) > 1000)", 3).empty());
}

TEST_F(ConditionTopologyTest, PfcSourceIsTheNicThatSendsWithoutReceiving) {
  // Host view: gpu-node-002 sends pauses and receives none (the source); gpu-node-001 sends
  // as many but also receives them (a relay).
  auto nic = [&](const std::string& host, const std::string& dir, double per_sec) {
    SeriesRef r = Counter("pfc_total", {{"host", host}, {"interface", "enp12s0np0"},
                                        {"priority", "3"}, {"direction", dir}});
    Fill(r, 1, 3, [per_sec](int t) { return per_sec * t; });
  };
  nic("gpu-node-001", "tx", 20000);
  nic("gpu-node-001", "rx", 20000);
  nic("gpu-node-002", "tx", 20000);
  nic("gpu-node-002", "rx", 2);
  std::vector<VectorElement> out =
      Eval("topology(rate(pfc_total{host!=\"\",direction=\"tx\"}[2s]) > 1000)\n"
           "  unless on(node) topology(rate(pfc_total{direction=\"rx\"}[2s]) > 1000)",
           3);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "node"), "gpu-node-002/mlx5_0");
  EXPECT_EQ(Get(out[0], "leaf"), "leaf-r0");
}

}  // namespace
}  // namespace railwatch
