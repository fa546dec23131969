// The nodes of a parsed condition and how each evaluates (semantics in docs/PLAYBOOKS.md).

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "common/text.h"
#include "engine/condition_internal.h"
#include "topology/fabric_map.h"

namespace railwatch::cond {
namespace {

// Batch reads go to the store in chunks so that one evaluation does not hold its lock for
// long against ingest.
constexpr size_t kChunk = 4096;

void PrintLabelSet(std::string_view keyword, const LabelSet& set, std::string& out) {
  absl::StrAppend(&out, AsAbsl(keyword), "(", absl::StrJoin(set.names, ", "), ")");
}

Item SeriesItem(const Labels* labels, double value, SeriesRef ref, const Origin* origin) {
  Item item;
  item.labels = BorrowLabels(labels);
  item.value = value;
  item.inline_count = 1;
  item.inline_evidence[0] = InlineEvidence{ref, origin, value};
  return item;
}

// ---- Leaves -------------------------------------------------------------------------------

class NumberNode final : public Node {
 public:
  explicit NumberNode(double v) : v_(v) {}
  Vec Eval(const EvalContext&, const ValueFilter*) const override { return {}; }
  std::optional<double> constant() const override { return v_; }
  int precedence() const override { return v_ < 0 ? kUnaryPrec : kPrimaryPrec; }
  void Print(std::string& out) const override { out += FormatNumber(v_); }

 private:
  double v_;
};

// The series a selector matches, cached: matchers (regexes included) run once per series, when
// the store has gained series since the last evaluation.
class Selection {
 public:
  explicit Selection(const Selector& sel) : sel_(sel) {}

  void Refresh(const SeriesStore& store) {
    const uint64_t generation = store.generation();
    if (generation == generation_) return;
    if ((generation >> 32) != (generation_ >> 32)) {  // another store
      refs.clear();
      labels.clear();
      seen_ = 0;
    }
    seen_ = store.ForEachSeriesNamed(sel_.name, seen_, [&](SeriesRef ref, const Labels& l) {
      if (!MatchesAll(sel_.matchers, l)) return;
      refs.push_back(ref);
      labels.push_back(&l);
    });
    generation_ = generation;
  }

  std::vector<SeriesRef> refs;
  std::vector<const Labels*> labels;

 private:
  const Selector& sel_;
  uint64_t generation_ = ~uint64_t{0};
  size_t seen_ = 0;
};

// A selector, alone (kLatest) or under a range function: one element per matching series
// that has a value.
class RangeNode final : public Node {
 public:
  RangeNode(RangeFn fn, Selector sel, absl::Duration window)
      : fn_(fn),
        sel_(std::move(sel)),
        window_(window),
        origin_(fn == RangeFn::kLatest ? Origin{}
                                       : Origin{std::string(RangeFnName(fn)), window}),
        selection_(sel_) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    absl::MutexLock lock(&mu_);
    selection_.Refresh(ctx.store);
    const int64_t from = ctx.now - absl::ToInt64Nanoseconds(window_);
    Vec out;
    const std::vector<SeriesRef>& refs = selection_.refs;
    if (!filter) out.reserve(refs.size());
    for (size_t start = 0; start < refs.size(); start += kChunk) {
      const size_t n = std::min(kChunk, refs.size() - start);
      Compute(ctx, std::span(refs.data() + start, n), from);
      for (size_t i = 0; i < n; ++i) {
        if (!values_[i]) continue;  // absent or too few samples: no element, never a zero
        const double v = *values_[i];
        if (filter && !filter->Keep(v)) continue;
        out.push_back(SeriesItem(selection_.labels[start + i], v, refs[start + i], &origin_));
      }
    }
    return out;
  }
  void Print(std::string& out) const override {
    if (fn_ == RangeFn::kLatest) {
      sel_.Print(out);
      return;
    }
    absl::StrAppend(&out, AsAbsl(RangeFnName(fn_)), "(");
    sel_.Print(out);
    absl::StrAppend(&out, "[", HumanDuration(window_), "])");
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    out.push_back(sel_.name);
  }

