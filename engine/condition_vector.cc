// Matchers, label keys, evidence and printing helpers of the condition language.

#include <algorithm>
#include <charconv>
#include <tuple>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/condition_internal.h"

namespace railwatch::cond {

// ---- Matchers -----------------------------------------------------------------------------

bool Matcher::Matches(std::string_view actual) const {
  switch (op) {
    case Op::kEq:
      return actual == value;
    case Op::kNe:
      return actual != value;
    case Op::kRe:
      return std::regex_match(actual.begin(), actual.end(), *re);
    case Op::kNotRe:
      return !std::regex_match(actual.begin(), actual.end(), *re);
    case Op::kIn:
      return std::find(values.begin(), values.end(), actual) != values.end();
    case Op::kNotIn:
      return std::find(values.begin(), values.end(), actual) == values.end();
  }
  return false;
}

void Matcher::Print(std::string& out) const {
  out += name;
  switch (op) {
    case Op::kEq:
      absl::StrAppend(&out, "=", QuoteString(value));
      return;
    case Op::kNe:
      absl::StrAppend(&out, "!=", QuoteString(value));
      return;
    case Op::kRe:
      absl::StrAppend(&out, "=~", QuoteString(value));
      return;
    case Op::kNotRe:
      absl::StrAppend(&out, "!~", QuoteString(value));
      return;
    case Op::kIn:
    case Op::kNotIn:
      out += op == Op::kIn ? " in (" : " not in (";
      for (size_t i = 0; i < values.size(); ++i) {
        if (i) out += ", ";
        out += QuoteString(values[i]);
      }
      out += ')';
      return;
  }
}

bool MatchesAll(const std::vector<Matcher>& matchers, const Labels& labels) {
  for (const Matcher& m : matchers) {
    const std::string* v = FindLabel(labels, m.name);
    if (!m.Matches(v ? std::string_view(*v) : std::string_view())) return false;
  }
  return true;
}

void Selector::Print(std::string& out) const {
  out += name;
  if (matchers.empty()) return;
  out += '{';
  for (size_t i = 0; i < matchers.size(); ++i) {
    if (i) out += ',';
    matchers[i].Print(out);
  }
  out += '}';
}

// ---- Label keys ---------------------------------------------------------------------------

bool LabelSet::Contains(std::string_view name) const {
  return std::binary_search(names.begin(), names.end(), name);
}

namespace {
// Calls fn(label) for the labels `set` selects; both lists are sorted by name.
template <typename Fn>
void ForEachSelected(const Labels& labels, const LabelSet& set, Fn&& fn) {
  if (set.mode == LabelSet::Mode::kAll) {
    for (const Label& l : labels) fn(l);
    return;
  }
  auto name = set.names.begin();
  for (const Label& l : labels) {
    while (name != set.names.end() && *name < l.name) ++name;
    const bool listed = name != set.names.end() && *name == l.name;
    if (listed == (set.mode == LabelSet::Mode::kOnly)) fn(l);
  }
}
}  // namespace

void AppendKey(const Labels& labels, const LabelSet& set, std::string& key) {
  ForEachSelected(labels, set, [&](const Label& l) {
    key += l.name;
    key += '\x1f';
    key += l.value;
    key += '\x1e';
  });
}

Labels Project(const Labels& labels, const LabelSet& set) {
  Labels out;
  ForEachSelected(labels, set, [&](const Label& l) { out.push_back(l); });
  return out;
}

namespace {
// A fast non-cryptographic hash (8 bytes a step); KeyTable compares keys on a hash match.
uint64_t HashBytes(uint64_t h, std::string_view s) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail ^ (uint64_t{s.size()} << 56)) * kMul;
  return h ^ (h >> 29);
}

// The next label at or after `it` that `set` selects.
Labels::const_iterator NextSelected(Labels::const_iterator it, Labels::const_iterator end,
                                    const LabelSet& set,
                                    std::vector<std::string>::const_iterator& name) {
  if (set.mode == LabelSet::Mode::kAll) return it;
  for (; it != end; ++it) {
    while (name != set.names.end() && *name < it->name) ++name;
    const bool listed = name != set.names.end() && *name == it->name;
    if (listed == (set.mode == LabelSet::Mode::kOnly)) return it;
  }
  return it;
}
}  // namespace

