// Property test of issue 9 item 5 (docs/STORE.md, "Counter semantics"): random traces of a
// port's byte counter, traffic at or below line rate mixed with every counter trap (resets to
// 0 and to small values, 32-bit wraps, a width change at a driver reload, a replaced NIC
// whose counter starts anywhere, readings out of order or at the same time, tiny steps),
// appended to a real SeriesStore and read the way playbooks and Prometheus read them:
//   - rate(), increase() and delta() through the rules engine's condition evaluation never
//     imply more than the bound of store/line_rate.h: over samples T seconds apart, at most
//     line rate x (kLineRateTolerance x T + kCounterBurstSeconds);
//   - the value /metrics exports never goes down, and between any two scrapes never rises by
//     more than that bound;
//   - over a window with no trap in it, rate() and increase() are exact (so the bound is not
//     met by rejecting traffic).
// Each trace's seed is printed on failure; RAILWATCH_TRAPS_SEED=<n> replays from trace n.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"
#include "engine/condition.h"
#include "exporters/store_exposition.h"
#include "gtest/gtest.h"
#include "store/line_rate.h"
#include "store/series_store.h"

namespace railwatch {
namespace counter_traps_property_test {

constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kWindow = 30 * kSec;
constexpr double kTwoTo32 = 4294967296.0;
constexpr std::string_view kName = "fabric_rdma_port_transmit_bytes_total";

// A sample the store should keep, and whether the step to it was plain traffic.
struct Accepted {
  int64_t t;
  bool clean;      // no trap between the previous sample and this one
  double traffic;  // bytes sent in the step (when clean)
};

// What the traces exercised, added up over all of them: the test fails when a kind of trap
// or the exactness check was never reached.
struct Coverage {
  uint64_t evaluations = 0, exact_windows = 0;
  uint64_t resets = 0, wraps = 0, above_line_rate = 0, out_of_order = 0;
};

class TraceRunner {
 public:
  explicit TraceRunner(uint64_t seed) : rng_(seed) {}

  void Run() {
    // The port's rate: told to the store by the gauge, or unknown (the 800 Gb/s default).
    const double rates[] = {0, 100e9 / 8, 200e9 / 8, 400e9 / 8, 800e9 / 8};
    const double told = rates[rng_() % 5];
    line_rate_ = told > 0 ? told : kDefaultLineRateBytesPerSecond;
    width_ = rng_() % 3 == 0 ? 32 : 0;
    const double trap_probabilities[] = {0.01, 0.05, 0.25};
    trap_probability_ = trap_probabilities[rng_() % 3];
    // A 32-bit counter wraps detectably only while a step counts under 2^31 bytes.
    traffic_rate_ = width_ != 0 ? std::min(line_rate_, 1e9) : line_rate_;
    if (told > 0) {
      store_.Append(store_.Intern(kPortRateSeries, port_, TraitsOf(kPortRateSeries, MetricKind::kGauge)), 0,
                    told);
    }
    ref_ = store_.Intern(kName, port_, TraitsOf(kName, MetricKind::kCounter, width_));
    rate_ = Parse("rate(fabric_rdma_port_transmit_bytes_total[30s])");
    increase_ = Parse("increase(fabric_rdma_port_transmit_bytes_total[30s])");
    delta_ = Parse("delta(fabric_rdma_port_transmit_bytes_total[30s])");

    t_ = start_ = 1'700'000'000 * kSec;
    device_ = Wrap(std::floor(Uniform() * 1e15));
    Append(t_, device_, true, 0);
    const int steps = 60 + static_cast<int>(rng_() % 90);
    for (int i = 0; i < steps && !::testing::Test::HasFatalFailure(); ++i) Step();
    const SeriesStore::Stats stats = store_.stats();
    coverage.resets += stats.counter_resets;
    coverage.wraps += stats.counter_wraps;
    coverage.above_line_rate += stats.counter_steps_above_line_rate;
    coverage.out_of_order += stats.samples_out_of_order;
  }

  static inline Coverage coverage;

 private:
  double Uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  double Wrap(double v) const { return width_ == 32 ? std::fmod(v, kTwoTo32) : v; }

  std::unique_ptr<Condition> Parse(std::string_view text) {
    auto c = ParseCondition(text, ParseEnv{}, nullptr);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }

