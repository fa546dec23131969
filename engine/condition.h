#pragma once

// The playbook condition language (the subset shipped with the walking skeleton; the full
// grammar lives in docs/PLAYBOOKS.md).
//
//   expr        = and_expr { "or" and_expr } ;
//   and_expr    = comparison { "and" comparison } ;
//   comparison  = operand [ cmp_op number ] ;
//   operand     = call | selector | "(" expr ")" ;
//   call        = ( "rate" | "increase" ) "(" selector "[" duration "]" ")" ;
//   selector    = metric_name [ "{" [ matcher { "," matcher } ] "}" ] ;
//   matcher     = label_name ( "=" | "!=" ) string ;
//   cmp_op      = ">" | ">=" | "<" | "<=" | "==" | "!=" ;
//   duration    = digits unit { digits unit } ;   unit = "ms" | "s" | "m" | "h" | "d" | "w"
//   string      = '"' { char } '"' ;
//
// Evaluation follows PromQL's instant vectors: an operand yields one element per matching
// series (its labels, a value); a comparison keeps the elements for which it holds; "and"
// keeps left elements whose label set also appears on the right; "or" adds right elements
// whose label set is not on the left.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/labels.h"
#include "store/series_store.h"

namespace railwatch {

// One series that contributed to a result, and what was computed from it.
struct EvidenceRef {
  SeriesRef series = 0;
  std::string function;  // "increase", "rate" or "" for a plain selector
  absl::Duration window = absl::ZeroDuration();
  double value = 0;
};

struct VectorElement {
  Labels labels;
  double value = 0;
  std::vector<EvidenceRef> evidence;
};

class Condition {
 public:
  virtual ~Condition() = default;
  virtual std::vector<VectorElement> Evaluate(const SeriesStore& store, int64_t now) const = 0;
  // Canonical text, for `rules describe` and logs.
  virtual std::string ToString() const = 0;
  // Metric names the condition reads; the engine re-evaluates when one of them gets data.
  virtual void CollectMetricNames(std::vector<std::string>& out) const = 0;
};

struct ConditionError {
  size_t offset = 0;  // byte offset into the condition text
  std::string message;
};

// Parses a condition; on failure the error says where and what was expected.
absl::StatusOr<std::unique_ptr<Condition>> ParseCondition(std::string_view text,
                                                          ConditionError* error = nullptr);

}  // namespace railwatch
