// Element-wise functions (abs, unary minus, topology, peer) and the binary operators
// (arithmetic, comparisons, and/or/unless) of a condition.

#include <algorithm>
#include <atomic>
#include <cmath>

#include "absl/synchronization/mutex.h"
#include "engine/condition_internal.h"
#include "topology/fabric_map.h"

namespace railwatch::cond {
namespace {

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
      case UnaryFn::kPeer:
        return Relabel(ctx, std::move(in));
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
  // topology() and peer(). What they make of a series' labels changes only with the fabric
  // map, its jobs or the store, so it is kept per (label_source, label_index) between
  // evaluations, and the results carry a label_source of their own.
  Vec Relabel(const EvalContext& ctx, Vec in) const {
    const bool peer = fn_ == UnaryFn::kPeer;
    if (ctx.fabric == nullptr) return peer ? Vec() : in;
    absl::MutexLock lock(&mu_);
    const JobRegistry* jobs = ctx.fabric->jobs();
    const CacheKey key{ctx.fabric, ctx.fabric->generation(), jobs,
                       jobs != nullptr ? jobs->generation() : 0, ctx.store.generation() >> 32};
    if (!(key == cache_key_)) {
      cache_key_ = key;
      cache_.clear();
    }
    // Returns the new labels, or null when peer() finds no far end.
    auto relabel = [&](const Labels& from) -> std::shared_ptr<const Labels> {
      Labels labels = from;
      if (!peer) {
        ctx.fabric->Enrich(labels);
      } else if (!ctx.fabric->ToPeer(labels)) {
        return nullptr;
      }
      return OwnLabels(std::move(labels));
    };
    Vec out;
    out.reserve(in.size());
    const void* last_source = nullptr;
    Cached* cached = nullptr;
    for (Item& item : in) {
      if (item.label_source == nullptr) {
        item.labels = relabel(*item.labels);
      } else {
        if (item.label_source != last_source) {
          last_source = item.label_source;
          // Sources that start over (an aggregation's keys) leave old ones behind.
          if (cache_.size() >= 64 && !cache_.contains(item.label_source)) cache_.clear();
          std::unique_ptr<Cached>& c = cache_[item.label_source];
          if (!c) {
            c = std::make_unique<Cached>();
            c->source = NewLabelSource();
          }
          cached = c.get();
        }
        if (item.label_index >= cached->known.size()) {
          cached->known.resize(item.label_index + 1, false);
          cached->labels.resize(item.label_index + 1);
        }
        if (!cached->known[item.label_index]) {
          cached->labels[item.label_index] = relabel(*item.labels);
          cached->known[item.label_index] = true;
        }
        item.labels = cached->labels[item.label_index];
        item.label_source = cached->source;
      }
      if (item.labels == nullptr) continue;  // peer(): no far end
      out.push_back(std::move(item));
    }
    return out;
  }

  struct CacheKey {
    const FabricMap* fabric = nullptr;
    uint64_t fabric_generation = 0;
    const JobRegistry* jobs = nullptr;
    uint64_t jobs_generation = 0;
    uint64_t store = ~uint64_t{0};
    bool operator==(const CacheKey&) const = default;
  };
  struct Cached {
    const void* source = nullptr;
    std::vector<bool> known;
    std::vector<std::shared_ptr<const Labels>> labels;  // null: peer() found no far end
  };