  void Step() {
    const int kind = static_cast<int>(rng_() % 100);
    // Traps between bouts of traffic: some traces have a few, some have many.
    const int trap = Uniform() < trap_probability_ ? static_cast<int>(rng_() % 4) : -1;
    if (kind < 4) {  // out of order or at the same time: dropped, whatever it reads
      const int64_t t = t_ - static_cast<int64_t>(rng_() % 2 ? 0 : rng_() % (5 * kSec));
      ++dropped_;
      Append(t, std::floor(Uniform() * 1e18), false, 0, /*dropped=*/true);
      return;
    }
    // Most steps about a second; some tiny (down to 1 us), some long.
    int64_t dt = kSec / 5 + static_cast<int64_t>(rng_() % (9 * kSec / 5));
    if (kind < 12) dt = 1000 + static_cast<int64_t>(rng_() % 10'000'000);
    if (kind >= 97) dt = static_cast<int64_t>(rng_() % (60 * kSec)) + kSec;
    t_ += dt;
    // Traffic at or below line rate; now and then exactly at it.
    const double most = traffic_rate_ * static_cast<double>(dt) / 1e9;
    const double traffic = std::floor(rng_() % 20 == 0 ? most : Uniform() * most);
    if (trap == 0) {  // driver reload: reset to 0, counting again since
      device_ = Wrap(traffic);
      Append(t_, device_, false, 0);
    } else if (trap == 1) {  // reset to a small non-zero value
      device_ = Wrap(std::floor(Uniform() * most) + 1);
      Append(t_, device_, false, 0);
    } else if (trap == 2) {  // a replaced NIC: its counter starts anywhere, often far above
      device_ = Wrap(std::floor(std::ldexp(Uniform(), 40 + static_cast<int>(rng_() % 12))));
      Append(t_, device_, false, 0);
    } else if (trap == 3) {  // a driver reload that changes the counter's width
      width_ = width_ == 32 ? 0 : 32;
      store_.Intern(kName, port_, TraitsOf(kName, MetricKind::kCounter, width_ == 0 ? 64 : 32));
      traffic_rate_ = std::min(traffic_rate_, 1e9);
      device_ = std::floor(Uniform() * 1e6);
      Append(t_, device_, false, 0);
    } else {  // plain traffic (32-bit counters wrap in it), after a long gap now and then
      const double sent = width_ == 32 ? std::min(traffic, 2e9) : traffic;
      device_ = Wrap(device_ + sent);
      Append(t_, device_, true, sent);
    }
  }

  void Append(int64_t t, double reading, bool clean, double traffic, bool dropped = false) {
    store_.Append(ref_, t, reading);
    if (!dropped) accepted_.push_back({t, clean, traffic});
    ASSERT_EQ(store_.stats().samples_out_of_order, dropped_) << "at " << t;
    CheckExposition();
    CheckEngine();
  }

  // The value /metrics shows for the counter, from the real exposition text.
  double Exported() {
    clock_.Set(absl::FromUnixNanos(t_));
    std::string text;
    exposition_.AppendExposition(text);
    const std::string prefix = std::string(kName) + "{";
    const size_t at = text.find("\n" + prefix);
    EXPECT_NE(at, std::string::npos) << text;
    const size_t end = text.find('\n', at + 1);
    const size_t space = text.rfind(' ', end);
    return std::strtod(text.substr(space + 1, end - space - 1).c_str(), nullptr);
  }

  // Every pair of scrapes i < j: v_j - v_i <= line x (1.1 (t_j - t_i) + burst), that is
  // (v_j - 1.1 line t_j) - min over i of (v_i - 1.1 line t_i) <= line x burst.
  void CheckExposition() {
    const double value = Exported();
    const double seconds =
        static_cast<double>(store_.Latest(ref_)->time_unix_nano - start_) / 1e9;
    const double level = value - line_rate_ * kLineRateTolerance * seconds;
    if (exported_) {
      ASSERT_GE(value, *exported_) << "/metrics went down";
      ASSERT_LE(level - lowest_level_, line_rate_ * kCounterBurstSeconds * (1 + 1e-9))
          << "/metrics rose above line rate";
    }
    lowest_level_ = exported_ ? std::min(lowest_level_, level) : level;
    exported_ = value;
  }

