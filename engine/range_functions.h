#pragma once

// The range functions of the condition language (docs/PLAYBOOKS.md, "Conditions"): rate(x[5m]),
// max_over_time(x[1m]) ... A function is one entry of the table in range_functions.cc: the
// parser finds it there by name, and the evaluator (condition_leaves.cc) asks the store for
// what the entry reads and hands it to the entry's function. The store knows no function: it
// hands out windows of samples, or for a counter the window it has already corrected
// (store/series_store.h).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "store/series_store.h"

namespace railwatch::cond {

// What a range function reads of each series.
enum class RangeInput : uint8_t {
  kLatest,   // the newest sample, when it is within the window (a bare selector, no function)
  kStale,    // the newest sample's age in seconds, when it is older than the window
  kCounter,  // the store's counter window: increase and the first and last samples' times
  kSamples,  // every sample in the window, oldest first
  // Every sample in the window, oldest first, with the window cut into consecutive stretches
  // of a length the call gives (median_rate(x[1h], 5m)), counted back from its end.
  kStretches,
};

// The most stretches one kStretches call may cut its window into (checked when parsing): each
// is two binary searches per series per evaluation.
inline constexpr size_t kMaxStretches = 1000;

// The stretches of a kStretches call: `count` of `length` nanoseconds each, the newest ending
// at `end` (the window's end); stretch k is [end - (k+1) length, end - k length]. The oldest
// part of a window that is not a whole stretch is not read.
struct Stretches {
  int64_t end = 0;
  int64_t length = 0;
  size_t count = 0;
};

struct RangeFunction {
  std::string_view name;  // empty for a bare selector
  RangeInput input = RangeInput::kSamples;
  // kSamples: a window with fewer samples has no value (at least 1).
  size_t min_samples = 1;
  // kCounter: the value of a counter's window; nullopt for none.
  std::optional<double> (*of_counter)(const CounterWindow&) = nullptr;
  // kSamples: the value of the window's samples, at least min_samples of them.
  double (*of_samples)(std::span<const Sample>) = nullptr;
  // kStretches: the value of the window's samples cut into stretches; nullopt for none.
  // `scratch` is the caller's, reused from one series to the next.
  std::optional<double> (*of_stretches)(std::span<const Sample>, const Stretches&,
                                        std::vector<double>& scratch) = nullptr;
  // kStretches: the fewest whole stretches a window must hold (checked when parsing).
  size_t min_stretches = 0;

  // Whether the function reads a window (so a series younger than the window is unknown
  // rather than absent when it has too few samples there).
  bool windowed() const {
    return input == RangeInput::kCounter || input == RangeInput::kSamples ||
           input == RangeInput::kStretches;
  }
};

// Every named range function.
std::span<const RangeFunction> RangeFunctions();
// nullptr when `name` is not a range function.
const RangeFunction* FindRangeFunction(std::string_view name);
// What a bare selector is: the newest sample within the lookback.
const RangeFunction& LatestSample();

}  // namespace railwatch::cond