  const UnaryFn fn_;
  mutable absl::Mutex mu_;
  mutable CacheKey cache_key_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_map<const void*, std::unique_ptr<Cached>> cache_ ABSL_GUARDED_BY(mu_);
};

// label(expr, "name", "value"): a constant label on every element, such as the part of a
// link that one branch of a condition points at ("optic", "cable"). The new labels are made
// once per (label_source, label_index) and kept between evaluations, as topology() does.
class SetLabelNode final : public OneChildNode {
 public:
  SetLabelNode(std::string name, std::string value, NodePtr child)
      : OneChildNode(std::move(child)), label_{std::move(name), std::move(value)} {}

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    Vec in = child_->Eval(ctx, nullptr);
    absl::MutexLock lock(&mu_);
    if (cache_.size() >= 64) cache_.clear();
    for (Item& item : in) {
      if (item.label_source == nullptr) {
        item.labels = Set(*item.labels);
        continue;
      }
      Cached& c = cache_[item.label_source];
      if (c.source == nullptr) c.source = NewLabelSource();
      if (item.label_index >= c.labels.size()) c.labels.resize(item.label_index + 1);
      std::shared_ptr<const Labels>& cached = c.labels[item.label_index];
      if (cached == nullptr) cached = Set(*item.labels);
      item.labels = cached;
      item.label_source = c.source;
    }
    return in;
  }
  void Print(std::string& out) const override {
    out += "label(";
    child_->Print(out);
    out += ", ";
    out += QuoteString(label_.name);
    out += ", ";
    out += QuoteString(label_.value);
    out += ')';
  }

 private:
  std::shared_ptr<const Labels> Set(const Labels& from) const {
    Labels labels = from;
    auto it = std::lower_bound(labels.begin(), labels.end(), label_.name,
                               [](const Label& l, const std::string& n) { return l.name < n; });
    if (it != labels.end() && it->name == label_.name) {
      it->value = label_.value;
    } else {
      labels.insert(it, label_);
    }
    return OwnLabels(std::move(labels));
  }

