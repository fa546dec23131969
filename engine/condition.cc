#include "engine/condition.h"

#include <cctype>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text.h"

namespace railwatch {
namespace {

// ---- Lexer -------------------------------------------------------------------------------

enum class Tok { kIdent, kNumber, kString, kDuration, kPunct, kEnd };

struct Token {
  Tok kind;
  std::string text;
  size_t offset;
};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  absl::StatusOr<std::vector<Token>> Tokenize(ConditionError& err) {
    std::vector<Token> out;
    while (true) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ >= s_.size()) break;
      const size_t start = pos_;
      const char c = s_[pos_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':') {
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                    s_[pos_] == '_' || s_[pos_] == ':'))
          ++pos_;
        out.push_back({Tok::kIdent, std::string(s_.substr(start, pos_ - start)), start});
      } else if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
        while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                    s_[pos_] == '.' || s_[pos_] == '+' || s_[pos_] == '-')) {
          // Allow exponents (1e-3) but stop at a binary minus after a plain number.
          if ((s_[pos_] == '+' || s_[pos_] == '-') &&
              !(s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))
            break;
          ++pos_;
        }
        std::string text(s_.substr(start, pos_ - start));
        double d;
        Tok kind = absl::SimpleAtod(text, &d) ? Tok::kNumber : Tok::kDuration;
        out.push_back({kind, std::move(text), start});
      } else if (c == '"') {
        std::string value;
        ++pos_;
        bool closed = false;
        while (pos_ < s_.size()) {
          char ch = s_[pos_++];
          if (ch == '\\' && pos_ < s_.size()) {
            value += s_[pos_++];
          } else if (ch == '"') {
            closed = true;
            break;
          } else {
            value += ch;
          }
        }
        if (!closed) {
          err = {start, "unterminated string"};
          return absl::InvalidArgumentError(err.message);
        }
        out.push_back({Tok::kString, std::move(value), start});
      } else {
        static constexpr std::string_view kTwo[] = {">=", "<=", "==", "!="};
        std::string_view two = s_.substr(pos_, 2);
        bool matched = false;
        for (std::string_view t : kTwo) {
          if (two == t) {
            out.push_back({Tok::kPunct, std::string(t), start});
            pos_ += 2;
            matched = true;
            break;
          }
        }
        if (!matched) {
          if (std::string_view("(){}[],<>=").find(c) == std::string_view::npos) {
            err = {start, absl::StrCat("unexpected character '", std::string(1, c), "'")};
            return absl::InvalidArgumentError(err.message);
          }
          out.push_back({Tok::kPunct, std::string(1, c), start});
          ++pos_;
        }
      }
    }
    out.push_back({Tok::kEnd, "", s_.size()});
    return out;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

// ---- AST -----------------------------------------------------------------------------------

struct Selector {
  std::string name;
  std::vector<LabelMatcher> matchers;

  std::string ToString() const {
    std::string out = name;
    if (!matchers.empty()) {
      out += '{';
      for (size_t i = 0; i < matchers.size(); ++i) {
        if (i) out += ',';
        absl::StrAppend(&out, matchers[i].name, matchers[i].negate ? "!=" : "=", "\"",
                        matchers[i].value, "\"");
      }
      out += '}';
    }
    return out;
  }
};

class SelectorNode final : public Condition {
 public:
  explicit SelectorNode(Selector sel) : sel_(std::move(sel)) {}
  std::vector<VectorElement> Evaluate(const SeriesStore& store, int64_t now) const override {
    std::vector<VectorElement> out;
    for (SeriesRef ref : store.Select(sel_.name, sel_.matchers)) {
      std::optional<Sample> s = store.Latest(ref);
      if (!s) continue;
      SeriesMeta meta = store.Meta(ref);
      out.push_back({std::move(meta.labels), s->value, {{ref, "", absl::ZeroDuration(), s->value}}});
    }
    return out;
  }
  std::string ToString() const override { return sel_.ToString(); }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    out.push_back(sel_.name);
  }

 private:
  Selector sel_;
};

class CallNode final : public Condition {
 public:
  CallNode(std::string fn, Selector sel, absl::Duration window)
      : fn_(std::move(fn)), sel_(std::move(sel)), window_(window) {}
  std::vector<VectorElement> Evaluate(const SeriesStore& store, int64_t now) const override {
    std::vector<VectorElement> out;
    const int64_t from = now - absl::ToInt64Nanoseconds(window_);
    for (SeriesRef ref : store.Select(sel_.name, sel_.matchers)) {
      std::optional<double> v;
      if (fn_ == "increase") {
        if (auto w = store.Increase(ref, from, now)) v = w->increase;
      } else {
        v = store.Rate(ref, from, now);
      }
      if (!v) continue;  // absent or too few samples: no element, never a zero
      SeriesMeta meta = store.Meta(ref);
      out.push_back({std::move(meta.labels), *v, {{ref, fn_, window_, *v}}});
    }
    return out;
  }
  std::string ToString() const override {
    return absl::StrCat(fn_, "(", sel_.ToString(), "[", HumanDuration(window_), "])");
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    out.push_back(sel_.name);
  }

