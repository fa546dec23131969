#pragma once

// Internals of the condition language, shared by the parser (condition.cc), the nodes
// (condition_leaves.cc, condition_eval.cc, condition_groups.cc), evidence
// (condition_evidence.cc) and matchers, keys and printing (condition_vector.cc). Nothing
// outside engine/condition*.cc should include this.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "engine/condition.h"
#include "engine/range_functions.h"

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

// The labels `set` selects.
Labels Project(const Labels& labels, const LabelSet& set);
// Appends the labels `set` selects, with separators, to `key`.
void AppendKey(const Labels& labels, const LabelSet& set, std::string& key);

// Finds label sets by the labels a LabelSet selects (their key) without building key strings:
// a hash of the selected labels, and a comparison of them on a hash match. Entries are
// numbered 0, 1, 2 ... in the order they were added.
class KeyTable {
 public:
  static constexpr uint32_t kNone = ~uint32_t{0};
  explicit KeyTable(const LabelSet& set) : set_(set) {}
  // The entry with the key of `labels`, added (with `labels`, which must outlive the table)
  // when there is none.
  uint32_t FindOrAdd(const Labels& labels, bool* added = nullptr);
  uint32_t Find(const Labels& labels) const;
  size_t size() const { return labels_.size(); }
  void Clear();

 private:
  uint64_t Hash(const Labels& labels) const;
  bool SameKey(const Labels& a, const Labels& b) const;

  const LabelSet& set_;
  absl::flat_hash_map<uint64_t, uint32_t> first_;  // hash -> first entry with it
  std::vector<const Labels*> labels_;              // entry -> its labels
  std::vector<uint32_t> next_;                     // entry -> next entry with the same hash
};

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

class EvidenceBuilder;

// Evidence that is only gathered when an element reaches the result: most elements that an
// aggregation or a join builds are filtered out right after.
class EvidenceSource {
 public:
  virtual ~EvidenceSource() = default;
  virtual void AddTo(EvidenceBuilder& builder) const = 0;
};

// An element's evidence: up to two series inline (no allocation), and whatever `more` holds.
struct Evidence {
  uint8_t inline_count = 0;
  InlineEvidence inline_evidence[2];
  std::shared_ptr<const EvidenceSource> more;
};

// One element of an instant vector. Labels are borrowed from the store for elements that came
// straight from a series (no copy until the result is materialised) and owned otherwise.
struct Item {
  std::shared_ptr<const Labels> labels;
  double value = 0;
  // Not known yet: it comes from a series that began inside a range function's window and has
  // too few samples there for a value (the daemon just started, an agent just connected). It
  // passes comparisons (it might hold), and `unless` / `and` with it on the right give
  // unknown elements; the engine neither fires nor resolves on one.
  bool unknown = false;
  // When set, (label_source, label_index) names this labels object across evaluations: the
  // same pair always carries the same labels (a leaf's selection and the series' place in it;
  // an aggregation's groups and the group's key), so nodes may cache what they derive from
  // the labels under it. Indices are dense from 0.
  const void* label_source = nullptr;
  uint32_t label_index = 0;
  Evidence evidence;
};
using Vec = std::vector<Item>;

// A label_source that no pointer can equal (user-space addresses are below 2^56), new on each
// call: for caches whose indices change meaning when they start over.
const void* NewLabelSource();

// Gives each distinct key (the labels a LabelSet selects) a small id that stays the same from
// one evaluation to the next, and remembers the id of each (label_source, label_index): an
// element whose labels it has seen is keyed by an array lookup, without reading them (they
// live apart in memory, so reading them is a cache miss per element). Owned by one node; not
// thread-safe.
class KeyInterner {
 public:
  explicit KeyInterner(LabelSet set)
      : set_(std::move(set)), table_(set_), source_(NewLabelSource()) {}
  KeyInterner(const KeyInterner&) = delete;
  KeyInterner& operator=(const KeyInterner&) = delete;

  // Call before an evaluation's first Id(). Forgets the sources when the store is another one
  // (their places mean other series), and every key when it holds far more keys than an
  // evaluation uses (`elements`: keys that come and go, such as event label sets, would
  // otherwise pile up).
  void Prepare(const SeriesStore& store, size_t elements);
  uint32_t Id(const Item& item);
  // The key's labels (what the LabelSet selects), stable until the interner starts over.
  const std::shared_ptr<const Labels>& KeyLabels(uint32_t id) const { return keys_[id]; }
  // The label_source of KeyLabels(id) as label_index id; new each time the interner starts
  // over, so ids of before are never taken for ids of after.
  const void* source() const { return source_; }
  size_t size() const { return keys_.size(); }

 private:
  const LabelSet set_;
  KeyTable table_;
  std::vector<std::shared_ptr<const Labels>> keys_;
  // label_source -> label_index -> key id (kNone: not yet known).
  absl::flat_hash_map<const void*, std::unique_ptr<std::vector<uint32_t>>> by_source_;
  const void* last_source_ = nullptr;
  std::vector<uint32_t>* last_ids_ = nullptr;
  uint64_t store_ = ~uint64_t{0};
  const void* source_;
};

// Loops that read the labels of many elements call this for element i: labels live apart
// (in the store, one allocation per series), so each is a cache miss unless fetched ahead.
// always_inline: GCC otherwise finds the function free of side effects and drops the call.
// `ahead` elements on (the Labels object twice as far, to have its data pointer by then).
__attribute__((always_inline)) inline void PrefetchLabels(const Vec& v, size_t i,
                                                          size_t ahead = 8) {
  if (i + 2 * ahead < v.size()) __builtin_prefetch(v[i + 2 * ahead].labels.get());
  if (i + ahead < v.size()) {
    const Labels& labels = *v[i + ahead].labels;
    const size_t n = std::min<size_t>(labels.size(), 4);
    for (size_t k = 0; k < n; ++k) __builtin_prefetch(&labels[k]);
  }
}