  struct Cached {
    const void* source = nullptr;
    std::vector<std::shared_ptr<const Labels>> labels;
  };
  const Label label_;
  mutable absl::Mutex mu_;
  // Keyed by the child's label_source. The child's sources are stable for as long as what
  // they name is; a source that starts over (an aggregation's keys) gets a new pointer.
  mutable absl::flat_hash_map<const void*, Cached> cache_ ABSL_GUARDED_BY(mu_);
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
  void CollectWindows(std::vector<std::pair<std::string, absl::Duration>>& out) const override {
    lhs_->CollectWindows(out);
    rhs_->CollectWindows(out);
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
      // An unknown element might hold: it stays, unknown.
      std::erase_if(in, [&](const Item& item) { return !item.unknown && !filter.Keep(item.value); });
      return in;
    }
    Vec in = vec.Eval(ctx, nullptr);
    Vec out;
    out.reserve(in.size());
    for (Item& item : in) {
      std::optional<double> v = scalar_left_ ? Arith(op_code_, scalar_, item.value)
                                             : Arith(op_code_, item.value, scalar_);
      if (!v && !item.unknown) continue;  // division by zero: no element
      if (v) item.value = *v;
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

// Keys of the elements of both sides of a matched operator, and the right-hand elements by
// key (several may share one).
class Matcher2 {
 public:
  static constexpr uint32_t kEnd = KeyTable::kNone;
  explicit Matcher2(const LabelSet& matching) : keys_(matching) {}

  // Indexes the right side; call once per evaluation before Find.
  void IndexRight(const EvalContext& ctx, const Vec& right, size_t left_size) {
    keys_.Prepare(ctx.store, std::max(right.size(), left_size));
    next_.assign(right.size(), kEnd);
    for (uint32_t k : touched_) first_[k] = kEnd;
    touched_.clear();
    std::vector<uint32_t> last;
    for (uint32_t i = 0; i < right.size(); ++i) {
      if (!right[i].label_source) PrefetchLabels(right, i);
      const uint32_t k = keys_.Id(right[i]);
      if (k >= first_.size()) first_.resize(keys_.size(), kEnd);
      if (k >= last_.size()) last_.resize(keys_.size(), kEnd);
      if (first_[k] == kEnd) {
        first_[k] = i;
        touched_.push_back(k);
      } else {
        next_[last_[k]] = i;
      }
      last_[k] = i;
    }
  }
  // The first right element with the key of `left[i]`, or kEnd.
  uint32_t Find(const Vec& left, size_t i) {
    if (!left[i].label_source) PrefetchLabels(left, i);
    const uint32_t k = keys_.Id(left[i]);
    return k < first_.size() ? first_[k] : kEnd;
  }
  uint32_t Next(uint32_t i) const { return next_[i]; }

 private:
  KeyInterner keys_;
  std::vector<uint32_t> first_, last_;  // per key id
  std::vector<uint32_t> touched_;       // key ids set in first_ this evaluation
  std::vector<uint32_t> next_;          // per right element
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
    absl::MutexLock lock(&mu_);
    index_.IndexRight(ctx, right, left.size());
    Vec out;
    for (size_t i = 0; i < left.size(); ++i) {
      const uint32_t r = index_.Find(left, i);
      if (r == Matcher2::kEnd) continue;
      Item& item = left[i];
      const double rv = right[r].value;
      item.unknown = item.unknown || right[r].unknown;
      if (IsComparison(op_code_)) {
        const bool holds = Compare(op_code_, item.value, rv);
        if (return_bool_) {
          item.value = holds ? 1 : 0;
        } else if (!holds && !item.unknown) {
          continue;
        }
      } else {
        std::optional<double> v = Arith(op_code_, item.value, rv);
        if (!v && !item.unknown) continue;
        if (v) item.value = *v;
      }
      MergeEvidenceInto(item, right[r]);
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  const BinOp op_code_;
  mutable absl::Mutex mu_;
  mutable Matcher2 index_ ABSL_GUARDED_BY(mu_){matching_};
};

class SetOpNode final : public TwoOperandNode {
 public:
  SetOpNode(SetOp op, LabelSet matching, NodePtr lhs, NodePtr rhs)
      : TwoOperandNode(op == SetOp::kAnd ? "and" : op == SetOp::kOr ? "or" : "unless",
                       op == SetOp::kOr ? kOrPrec : kAndPrec, std::move(matching),
                       std::move(lhs), std::move(rhs)),
        set_op_(op),
        index_(matching_) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter*) const override {
    Vec left = lhs_->Eval(ctx, nullptr);
    if (left.empty() && set_op_ != SetOp::kOr) return left;
    Vec right = rhs_->Eval(ctx, nullptr);
    absl::MutexLock lock(&mu_);
    if (set_op_ == SetOp::kOr) {
      // An unknown left element that a known right one matches is known: "or" holds there.
      if (std::any_of(left.begin(), left.end(), [](const Item& x) { return x.unknown; })) {
        index_.IndexRight(ctx, right, left.size());
        for (size_t i = 0; i < left.size(); ++i) {
          if (!left[i].unknown) continue;
          for (uint32_t r = index_.Find(left, i); r != Matcher2::kEnd; r = index_.Next(r)) {
            if (!right[r].unknown) {
              left[i] = right[r];
              break;
            }
          }
        }
      }
      // "or" is "right unless left", appended to left.
      index_.IndexRight(ctx, left, right.size());
      for (size_t i = 0; i < right.size(); ++i) {
        if (index_.Find(right, i) == Matcher2::kEnd) left.push_back(std::move(right[i]));
      }
      return left;
    }
    index_.IndexRight(ctx, right, left.size());
    Vec out;
    for (size_t i = 0; i < left.size(); ++i) {
      uint32_t r = index_.Find(left, i);
      Item& item = left[i];
      if (r == Matcher2::kEnd) {
        if (set_op_ == SetOp::kUnless) out.push_back(std::move(item));
        continue;
      }
      // Whether a known right element matched: only unknown ones leave the answer open.
      bool known_match = false;
      for (uint32_t k = r; k != Matcher2::kEnd && !known_match; k = index_.Next(k)) {
        known_match = !right[k].unknown;
      }
      if (set_op_ == SetOp::kUnless) {
        if (known_match) continue;
        item.unknown = true;  // a right side that may still turn out to match
        out.push_back(std::move(item));
        continue;
      }
      // "and": the right elements that matched are evidence too.
      if (!known_match) item.unknown = true;
      for (; r != Matcher2::kEnd; r = index_.Next(r)) MergeEvidenceInto(item, right[r]);
      out.push_back(std::move(item));
    }
    return out;
  }

 private:
  const SetOp set_op_;
  mutable absl::Mutex mu_;
  mutable Matcher2 index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

NodePtr MakeSetLabel(std::string name, std::string value, NodePtr child) {
  return std::make_unique<SetLabelNode>(std::move(name), std::move(value), std::move(child));
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
}  // namespace railwatch::cond
