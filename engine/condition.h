#pragma once

// The playbook condition language: PromQL's instant-vector model, plus events, peer
// comparison and topology. The grammar (EBNF) and semantics are written down in
// docs/PLAYBOOKS.md; in short:
//
//   expr        = or_expr ;
//   or_expr     = and_expr { "or" [ matching ] and_expr } ;
//   and_expr    = cmp_expr { ( "and" | "unless" ) [ matching ] cmp_expr } ;
//   cmp_expr    = add_expr [ cmp_op [ "bool" ] [ matching ] add_expr ] ;
//   add_expr    = mul_expr { ( "+" | "-" ) [ matching ] mul_expr } ;
//   mul_expr    = unary { ( "*" | "/" ) [ matching ] unary } ;
//   unary       = [ "-" ] primary ;
//   primary     = number | call | aggregation | selector | macro_name | "(" expr ")" ;
//   matching    = ( "on" | "ignoring" ) "(" [ label_list ] ")" ;
//   aggregation = agg_op [ grouping ] "(" expr ")" [ grouping ] ;
//   agg_op      = "sum" | "avg" | "min" | "max" | "count" ;
//   grouping    = ( "by" | "without" ) "(" [ label_list ] ")" ;
//   call        = range_fn "(" range_selector ")"
//               | "count_over_time" "(" event_selector ")"
//               | ( "peer_median" | "peer_ratio" ) "(" expr "," grouping ")"
//               | ( "topology" | "peer" | "abs" ) "(" expr ")"
//               | "label" "(" expr "," string "," string ")"
//               | "stale" "(" range_selector ")"
//               | "median_rate" "(" range_selector "," duration ")" ;
//   range_fn    = "rate" | "increase" | "delta" | "changes" | "avg_over_time"
//               | "min_over_time" | "max_over_time" ;
//   range_selector = selector "[" duration "]" ;
//   event_selector = "events" [ "{" [ matcher { "," matcher } ] "}" ] "[" duration "]" ;
//   selector    = metric_name [ "{" [ matcher { "," matcher } ] "}" ] ;
//   matcher     = label_name ( "=" | "!=" | "=~" | "!~" ) string
//               | label_name [ "not" ] "in" "(" ( string { "," string } | list_name ) ")" ;
//   cmp_op      = ">" | ">=" | "<" | "<=" | "==" | "!=" ;
//   duration    = digits unit { digits unit } ;   unit = "ms" | "s" | "m" | "h" | "d" | "w"
//   string      = '"' { char } '"' ;
//   comment     = "#" { any char but newline } ;
//
// Evaluation follows PromQL's instant vectors: every expression yields a vector of elements
// (labels, value); a scalar is a number. Comparisons between a vector and a scalar filter
// (or with "bool" yield 0/1); between two vectors they match elements one-to-one by label set
// (all labels, or as `on` / `ignoring` says) and keep the left element when it holds. The
// metric name is not a label. "and" keeps left elements with a match on the right, "unless"
// those without, "or" adds right elements with no match on the left.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/labels.h"
#include "store/event_store.h"
#include "store/series_store.h"

namespace railwatch {

class FabricMap;

// One series that contributed to a result, and what was computed from it.
struct EvidenceRef {
  SeriesRef series = 0;
  std::string function;  // "increase", "rate", "max_over_time" ... or "" for a plain selector
  absl::Duration window = absl::ZeroDuration();
  double value = 0;
};

// One event that contributed to a result (count_over_time over events).
struct EventEvidence {
  uint64_t seq = 0;
  std::string kind;
  int64_t time_unix_nano = 0;
  Labels labels;
  std::string raw;
};

struct VectorElement {
  Labels labels;
  double value = 0;
  // A window that does not yet hold its data decided it (cond::Item::unknown): neither true
  // nor false yet.
  bool unknown = false;
  std::vector<EvidenceRef> evidence;        // at most 16 per element
  std::vector<EventEvidence> event_evidence;  // the newest, at most 8 per element
};

// What a condition is evaluated against.
struct EvalContext {
  const SeriesStore& store;
  const EventStore* events = nullptr;  // null: event selectors yield nothing
  const FabricMap* fabric = nullptr;   // null: topology() passes elements through, peer() drops
  int64_t now = 0;                     // unix nanoseconds
};

class Condition {
 public:
  virtual ~Condition() = default;
  virtual std::vector<VectorElement> Evaluate(const EvalContext& ctx) const = 0;
  // Canonical text, for `rules describe` and logs (macros expanded).
  virtual std::string ToString() const = 0;
  // Metric names the condition reads; the engine re-evaluates when one of them gets data.
  virtual void CollectMetricNames(std::vector<std::string>& out) const = 0;
  // Event kinds it reads (exact kinds, or families ending in '.'); "" when a selector has no
  // kind matcher (it reads every event).
  virtual void CollectEventKinds(std::vector<std::string>& out) const {}
  // The windows of its range functions over samples (rate, increase, *_over_time ...), by
  // metric name: how far back the store must keep each name's samples.
  virtual void CollectWindows(std::vector<std::pair<std::string, absl::Duration>>& out) const {}
};

// Names a condition may use besides metrics: macros (name -> condition text, expanded where
// the name appears as an operand) and lists (name -> values, used by `in` matchers).
struct ParseEnv {
  std::map<std::string, std::string, std::less<>> macros;
  std::map<std::string, std::vector<std::string>, std::less<>> lists;
  // When not empty, the only metric names a selector may use, sorted: a playbook loaded from
  // files gets the series agents can send (CanonicalMetricNames() in common/vocabulary.h), so
  // that a misspelt name is an error with the nearest one suggested instead of a condition
  // that never matches anything.
  std::vector<std::string_view> metric_names;
};

struct ConditionError {
  size_t offset = 0;  // byte offset into the condition text
  std::string message;
  // A stable identifier for what is wrong when it is more than a syntax error:
  // "unknown-metric". Empty: "bad-condition".
  std::string code;
};

// Parses a condition; on failure the error says where and what was expected. An error inside
// a macro names the macro and is reported at the offset of the macro's use.
absl::StatusOr<std::unique_ptr<Condition>> ParseCondition(std::string_view text,
                                                          const ParseEnv& env,
                                                          ConditionError* error = nullptr);
inline absl::StatusOr<std::unique_ptr<Condition>> ParseCondition(std::string_view text,
                                                                 ConditionError* error = nullptr) {
  return ParseCondition(text, ParseEnv{}, error);
}

namespace cond {
struct Selector;
}

// A plain series selector, as the Query API's QuerySeries reads one: `name`, `name{matchers}`
// or `{matchers}` without a name, with the condition language's matchers (= != =~ !~ in,
// not in; a missing label matches as "").
class SeriesSelector {
 public:
  explicit SeriesSelector(std::shared_ptr<const cond::Selector> selector);
  // Empty when the selector names no metric.
  const std::string& name() const;
  bool Matches(const Labels& labels) const;
  std::string ToString() const;

 private:
  std::shared_ptr<const cond::Selector> selector_;
};

// Reads `text` as a plain selector. nullopt when it is something else (it may be an
// expression: ParseCondition reads it and reports its errors); an error, with *error set, when
// it starts with '{' (only a selector can) but does not parse, or has a bad token.
absl::StatusOr<std::optional<SeriesSelector>> ParseSeriesSelector(
    std::string_view text, ConditionError* error = nullptr);

}  // namespace railwatch