uint64_t KeyTable::Hash(const Labels& labels) const {
  uint64_t h = 0;
  ForEachSelected(labels, set_, [&](const Label& l) {
    h = HashBytes(HashBytes(h, l.name), l.value);
  });
  return h;
}

bool KeyTable::SameKey(const Labels& a, const Labels& b) const {
  auto na = set_.names.begin(), nb = set_.names.begin();
  auto ia = NextSelected(a.begin(), a.end(), set_, na);
  auto ib = NextSelected(b.begin(), b.end(), set_, nb);
  while (ia != a.end() && ib != b.end()) {
    if (*ia != *ib) return false;
    ia = NextSelected(ia + 1, a.end(), set_, na);
    ib = NextSelected(ib + 1, b.end(), set_, nb);
  }
  return ia == a.end() && ib == b.end();
}

uint32_t KeyTable::FindOrAdd(const Labels& labels, bool* added) {
  const uint64_t h = Hash(labels);
  const uint32_t id = static_cast<uint32_t>(labels_.size());
  auto [it, inserted] = first_.try_emplace(h, id);
  if (!inserted) {
    uint32_t e = it->second;
    while (true) {
      if (SameKey(*labels_[e], labels)) {
        if (added) *added = false;
        return e;
      }
      if (next_[e] == kNone) break;
      e = next_[e];
    }
    next_[e] = id;  // a different key with the same hash
  }
  labels_.push_back(&labels);
  next_.push_back(kNone);
  if (added) *added = true;
  return id;
}

uint32_t KeyTable::Find(const Labels& labels) const {
  auto it = first_.find(Hash(labels));
  if (it == first_.end()) return kNone;
  for (uint32_t e = it->second; e != kNone; e = next_[e]) {
    if (SameKey(*labels_[e], labels)) return e;
  }
  return kNone;
}

void KeyInterner::UseStore(const SeriesStore& store) {
  const uint64_t id = store.generation() >> 32;
  if (id == store_) return;
  store_ = id;
  by_source_.clear();
  last_source_ = nullptr;
  last_ids_ = nullptr;
}

uint32_t KeyInterner::Id(const Item& item) {
  uint32_t* cached = nullptr;
  if (item.label_source != nullptr) {
    if (item.label_source != last_source_) {
      // A topology() cache that started over names its labels anew: forget old sources now
      // and then rather than keep them all.
      if (by_source_.size() >= 64 && !by_source_.contains(item.label_source)) by_source_.clear();
      last_source_ = item.label_source;
      std::unique_ptr<std::vector<uint32_t>>& ids = by_source_[item.label_source];
      if (!ids) ids = std::make_unique<std::vector<uint32_t>>();
      last_ids_ = ids.get();
    }
    if (item.label_index >= last_ids_->size()) {
      last_ids_->resize(item.label_index + 1, KeyTable::kNone);
    }
    cached = &(*last_ids_)[item.label_index];
    if (*cached != KeyTable::kNone) return *cached;
  }
  const Labels& labels = *item.labels;
  uint32_t id = table_.Find(labels);
  if (id == KeyTable::kNone) {
    keys_.push_back(OwnLabels(Project(labels, set_)));
    id = table_.FindOrAdd(*keys_.back());
  }
  if (cached != nullptr) *cached = id;
  return id;
}

// ---- Evidence -----------------------------------------------------------------------------

std::shared_ptr<const Labels> BorrowLabels(const Labels* labels) {
  return std::shared_ptr<const Labels>(std::shared_ptr<const Labels>(), labels);
}

std::shared_ptr<const Labels> OwnLabels(Labels labels) {
  return std::make_shared<const Labels>(std::move(labels));
}

namespace {
bool SameSeriesEvidence(const InlineEvidence& a, const InlineEvidence& b) {
  return a.series == b.series &&
         (a.origin == b.origin || (a.origin->function == b.origin->function &&
                                   a.origin->window == b.origin->window));
}
EvidenceRef ToRef(const InlineEvidence& e) {
  return EvidenceRef{e.series, e.origin->function, e.origin->window, e.value};
}

class ConcreteSource final : public EvidenceSource {
 public:
  explicit ConcreteSource(MergedEvidence e) : e_(std::move(e)) {}
  void AddTo(EvidenceBuilder& b) const override {
    for (const EvidenceRef& r : e_.series) b.AddSeries(r);
    for (const EventEvidence& e : e_.events) b.AddEvent(e);
  }

