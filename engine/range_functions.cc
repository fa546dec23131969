#include "engine/range_functions.h"

#include <algorithm>

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

using enum RangeInput;

// A new function: one line here, and a line in docs/PLAYBOOKS.md ("Conditions").
constexpr RangeFunction kFunctions[] = {
    {.name = "rate", .input = kCounter, .of_counter = Rate},
    {.name = "increase", .input = kCounter, .of_counter = Increase},
    {.name = "delta", .input = kSamples, .min_samples = 2, .of_samples = Delta},
    {.name = "changes", .input = kSamples, .min_samples = 2, .of_samples = Changes},
    {.name = "avg_over_time", .input = kSamples, .of_samples = Avg},
    {.name = "min_over_time", .input = kSamples, .of_samples = Min},
    {.name = "max_over_time", .input = kSamples, .of_samples = Max},
    {.name = "stale", .input = kStale},
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