 private:
  void Compute(const EvalContext& ctx, std::span<const SeriesRef> refs, int64_t from) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const SeriesStore& store = ctx.store;
    switch (fn_) {
      case RangeFn::kRate:
        store.RateMany(refs, from, ctx.now, values_);
        return;
      case RangeFn::kIncrease:
        store.IncreaseMany(refs, from, ctx.now, windows_);
        values_.resize(refs.size());
        for (size_t i = 0; i < refs.size(); ++i) {
          values_[i] = windows_[i] ? std::optional<double>(windows_[i]->increase) : std::nullopt;
        }
        return;
      case RangeFn::kDelta:
      case RangeFn::kChanges:
      case RangeFn::kAvg:
      case RangeFn::kMin:
      case RangeFn::kMax:
        store.WindowMany(WindowFunctionOf(fn_), refs, from, ctx.now, values_);
        return;
      case RangeFn::kLatest: {
        // The newest sample, when it is not older than the lookback (window_).
        store.LatestMany(refs, latest_);
        values_.resize(refs.size());
        for (size_t i = 0; i < refs.size(); ++i) {
          values_[i].reset();
          if (latest_[i] && latest_[i]->time_unix_nano >= from) values_[i] = latest_[i]->value;
        }
        return;
      }
      case RangeFn::kStale: {
        // One element per series whose newest sample is older than the window; the value is
        // its age in seconds.
        store.LatestMany(refs, latest_);
        values_.resize(refs.size());
        const int64_t window = absl::ToInt64Nanoseconds(window_);
        for (size_t i = 0; i < refs.size(); ++i) {
          values_[i].reset();
          if (!latest_[i]) continue;
          const int64_t age = ctx.now - latest_[i]->time_unix_nano;
          if (age > window) values_[i] = static_cast<double>(age) / 1e9;
        }
        return;
      }
    }
  }

  static SeriesStore::WindowFunction WindowFunctionOf(RangeFn fn) {
    using WF = SeriesStore::WindowFunction;
    switch (fn) {
      case RangeFn::kDelta: return WF::kDelta;
      case RangeFn::kChanges: return WF::kChanges;
      case RangeFn::kAvg: return WF::kAvg;
      case RangeFn::kMin: return WF::kMin;
      default: return WF::kMax;
    }
  }

  const RangeFn fn_;
  const Selector sel_;
  const absl::Duration window_;
  const Origin origin_;
  mutable absl::Mutex mu_;
  mutable Selection selection_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::optional<double>> values_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::optional<CounterWindow>> windows_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::optional<Sample>> latest_ ABSL_GUARDED_BY(mu_);
};

