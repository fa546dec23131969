#pragma once

// Internals of the condition language, shared by the parser (condition.cc), the evaluator
// (condition_eval.cc) and the vector helpers (condition_vector.cc). Nothing outside
// engine/condition*.cc should include this.

#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "engine/condition.h"

namespace railwatch::cond {

inline constexpr SeriesRef kNoSeries = ~SeriesRef{0};
inline constexpr size_t kMaxSeriesEvidence = 16;
inline constexpr size_t kMaxEventEvidence = 8;
// A plain selector reads a series' newest sample only when it is at most this old (PromQL's
// lookback): a switch that went away does not keep its last reading forever.
inline constexpr absl::Duration kLookback = absl::Minutes(5);

// ---- Matchers and selectors ---------------------------------------------------------------

struct Matcher {
  enum class Op { kEq, kNe, kRe, kNotRe, kIn, kNotIn };
  std::string name;
  Op op = Op::kEq;
  std::string value;                 // = != =~ !~
  std::vector<std::string> values;   // in / not in
  std::shared_ptr<const std::regex> re;

  // A missing label matches as the empty string (PromQL).
  bool Matches(std::string_view actual) const;
  void Print(std::string& out) const;
};

bool MatchesAll(const std::vector<Matcher>& matchers, const Labels& labels);

struct Selector {
  std::string name;
  std::vector<Matcher> matchers;
  void Print(std::string& out) const;
};

// Which labels identify an element for vector matching (on / ignoring) and grouping (by /
// without). kAll: every label (the default for matching).
struct LabelSet {
  enum class Mode { kAll, kOnly, kExcept };
  Mode mode = Mode::kAll;
  std::vector<std::string> names;  // sorted, unique
  bool Contains(std::string_view name) const;
};

// Appends the values of `labels` that `set` selects, with separators, to `key`.
void AppendKey(const Labels& labels, const LabelSet& set, std::string& key);
// The labels `set` selects.
Labels Project(const Labels& labels, const LabelSet& set);

// ---- Vectors during evaluation ------------------------------------------------------------

// What a leaf computed from its series; owned by the leaf node, shared by its elements.
struct Origin {
  std::string function;  // "rate", "stale" ... or "" for a plain selector
  absl::Duration window = absl::ZeroDuration();
};

struct InlineEvidence {
  SeriesRef series = kNoSeries;
  const Origin* origin = nullptr;
  double value = 0;
};

struct MergedEvidence {
  std::vector<EvidenceRef> series;
  std::vector<EventEvidence> events;
};

// One element of an instant vector. Labels are borrowed from the store for elements that came
// straight from a series (no copy until the result is materialised) and owned otherwise.
// Evidence stays inline (no allocation) for up to two series; `merged`, when set, holds all
// of it.
struct Item {
  std::shared_ptr<const Labels> labels;
  double value = 0;
  uint8_t inline_count = 0;
  InlineEvidence inline_evidence[2];
  std::shared_ptr<const MergedEvidence> merged;
};
using Vec = std::vector<Item>;

// A non-owning pointer to labels that outlive the evaluation (the store's).
std::shared_ptr<const Labels> BorrowLabels(const Labels* labels);
std::shared_ptr<const Labels> OwnLabels(Labels labels);

// Collects the evidence of many elements: duplicates (same series, function and window; same
// event) once, at most kMaxSeriesEvidence series (the largest values) and kMaxEventEvidence
// events (the newest).
class EvidenceBuilder {
 public:
  void Add(const Item& item);
  void AddEvents(std::vector<EventEvidence> events);
  // Writes the collected evidence into `item` (inline when it fits) and resets the builder.
  void Into(Item& item);

 private:
  void AddSeries(const EvidenceRef& ref);
  void AddEvent(const EventEvidence& event);
  void Spill();

  InlineEvidence inline_[2];
  size_t inline_count_ = 0;
  bool spilled_ = false;
  bool series_evicted_ = false;
  MergedEvidence merged_;
};

// Adds `from`'s evidence to `into`'s.
void MergeEvidenceInto(Item& into, const Item& from);

VectorElement Materialise(Item&& item);

// ---- Nodes ------------------------------------------------------------------------------

enum Precedence { kOrPrec = 1, kAndPrec, kCmpPrec, kAddPrec, kMulPrec, kUnaryPrec, kPrimaryPrec };

enum class BinOp { kAdd, kSub, kMul, kDiv, kGt, kGe, kLt, kLe, kEq, kNe };
bool IsComparison(BinOp op);
std::string_view BinOpText(BinOp op);
// Arithmetic result, or nullopt when it is not a finite number (division by zero).
std::optional<double> Arith(BinOp op, double a, double b);
bool Compare(BinOp op, double a, double b);

// A comparison against a constant that a leaf may apply before building its elements.
struct ValueFilter {
  BinOp op;
  double rhs;
  bool Keep(double v) const { return Compare(op, v, rhs); }
};

class Node {
 public:
  virtual ~Node() = default;
  // `filter` (may be null) is a hint: a node may drop elements it fails; callers still apply
  // it themselves.
  virtual Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const = 0;
  // Set for number literals (constants are folded while parsing).
  virtual std::optional<double> constant() const { return std::nullopt; }
  virtual int precedence() const { return kPrimaryPrec; }
  virtual void Print(std::string& out) const = 0;
  virtual void CollectMetricNames(std::vector<std::string>& out) const {}
  virtual void CollectEventKinds(std::vector<std::string>& out) const {}
};
using NodePtr = std::unique_ptr<Node>;

// Prints `child` for an operand position that needs at least `min_precedence`.
void PrintOperand(const Node& child, int min_precedence, std::string& out);
std::string FormatNumber(double v);
std::string QuoteString(std::string_view s);

// kLatest: a plain selector (the newest sample within the lookback).
enum class RangeFn { kLatest, kRate, kIncrease, kDelta, kChanges, kAvg, kMin, kMax, kStale };
std::string_view RangeFnName(RangeFn fn);

enum class UnaryFn { kNeg, kAbs, kTopology, kPeer };
enum class SetOp { kAnd, kOr, kUnless };
enum class AggOp { kSum, kAvg, kMin, kMax, kCount };

NodePtr MakeNumber(double v);
NodePtr MakeSelector(Selector sel);
NodePtr MakeRange(RangeFn fn, Selector sel, absl::Duration window);
NodePtr MakeEventCount(std::vector<Matcher> matchers, absl::Duration window);
NodePtr MakeUnary(UnaryFn fn, NodePtr child);
// At least one side is a vector (the parser folds two constants).
NodePtr MakeBinary(BinOp op, bool return_bool, LabelSet matching, NodePtr lhs, NodePtr rhs);
NodePtr MakeSetOp(SetOp op, LabelSet matching, NodePtr lhs, NodePtr rhs);
// grouping.mode kAll means no grouping clause (one group, no labels).
NodePtr MakeAggregation(AggOp op, LabelSet grouping, NodePtr child);
NodePtr MakePeer(bool ratio, LabelSet grouping, NodePtr child);

}  // namespace railwatch::cond
