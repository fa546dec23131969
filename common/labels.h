#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace railwatch {

// Debian's Abseil has its own string_view; this bridges our std::string_view APIs to it.
inline absl::string_view AsAbsl(std::string_view s) { return {s.data(), s.size()}; }

struct Label {
  std::string name;
  std::string value;
  friend bool operator==(const Label&, const Label&) = default;
  friend auto operator<=>(const Label&, const Label&) = default;
};

// A label set kept sorted by name, without duplicate names.
using Labels = std::vector<Label>;

// Sorts by name and drops later duplicates of a name.
void NormalizeLabels(Labels& labels);

// Returns the value of `name`, or nullptr.
const std::string* FindLabel(const Labels& labels, std::string_view name);

// name{a="1",b="2"} with Prometheus escaping of values; just `name` when there are no labels.
std::string FormatSeries(std::string_view name, const Labels& labels);

// a="1",b="2" (no braces).
std::string FormatLabels(const Labels& labels);

// 64-bit FNV-1a over name and labels: a stable fingerprint for a series.
uint64_t SeriesFingerprint(std::string_view name, const Labels& labels);

}  // namespace railwatch