// count_over_time(events{...}[d]): one element per (kind, label set) of the matching events.
class EventCountNode final : public Node {
 public:
  EventCountNode(std::vector<Matcher> matchers, absl::Duration window)
      : matchers_(std::move(matchers)), window_(window) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    if (ctx.events == nullptr) return {};
    struct Group {
      Labels labels;
      double count = 0;
      std::vector<EventEvidence> newest;
    };
    absl::flat_hash_map<std::string, size_t> index;
    std::vector<Group> groups;
    std::string key;
    const int64_t from = ctx.now - absl::ToInt64Nanoseconds(window_);
    ctx.events->ForEach(from, ctx.now, [&](const StoredEvent& e) {
      if (!Matches(e)) return;
      key.assign(e.kind);
      key += '\x1d';
      AppendKey(e.labels, LabelSet{}, key);
      auto [it, inserted] = index.try_emplace(key, groups.size());
      if (inserted) {
        Group& g = groups.emplace_back();
        g.labels = e.labels;
        std::erase_if(g.labels, [](const Label& l) { return l.name == "kind"; });
        g.labels.push_back({"kind", e.kind});
        NormalizeLabels(g.labels);
      }
      Group& g = groups[it->second];
      ++g.count;
      // Keep the newest few, copying an event only when it gets in.
      auto older = [](const EventEvidence& a, const EventEvidence& b) {
        return std::tie(a.time_unix_nano, a.seq) < std::tie(b.time_unix_nano, b.seq);
      };
      EventEvidence* slot = nullptr;
      if (g.newest.size() < kMaxEventEvidence) {
        slot = &g.newest.emplace_back();
      } else {
        auto oldest = std::min_element(g.newest.begin(), g.newest.end(), older);
        if (std::tie(e.time_unix_nano, e.seq) > std::tie(oldest->time_unix_nano, oldest->seq)) {
          slot = &*oldest;
        }
      }
      if (slot) *slot = EventEvidence{e.seq, e.kind, e.time_unix_nano, e.labels, e.raw};
    });
    Vec out;
    for (Group& g : groups) {
      if (filter && !filter->Keep(g.count)) continue;
      Item item;
      item.labels = OwnLabels(std::move(g.labels));
      item.value = g.count;
      EvidenceBuilder evidence;
      evidence.AddEvents(std::move(g.newest));
      evidence.Into(item);
      out.push_back(std::move(item));
    }
    return out;
  }

  void Print(std::string& out) const override {
    out += "count_over_time(";
    Selector{"events", matchers_}.Print(out);
    absl::StrAppend(&out, "[", HumanDuration(window_), "])");
  }

  // The kinds an `=` or `in` matcher pins; the family ("nccl.") a `kind=~"nccl\..*"`-style
  // regex names; "" (every event) otherwise.
  void CollectEventKinds(std::vector<std::string>& out) const override {
    for (const Matcher& m : matchers_) {
      if (m.name != "kind") continue;
      if (m.op == Matcher::Op::kEq) {
        out.push_back(m.value);
        return;
      }
      if (m.op == Matcher::Op::kIn) {
        out.insert(out.end(), m.values.begin(), m.values.end());
        return;
      }
    }
    for (const Matcher& m : matchers_) {
      if (m.name != "kind" || m.op != Matcher::Op::kRe) continue;
      if (std::string family = RegexFamily(m.value); !family.empty()) {
        out.push_back(family);
        return;
      }
    }
    out.push_back("");
  }

 private:
  bool Matches(const StoredEvent& e) const {
    for (const Matcher& m : matchers_) {
      const std::string* v = m.name == "kind" ? &e.kind : FindLabel(e.labels, m.name);
      if (!m.Matches(v ? std::string_view(*v) : std::string_view())) return false;
    }
    return true;
  }

  // The literal prefix of a regex, up to its last '.', when the regex is that prefix followed
  // by anything ("nccl\.ib_.*" -> "nccl."); "" when it is not of that shape.
  static std::string RegexFamily(std::string_view re) {
    std::string literal;
    size_t i = 0;
    for (; i < re.size(); ++i) {
      const char c = re[i];
      if (c == '\\' && i + 1 < re.size() && std::string_view(".-_").find(re[i + 1]) != std::string_view::npos) {
        literal += re[++i];
      } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
        literal += c;
      } else {
        break;
      }
    }
    if (re.substr(i) != ".*" && re.substr(i) != ".+") return "";
    const size_t dot = literal.rfind('.');
    return dot == std::string::npos ? "" : literal.substr(0, dot + 1);
  }

  const std::vector<Matcher> matchers_;
  const absl::Duration window_;
};

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

 protected:
  const NodePtr child_;
};

// ---- Element-wise functions ---------------------------------------------------------------

