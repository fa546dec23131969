// The leaves of a condition: numbers, selectors (alone or under a range function) and
// event counts.

#include <algorithm>
#include <cctype>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/text.h"
#include "engine/condition_internal.h"

namespace railwatch::cond {
namespace {

// Batch reads go to the store in chunks so that one evaluation does not hold its lock for
// long against ingest.
constexpr size_t kChunk = 4096;

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
  RangeNode(const RangeFunction& fn, Selector sel, absl::Duration window, absl::Duration stretch)
      : fn_(fn),
        sel_(std::move(sel)),
        window_(window),
        stretch_(stretch),
        origin_(fn.input == RangeInput::kLatest ? Origin{}
                : fn.input == RangeInput::kStretches
                    ? Origin{absl::StrCat(AsAbsl(fn.name), " of ", HumanDuration(stretch),
                                          " stretches"),
                             window}
                    : Origin{std::string(fn.name), window}),
        selection_(sel_) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    absl::MutexLock lock(&mu_);
    selection_.Refresh(ctx.store);
    const int64_t from = ctx.now - absl::ToInt64Nanoseconds(window_);
    Vec out;
    const std::vector<SeriesRef>& refs = selection_.refs;
    if (!filter) out.reserve(refs.size());
    // A range function over a series that began inside the window, with too few samples
    // there for a value: the window does not hold its data yet, so the element is unknown
    // rather than absent (a restarted daemon's first seconds: `unless` must not take a
    // relay's pauses for a source's because the relay's own window is still empty).
    const bool windowed = fn_.windowed();
    for (size_t start = 0; start < refs.size(); start += kChunk) {
      const size_t n = std::min(kChunk, refs.size() - start);
      Compute(ctx, std::span(refs.data() + start, n), from);
      if (windowed) FindYoung(ctx, std::span(refs.data() + start, n), from);
      size_t next_missing = 0;
      for (size_t i = 0; i < n; ++i) {
        if (!values_[i]) {  // absent or too few samples: no element, never a zero
          if (windowed && young_[next_missing++]) {
            Item item = SeriesItem(selection_.labels[start + i], 0, refs[start + i], &origin_,
                                   &selection_, static_cast<uint32_t>(start + i));
            item.unknown = true;
            out.push_back(std::move(item));
          }
          continue;
        }
        const double v = *values_[i];
        if (filter && !filter->Keep(v)) continue;
        out.push_back(SeriesItem(selection_.labels[start + i], v, refs[start + i], &origin_,
                                 &selection_, static_cast<uint32_t>(start + i)));
      }
    }
    return out;
  }
  void Print(std::string& out) const override {
    if (fn_.input == RangeInput::kLatest) {
      sel_.Print(out);
      return;
    }
    absl::StrAppend(&out, AsAbsl(fn_.name), "(");
    sel_.Print(out);
    absl::StrAppend(&out, "[", HumanDuration(window_), "]");
    if (fn_.input == RangeInput::kStretches) absl::StrAppend(&out, ", ", HumanDuration(stretch_));
    out += ")";
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    out.push_back(sel_.name);
  }
  void CollectWindows(std::vector<std::pair<std::string, absl::Duration>>& out) const override {
    if (fn_.windowed()) out.emplace_back(sel_.name, window_);
  }

 private:
  void Compute(const EvalContext& ctx, std::span<const SeriesRef> refs, int64_t from) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const SeriesStore& store = ctx.store;
    values_.resize(refs.size());
    switch (fn_.input) {
      case RangeInput::kCounter:
        store.IncreaseMany(refs, from, ctx.now, windows_);
        for (size_t i = 0; i < refs.size(); ++i) {
          values_[i] = windows_[i] ? fn_.of_counter(*windows_[i]) : std::nullopt;
        }
        return;
      case RangeInput::kSamples: {
        const size_t min_samples = std::max<size_t>(1, fn_.min_samples);
        store.ForEachWindow(refs, from, ctx.now, [&](size_t i, std::span<const Sample> w) {
          values_[i] = w.size() >= min_samples ? std::optional<double>(fn_.of_samples(w))
                                               : std::nullopt;
        });
        return;
      }
      case RangeInput::kStretches: {
        const int64_t length = absl::ToInt64Nanoseconds(stretch_);
        const Stretches stretches{ctx.now, length,
                                  static_cast<size_t>(absl::ToInt64Nanoseconds(window_) / length)};
        store.ForEachWindow(refs, from, ctx.now, [&](size_t i, std::span<const Sample> w) {
          values_[i] = fn_.of_stretches(w, stretches, scratch_);
        });
        return;
      }
      case RangeInput::kLatest: {
        // The newest sample, when it is not older than the lookback (window_).
        store.LatestMany(refs, latest_);
        for (size_t i = 0; i < refs.size(); ++i) {
          values_[i].reset();
          if (latest_[i] && latest_[i]->time_unix_nano >= from) values_[i] = latest_[i]->value;
        }
        return;
      }
      case RangeInput::kStale: {
        // One element per series whose newest sample is older than the window; the value is
        // its age in seconds.
        store.LatestMany(refs, latest_);
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

  // young_[k]: whether the k-th series without a value (in refs order) began after `from`.
  void FindYoung(const EvalContext& ctx, std::span<const SeriesRef> refs, int64_t from) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    missing_.clear();
    for (size_t i = 0; i < refs.size(); ++i) {
      if (!values_[i]) missing_.push_back(refs[i]);
    }
    young_.clear();
    if (!missing_.empty()) ctx.store.BeganAfterMany(missing_, from, young_);
  }

  const RangeFunction& fn_;
  const Selector sel_;
  const absl::Duration window_;
  const absl::Duration stretch_;  // kStretches: the length of one stretch
  const Origin origin_;
  mutable absl::Mutex mu_;
  mutable Selection selection_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::optional<double>> values_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::optional<CounterWindow>> windows_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<std::optional<Sample>> latest_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<SeriesRef> missing_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<bool> young_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<double> scratch_ ABSL_GUARDED_BY(mu_);
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
}  // namespace

NodePtr MakeNumber(double v) { return std::make_unique<NumberNode>(v); }
NodePtr MakeSelector(Selector sel) {
  return std::make_unique<RangeNode>(LatestSample(), std::move(sel), kLookback,
                                     absl::ZeroDuration());
}
NodePtr MakeRange(const RangeFunction& fn, Selector sel, absl::Duration window,
                  absl::Duration stretch) {
  return std::make_unique<RangeNode>(fn, std::move(sel), window, stretch);
}
NodePtr MakeEventCount(std::vector<Matcher> matchers, absl::Duration window) {
  return std::make_unique<EventCountNode>(std::move(matchers), window);
}
}  // namespace railwatch::cond