 private:
  std::string fn_;
  Selector sel_;
  absl::Duration window_;
};

class CompareNode final : public Condition {
 public:
  CompareNode(std::unique_ptr<Condition> lhs, std::string op, double rhs)
      : lhs_(std::move(lhs)), op_(std::move(op)), rhs_(rhs) {}
  std::vector<VectorElement> Evaluate(const SeriesStore& store, int64_t now) const override {
    std::vector<VectorElement> out;
    for (VectorElement& e : lhs_->Evaluate(store, now)) {
      if (Holds(e.value)) out.push_back(std::move(e));
    }
    return out;
  }
  std::string ToString() const override {
    return absl::StrCat(lhs_->ToString(), " ", op_, " ", absl::StrFormat("%g", rhs_));
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    lhs_->CollectMetricNames(out);
  }

 private:
  bool Holds(double v) const {
    if (op_ == ">") return v > rhs_;
    if (op_ == ">=") return v >= rhs_;
    if (op_ == "<") return v < rhs_;
    if (op_ == "<=") return v <= rhs_;
    if (op_ == "==") return v == rhs_;
    return v != rhs_;
  }
  std::unique_ptr<Condition> lhs_;
  std::string op_;
  double rhs_;
};

class SetNode final : public Condition {
 public:
  SetNode(bool is_and, std::unique_ptr<Condition> lhs, std::unique_ptr<Condition> rhs)
      : and_(is_and), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  std::vector<VectorElement> Evaluate(const SeriesStore& store, int64_t now) const override {
    std::vector<VectorElement> left = lhs_->Evaluate(store, now);
    std::vector<VectorElement> right = rhs_->Evaluate(store, now);
    std::vector<VectorElement> out;
    if (and_) {
      // Label set -> the right elements with it, so each left element is matched once.
      absl::flat_hash_map<std::string, std::vector<const VectorElement*>> by_key;
      for (const auto& r : right) by_key[FormatLabels(r.labels)].push_back(&r);
      for (VectorElement& e : left) {
        auto it = by_key.find(FormatLabels(e.labels));
        if (it == by_key.end()) continue;
        for (const VectorElement* r : it->second) {
          e.evidence.insert(e.evidence.end(), r->evidence.begin(), r->evidence.end());
        }
        out.push_back(std::move(e));
      }
    } else {
      absl::flat_hash_set<std::string> left_keys;
      for (const auto& e : left) left_keys.insert(FormatLabels(e.labels));
      out = std::move(left);
      for (VectorElement& e : right) {
        if (!left_keys.contains(FormatLabels(e.labels))) out.push_back(std::move(e));
      }
    }
    return out;
  }
  std::string ToString() const override {
    return absl::StrCat("(", lhs_->ToString(), and_ ? " and " : " or ", rhs_->ToString(), ")");
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    lhs_->CollectMetricNames(out);
    rhs_->CollectMetricNames(out);
  }

 private:
  bool and_;
  std::unique_ptr<Condition> lhs_, rhs_;
};

// ---- Parser --------------------------------------------------------------------------------

class Parser {
 public:
  Parser(std::vector<Token> toks, ConditionError& err) : t_(std::move(toks)), err_(err) {}

  std::unique_ptr<Condition> ParseAll() {
    auto e = ParseOr();
    if (e && Peek().kind != Tok::kEnd) return Fail(Peek(), "expected \"and\", \"or\" or the end");
    return e;
  }

 private:
  const Token& Peek() const { return t_[pos_]; }
  const Token& Next() { return t_[pos_ == t_.size() - 1 ? pos_ : pos_++]; }
  bool IsPunct(std::string_view p) const {
    return Peek().kind == Tok::kPunct && Peek().text == p;
  }
  bool IsKeyword(std::string_view k) const {
    return Peek().kind == Tok::kIdent && Peek().text == k;
  }
  std::unique_ptr<Condition> Fail(const Token& at, std::string message) {
    if (!failed_) {
      std::string found = at.kind == Tok::kEnd ? "end of condition"
                                               : absl::StrCat("\"", at.text, "\"");
      err_ = {at.offset, absl::StrCat(message, ", found ", found)};
      failed_ = true;
    }
    return nullptr;
  }
  bool Expect(std::string_view p) {
    if (IsPunct(p)) {
      Next();
      return true;
    }
    Fail(Peek(), absl::StrCat("expected \"", std::string(p), "\""));
    return false;
  }