class UnaryNode final : public OneChildNode {
 public:
  UnaryNode(UnaryFn fn, NodePtr child) : OneChildNode(std::move(child)), fn_(fn) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    Vec in = child_->Eval(ctx, nullptr);
    switch (fn_) {
      case UnaryFn::kNeg:
        for (Item& item : in) item.value = -item.value;
        return in;
      case UnaryFn::kAbs:
        for (Item& item : in) item.value = std::fabs(item.value);
        return in;
      case UnaryFn::kTopology:
        if (ctx.fabric == nullptr) return in;
        for (Item& item : in) {
          Labels labels = *item.labels;
          ctx.fabric->Enrich(labels);
          item.labels = OwnLabels(std::move(labels));
        }
        return in;
      case UnaryFn::kPeer: {
        if (ctx.fabric == nullptr) return {};
        Vec out;
        for (Item& item : in) {
          Labels labels = *item.labels;
          if (!ctx.fabric->ToPeer(labels)) continue;
          item.labels = OwnLabels(std::move(labels));
          out.push_back(std::move(item));
        }
        return out;
      }
    }
    return in;
  }
  int precedence() const override { return fn_ == UnaryFn::kNeg ? kUnaryPrec : kPrimaryPrec; }
  void Print(std::string& out) const override {
    switch (fn_) {
      case UnaryFn::kNeg:
        out += '-';
        PrintOperand(*child_, kPrimaryPrec, out);
        return;
      case UnaryFn::kAbs:
        out += "abs(";
        break;
      case UnaryFn::kTopology:
        out += "topology(";
        break;
      case UnaryFn::kPeer:
        out += "peer(";
        break;
    }
    child_->Print(out);
    out += ')';
  }

 private:
  const UnaryFn fn_;
};

// ---- Binary operators ---------------------------------------------------------------------

// Shared printing and collection for the two-operand nodes.
class TwoOperandNode : public Node {
 public:
  TwoOperandNode(std::string_view op, int precedence, LabelSet matching, NodePtr lhs, NodePtr rhs)
      : op_(op),
        precedence_(precedence),
        matching_(std::move(matching)),
        lhs_(std::move(lhs)),
        rhs_(std::move(rhs)) {}

  int precedence() const override { return precedence_; }
  void Print(std::string& out) const override {
    // Left-associative, except comparisons, which do not chain.
    PrintOperand(*lhs_, precedence_ == kCmpPrec ? precedence_ + 1 : precedence_, out);
    absl::StrAppend(&out, " ", op_, " ");
    if (return_bool_) out += "bool ";
    if (matching_.mode != LabelSet::Mode::kAll) {
      PrintLabelSet(matching_.mode == LabelSet::Mode::kOnly ? "on" : "ignoring", matching_, out);
      out += ' ';
    }
    PrintOperand(*rhs_, precedence_ + 1, out);
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    lhs_->CollectMetricNames(out);
    rhs_->CollectMetricNames(out);
  }
  void CollectEventKinds(std::vector<std::string>& out) const override {
    lhs_->CollectEventKinds(out);
    rhs_->CollectEventKinds(out);
  }

 protected:
  const std::string op_;
  const int precedence_;
  const LabelSet matching_;
  const NodePtr lhs_, rhs_;
  bool return_bool_ = false;
};

