#pragma once

// The text forms a playbook test file uses for its inputs (engine/rule_test.h): promtool's
// expanding notation for sample values, and a series written as in PromQL.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/labels.h"

namespace railwatch {

struct NotationError {
  size_t offset = 0;  // byte offset into the text
  std::string message;
};

// Expands promtool's notation (`promtool test rules`), terms separated by blanks:
//   a        one sample                      '3', '-2.5', '1e6', 'Inf', 'NaN'
//   a+bxn    n+1 samples a, a+b ... a+n*b    '0+20000x20'
//   a-bxn    n+1 samples a, a-b ... a-n*b    '10-1x10'
//   axn      n+1 samples of a (a+0xn)        '7x5'
//   _        no sample at this step
//   _xn      n steps without a sample
//   stale    no sample at this step (the store has no staleness marker: a gap)
// Absent samples are nullopt. At most `max_samples` in all.
absl::StatusOr<std::vector<std::optional<double>>> ExpandSeriesValues(
    std::string_view text, NotationError* error = nullptr, size_t max_samples = 1'000'000);

struct SeriesLiteral {
  std::string name;
  Labels labels;  // normalised; labels with an empty value are dropped, as in Prometheus
};

// name, name{label="value",...} or {__name__="name",label="value",...}. Values are quoted
// with " or ' (escapes \\ \" \' \n \t); only `=` is allowed (a series, not a selector).
absl::StatusOr<SeriesLiteral> ParseSeriesLiteral(std::string_view text,
                                                 NotationError* error = nullptr);

}  // namespace railwatch
