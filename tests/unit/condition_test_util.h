// Shared by the condition language's tests (condition_*_test.cc): label helpers, parsing that
// fails the test on error, and a fixture with a series store, an event store and a fabric map.
#pragma once

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/condition.h"
#include "gtest/gtest.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

inline constexpr int64_t kSec = 1'000'000'000;

inline std::string Str(const Labels& labels) { return FormatLabels(labels); }

inline std::string Get(const VectorElement& e, const std::string& label) {
  const std::string* v = FindLabel(e.labels, label);
  return v ? *v : "<absent>";
}

inline std::unique_ptr<Condition> MustParse(std::string_view text, const ParseEnv& env = {}) {
  ConditionError err;
  auto c = ParseCondition(text, env, &err);
  EXPECT_TRUE(c.ok()) << text << ": " << c.status();
  return c.ok() ? std::move(*c) : nullptr;
}

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
  // The known elements (what the Query API shows and what fires).
  std::vector<VectorElement> Eval(std::string_view text, int64_t now_sec,
                                  const ParseEnv& env = {}) {
    std::vector<VectorElement> out = EvalAll(text, now_sec, env);
    std::erase_if(out, [](const VectorElement& e) { return e.unknown; });
    return out;
  }
  // Every element, the unknown ones too (a window that does not hold its data yet).
  std::vector<VectorElement> EvalAll(std::string_view text, int64_t now_sec,
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

}  // namespace railwatch