  std::unique_ptr<Condition> ParseOr() {
    auto lhs = ParseAnd();
    while (lhs && IsKeyword("or")) {
      Next();
      auto rhs = ParseAnd();
      if (!rhs) return nullptr;
      lhs = std::make_unique<SetNode>(false, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  std::unique_ptr<Condition> ParseAnd() {
    auto lhs = ParseComparison();
    while (lhs && IsKeyword("and")) {
      Next();
      auto rhs = ParseComparison();
      if (!rhs) return nullptr;
      lhs = std::make_unique<SetNode>(true, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  std::unique_ptr<Condition> ParseComparison() {
    auto lhs = ParseOperand();
    if (!lhs) return nullptr;
    static constexpr std::string_view kOps[] = {">", ">=", "<", "<=", "==", "!="};
    for (std::string_view op : kOps) {
      if (IsPunct(op)) {
        Next();
        const Token& num = Peek();
        double v;
        if (num.kind != Tok::kNumber || !absl::SimpleAtod(num.text, &v)) {
          return Fail(num, "expected a number after the comparison");
        }
        Next();
        return std::make_unique<CompareNode>(std::move(lhs), std::string(op), v);
      }
    }
    return lhs;
  }

  std::unique_ptr<Condition> ParseOperand() {
    if (IsPunct("(")) {
      Next();
      auto e = ParseOr();
      if (!e || !Expect(")")) return nullptr;
      return e;
    }
    if (Peek().kind != Tok::kIdent) return Fail(Peek(), "expected a metric name or a function");
    if ((IsKeyword("rate") || IsKeyword("increase")) && t_[pos_ + 1].kind == Tok::kPunct &&
        t_[pos_ + 1].text == "(") {
      std::string fn = Next().text;
      Next();  // (
      std::optional<Selector> sel = ParseSelector();
      if (!sel || !Expect("[")) return nullptr;
      const Token& d = Peek();
      absl::StatusOr<absl::Duration> window = ParseDuration(d.text);
      if ((d.kind != Tok::kDuration && d.kind != Tok::kNumber) || !window.ok() ||
          *window <= absl::ZeroDuration()) {
        return Fail(d, "expected a window such as 5m or 30s");
      }
      Next();
      if (!Expect("]") || !Expect(")")) return nullptr;
      return std::make_unique<CallNode>(std::move(fn), std::move(*sel), *window);
    }
    std::optional<Selector> sel = ParseSelector();
    if (!sel) return nullptr;
    return std::make_unique<SelectorNode>(std::move(*sel));
  }

  std::optional<Selector> ParseSelector() {
    if (Peek().kind != Tok::kIdent) {
      Fail(Peek(), "expected a metric name");
      return std::nullopt;
    }
    Selector sel;
    sel.name = Next().text;
    if (!IsPunct("{")) return sel;
    Next();
    while (!IsPunct("}")) {
      if (Peek().kind != Tok::kIdent) {
        Fail(Peek(), "expected a label name");
        return std::nullopt;
      }
      LabelMatcher m;
      m.name = Next().text;
      if (IsPunct("=") || IsPunct("!=")) {
        m.negate = Next().text == "!=";
      } else {
        Fail(Peek(), "expected \"=\" or \"!=\"");
        return std::nullopt;
      }
      if (Peek().kind != Tok::kString) {
        Fail(Peek(), "expected a quoted label value");
        return std::nullopt;
      }
      m.value = Next().text;
      sel.matchers.push_back(std::move(m));
      if (IsPunct(",")) {
        Next();
      } else if (!IsPunct("}")) {
        Fail(Peek(), "expected \",\" or \"}\"");
        return std::nullopt;
      }
    }
    Next();  // }
    return sel;
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  ConditionError& err_;
  bool failed_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Condition>> ParseCondition(std::string_view text,
                                                          ConditionError* error) {
  ConditionError local;
  ConditionError& err = error ? *error : local;
  absl::StatusOr<std::vector<Token>> toks = Lexer(text).Tokenize(err);
  if (!toks.ok()) return toks.status();
  Parser parser(std::move(*toks), err);
  std::unique_ptr<Condition> cond = parser.ParseAll();
  if (!cond) {
    return absl::InvalidArgumentError(absl::StrCat("at offset ", err.offset, ": ", err.message));
  }
  return cond;
}

}  // namespace railwatch
