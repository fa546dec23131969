// Matchers, label keys and printing helpers of the condition language.

#include <algorithm>
#include <atomic>
#include <charconv>
#include <tuple>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

const void* NewLabelSource() {
  static std::atomic<uintptr_t> next{uintptr_t{1} << 56};
  return reinterpret_cast<const void*>(next.fetch_add(1, std::memory_order_relaxed));
}

void KeyTable::Clear() {
  first_.clear();
  labels_.clear();
  next_.clear();
}

void KeyInterner::Prepare(const SeriesStore& store, size_t elements) {
  const uint64_t id = store.generation() >> 32;
  if (id != store_) {
    store_ = id;
    by_source_.clear();
    last_source_ = nullptr;
    last_ids_ = nullptr;
  }
  if (keys_.size() > 4 * elements + 4096) {
    table_.Clear();
    keys_.clear();
    by_source_.clear();
    last_source_ = nullptr;
    last_ids_ = nullptr;
    source_ = NewLabelSource();
  }
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

void PrintLabelSet(std::string_view keyword, const LabelSet& set, std::string& out) {
  absl::StrAppend(&out, AsAbsl(keyword), "(", absl::StrJoin(set.names, ", "), ")");
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

}  // namespace railwatch::cond