// A non-owning pointer to labels that outlive the evaluation (the store's).
std::shared_ptr<const Labels> BorrowLabels(const Labels* labels);
std::shared_ptr<const Labels> OwnLabels(Labels labels);

struct MergedEvidence {
  std::vector<EvidenceRef> series;
  std::vector<EventEvidence> events;
};

// Collects the evidence of many elements: duplicates (same series, function and window; same
// event) once, at most kMaxSeriesEvidence series (the largest values) and kMaxEventEvidence
// events (the newest).
class EvidenceBuilder {
 public:
  void Add(const Evidence& evidence);
  void AddSeries(const EvidenceRef& ref);
  void AddEvent(const EventEvidence& event);
  // The evidence collected (largest series first once the cap was reached; events oldest
  // first).
  MergedEvidence Take();

 private:
  void Spill();

  InlineEvidence inline_[2];
  size_t inline_count_ = 0;
  bool spilled_ = false;
  bool series_evicted_ = false;
  MergedEvidence merged_;
};

// Evidence made of given lists (events counted, for one).
std::shared_ptr<const EvidenceSource> ConcreteEvidence(MergedEvidence evidence);

// The elements an aggregation grouped, kept so that the evidence of a group is gathered only
// if its element is in the result.
struct GroupMembers {
  Vec items;
  std::vector<uint32_t> order;  // item indices, group by group
  std::vector<uint32_t> start;  // group g's items are order[start[g] .. start[g + 1])
};
std::shared_ptr<const EvidenceSource> GroupEvidence(std::shared_ptr<const GroupMembers> members,
                                                    uint32_t group);

// Adds `from`'s evidence to `into`'s (inline when both fit, else lazily).
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
  virtual void CollectWindows(std::vector<std::pair<std::string, absl::Duration>>& out) const {}
};
using NodePtr = std::unique_ptr<Node>;

// A node over one operand: what it reads is what its operand reads.
class OneChildNode : public Node {
 public:
  explicit OneChildNode(NodePtr child) : child_(std::move(child)) {}
  void CollectMetricNames(std::vector<std::string>& out) const override {
    child_->CollectMetricNames(out);
  }
  void CollectEventKinds(std::vector<std::string>& out) const override {
    child_->CollectEventKinds(out);
  }
  void CollectWindows(std::vector<std::pair<std::string, absl::Duration>>& out) const override {
    child_->CollectWindows(out);
  }

 protected:
  const NodePtr child_;
};

// "by (a, b)", "on(a, b)": keyword then the names.
void PrintLabelSet(std::string_view keyword, const LabelSet& set, std::string& out);

// Prints `child` for an operand position that needs at least `min_precedence`.
void PrintOperand(const Node& child, int min_precedence, std::string& out);
std::string FormatNumber(double v);
std::string QuoteString(std::string_view s);


enum class UnaryFn { kNeg, kAbs, kTopology, kPeer };
enum class SetOp { kAnd, kOr, kUnless };
enum class AggOp { kSum, kAvg, kMin, kMax, kCount };

NodePtr MakeNumber(double v);
NodePtr MakeSelector(Selector sel);
// fn: an entry of RangeFunctions() (range_functions.h).
// stretch: a kStretches function's stretch length (zero for the others).
NodePtr MakeRange(const RangeFunction& fn, Selector sel, absl::Duration window,
                  absl::Duration stretch = absl::ZeroDuration());
NodePtr MakeEventCount(std::vector<Matcher> matchers, absl::Duration window);
NodePtr MakeUnary(UnaryFn fn, NodePtr child);
// label(child, "name", "value"): each element of `child` with label `name` set to `value`.
NodePtr MakeSetLabel(std::string name, std::string value, NodePtr child);
// [A-Za-z_][A-Za-z0-9_]*: what a label may be called.
bool IsLabelName(std::string_view name);
// At least one side is a vector (the parser folds two constants).
NodePtr MakeBinary(BinOp op, bool return_bool, LabelSet matching, NodePtr lhs, NodePtr rhs);
NodePtr MakeSetOp(SetOp op, LabelSet matching, NodePtr lhs, NodePtr rhs);
// grouping.mode kAll means no grouping clause (one group, no labels).
NodePtr MakeAggregation(AggOp op, LabelSet grouping, NodePtr child);
NodePtr MakePeer(bool ratio, LabelSet grouping, NodePtr child);

// Names (condition_names.cc).
std::optional<AggOp> FindAgg(std::string_view name);
// and, or, unless, by, without, on, ignoring, bool.
bool IsOperatorKeyword(std::string_view name);
// Functions that are neither range functions nor aggregations (count_over_time, peer_ratio ...).
bool IsOtherFunction(std::string_view name);
// Names that cannot be a metric in a plain selector: functions, keywords, events.
bool IsReserved(std::string_view name);
// The closest function name when one is close enough to be a typo, else "".
std::string SuggestFunction(std::string_view name);
// The closest of `names` to `name` when it is close enough to be a typo (fewer edits than
// `max_distance`; 0: a quarter of the name's length, at least 3); empty otherwise.
std::string SuggestName(std::string_view name, std::span<const std::string_view> names,
                        size_t max_distance = 0);

}  // namespace railwatch::cond
