#include "engine/range_functions.h"

#include <algorithm>
#include <cstddef>

namespace railwatch::cond {
namespace {

// ---- Counters: the store's corrected window (monotonic, resets and wraps accounted) -------

std::optional<double> Increase(const CounterWindow& w) { return w.increase; }

std::optional<double> Rate(const CounterWindow& w) {
  if (w.last_time <= w.first_time) return std::nullopt;
  return w.increase / (static_cast<double>(w.last_time - w.first_time) / 1e9);
}

// ---- Any series: the window's samples, oldest first -----------------------------------------

double Delta(std::span<const Sample> s) { return s.back().value - s.front().value; }

double Changes(std::span<const Sample> s) {
  double changes = 0;
  for (size_t i = 1; i < s.size(); ++i) changes += s[i].value != s[i - 1].value;
  return changes;
}

double Avg(std::span<const Sample> s) {
  double sum = 0;
  for (const Sample& x : s) sum += x.value;
  return sum / static_cast<double>(s.size());
}

double Min(std::span<const Sample> s) {
  double lo = s.front().value;
  for (const Sample& x : s) lo = std::min(lo, x.value);
  return lo;
}

double Max(std::span<const Sample> s) {
  double hi = s.front().value;
  for (const Sample& x : s) hi = std::max(hi, x.value);
  return hi;
}

// ---- A counter's samples, cut into stretches -------------------------------------------------

// A median needs at least three values to stand for "usual".
constexpr size_t kMedianStretches = 3;

// The median of the counter's rates over the window's stretches: what it usually does, which
// neither a few quiet stretches (a job compiling, checkpointing) nor a few busy ones (the
// fault being asked about) move: a baseline to compare the rate now with. A stretch counts
// when its samples span at least half of it (a series that began inside it, an agent away);
// its rate is not extrapolated, as rate's is not.
std::optional<double> MedianRate(std::span<const Sample> s, const Stretches& st,
                                 std::vector<double>& rates) {
  rates.clear();
  for (size_t k = 0; k < st.count; ++k) {
    const int64_t to = st.end - static_cast<int64_t>(k) * st.length;
    const int64_t from = to - st.length;
    auto first = std::lower_bound(
        s.begin(), s.end(), from, [](const Sample& x, int64_t t) { return x.time_unix_nano < t; });
    auto past = std::upper_bound(
        first, s.end(), to, [](int64_t t, const Sample& x) { return t < x.time_unix_nano; });
    if (past - first < 2) continue;
    const Sample& a = *first;
    const Sample& b = *(past - 1);
    const int64_t span = b.time_unix_nano - a.time_unix_nano;
    if (span * 2 < st.length) continue;
    rates.push_back((b.value - a.value) / (static_cast<double>(span) / 1e9));
  }
  if (rates.size() < kMedianStretches) return std::nullopt;
  const auto mid = rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2);
  std::nth_element(rates.begin(), mid, rates.end());
  if (rates.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(rates.begin(), mid)) / 2;
}

using enum RangeInput;

// A new function: one entry here, and a line in docs/PLAYBOOKS.md ("Range functions").
constexpr RangeFunction kFunctions[] = {
    {.name = "rate", .input = kCounter, .of_counter = Rate},
    {.name = "increase", .input = kCounter, .of_counter = Increase},
    {.name = "delta", .input = kSamples, .min_samples = 2, .of_samples = Delta},
    {.name = "changes", .input = kSamples, .min_samples = 2, .of_samples = Changes},
    {.name = "avg_over_time", .input = kSamples, .of_samples = Avg},
    {.name = "min_over_time", .input = kSamples, .of_samples = Min},
    {.name = "max_over_time", .input = kSamples, .of_samples = Max},
    {.name = "stale", .input = kStale},
    {.name = "median_rate",
     .input = kStretches,
     .of_stretches = MedianRate,
     .min_stretches = kMedianStretches},
};

constexpr RangeFunction kBareSelector = {.name = "", .input = kLatest};

}  // namespace

std::span<const RangeFunction> RangeFunctions() { return kFunctions; }

const RangeFunction* FindRangeFunction(std::string_view name) {
  for (const RangeFunction& f : kFunctions) {
    if (!name.empty() && f.name == name) return &f;
  }
  return nullptr;
}

const RangeFunction& LatestSample() { return kBareSelector; }

}  // namespace railwatch::cond