 private:
  MergedEvidence e_;
};

class GroupSource final : public EvidenceSource {
 public:
  GroupSource(std::shared_ptr<const GroupMembers> m, uint32_t group)
      : m_(std::move(m)), group_(group) {}
  void AddTo(EvidenceBuilder& b) const override {
    for (uint32_t i = m_->start[group_]; i < m_->start[group_ + 1]; ++i) {
      b.Add(m_->items[m_->order[i]].evidence);
    }
  }

 private:
  std::shared_ptr<const GroupMembers> m_;
  uint32_t group_;
};

class PairSource final : public EvidenceSource {
 public:
  PairSource(Evidence a, Evidence b) : a_(std::move(a)), b_(std::move(b)) {}
  void AddTo(EvidenceBuilder& b) const override {
    b.Add(a_);
    b.Add(b_);
  }

 private:
  Evidence a_, b_;
};
}  // namespace

std::shared_ptr<const EvidenceSource> ConcreteEvidence(MergedEvidence evidence) {
  return std::make_shared<const ConcreteSource>(std::move(evidence));
}

std::shared_ptr<const EvidenceSource> GroupEvidence(std::shared_ptr<const GroupMembers> members,
                                                    uint32_t group) {
  return std::make_shared<const GroupSource>(std::move(members), group);
}

void EvidenceBuilder::Spill() {
  if (spilled_) return;
  spilled_ = true;
  for (size_t i = 0; i < inline_count_; ++i) AddSeries(ToRef(inline_[i]));
  inline_count_ = 0;
}

void EvidenceBuilder::AddSeries(const EvidenceRef& ref) {
  Spill();
  std::vector<EvidenceRef>& s = merged_.series;
  size_t lowest = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].series == ref.series && s[i].window == ref.window &&
        s[i].function == ref.function) {
      return;
    }
    if (s[i].value < s[lowest].value) lowest = i;
  }
  if (s.size() < kMaxSeriesEvidence) {
    s.push_back(ref);
    return;
  }
  series_evicted_ = true;
  if (ref.value > s[lowest].value) s[lowest] = ref;
}

void EvidenceBuilder::AddEvent(const EventEvidence& event) {
  std::vector<EventEvidence>& e = merged_.events;
  size_t oldest = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].seq == event.seq) return;
    if (std::tie(e[i].time_unix_nano, e[i].seq) < std::tie(e[oldest].time_unix_nano, e[oldest].seq))
      oldest = i;
  }
  if (e.size() < kMaxEventEvidence) {
    e.push_back(event);
  } else if (std::tie(event.time_unix_nano, event.seq) >
             std::tie(e[oldest].time_unix_nano, e[oldest].seq)) {
    e[oldest] = event;
  }
}

void EvidenceBuilder::Add(const Evidence& evidence) {
  for (size_t i = 0; i < evidence.inline_count; ++i) {
    const InlineEvidence& ev = evidence.inline_evidence[i];
    if (!spilled_) {
      bool duplicate = false;
      for (size_t j = 0; j < inline_count_; ++j) duplicate |= SameSeriesEvidence(inline_[j], ev);
      if (duplicate) continue;
      if (inline_count_ < 2) {
        inline_[inline_count_++] = ev;
        continue;
      }
    }
    AddSeries(ToRef(ev));
  }
  if (evidence.more) evidence.more->AddTo(*this);
}

MergedEvidence EvidenceBuilder::Take() {
  Spill();
  if (series_evicted_) {
    std::stable_sort(merged_.series.begin(), merged_.series.end(),
                     [](const EvidenceRef& a, const EvidenceRef& b) { return a.value > b.value; });
  }
  std::stable_sort(merged_.events.begin(), merged_.events.end(),
                   [](const EventEvidence& a, const EventEvidence& b) {
                     return std::tie(a.time_unix_nano, a.seq) < std::tie(b.time_unix_nano, b.seq);
                   });
  MergedEvidence out = std::move(merged_);
  *this = EvidenceBuilder();
  return out;
}

