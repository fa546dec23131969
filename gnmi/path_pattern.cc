#include "gnmi/path_pattern.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace railwatch {
namespace {

bool IsLabelStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
bool IsLabelChar(char c) { return absl::ascii_isalnum(c) || c == '_'; }

// Reads the pattern left to right; the first error stops it (one pattern is one scalar of
// the profile, so one error per pattern is what its author needs).
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  bool failed() const { return !error_.message.empty(); }
  const GnmiPathPattern::Error& error() const { return error_; }

  void Fail(size_t at, std::string message) {
    if (!failed()) error_ = {at, std::move(message)};
  }
  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return s_[pos_]; }
  size_t pos() const { return pos_; }
  void Advance() { ++pos_; }

  // Text up to (not including) one of `stops` at bracket depth 0. `in_key`: inside [..],
  // where '/' is an ordinary character and only ']' ends the text.
  template <typename Text, typename Piece>
  Text ReadText(bool in_key, absl::flat_hash_set<std::string>& captures) {
    Text t;
    const size_t start = pos_;
    std::string literal;
    auto flush = [&] {
      if (!literal.empty()) t.pieces.push_back(Piece{false, false, std::move(literal), 0});
      literal.clear();
    };
    while (!AtEnd() && !failed()) {
      char c = Peek();
      if (in_key ? c == ']' : (c == '/' || c == '[')) break;
      if (c == '\\') {
        Advance();
        if (AtEnd()) {
          Fail(pos_ - 1, "'\\' at the end of the pattern escapes nothing");
          break;
        }
        literal.push_back(Peek());
        Advance();
        continue;
      }
      if (c == ']' || (!in_key && c == '=')) {
        Fail(pos_, absl::StrCat("unexpected '", std::string(1, c), "'"));
        break;
      }
      if (c == '}') {
        Fail(pos_, "'}' without '{' (write \\} for a literal brace)");
        break;
      }
      if (c != '{') {
        literal.push_back(c);
        Advance();
        continue;
      }
      flush();
      const size_t open = pos_;
      Advance();
      std::string name;
      while (!AtEnd() && IsLabelChar(Peek())) {
        name.push_back(Peek());
        Advance();
      }
      bool numeric = false;
      int64_t offset = 0;
      if (!AtEnd() && Peek() == ':') {
        Advance();
        std::string type;
        while (!AtEnd() && absl::ascii_isalpha(Peek())) {
          type.push_back(Peek());
          Advance();
        }
        if (type != "num") {
          Fail(open, absl::StrCat("unknown capture type \"", type, "\" (only \":num\")"));
          break;
        }
        numeric = true;
        if (!AtEnd() && (Peek() == '+' || Peek() == '-')) {
          const bool minus = Peek() == '-';
          Advance();
          std::string digits;
          while (!AtEnd() && absl::ascii_isdigit(Peek()) && digits.size() < 10) {
            digits.push_back(Peek());
            Advance();
          }
          if (digits.empty() || !absl::SimpleAtoi(digits, &offset)) {
            Fail(open, "\":num\" takes an offset of digits: {lane:num+1}");
            break;
          }
          if (minus) offset = -offset;
        }
      }
      if (AtEnd() || Peek() != '}') {
        Fail(open, "'{' not closed by '}' after a label name");
        break;
      }
      Advance();
      if (name.empty() || !IsLabelStart(name[0])) {
        Fail(open, "a capture needs a label name: {interface}, {queue:num}, {_}");
        break;
      }
      if (!t.pieces.empty() && t.pieces.back().capture) {
        Fail(open, "two captures side by side cannot be told apart; put text between them");
        break;
      }
      if (name != "_" && !captures.insert(name).second) {
        Fail(open, absl::StrCat("label \"", name, "\" is captured twice"));
        break;
      }
      t.pieces.push_back(Piece{true, numeric, std::move(name), offset});
    }
    flush();
    if (failed()) return t;
    std::string_view raw = s_.substr(start, pos_ - start);
    if (raw == "*") {
      t.any = true;
      t.pieces.clear();
    }
    return t;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  GnmiPathPattern::Error error_;
};

}  // namespace