// A vector and a constant: arithmetic on each element, or a comparison that filters (or, with
// bool, yields 0/1).
class ScalarBinaryNode final : public TwoOperandNode {
 public:
  ScalarBinaryNode(BinOp op, bool return_bool, NodePtr lhs, NodePtr rhs)
      : TwoOperandNode(BinOpText(op), IsComparison(op) ? kCmpPrec
                                      : (op == BinOp::kMul || op == BinOp::kDiv) ? kMulPrec
                                                                                 : kAddPrec,
                       LabelSet{}, std::move(lhs), std::move(rhs)),
        op_code_(op) {
    return_bool_ = return_bool;
    scalar_left_ = lhs_->constant().has_value();
    scalar_ = scalar_left_ ? *lhs_->constant() : *rhs_->constant();
  }

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    const Node& vec = scalar_left_ ? *rhs_ : *lhs_;
    if (IsComparison(op_code_) && !return_bool_) {
      // element op scalar, or scalar op element turned around.
      const ValueFilter filter{scalar_left_ ? Mirror(op_code_) : op_code_, scalar_};
      Vec in = vec.Eval(ctx, &filter);
      std::erase_if(in, [&](const Item& item) { return !filter.Keep(item.value); });
      return in;
    }
    Vec in = vec.Eval(ctx, nullptr);
    Vec out;
    out.reserve(in.size());
    for (Item& item : in) {
      std::optional<double> v = scalar_left_ ? Arith(op_code_, scalar_, item.value)
                                             : Arith(op_code_, item.value, scalar_);
      if (!v) continue;  // division by zero: no element
      item.value = *v;
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  static BinOp Mirror(BinOp op) {
    switch (op) {
      case BinOp::kGt: return BinOp::kLt;
      case BinOp::kGe: return BinOp::kLe;
      case BinOp::kLt: return BinOp::kGt;
      case BinOp::kLe: return BinOp::kGe;
      default: return op;
    }
  }

  const BinOp op_code_;
  bool scalar_left_ = false;
  double scalar_ = 0;
};

// Index of the right-hand elements by matching key; several elements may share a key.
class KeyIndex {
 public:
  KeyIndex(const Vec& v, const LabelSet& matching) : next_(v.size(), kEnd) {
    std::string key;
    for (uint32_t i = v.size(); i-- > 0;) {  // backwards, so each chain is in order
      key.clear();
      AppendKey(*v[i].labels, matching, key);
      auto [it, inserted] = first_.try_emplace(key, i);
      if (!inserted) {
        next_[i] = it->second;
        it->second = i;
      }
    }
  }
  static constexpr uint32_t kEnd = ~uint32_t{0};
  uint32_t Find(const std::string& key) const {
    auto it = first_.find(key);
    return it == first_.end() ? kEnd : it->second;
  }
  uint32_t Next(uint32_t i) const { return next_[i]; }