void MergeEvidenceInto(Item& into, const Item& from) {
  Evidence& a = into.evidence;
  const Evidence& b = from.evidence;
  if (!a.more && !b.more) {
    // Inline when the distinct series fit in two slots (the usual binary operator).
    InlineEvidence merged[2];
    size_t n = 0;
    bool fits = true;
    for (const Evidence* e : {static_cast<const Evidence*>(&a), &b}) {
      for (size_t i = 0; i < e->inline_count && fits; ++i) {
        bool duplicate = false;
        for (size_t j = 0; j < n; ++j) duplicate |= SameSeriesEvidence(merged[j], e->inline_evidence[i]);
        if (duplicate) continue;
        if (n == 2) {
          fits = false;
        } else {
          merged[n++] = e->inline_evidence[i];
        }
      }
    }
    if (fits) {
      a.inline_count = static_cast<uint8_t>(n);
      for (size_t i = 0; i < n; ++i) a.inline_evidence[i] = merged[i];
      return;
    }
  }
  Evidence left = std::move(a);
  a = Evidence();
  a.more = std::make_shared<const PairSource>(std::move(left), b);
}

VectorElement Materialise(Item&& item) {
  VectorElement e;
  e.labels = *item.labels;
  e.value = item.value;
  const Evidence& ev = item.evidence;
  if (!ev.more) {
    e.evidence.reserve(ev.inline_count);
    for (size_t i = 0; i < ev.inline_count; ++i) e.evidence.push_back(ToRef(ev.inline_evidence[i]));
    return e;
  }
  EvidenceBuilder b;
  b.Add(ev);
  MergedEvidence m = b.Take();
  e.evidence = std::move(m.series);
  e.event_evidence = std::move(m.events);
  return e;
}

// ---- Operators and printing ---------------------------------------------------------------

bool IsComparison(BinOp op) { return op >= BinOp::kGt; }

std::string_view BinOpText(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "+";
    case BinOp::kSub: return "-";
    case BinOp::kMul: return "*";
    case BinOp::kDiv: return "/";
    case BinOp::kGt: return ">";
    case BinOp::kGe: return ">=";
    case BinOp::kLt: return "<";
    case BinOp::kLe: return "<=";
    case BinOp::kEq: return "==";
    case BinOp::kNe: return "!=";
  }
  return "?";
}

std::optional<double> Arith(BinOp op, double a, double b) {
  double v = 0;
  switch (op) {
    case BinOp::kAdd: v = a + b; break;
    case BinOp::kSub: v = a - b; break;
    case BinOp::kMul: v = a * b; break;
    case BinOp::kDiv:
      if (b == 0) return std::nullopt;
      v = a / b;
      break;
    default:
      return Compare(op, a, b) ? 1.0 : 0.0;
  }
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

bool Compare(BinOp op, double a, double b) {
  switch (op) {
    case BinOp::kGt: return a > b;
    case BinOp::kGe: return a >= b;
    case BinOp::kLt: return a < b;
    case BinOp::kLe: return a <= b;
    case BinOp::kEq: return a == b;
    case BinOp::kNe: return a != b;
    default: return false;
  }
}

void PrintOperand(const Node& child, int min_precedence, std::string& out) {
  if (child.precedence() >= min_precedence) {
    child.Print(out);
    return;
  }
  out += '(';
  child.Print(out);
  out += ')';
}

std::string FormatNumber(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : absl::StrCat(v);
}

std::string QuoteString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

std::string_view RangeFnName(RangeFn fn) {
  switch (fn) {
    case RangeFn::kLatest: return "";
    case RangeFn::kRate: return "rate";
    case RangeFn::kIncrease: return "increase";
    case RangeFn::kDelta: return "delta";
    case RangeFn::kChanges: return "changes";
    case RangeFn::kAvg: return "avg_over_time";
    case RangeFn::kMin: return "min_over_time";
    case RangeFn::kMax: return "max_over_time";
    case RangeFn::kStale: return "stale";
  }
  return "?";
}

}  // namespace railwatch::cond