absl::StatusOr<GnmiPathPattern> GnmiPathPattern::Parse(std::string_view text, Error* error) {
  GnmiPathPattern p;
  p.text_ = std::string(text);
  Parser in(text);
  absl::flat_hash_set<std::string> captures;
  if (!in.AtEnd() && in.Peek() == '/') in.Advance();
  if (in.AtEnd()) in.Fail(0, "empty path");
  while (!in.AtEnd() && !in.failed()) {
    const size_t elem_start = in.pos();
    Elem e;
    e.name = in.ReadText<Text, Piece>(false, captures);
    if (in.failed()) break;
    const std::string_view raw = text.substr(elem_start, in.pos() - elem_start);
    if (raw.empty()) {
      in.Fail(elem_start, "empty element (\"//\" or a trailing \"/\")");
      break;
    }
    if (raw == "*") e.kind = Elem::Kind::kAnyOne;
    if (raw == "**") e.kind = Elem::Kind::kAnyMany;
    while (!in.AtEnd() && in.Peek() == '[' && !in.failed()) {
      const size_t open = in.pos();
      if (e.kind != Elem::Kind::kNamed) {
        in.Fail(open, "a wildcard element has no keys");
        break;
      }
      in.Advance();
      Key k;
      const size_t name_start = in.pos();
      while (!in.AtEnd() && in.Peek() != '=' && in.Peek() != ']') {
        k.name.push_back(in.Peek());
        in.Advance();
      }
      if (in.AtEnd() || in.Peek() != '=') {
        in.Fail(open, "a key is written [name=value]");
        break;
      }
      if (k.name.empty()) {
        in.Fail(name_start, "empty key name");
        break;
      }
      k.any_name = k.name == "*";
      in.Advance();
      k.value = in.ReadText<Text, Piece>(true, captures);
      if (in.failed()) break;
      if (in.AtEnd()) {
        in.Fail(open, "'[' not closed by ']'");
        break;
      }
      in.Advance();  // ']'
      e.keys.push_back(std::move(k));
    }
    if (in.failed()) break;
    std::sort(e.keys.begin(), e.keys.end(),
              [](const Key& a, const Key& b) { return a.name < b.name; });
    for (size_t i = 0; i < e.keys.size(); ++i) {
      if (e.keys[i].any_name && e.keys.size() > 1) {
        in.Fail(elem_start,
                "[*=...] stands for the element's only key; it cannot sit beside "
                "other keys");
      }
      if (i > 0 && e.keys[i].name == e.keys[i - 1].name) {
        in.Fail(elem_start, absl::StrCat("key \"", e.keys[i].name, "\" is given twice"));
      }
    }
    if (in.failed()) break;
    p.elems_.push_back(std::move(e));
    if (!in.AtEnd()) {
      if (in.Peek() != '/') {
        in.Fail(in.pos(), "expected '/' or '[' after an element");
        break;
      }
      in.Advance();
      if (in.AtEnd()) in.Fail(in.pos() - 1, "empty element (\"//\" or a trailing \"/\")");
    }
  }
  if (in.failed()) {
    if (error != nullptr) *error = in.error();
    return absl::InvalidArgumentError(
        absl::StrCat("column ", in.error().offset + 1, ": ", in.error().message));
  }
  for (const Elem& e : p.elems_) {
    auto add = [&p](const Text& t) {
      for (const Piece& piece : t.pieces) {
        if (piece.capture && piece.text != "_") p.capture_names_.push_back(piece.text);
      }
    };
    add(e.name);
    for (const Key& k : e.keys) add(k.value);
  }
  return p;
}

bool GnmiPathPattern::has_captures() const {
  for (const Elem& e : elems_) {
    for (const Piece& piece : e.name.pieces) {
      if (piece.capture) return true;
    }
    for (const Key& k : e.keys) {
      for (const Piece& piece : k.value.pieces) {
        if (piece.capture) return true;
      }
    }
  }
  return false;
}

bool GnmiPathPattern::has_multi_wildcard() const {
  return std::any_of(elems_.begin(), elems_.end(),
                     [](const Elem& e) { return e.kind == Elem::Kind::kAnyMany; });
}

