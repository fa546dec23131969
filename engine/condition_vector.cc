// Matchers, label keys, evidence and printing helpers of the condition language.

#include <algorithm>
#include <charconv>
#include <tuple>
#include <cmath>

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
}  // namespace

void EvidenceBuilder::Spill() {
  if (spilled_) return;
  spilled_ = true;
  for (size_t i = 0; i < inline_count_; ++i) AddSeries(ToRef(inline_[i]));
  inline_count_ = 0;
}

void EvidenceBuilder::AddSeries(const EvidenceRef& ref) {
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

void EvidenceBuilder::Add(const Item& item) {
  if (item.merged) {
    Spill();
    for (const EvidenceRef& r : item.merged->series) AddSeries(r);
    for (const EventEvidence& e : item.merged->events) AddEvent(e);
    return;
  }
  for (size_t i = 0; i < item.inline_count; ++i) {
    const InlineEvidence& ev = item.inline_evidence[i];
    if (!spilled_) {
      bool duplicate = false;
      for (size_t j = 0; j < inline_count_; ++j) duplicate |= SameSeriesEvidence(inline_[j], ev);
      if (duplicate) continue;
      if (inline_count_ < 2) {
        inline_[inline_count_++] = ev;
        continue;
      }
      Spill();
    }
    AddSeries(ToRef(ev));
  }
}

void EvidenceBuilder::AddEvents(std::vector<EventEvidence> events) {
  Spill();
  for (EventEvidence& e : events) AddEvent(e);
}

void EvidenceBuilder::Into(Item& item) {
  if (!spilled_) {
    item.merged.reset();
    item.inline_count = static_cast<uint8_t>(inline_count_);
    for (size_t i = 0; i < inline_count_; ++i) item.inline_evidence[i] = inline_[i];
  } else {
    if (series_evicted_) {
      std::stable_sort(merged_.series.begin(), merged_.series.end(),
                       [](const EvidenceRef& a, const EvidenceRef& b) { return a.value > b.value; });
    }
    std::stable_sort(merged_.events.begin(), merged_.events.end(),
                     [](const EventEvidence& a, const EventEvidence& b) {
                       return std::tie(a.time_unix_nano, a.seq) < std::tie(b.time_unix_nano, b.seq);
                     });
    item.inline_count = 0;
    item.merged = std::make_shared<const MergedEvidence>(std::move(merged_));
  }
  *this = EvidenceBuilder();
}

void MergeEvidenceInto(Item& into, const Item& from) {
  EvidenceBuilder b;
  b.Add(into);
  b.Add(from);
  b.Into(into);
}

VectorElement Materialise(Item&& item) {
  VectorElement e;
  e.labels = *item.labels;
  e.value = item.value;
  if (item.merged) {
    e.evidence = item.merged->series;
    e.event_evidence = item.merged->events;
  } else {
    e.evidence.reserve(item.inline_count);
    for (size_t i = 0; i < item.inline_count; ++i) {
      e.evidence.push_back(ToRef(item.inline_evidence[i]));
    }
  }
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
