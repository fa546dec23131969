// The nodes of a parsed condition and how each evaluates (semantics in docs/PLAYBOOKS.md).

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <limits>

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

Item SeriesItem(const Labels* labels, double value, SeriesRef ref, const Origin* origin,
                const void* label_source, uint32_t label_index) {
  Item item;
  item.labels = BorrowLabels(labels);
  item.label_source = label_source;
  item.label_index = label_index;
  item.value = value;
  item.evidence.inline_count = 1;
  item.evidence.inline_evidence[0] = InlineEvidence{ref, origin, value};
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
        out.push_back(SeriesItem(selection_.labels[start + i], v, refs[start + i], &origin_,
                                 &selection_, static_cast<uint32_t>(start + i)));
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
      item.evidence.more = ConcreteEvidence(MergedEvidence{{}, std::move(g.newest)});
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
    const CacheKey key{ctx.fabric, ctx.fabric->topology(), jobs,
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

  // A label_source that no pointer can equal (user-space addresses are below 2^56), new each
  // time, so caches downstream never confuse labels of one cache generation with another's.
  static const void* NewLabelSource() {
    static std::atomic<uintptr_t> next{uintptr_t{1} << 56};
    return reinterpret_cast<const void*>(next.fetch_add(1, std::memory_order_relaxed));
  }

  struct CacheKey {
    const FabricMap* fabric = nullptr;
    const Topology* topology = nullptr;
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

// Keys of the elements of both sides of a matched operator, and the right-hand elements by
// key (several may share one).
class Matcher2 {
 public:
  static constexpr uint32_t kEnd = KeyTable::kNone;
  explicit Matcher2(const LabelSet& matching) : keys_(matching) {}

  // Indexes the right side; call once per evaluation before Find.
  void IndexRight(const EvalContext& ctx, const Vec& right) {
    keys_.UseStore(ctx.store);
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
    index_.IndexRight(ctx, right);
    Vec out;
    for (size_t i = 0; i < left.size(); ++i) {
      const uint32_t r = index_.Find(left, i);
      if (r == Matcher2::kEnd) continue;
      Item& item = left[i];
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
      // "or" is "right unless left", appended to left.
      index_.IndexRight(ctx, left);
      for (size_t i = 0; i < right.size(); ++i) {
        if (index_.Find(right, i) == Matcher2::kEnd) left.push_back(std::move(right[i]));
      }
      return left;
    }
    index_.IndexRight(ctx, right);
    Vec out;
    for (size_t i = 0; i < left.size(); ++i) {
      uint32_t r = index_.Find(left, i);
      Item& item = left[i];
      if (set_op_ == SetOp::kUnless) {
        if (r == Matcher2::kEnd) out.push_back(std::move(item));
        continue;
      }
      if (r == Matcher2::kEnd) continue;
      // "and": the right elements that matched are evidence too.
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

// ---- Aggregations and peers ---------------------------------------------------------------

// The groups of a vector's elements: numbered 0, 1, 2 ... in order of first appearance.
struct Groups {
  std::vector<uint32_t> group_of;  // per element
  std::vector<uint32_t> key;       // per group: its id in the node's KeyInterner
  std::vector<uint32_t> first;     // per group: its first element
};

// Groups elements by the interner's keys. `local` is the node's scratch (key id -> group),
// kept between evaluations so that it is not allocated each time.
Groups GroupElements(const EvalContext& ctx, const Vec& in, KeyInterner& keys,
                     std::vector<uint32_t>& local) {
  keys.UseStore(ctx.store);
  Groups g;
  g.group_of.resize(in.size());
  for (uint32_t i = 0; i < in.size(); ++i) {
    if (!in[i].label_source) PrefetchLabels(in, i);
    const uint32_t k = keys.Id(in[i]);
    if (k >= local.size()) local.resize(keys.size(), KeyTable::kNone);
    if (local[k] == KeyTable::kNone) {
      local[k] = static_cast<uint32_t>(g.key.size());
      g.key.push_back(k);
      g.first.push_back(i);
    }
    g.group_of[i] = local[k];
  }
  for (uint32_t k : g.key) local[k] = KeyTable::kNone;
  return g;
}

class AggregationNode final : public OneChildNode {
 public:
  AggregationNode(AggOp op, LabelSet grouping, NodePtr child)
      : OneChildNode(std::move(child)),
        op_(op),
        grouping_(std::move(grouping)),
        // No clause: one group without labels.
        keys_(grouping_.mode == LabelSet::Mode::kAll ? LabelSet{LabelSet::Mode::kOnly, {}}
                                                     : grouping_) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    auto members = std::make_shared<GroupMembers>();
    members->items = child_->Eval(ctx, nullptr);
    const Vec& in = members->items;
    absl::MutexLock lock(&mu_);
    const Groups groups = GroupElements(ctx, in, keys_, local_);
    const std::vector<uint32_t>& group_of = groups.group_of;
    const std::vector<uint32_t>& first = groups.first;
    struct Acc {
      double sum = 0, min = 0, max = 0, count = 0;
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
    }
    // Members group by group (a counting sort), for the evidence of the groups that survive.
    members->start.assign(first.size() + 1, 0);
    for (uint32_t g : group_of) ++members->start[g + 1];
    for (size_t g = 0; g < first.size(); ++g) members->start[g + 1] += members->start[g];
    members->order.resize(in.size());
    std::vector<uint32_t> fill(members->start.begin(), members->start.end() - 1);
    for (uint32_t i = 0; i < in.size(); ++i) members->order[fill[group_of[i]]++] = i;
    std::shared_ptr<const GroupMembers> shared = std::move(members);

    Vec out;
    if (!filter) out.reserve(first.size());
    for (uint32_t g = 0; g < first.size(); ++g) {
      const Acc& a = acc[g];
      double value = 0;
      switch (op_) {
        case AggOp::kSum: value = a.sum; break;
        case AggOp::kAvg: value = a.sum / a.count; break;
        case AggOp::kMin: value = a.min; break;
        case AggOp::kMax: value = a.max; break;
        case AggOp::kCount: value = a.count; break;
      }
      if (filter && !filter->Keep(value)) continue;  // the comparison above would drop it
      Item item;
      item.value = value;
      item.labels = keys_.KeyLabels(groups.key[g]);
      item.label_source = &keys_;
      item.label_index = groups.key[g];
      item.evidence.more = GroupEvidence(shared, g);
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
  mutable absl::Mutex mu_;
  mutable KeyInterner keys_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<uint32_t> local_ ABSL_GUARDED_BY(mu_);
};

// peer_median / peer_ratio: each element against the median of the others in its group.
class PeerNode final : public OneChildNode {
 public:
  PeerNode(bool ratio, LabelSet grouping, NodePtr child)
      : OneChildNode(std::move(child)),
        ratio_(ratio),
        grouping_(std::move(grouping)),
        keys_(grouping_) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    Vec in = child_->Eval(ctx, nullptr);
    absl::MutexLock lock(&mu_);
    const Groups groups = GroupElements(ctx, in, keys_, local_);
    const std::vector<uint32_t>& group_of = groups.group_of;
    const std::vector<uint32_t>& first = groups.first;
    // Each group's values.
    std::vector<std::vector<double>> values(first.size());
    for (uint32_t i = 0; i < in.size(); ++i) values[group_of[i]].push_back(in[i].value);
    // The median of a group without one copy of v depends only on v and three order statistics
    // of the group, so no sort: with s the sorted values and one copy of v removed, the j-th
    // of the others is s[j] when s[j + 1] <= v (the removed copy is further on) and s[j + 1]
    // otherwise.
    struct Stats {
      size_t others = 0;
      double s[3] = {0, 0, 0};  // s[lo], s[lo + 1], s[lo + 2]
      size_t lo = 0;
    };
    std::vector<Stats> stats(first.size());
    for (size_t g = 0; g < values.size(); ++g) {
      std::vector<double>& v = values[g];
      if (v.size() < 2) continue;  // nobody to compare with
      Stats& st = stats[g];
      st.others = v.size() - 1;
      const size_t k = st.others / 2;
      st.lo = st.others % 2 == 1 ? k : k - 1;
      std::nth_element(v.begin(), v.begin() + st.lo, v.end());
      st.s[0] = v[st.lo];
      // The next two order statistics: the two smallest after lo.
      double a = std::numeric_limits<double>::infinity(), b = a;
      for (size_t i = st.lo + 1; i < v.size(); ++i) {
        if (v[i] < a) {
          b = a;
          a = v[i];
        } else if (v[i] < b) {
          b = v[i];
        }
      }
      st.s[1] = a;
      st.s[2] = b;
    }
    std::vector<std::optional<double>> result(in.size());
    for (uint32_t i = 0; i < in.size(); ++i) {
      const Stats& st = stats[group_of[i]];
      if (st.others == 0) continue;
      const double v = in[i].value;
      // The j-th of the others, for j = lo + d.
      auto other = [&](size_t d) { return st.s[d + 1] <= v ? st.s[d] : st.s[d + 1]; };
      const double median = st.others % 2 == 1 ? other(0) : (other(0) + other(1)) / 2;
      if (!ratio_) {
        result[i] = median;
      } else if (median != 0) {
        result[i] = Arith(BinOp::kDiv, v, median);
      }
    }
    Vec out;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (!result[i] || (filter && !filter->Keep(*result[i]))) continue;
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
  mutable absl::Mutex mu_;
  mutable KeyInterner keys_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<uint32_t> local_ ABSL_GUARDED_BY(mu_);
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
