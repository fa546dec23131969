// The condition language: evaluation of selectors, functions, operators and aggregations.
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
namespace condition_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

// ---- Evaluation ---------------------------------------------------------------------------

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

// Issue 19 item 7: no playbook fires on a window that does not yet hold its data. A series
// that began inside a range function's window with too few samples there for a value is
// unknown, not absent: the spine's view of a relay (known) `unless` the leaf's own pauses
// (one sample since the daemon started) must not read as "the leaf is not paused".
TEST_F(ConditionEvalTest, ASeriesThatBeganInsideTheWindowIsUnknownNotAbsent) {
  SeriesRef spine_view = Counter("pause_rx_total", {{"switch", "leaf-1"}, {"side", "spine"}});
  SeriesRef leaf_own = Counter("pause_leaf_rx_total", {{"switch", "leaf-1"}});
  Fill(spine_view, 100, 103, [](int t) { return t * 5000; });  // 5000/s
  store_.Append(leaf_own, 103 * kSec, 1e6);                  // its first sample
  const std::string storm =
      "rate(pause_rx_total[3s]) > 2000 unless on(switch) rate(pause_leaf_rx_total[3s]) > 1000";
  std::vector<VectorElement> all = EvalAll(storm, 103);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].unknown) << "the leaf's window is empty: the answer is open";
  EXPECT_TRUE(Eval(storm, 103).empty());
  // Its second sample: the leaf is paused at 3000/s itself, so it relays: no element.
  store_.Append(leaf_own, 104 * kSec, 1e6 + 3000);
  store_.Append(spine_view, 104 * kSec, 104 * 5000);
  EXPECT_TRUE(EvalAll(storm, 104).empty());
  // A leaf that is not paused: the spine's view holds, and is known.
  SeriesRef quiet = Counter("pause_leaf_rx_total", {{"switch", "leaf-2"}});
  SeriesRef spine_view_2 = Counter("pause_rx_total", {{"switch", "leaf-2"}, {"side", "spine"}});
  Fill(quiet, 101, 104, [](int) { return 7; });
  Fill(spine_view_2, 101, 104, [](int t) { return t * 5000; });
  all = EvalAll(storm, 104);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_FALSE(all[0].unknown);
  EXPECT_EQ(Get(all[0], "switch"), "leaf-2");
}

TEST_F(ConditionEvalTest, OnlyASeriesYoungerThanTheWindowIsUnknown) {
  SeriesRef old = Counter("errors_total", {{"host", "h1"}});
  SeriesRef young = Counter("errors_total", {{"host", "h2"}});
  store_.Append(old, 1 * kSec, 5);   // long before the window: stale, absent
  store_.Append(young, 99 * kSec, 5);
  std::vector<VectorElement> all = EvalAll("increase(errors_total[10s]) > 0", 100);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(Get(all[0], "host"), "h2");
  EXPECT_TRUE(all[0].unknown);
  // Aggregations and vector operators carry it; "or" with a known side is known.
  all = EvalAll("max by (host) (rate(errors_total[10s])) > 1", 100);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].unknown);
  SeriesRef alive = Gauge("up", {{"host", "h2"}});
  store_.Append(alive, 99 * kSec, 1);
  all = EvalAll("rate(errors_total[10s]) > 1 or on(host) up == 1", 100);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_FALSE(all[0].unknown);
  all = EvalAll("up == 1 and on(host) rate(errors_total[10s]) > 1", 100);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_TRUE(all[0].unknown);
  // Once the series is as old as the window, one sample in it means absent.
  EXPECT_TRUE(EvalAll("increase(errors_total[10s]) > 0", 110).empty());
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

TEST_F(ConditionEvalTest, LabelSetsAConstantLabel) {
  store_.Append(Gauge("a", {{"host", "h1"}}), kSec, 10);
  store_.Append(Gauge("a", {{"host", "h2"}, {"part", "cable"}}), kSec, 4);
  // Added where absent, replaced where present, kept sorted; the same on a second evaluation
  // (the labels are cached per series).
  for (int i = 0; i < 2; ++i) {
    std::vector<VectorElement> out = Eval("label(a > 1, \"part\", \"optic\")", 1);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(Str(out[0].labels), R"(host="h1",part="optic")");
    EXPECT_EQ(Str(out[1].labels), R"(host="h2",part="optic")");
  }
  // Branches of an `or` that name different parts stay apart when matched on the part.
  EXPECT_THAT(Values(Eval("label(a > 5, \"part\", \"optic\") or on(host, part) "
                          "label(a, \"part\", \"cable\")",
                          1),
                     "part"),
              UnorderedElementsAre("optic=10", "cable=10", "cable=4"));
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

}  // namespace
}  // namespace railwatch
