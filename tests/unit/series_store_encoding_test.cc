// The store's compressed samples (store/sample_chunk.h) against a plain reference model:
// random traces round-trip exactly through every read.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "store/counter_math.h"
#include "store/series_store.h"

namespace railwatch {
namespace series_store_encoding_test {

constexpr int64_t kSec = 1'000'000'000;

// What the store should hold: every accepted sample; the last `capacity` are retained.
struct Model {
  size_t capacity;
  uint32_t width_bits = 0;
  std::vector<Sample> all;

  bool Append(int64_t t, double v) {
    if (!all.empty() && t <= all.back().time_unix_nano) return false;
    all.push_back({t, v});
    return true;
  }
  std::vector<Sample> Range(int64_t from, int64_t to) const {
    std::vector<Sample> out;
    const size_t start = all.size() > capacity ? all.size() - capacity : 0;
    for (size_t i = start; i < all.size(); ++i) {
      if (all[i].time_unix_nano >= from && all[i].time_unix_nano <= to) out.push_back(all[i]);
    }
    return out;
  }
  std::optional<CounterWindow> Increase(int64_t from, int64_t to) const {
    const std::vector<Sample> s = Range(from, to);
    if (s.size() < 2) return std::nullopt;
    CounterWindow w;
    w.samples = s.size();
    w.first_time = s.front().time_unix_nano;
    w.last_time = s.back().time_unix_nano;
    bool monotonic = true;
    for (size_t i = 1; i < s.size(); ++i) monotonic &= s[i].value >= s[i - 1].value;
    if (monotonic) {
      w.increase = CounterDifference(s.front().value, s.back().value);
      return w;
    }
    for (size_t i = 1; i < s.size(); ++i) w.increase += GaugeStepAsCounter(s[i - 1].value, s[i].value);
    return w;
  }
};

bool Same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }


enum class Trace { kConstant, kBusyCounter, kResets, kWrap32, kFraction, kSpecial, kHuge, kMixed };

double NextValue(Trace trace, std::mt19937_64& rng, double prev, int i) {
  std::uniform_real_distribution<double> u(0, 1);
  switch (trace) {
    case Trace::kConstant:
      return 7;
    case Trace::kBusyCounter:
      return prev + std::floor(12.5e9 * (1 + 0.01 * (u(rng) - 0.5)));
    case Trace::kResets:
      return u(rng) < 0.02 ? std::floor(u(rng) * 100) : prev + std::floor(u(rng) * 5000);
    case Trace::kWrap32:
      return std::fmod(prev + std::floor(u(rng) * 4e8), 4294967296.0);
    case Trace::kFraction:
      return u(rng) < 0.3 ? std::floor(u(rng) * 100) : u(rng) * 100 - 50;
    case Trace::kSpecial: {
      const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::infinity(),
                                 -std::numeric_limits<double>::infinity(), -0.0, 0.0, 1.5, 3};
      return specials[rng() % 7];
    }
    case Trace::kHuge: {
      // Beyond 2^53 (exact integers, steps of 2^11) and beyond int64 (raw).
      if (u(rng) < 0.05) return 1.8e19;
      if (u(rng) < 0.05) return -9223372036854775808.0;
      return prev < 1e17 ? 1152921504606846976.0 : prev + 2048.0 * (1 + (rng() % 1000));
    }
    case Trace::kMixed:
      return NextValue(static_cast<Trace>(i / 37 % 7), rng, prev, i);
  }
  return 0;
}

void CheckSeries(const SeriesStore& store, SeriesRef ref, const Model& m, int64_t now,
                 std::mt19937_64& rng) {
  ASSERT_FALSE(m.all.empty());
  const auto latest = store.Latest(ref);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->time_unix_nano, m.all.back().time_unix_nano);
  EXPECT_TRUE(Same(latest->value, m.all.back().value));
  // Everything, then random windows (some at the newest end, as the engine reads).
  for (int k = 0; k < 12; ++k) {
    int64_t from = std::numeric_limits<int64_t>::min(), to = std::numeric_limits<int64_t>::max();
    if (k > 0) {
      to = k % 2 ? now : now - static_cast<int64_t>(rng() % (700 * kSec));
      from = to - static_cast<int64_t>(rng() % (k % 3 ? 20 * kSec : 900 * kSec));
    }
    const std::vector<Sample> want = m.Range(from, to);
    const std::vector<Sample> got = store.Range(ref, from, to);
    ASSERT_EQ(got.size(), want.size()) << "window " << from << ".." << to;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].time_unix_nano, want[i].time_unix_nano) << i;
      ASSERT_TRUE(Same(got[i].value, want[i].value))
          << i << ": " << got[i].value << " != " << want[i].value;
    }
    const auto inc = store.Increase(ref, from, to);
    const auto want_inc = m.Increase(from, to);
    ASSERT_EQ(inc.has_value(), want_inc.has_value());
    // A NaN "counter" has no defined increase (the fast path and the scan read it apart, as
    // they did before compression); the other fields still hold.
    const bool has_nan =
        std::any_of(want.begin(), want.end(), [](const Sample& s) { return std::isnan(s.value); });
    if (inc && !has_nan) {
      EXPECT_TRUE(Same(inc->increase, want_inc->increase));
      EXPECT_EQ(inc->samples, want_inc->samples);
      EXPECT_EQ(inc->first_time, want_inc->first_time);
      EXPECT_EQ(inc->last_time, want_inc->last_time);
    }
    // The window the range functions read (engine/range_functions.h): the same samples, handed
    // out in place, for each of several series at once.
    const SeriesRef refs[] = {ref, ref};
    size_t calls = 0;
    store.ForEachWindow(refs, from, to, [&](size_t i, std::span<const Sample> window) {
      EXPECT_EQ(i, calls++);
      ASSERT_EQ(window.size(), want.size()) << "window " << from << ".." << to;
      for (size_t k = 0; k < window.size(); ++k) {
        ASSERT_EQ(window[k].time_unix_nano, want[k].time_unix_nano) << k;
        ASSERT_TRUE(Same(window[k].value, want[k].value)) << k;
      }
    });
    EXPECT_EQ(calls, 2u);
  }
}