  std::optional<double> Value(const Condition& c, int64_t now) {
    const std::vector<VectorElement> v = c.Evaluate(EvalContext{store_, nullptr, nullptr, now});
    EXPECT_LE(v.size(), 1u);
    // An unknown element (the series began inside the window, too few samples) has no value.
    if (v.empty() || v[0].unknown) return std::nullopt;
    return v[0].value;
  }

  void CheckEngine() {
    const int64_t now = t_;
    const std::optional<double> rate = Value(*rate_, now);
    const std::optional<double> increase = Value(*increase_, now);
    const std::optional<double> delta = Value(*delta_, now);
    ++coverage.evaluations;
    size_t first = accepted_.size();
    while (first > 0 && accepted_[first - 1].t >= now - kWindow) --first;
    if (accepted_.size() - first < 2) {
      ASSERT_FALSE(increase.has_value());
      return;
    }
    ASSERT_TRUE(increase && rate && delta);
    const double span = static_cast<double>(accepted_.back().t - accepted_[first].t) / 1e9;
    const double most = line_rate_ * (kLineRateTolerance * span + kCounterBurstSeconds);
    ASSERT_GE(*increase, 0);
    ASSERT_LE(*increase, most * (1 + 1e-9)) << "increase() above line rate over " << span << " s";
    ASSERT_LE(*rate, most / span * (1 + 1e-9)) << "rate() above line rate over " << span << " s";
    ASSERT_EQ(*delta, *increase);  // delta() of a counter reads the same corrected counter
    // Exact where the window holds no trap.
    double traffic = 0;
    for (size_t i = first + 1; i < accepted_.size(); ++i) {
      if (!accepted_[i].clean) return;
      traffic += accepted_[i].traffic;
    }
    ++coverage.exact_windows;
    ASSERT_EQ(*increase, traffic) << "a window without traps lost or gained traffic";
    ASSERT_EQ(*rate, traffic / span);
  }

  std::mt19937_64 rng_;
  Labels port_ = {{"device", "mlx5_0"}, {"host", "h1"}, {"port", "1"}};
  SeriesStore store_{SeriesStore::Options{.capacity = 600}};
  FakeClock clock_;
  StoreExposition exposition_{store_, clock_, absl::Minutes(5)};
  SeriesRef ref_ = 0;
  std::unique_ptr<Condition> rate_, increase_, delta_;
  double line_rate_ = 0, traffic_rate_ = 0, device_ = 0, trap_probability_ = 0;
  uint32_t width_ = 0;
  int64_t t_ = 0;
  uint64_t dropped_ = 0;
  std::vector<Accepted> accepted_;
  std::optional<double> exported_;
  double lowest_level_ = 0;
  int64_t start_ = 0;
};

TEST(CounterTrapsPropertyTest, NoRateAboveLineRateAndExactWithoutTraps) {
  constexpr uint64_t kTraces = 3000;
  uint64_t first = 0;
  if (const char* seed = std::getenv("RAILWATCH_TRAPS_SEED")) first = std::strtoull(seed, nullptr, 10);
  for (uint64_t seed = first; seed < first + kTraces; ++seed) {
    SCOPED_TRACE("trace seed " + std::to_string(seed) +
                 " (replay: RAILWATCH_TRAPS_SEED=" + std::to_string(seed) + ")");
    TraceRunner(seed).Run();
    if (::testing::Test::HasFailure()) break;
  }
  const Coverage& c = TraceRunner::coverage;
  if (first == 0) {  // the full run, not a replay
    EXPECT_GT(c.exact_windows, c.evaluations / 5) << "too few windows checked for exactness";
    EXPECT_GT(c.resets, kTraces);
    EXPECT_GT(c.wraps, kTraces / 10);
    EXPECT_GT(c.above_line_rate, kTraces);
    EXPECT_GT(c.out_of_order, kTraces);
  }
  std::printf("%llu evaluations, %llu exact; %llu resets, %llu wraps, %llu above line rate, "
              "%llu out of order\n",
              static_cast<unsigned long long>(c.evaluations),
              static_cast<unsigned long long>(c.exact_windows),
              static_cast<unsigned long long>(c.resets), static_cast<unsigned long long>(c.wraps),
              static_cast<unsigned long long>(c.above_line_rate),
              static_cast<unsigned long long>(c.out_of_order));
}

}  // namespace
}  // namespace railwatch
