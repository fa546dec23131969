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

#include "store/series_store.h"

namespace railwatch::cond {

// What a range function reads of each series.
enum class RangeInput : uint8_t {
  kLatest,   // the newest sample, when it is within the window (a bare selector, no function)
  kStale,    // the newest sample's age in seconds, when it is older than the window
  kCounter,  // the store's counter window: increase and the first and last samples' times
  kSamples,  // every sample in the window, oldest first
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

  // Whether the function reads a window (so a series younger than the window is unknown
  // rather than absent when it has too few samples there).
  bool windowed() const { return input == RangeInput::kCounter || input == RangeInput::kSamples; }
};

// Every named range function.
std::span<const RangeFunction> RangeFunctions();
// nullptr when `name` is not a range function.
const RangeFunction* FindRangeFunction(std::string_view name);
// What a bare selector is: the newest sample within the lookback.
const RangeFunction& LatestSample();

}  // namespace railwatch::cond