class EncodingRoundTrip : public ::testing::TestWithParam<std::tuple<Trace, size_t>> {};

TEST_P(EncodingRoundTrip, MatchesReferenceModel) {
  const auto [trace, capacity] = GetParam();
  std::mt19937_64 rng(static_cast<uint64_t>(trace) * 1000 + capacity);
  SeriesStore store(SeriesStore::Options{.capacity = capacity});
  // Several series appended with the same times (sharing time blocks); one of them now and
  // then skips a tick or takes its own time (its block diverges); some times repeat or go
  // back (dropped).
  constexpr int kSeries = 5;
  std::vector<SeriesRef> refs;
  std::vector<Model> models;
  std::vector<double> prev(kSeries, 0);
  for (int s = 0; s < kSeries; ++s) {
    const uint32_t width = trace == Trace::kWrap32 ? 32 : 0;
    // Gauges: the store keeps their readings as they are (a counter is corrected as it is
    // appended: tests/unit/counter_traps_test.cc), and reads a gauge's increase the way
    // Prometheus reads a counter's.
    refs.push_back(store.Intern("m", {{"s", std::to_string(s)}}, MetricKind::kGauge, width));
    models.push_back(Model{capacity, width, {}});
  }
  int64_t now = 1'700'000'000 * kSec;
  for (int i = 0; i < 1500; ++i) {
    now += rng() % 10 == 0 ? 0 : kSec + static_cast<int64_t>(rng() % 1000);
    for (int s = 0; s < kSeries; ++s) {
      int64_t t = now;
      if (s == 1 && rng() % 50 == 0) continue;                 // skips a tick
      if (s == 2 && rng() % 40 == 0) t += 1 + rng() % 1000;    // its own time
      if (s == 3 && rng() % 60 == 0) t -= 5 * kSec;            // out of order
      const double v = NextValue(trace, rng, prev[s], i);
      const bool accepted = models[s].Append(t, v);
      store.Append(refs[s], t, v);
      if (accepted) prev[s] = v;
    }
    if (i % 211 == 0 || i == 1499) {
      for (int s = 0; s < kSeries; ++s) CheckSeries(store, refs[s], models[s], now, rng);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Traces, EncodingRoundTrip,
    ::testing::Combine(::testing::Values(Trace::kConstant, Trace::kBusyCounter, Trace::kResets,
                                         Trace::kWrap32, Trace::kFraction, Trace::kSpecial,
                                         Trace::kHuge, Trace::kMixed),
                       ::testing::Values(size_t{3}, size_t{256}, size_t{600})));

TEST(SeriesStoreMemory, ConstantSeriesSharingTimesAreSmall) {
  SeriesStore store(SeriesStore::Options{.capacity = 600});
  std::vector<SeriesRef> refs;
  for (int s = 0; s < 1000; ++s) {
    refs.push_back(store.Intern("c", {{"s", std::to_string(s)}}, MetricKind::kCounter));
  }
  const size_t empty = store.MemoryBytes();
  for (int i = 0; i < 1200; ++i) {
    for (SeriesRef r : refs) store.Append(r, (i + 1) * kSec, 42);
  }
  // 1,200 samples of 16 bytes were 19 KB a series; shared times and 0-bit values are a few
  // chunk descriptors.
  EXPECT_LT((store.MemoryBytes() - empty) / refs.size(), 160u);
  EXPECT_EQ(store.Range(refs[999], 0, 2000 * kSec).size(), 600u);
}

TEST(SeriesStoreMemory, DroppedChunksFreeTheirBlocks) {
  SeriesStore store(SeriesStore::Options{.capacity = 10});
  const SeriesRef r = store.Intern("g", {}, MetricKind::kGauge);
  for (int i = 0; i < 300; ++i) store.Append(r, (i + 1) * kSec, i + 0.5);
  const size_t at300 = store.MemoryBytes();
  for (int i = 300; i < 5000; ++i) store.Append(r, (i + 1) * kSec, i + 0.5);
  EXPECT_LE(store.MemoryBytes(), at300 + 4096);  // at most about a chunk more, not 5000 samples
  const auto samples = store.Range(r, 0, 6000 * kSec);
  ASSERT_EQ(samples.size(), 10u);
  EXPECT_EQ(samples.front().time_unix_nano, 4991 * kSec);
  EXPECT_EQ(samples.back().value, 4999.5);
}

}  // namespace
}  // namespace railwatch