 private:
  absl::flat_hash_map<std::string, uint32_t> first_;
  std::vector<uint32_t> next_;
};

// Two vectors: each left element is paired with the (first) right element with the same
// matching key; the result keeps the left element's labels and both elements' evidence.
class VectorBinaryNode final : public TwoOperandNode {
 public:
  VectorBinaryNode(BinOp op, bool return_bool, LabelSet matching, NodePtr lhs, NodePtr rhs)
      : TwoOperandNode(BinOpText(op), IsComparison(op) ? kCmpPrec
                                      : (op == BinOp::kMul || op == BinOp::kDiv) ? kMulPrec
                                                                                 : kAddPrec,
                       std::move(matching), std::move(lhs), std::move(rhs)),
        op_code_(op) {
    return_bool_ = return_bool;
  }

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    Vec left = lhs_->Eval(ctx, nullptr);
    if (left.empty()) return left;
    const Vec right = rhs_->Eval(ctx, nullptr);
    const KeyIndex index(right, matching_);
    Vec out;
    std::string key;
    for (Item& item : left) {
      key.clear();
      AppendKey(*item.labels, matching_, key);
      const uint32_t r = index.Find(key);
      if (r == KeyIndex::kEnd) continue;
      const double rv = right[r].value;
      if (IsComparison(op_code_)) {
        const bool holds = Compare(op_code_, item.value, rv);
        if (return_bool_) {
          item.value = holds ? 1 : 0;
        } else if (!holds) {
          continue;
        }
      } else {
        std::optional<double> v = Arith(op_code_, item.value, rv);
        if (!v) continue;
        item.value = *v;
      }
      MergeEvidenceInto(item, right[r]);
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  const BinOp op_code_;
};

class SetOpNode final : public TwoOperandNode {
 public:
  SetOpNode(SetOp op, LabelSet matching, NodePtr lhs, NodePtr rhs)
      : TwoOperandNode(op == SetOp::kAnd ? "and" : op == SetOp::kOr ? "or" : "unless",
                       op == SetOp::kOr ? kOrPrec : kAndPrec, std::move(matching),
                       std::move(lhs), std::move(rhs)),
        set_op_(op) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    Vec left = lhs_->Eval(ctx, nullptr);
    if (left.empty() && set_op_ != SetOp::kOr) return left;
    Vec right = rhs_->Eval(ctx, nullptr);
    std::string key;
    if (set_op_ == SetOp::kOr) {
      absl::flat_hash_set<std::string> left_keys;
      for (const Item& item : left) {
        key.clear();
        AppendKey(*item.labels, matching_, key);
        left_keys.insert(key);
      }
      for (Item& item : right) {
        key.clear();
        AppendKey(*item.labels, matching_, key);
        if (!left_keys.contains(key)) left.push_back(std::move(item));
      }
      return left;
    }
    const KeyIndex index(right, matching_);
    Vec out;
    for (Item& item : left) {
      key.clear();
      AppendKey(*item.labels, matching_, key);
      uint32_t r = index.Find(key);
      if (set_op_ == SetOp::kUnless) {
        if (r == KeyIndex::kEnd) out.push_back(std::move(item));
        continue;
      }
      if (r == KeyIndex::kEnd) continue;
      // "and": the right elements that matched are evidence too.
      EvidenceBuilder evidence;
      evidence.Add(item);
      for (; r != KeyIndex::kEnd; r = index.Next(r)) evidence.Add(right[r]);
      evidence.Into(item);
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  const SetOp set_op_;
};

// ---- Aggregations and peers ---------------------------------------------------------------

// Assigns each element a group by its key; returns the group of each element.
std::vector<uint32_t> GroupElements(const Vec& in, const LabelSet& grouping,
                                    std::vector<uint32_t>* first_member) {
  absl::flat_hash_map<std::string, uint32_t> index;
  std::vector<uint32_t> group_of(in.size());
  std::string key;
  for (uint32_t i = 0; i < in.size(); ++i) {
    key.clear();
    AppendKey(*in[i].labels, grouping, key);
    auto [it, inserted] = index.try_emplace(key, static_cast<uint32_t>(first_member->size()));
    if (inserted) first_member->push_back(i);
    group_of[i] = it->second;
  }
  return group_of;
}

class AggregationNode final : public OneChildNode {
 public:
  AggregationNode(AggOp op, LabelSet grouping, NodePtr child)
      : OneChildNode(std::move(child)), op_(op), grouping_(std::move(grouping)) {
    // No clause: one group without labels.
    key_set_ = grouping_.mode == LabelSet::Mode::kAll
                   ? LabelSet{LabelSet::Mode::kOnly, {}}
                   : grouping_;
  }

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    const Vec in = child_->Eval(ctx, nullptr);
    std::vector<uint32_t> first;
    const std::vector<uint32_t> group_of = GroupElements(in, key_set_, &first);
    struct Acc {
      double sum = 0, min = 0, max = 0, count = 0;
      EvidenceBuilder evidence;
    };
    std::vector<Acc> acc(first.size());
    for (size_t i = 0; i < in.size(); ++i) {
      Acc& a = acc[group_of[i]];
      const double v = in[i].value;
      if (a.count == 0) {
        a.min = a.max = v;
      } else {
        a.min = std::min(a.min, v);
        a.max = std::max(a.max, v);
      }
      a.sum += v;
      ++a.count;
      a.evidence.Add(in[i]);
    }
    Vec out;
    out.reserve(first.size());
    for (size_t g = 0; g < first.size(); ++g) {
      Acc& a = acc[g];
      Item item;
      item.labels = OwnLabels(Project(*in[first[g]].labels, key_set_));
      switch (op_) {
        case AggOp::kSum: item.value = a.sum; break;
        case AggOp::kAvg: item.value = a.sum / a.count; break;
        case AggOp::kMin: item.value = a.min; break;
        case AggOp::kMax: item.value = a.max; break;
        case AggOp::kCount: item.value = a.count; break;
      }
      a.evidence.Into(item);
      out.push_back(std::move(item));
    }
    return out;
  }

  void Print(std::string& out) const override {
    static constexpr std::string_view kNames[] = {"sum", "avg", "min", "max", "count"};
    out += kNames[static_cast<int>(op_)];
    if (grouping_.mode != LabelSet::Mode::kAll) {
      out += ' ';
      PrintLabelSet(grouping_.mode == LabelSet::Mode::kOnly ? "by " : "without ", grouping_,
                    out);
      out += ' ';
    }
    out += '(';
    child_->Print(out);
    out += ')';
  }