bool GnmiPathPattern::MatchText(const std::vector<Piece>& pieces, size_t piece, std::string_view s,
                                Labels& labels) {
  if (piece == pieces.size()) return s.empty();
  const Piece& p = pieces[piece];
  if (!p.capture) {
    if (!s.starts_with(p.text)) return false;
    return MatchText(pieces, piece + 1, s.substr(p.text.size()), labels);
  }
  const bool last = piece + 1 == pieces.size();
  for (size_t len = last ? s.size() : 1; len <= s.size(); ++len) {
    if (len == 0) break;
    if (p.numeric && !absl::ascii_isdigit(s[len - 1])) break;
    if (p.numeric && last &&
        !std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); })) {
      break;
    }
    const size_t mark = labels.size();
    if (p.text != "_") {
      std::string value(s.substr(0, len));
      if (p.offset != 0) {
        int64_t n = 0;
        if (!absl::SimpleAtoi(value, &n)) break;  // more digits than a number holds
        value = absl::StrCat(n + p.offset);
      }
      labels.push_back({p.text, std::move(value)});
    }
    if (MatchText(pieces, piece + 1, s.substr(len), labels)) return true;
    labels.resize(mark);
  }
  return false;
}

bool GnmiPathPattern::MatchTextAll(const Text& t, std::string_view s, Labels& labels) {
  if (t.any) return true;
  return MatchText(t.pieces, 0, s, labels);
}

bool GnmiPathPattern::MatchElem(const Elem& p, const GnmiPathElem& e, Labels& labels) const {
  if (p.kind == Elem::Kind::kAnyOne) return true;
  if (p.keys.size() != e.keys.size()) return false;
  const size_t mark = labels.size();
  if (!MatchTextAll(p.name, e.name, labels)) return false;
  for (const Key& k : p.keys) {
    const std::string* value = nullptr;
    if (k.any_name) {
      value = &e.keys.front().second;
    } else {
      for (const auto& [name, v] : e.keys) {
        if (name == k.name) value = &v;
      }
    }
    if (value == nullptr) {
      labels.resize(mark);
      return false;
    }
    if (MatchTextAll(k.value, *value, labels)) continue;
    // An identityref key as JSON_IETF writes it: "openconfig-alarm-types:CRITICAL".
    const std::string_view bare = StripGnmiModulePrefix(*value);
    if (bare.size() == value->size() || !MatchTextAll(k.value, bare, labels)) {
      labels.resize(mark);
      return false;
    }
  }
  return true;
}

bool GnmiPathPattern::MatchFrom(size_t pi, const std::vector<GnmiPathElem>& elems, size_t ei,
                                Labels& labels) const {
  if (pi == elems_.size()) return ei == elems.size();
  const Elem& p = elems_[pi];
  if (p.kind == Elem::Kind::kAnyMany) {
    for (size_t skip = 0; ei + skip <= elems.size(); ++skip) {
      if (MatchFrom(pi + 1, elems, ei + skip, labels)) return true;
    }
    return false;
  }
  if (ei == elems.size()) return false;
  const size_t mark = labels.size();
  if (!MatchElem(p, elems[ei], labels)) return false;
  if (MatchFrom(pi + 1, elems, ei + 1, labels)) return true;
  labels.resize(mark);
  return false;
}

bool GnmiPathPattern::Match(const std::vector<GnmiPathElem>& elems, Labels& labels) const {
  const size_t mark = labels.size();
  if (MatchFrom(0, elems, 0, labels)) return true;
  labels.resize(mark);
  return false;
}

std::string GnmiPathPattern::TextToString(const Text& t) {
  if (t.any) return "*";
  std::string out;
  for (const Piece& p : t.pieces) out += p.text;
  return out;
}

::gnmi::Path GnmiPathPattern::ToGnmiPath() const {
  ::gnmi::Path path;
  for (const Elem& e : elems_) {
    ::gnmi::PathElem* pe = path.add_elem();
    pe->set_name(e.kind == Elem::Kind::kAnyOne ? "*" : TextToString(e.name));
    for (const Key& k : e.keys) (*pe->mutable_key())[k.name] = TextToString(k.value);
  }
  return path;
}

}  // namespace railwatch