 private:
  const AggOp op_;
  const LabelSet grouping_;
  LabelSet key_set_;
};

// peer_median / peer_ratio: each element against the median of the others in its group.
class PeerNode final : public OneChildNode {
 public:
  PeerNode(bool ratio, LabelSet grouping, NodePtr child)
      : OneChildNode(std::move(child)), ratio_(ratio), grouping_(std::move(grouping)) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    Vec in = child_->Eval(ctx, nullptr);
    std::vector<uint32_t> first;
    const std::vector<uint32_t> group_of = GroupElements(in, grouping_, &first);
    // Members of each group, sorted by value.
    std::vector<std::vector<uint32_t>> members(first.size());
    for (uint32_t i = 0; i < in.size(); ++i) members[group_of[i]].push_back(i);
    std::vector<std::optional<double>> result(in.size());
    for (std::vector<uint32_t>& m : members) {
      if (m.size() < 2) continue;  // nobody to compare with
      std::stable_sort(m.begin(), m.end(),
                       [&](uint32_t a, uint32_t b) { return in[a].value < in[b].value; });
      const size_t others = m.size() - 1;
      // The k-th of the others, in order, when the element at sorted position p is left out.
      auto other = [&](size_t p, size_t k) { return in[m[k < p ? k : k + 1]].value; };
      for (size_t p = 0; p < m.size(); ++p) {
        const double median = others % 2 == 1
                                  ? other(p, others / 2)
                                  : (other(p, others / 2 - 1) + other(p, others / 2)) / 2;
        if (!ratio_) {
          result[m[p]] = median;
        } else if (median != 0) {
          result[m[p]] = Arith(BinOp::kDiv, in[m[p]].value, median);
        }
      }
    }
    Vec out;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (!result[i]) continue;
      in[i].value = *result[i];
      out.push_back(std::move(in[i]));
    }
    return out;
  }

  void Print(std::string& out) const override {
    out += ratio_ ? "peer_ratio(" : "peer_median(";
    child_->Print(out);
    out += ", ";
    PrintLabelSet(grouping_.mode == LabelSet::Mode::kOnly ? "by " : "without ", grouping_, out);
    out += ')';
  }

 private:
  const bool ratio_;
  const LabelSet grouping_;
};

}  // namespace

NodePtr MakeNumber(double v) { return std::make_unique<NumberNode>(v); }
NodePtr MakeSelector(Selector sel) {
  return std::make_unique<RangeNode>(RangeFn::kLatest, std::move(sel), kLookback);
}
NodePtr MakeRange(RangeFn fn, Selector sel, absl::Duration window) {
  return std::make_unique<RangeNode>(fn, std::move(sel), window);
}
NodePtr MakeEventCount(std::vector<Matcher> matchers, absl::Duration window) {
  return std::make_unique<EventCountNode>(std::move(matchers), window);
}
NodePtr MakeUnary(UnaryFn fn, NodePtr child) {
  return std::make_unique<UnaryNode>(fn, std::move(child));
}
NodePtr MakeBinary(BinOp op, bool return_bool, LabelSet matching, NodePtr lhs, NodePtr rhs) {
  if (lhs->constant() || rhs->constant()) {
    return std::make_unique<ScalarBinaryNode>(op, return_bool, std::move(lhs), std::move(rhs));
  }
  return std::make_unique<VectorBinaryNode>(op, return_bool, std::move(matching),
                                            std::move(lhs), std::move(rhs));
}
NodePtr MakeSetOp(SetOp op, LabelSet matching, NodePtr lhs, NodePtr rhs) {
  return std::make_unique<SetOpNode>(op, std::move(matching), std::move(lhs), std::move(rhs));
}
NodePtr MakeAggregation(AggOp op, LabelSet grouping, NodePtr child) {
  return std::make_unique<AggregationNode>(op, std::move(grouping), std::move(child));
}
NodePtr MakePeer(bool ratio, LabelSet grouping, NodePtr child) {
  return std::make_unique<PeerNode>(ratio, std::move(grouping), std::move(child));
}

}  // namespace railwatch::cond
