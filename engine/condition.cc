// The condition language's parser (grammar in engine/condition.h and docs/PLAYBOOKS.md).
// Tokens come from condition_lexer.cc; the nodes it builds evaluate in condition_leaves.cc
// (selectors, range functions, events), condition_eval.cc (functions and operators) and
// condition_groups.cc (aggregations, peers).

#include "engine/condition.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "engine/condition_internal.h"
#include "engine/condition_lexer.h"

namespace railwatch {
namespace {

using cond::AggOp;
using cond::BinOp;
using cond::LabelSet;
using cond::Matcher;
using cond::NodePtr;
using cond::RangeFunction;
using cond::Selector;
using cond::SetOp;
using cond::Tok;
using cond::Token;
using cond::FindAgg;
using cond::FindRangeFunction;
using cond::IsOperatorKeyword;
using cond::IsOtherFunction;
using cond::IsReserved;
using cond::SuggestFunction;
using cond::Tokenize;
using cond::UnaryFn;

// ---- Parser --------------------------------------------------------------------------------

class Parser {
 public:
  Parser(std::vector<Token> tokens, const ParseEnv& env, std::vector<std::string> macro_stack,
         ConditionError& err)
      : t_(std::move(tokens)), env_(env), macro_stack_(std::move(macro_stack)), err_(err) {}

  // A whole text that is only a selector: `{` matchers `}` (at least one), or a metric name
  // (not a function or keyword) with optional matchers. nullopt otherwise; failed() tells a
  // malformed selector from a text that is not one.
  std::optional<Selector> ParsePlainSelector() {
    std::optional<Selector> sel;
    if (IsPunct("{")) {
      const Token& open = Peek();
      sel.emplace();
      if (!ParseMatcherList(sel->matchers)) return std::nullopt;
      if (sel->matchers.empty()) {
        Error(open.offset, "a selector without a metric name needs a label matcher, as in "
                           "{host=\"gpu-node-001\"}");
        return std::nullopt;
      }
    } else if (Peek().kind == Tok::kIdent && !IsPunct("(", 1) && !IsReserved(Peek().text)) {
      sel = ParseSelector();
      if (!sel) return std::nullopt;
    } else {
      return std::nullopt;
    }
    if (Peek().kind != Tok::kEnd) {
      if (sel->name.empty()) Expected("the end of the selector");
      return std::nullopt;
    }
    return sel;
  }
  bool failed() const { return failed_; }

  NodePtr ParseAll() {
    NodePtr e = ParseOr();
    if (!e) return nullptr;
    if (Peek().kind != Tok::kEnd) {
      if (IsCmpOp()) return Error(Peek().offset, "comparisons do not chain; join them with 'and'");
      return Expected("an operator or the end of the condition");
    }
    return e;
  }

 private:
  const Token& Peek(size_t ahead = 0) const { return t_[std::min(pos_ + ahead, t_.size() - 1)]; }
  const Token& Next() { return t_[pos_ == t_.size() - 1 ? pos_ : pos_++]; }
  bool IsPunct(std::string_view p, size_t ahead = 0) const {
    return Peek(ahead).kind == Tok::kPunct && Peek(ahead).text == p;
  }
  bool IsKeyword(std::string_view k) const {
    return Peek().kind == Tok::kIdent && Peek().text == k;
  }
  bool IsCmpOp() const {
    static constexpr std::string_view kOps[] = {">", ">=", "<", "<=", "==", "!="};
    return Peek().kind == Tok::kPunct &&
           std::find(std::begin(kOps), std::end(kOps), Peek().text) != std::end(kOps);
  }

  std::nullptr_t Error(size_t offset, std::string message, std::string code = {}) {
    if (!failed_) {
      err_ = {offset, std::move(message), std::move(code)};
      failed_ = true;
    }
    return nullptr;
  }
  // A metric the environment's vocabulary does not have (when it has one).
  bool CheckMetricName(const Token& name) {
    if (env_.metric_names.empty() ||
        std::binary_search(env_.metric_names.begin(), env_.metric_names.end(),
                           std::string_view(name.text))) {
      return true;
    }
    const std::string near = cond::SuggestName(name.text, env_.metric_names);
    Error(name.offset,
          absl::StrCat("no agent sends a series named '", name.text, "'",
                       near.empty() ? "" : absl::StrCat(" (did you mean '", near, "'?)"),
                       "; the series are listed by `railwatch metrics` and in docs/METRICS.md"),
          "unknown-metric");
    return false;
  }
  // "expected X, found Y" at the next token.
  std::nullptr_t Expected(std::string_view what) {
    const Token& at = Peek();
    std::string found = at.kind == Tok::kEnd      ? "the end of the condition"
                        : at.kind == Tok::kString ? absl::StrCat("string \"", at.text, "\"")
                                                  : absl::StrCat("'", at.text, "'");
    return Error(at.offset, absl::StrCat("expected ", AsAbsl(what), ", found ", found));
  }
  bool Expect(std::string_view p) {
    if (IsPunct(p)) {
      Next();
      return true;
    }
    Expected(absl::StrCat("'", AsAbsl(p), "'"));
    return false;
  }
  // The ')' that closes what `open` opened ("sum(" at its offset).
  bool ExpectClose(const Token& open, std::string_view what) {
    if (IsPunct(")")) {
      Next();
      return true;
    }
    Expected(absl::StrCat("')' to close '", AsAbsl(what), "' opened at offset ", open.offset));
    return false;
  }

  // ---- Operators, lowest precedence first ----

  std::optional<LabelSet> ParseMatchingOpt() {
    if (!IsKeyword("on") && !IsKeyword("ignoring")) return LabelSet{};
    const bool on = Next().text == "on";
    std::optional<std::vector<std::string>> names = ParseLabelList();
    if (!names) return std::nullopt;
    return LabelSet{on ? LabelSet::Mode::kOnly : LabelSet::Mode::kExcept, std::move(*names)};
  }

  // Both operands of a set operator or a matched operator must be vectors.
  bool CheckVectors(const NodePtr& lhs, const NodePtr& rhs, const Token& op,
                    std::string_view what) {
    if (lhs->constant() || rhs->constant()) {
      Error(op.offset, absl::StrCat(AsAbsl(what), " needs vectors on both sides, not a number"));
      return false;
    }
    return true;
  }

  NodePtr ParseOr() {
    NodePtr lhs = ParseAnd();
    while (lhs && IsKeyword("or")) {
      const Token op = Next();
      std::optional<LabelSet> matching = ParseMatchingOpt();
      if (!matching) return nullptr;
      NodePtr rhs = ParseAnd();
      if (!rhs || !CheckVectors(lhs, rhs, op, "'or'")) return nullptr;
      lhs = cond::MakeSetOp(SetOp::kOr, std::move(*matching), std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  NodePtr ParseAnd() {
    NodePtr lhs = ParseCmp();
    while (lhs && (IsKeyword("and") || IsKeyword("unless"))) {
      const Token op = Next();
      std::optional<LabelSet> matching = ParseMatchingOpt();
      if (!matching) return nullptr;
      NodePtr rhs = ParseCmp();
      if (!rhs || !CheckVectors(lhs, rhs, op, absl::StrCat("'", op.text, "'"))) return nullptr;
      lhs = cond::MakeSetOp(op.text == "and" ? SetOp::kAnd : SetOp::kUnless,
                            std::move(*matching), std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  NodePtr ParseCmp() {
    NodePtr lhs = ParseAdd();
    if (!lhs || !IsCmpOp()) return lhs;
    const Token op = Next();
    bool return_bool = false;
    if (IsKeyword("bool")) {
      Next();
      return_bool = true;
    }
    return ParseBinaryRest(op, ToBinOp(op.text), return_bool, std::move(lhs),
                           [this] { return ParseAdd(); });
  }

  NodePtr ParseAdd() {
    NodePtr lhs = ParseMul();
    while (lhs && (IsPunct("+") || IsPunct("-"))) {
      const Token op = Next();
      lhs = ParseBinaryRest(op, ToBinOp(op.text), false, std::move(lhs),
                            [this] { return ParseMul(); });
    }
    return lhs;
  }

  NodePtr ParseMul() {
    NodePtr lhs = ParseUnary();
    while (lhs && (IsPunct("*") || IsPunct("/"))) {
      const Token op = Next();
      lhs = ParseBinaryRest(op, ToBinOp(op.text), false, std::move(lhs),
                            [this] { return ParseUnary(); });
    }
    return lhs;
  }

  static BinOp ToBinOp(std::string_view op) {
    if (op == "+") return BinOp::kAdd;
    if (op == "-") return BinOp::kSub;
    if (op == "*") return BinOp::kMul;
    if (op == "/") return BinOp::kDiv;
    if (op == ">") return BinOp::kGt;
    if (op == ">=") return BinOp::kGe;
    if (op == "<") return BinOp::kLt;
    if (op == "<=") return BinOp::kLe;
    if (op == "==") return BinOp::kEq;
    return BinOp::kNe;
  }

  // After `lhs op [bool]`: [matching] rhs; two numbers fold into one.
  template <typename ParseRhs>
  NodePtr ParseBinaryRest(const Token& op, BinOp bin, bool return_bool, NodePtr lhs,
                          ParseRhs parse_rhs) {
    const Token& matching_at = Peek();
    std::optional<LabelSet> matching = ParseMatchingOpt();
    if (!matching) return nullptr;
    NodePtr rhs = parse_rhs();
    if (!rhs) return nullptr;
    const std::optional<double> a = lhs->constant(), b = rhs->constant();
    if (matching->mode != LabelSet::Mode::kAll && (a || b)) {
      return Error(matching_at.offset,
                   absl::StrCat("'", matching_at.text, "' needs vectors on both sides"));
    }
    if (a && b) {
      if (cond::IsComparison(bin) && !return_bool) {
        return Error(op.offset, "comparing two numbers needs 'bool' (the result is a number)");
      }
      std::optional<double> v = cond::Arith(bin, *a, *b);
      if (!v) return Error(op.offset, "this arithmetic on numbers has no finite result");
      return cond::MakeNumber(*v);
    }
    return cond::MakeBinary(bin, return_bool, std::move(*matching), std::move(lhs),
                            std::move(rhs));
  }

  NodePtr ParseUnary() {
    if (!IsPunct("-")) return ParsePrimary();
    Next();
    NodePtr child = ParsePrimary();
    if (!child) return nullptr;
    if (std::optional<double> v = child->constant()) return cond::MakeNumber(-*v);
    return cond::MakeUnary(UnaryFn::kNeg, std::move(child));
  }

  // ---- Operands ----

  NodePtr ParsePrimary() {
    const Token& tok = Peek();
    switch (tok.kind) {
      case Tok::kNumber: {
        double v = 0;
        if (!absl::SimpleAtod(tok.text, &v) || !std::isfinite(v)) {
          return Error(tok.offset, absl::StrCat("number '", tok.text, "' is out of range"));
        }
        Next();
        return cond::MakeNumber(v);
      }
      case Tok::kDuration:
        return Error(tok.offset,
                     absl::StrCat("expected a number, found duration '", tok.text,
                                  "' (durations go in [ ] after a selector, as in rate(x[",
                                  tok.text, "]))"));
      case Tok::kPunct:
        if (tok.text == "(") {
          const Token open = Next();
          NodePtr e = ParseOr();
          if (!e || !ExpectClose(open, "(")) return nullptr;
          return e;
        }
        break;
      case Tok::kIdent:
        return ParseIdentOperand();
      default:
        break;
    }
    return Expected("a selector, a number, a function or '('");
  }

  NodePtr ParseIdentOperand() {
    const Token& tok = Peek();
    const std::string& name = tok.text;
    if (IsOperatorKeyword(name)) {
      return Expected("a selector, a number, a function or '('");
    }
    const bool call = IsPunct("(", 1);
    if (std::optional<AggOp> agg = FindAgg(name);
        agg && (call || (Peek(1).kind == Tok::kIdent &&
                         (Peek(1).text == "by" || Peek(1).text == "without")))) {
      return ParseAggregation(*agg);
    }
    if (call) return ParseCall();
    if (auto it = env_.macros.find(name); it != env_.macros.end()) {
      Next();
      return ExpandMacro(tok, it->first, it->second);
    }
    if (FindRangeFunction(name) || IsOtherFunction(name)) {
      return Error(tok.offset, absl::StrCat("'", name, "' is a function: ", name, "(...)"));
    }
    if (name == "events") {
      return Error(tok.offset,
                   "events can only be counted: count_over_time(events{kind=\"...\"}[5m])");
    }
    if (!CheckMetricName(tok)) return nullptr;
    std::optional<Selector> sel = ParseSelector();
    if (!sel) return nullptr;
    if (IsPunct("[")) {
      return Error(Peek().offset, absl::StrCat("a range needs a range function around it, as in "
                                               "rate(", sel->name, "[5m])"));
    }
    return cond::MakeSelector(std::move(*sel));
  }

  NodePtr ExpandMacro(const Token& use, const std::string& name, const std::string& text) {
    if (auto it = std::find(macro_stack_.begin(), macro_stack_.end(), name);
        it != macro_stack_.end()) {
      std::vector<std::string> cycle(it, macro_stack_.end());
      cycle.push_back(name);
      return Error(use.offset, absl::StrCat("macro cycle ", absl::StrJoin(cycle, " -> ")));
    }
    ConditionError inner;
    std::vector<Token> tokens;
    NodePtr node;
    std::vector<std::string> stack = macro_stack_;
    stack.push_back(name);
    if (Tokenize(text, tokens, inner)) {
      node = Parser(std::move(tokens), env_, std::move(stack), inner).ParseAll();
    }
    if (!node) {
      // Nested macros name each level; a cycle's message is already complete.
      if (inner.message.starts_with("macro cycle") || inner.message.starts_with("in macro")) {
        return Error(use.offset, inner.message, inner.code);
      }
      return Error(use.offset,
                   absl::StrCat("in macro '", name, "' (at offset ", inner.offset,
                                " of its text): ", inner.message),
                   inner.code);
    }
    return node;
  }

  NodePtr ParseAggregation(AggOp op) {
    const Token fn = Next();
    const std::string what = absl::StrCat(fn.text, "(");
    std::optional<LabelSet> grouping;
    if (IsKeyword("by") || IsKeyword("without")) {
      grouping = ParseGrouping();
      if (!grouping) return nullptr;
    }
    const Token open = Peek();
    if (!Expect("(")) return nullptr;
    NodePtr child = ParseOr();
    if (!child || !ExpectClose(fn, what)) return nullptr;
    if (IsKeyword("by") || IsKeyword("without")) {
      if (grouping) return Error(Peek().offset, absl::StrCat(fn.text, " has two groupings"));
      grouping = ParseGrouping();
      if (!grouping) return nullptr;
    }
    if (child->constant()) {
      return Error(open.offset, absl::StrCat(fn.text, "() needs a vector, not a number"));
    }
    return cond::MakeAggregation(op, grouping.value_or(LabelSet{}), std::move(child));
  }

  NodePtr ParseCall() {
    const Token fn = Next();
    const std::string what = absl::StrCat(fn.text, "(");
    Next();  // (
    if (const RangeFunction* range = FindRangeFunction(fn.text)) {
      if (Peek().kind != Tok::kIdent || IsPunct("(", 1)) {
        return Expected(absl::StrCat("a series selector with a range, as in ", fn.text,
                                     "(name[5m])"));
      }
      if (!CheckMetricName(Peek())) return nullptr;
      std::optional<Selector> sel = ParseSelector();
      if (!sel) return nullptr;
      if (!IsPunct("[")) {
        return Error(Peek().offset, absl::StrCat("range functions need a [duration], as in ",
                                                 fn.text, "(", sel->name, "[5m])"));
      }
      std::optional<absl::Duration> window = ParseWindow();
      if (!window) return nullptr;
      absl::Duration stretch = absl::ZeroDuration();
      if (range->input == cond::RangeInput::kStretches) {
        std::optional<absl::Duration> s = ParseStretch(*range, *sel, *window);
        if (!s) return nullptr;
        stretch = *s;
      }
      if (!ExpectClose(fn, what)) return nullptr;
      return cond::MakeRange(*range, std::move(*sel), *window, stretch);
    }
    if (fn.text == "count_over_time") {
      if (!IsKeyword("events")) {
        return Expected("events{...}[d]: count_over_time counts events, as in "
                        "count_over_time(events{kind=\"nccl.call_failed\"}[5m])");
      }
      std::optional<Selector> sel = ParseSelector();
      if (!sel) return nullptr;
      if (!IsPunct("[")) {
        return Error(Peek().offset,
                     "range functions need a [duration], as in count_over_time(events[5m])");
      }
      std::optional<absl::Duration> window = ParseWindow();
      if (!window || !ExpectClose(fn, what)) return nullptr;
      return cond::MakeEventCount(std::move(sel->matchers), *window);
    }
    if (fn.text == "peer_median" || fn.text == "peer_ratio") {
      NodePtr child = ParseOr();
      if (!child) return nullptr;
      const std::string needs_by =
          absl::StrCat(fn.text, " needs `by (labels)`, as in ", fn.text, "(expr, by (rail))");
      if (!IsPunct(",")) return Error(Peek().offset, needs_by);
      Next();  // ,
      if (!IsKeyword("by") && !IsKeyword("without")) return Error(Peek().offset, needs_by);
      std::optional<LabelSet> grouping = ParseGrouping();
      if (!grouping || !ExpectClose(fn, what)) return nullptr;
      if (child->constant()) {
        return Error(fn.offset, absl::StrCat(fn.text, "() needs a vector, not a number"));
      }
      return cond::MakePeer(fn.text == "peer_ratio", std::move(*grouping), std::move(child));
    }
    if (fn.text == "topology" || fn.text == "peer" || fn.text == "abs") {
      NodePtr child = ParseOr();
      if (!child || !ExpectClose(fn, what)) return nullptr;
      if (std::optional<double> v = child->constant()) {
        if (fn.text == "abs") return cond::MakeNumber(std::fabs(*v));
        return Error(fn.offset, absl::StrCat(fn.text, "() needs a vector, not a number"));
      }
      const UnaryFn u = fn.text == "abs"        ? UnaryFn::kAbs
                        : fn.text == "topology" ? UnaryFn::kTopology
                                                : UnaryFn::kPeer;
      return cond::MakeUnary(u, std::move(child));
    }
    if (fn.text == "label") {
      // label(expr, "name", "value"): every element with that label set to that value.
      NodePtr child = ParseOr();
      if (!child) return nullptr;
      const char* usage = "label() needs (expr, \"name\", \"value\"), as in "
                          "label(x > 1, \"part\", \"optic\")";
      std::string name, value;
      for (std::string* out : {&name, &value}) {
        if (!IsPunct(",")) return Error(Peek().offset, usage);
        Next();  // ,
        if (Peek().kind != Tok::kString) return Error(Peek().offset, usage);
        *out = Next().text;
      }
      if (!ExpectClose(fn, what)) return nullptr;
      if (child->constant()) return Error(fn.offset, "label() needs a vector, not a number");
      if (!cond::IsLabelName(name)) {
        return Error(fn.offset, absl::StrCat("label(): '", name, "' is not a label name"));
      }
      return cond::MakeSetLabel(std::move(name), std::move(value), std::move(child));
    }
    if (env_.macros.contains(fn.text)) {
      return Error(fn.offset, absl::StrCat("'", fn.text, "' is a macro, not a function"));
    }
    std::string message = absl::StrCat("unknown function '", fn.text, "'");
    if (std::string hint = SuggestFunction(fn.text); !hint.empty()) {
      absl::StrAppend(&message, " (did you mean '", hint, "'?)");
    }
    return Error(fn.offset, std::move(message));
  }

  // "[" duration "]"
  std::optional<absl::Duration> ParseWindow() {
    Next();  // [
    const Token& d = Peek();
    if (d.kind != Tok::kDuration) {
      Expected("a window such as 30s or 5m");
      return std::nullopt;
    }
    absl::StatusOr<absl::Duration> window = ParseDuration(d.text);
    if (!window.ok() || *window <= absl::ZeroDuration()) {
      Error(d.offset, "the window must be longer than zero");
      return std::nullopt;
    }
    Next();
    if (!Expect("]")) return std::nullopt;
    return *window;
  }

  // "," duration: the stretch of a function that cuts its window into stretches
  // (median_rate(x[1h], 5m)); the window must hold the function's fewest stretches.
  std::optional<absl::Duration> ParseStretch(const RangeFunction& fn, const Selector& sel,
                                             absl::Duration window) {
    const std::string name(fn.name);
    const std::string usage =
        absl::StrCat(name, " needs the length of its stretches after the window, as in ", name,
                     "(", sel.name, "[1h], 5m)");
    if (!IsPunct(",")) {
      Error(Peek().offset, usage);
      return std::nullopt;
    }
    Next();  // ,
    const Token& d = Peek();
    if (d.kind != Tok::kDuration) {
      Error(d.offset, usage);
      return std::nullopt;
    }
    absl::StatusOr<absl::Duration> stretch = ParseDuration(d.text);
    if (!stretch.ok() || *stretch <= absl::ZeroDuration()) {
      Error(d.offset, "the stretch must be longer than zero");
      return std::nullopt;
    }
    if (window < *stretch * static_cast<int64_t>(fn.min_stretches)) {
      absl::Duration rest;
      Error(d.offset, absl::StrCat(name, "'s window must hold at least ", fn.min_stretches,
                                   " stretches: [", HumanDuration(window), "] holds ",
                                   absl::IDivDuration(window, *stretch, &rest), " of ",
                                   HumanDuration(*stretch)));
      return std::nullopt;
    }
    if (window > *stretch * static_cast<int64_t>(cond::kMaxStretches)) {
      Error(d.offset, absl::StrCat(name, " cuts its window into at most ", cond::kMaxStretches,
                                   " stretches: take longer ones than ", HumanDuration(*stretch)));
      return std::nullopt;
    }
    Next();
    return *stretch;
  }

  // ( "by" | "without" ) "(" [ label_list ] ")"
  std::optional<LabelSet> ParseGrouping() {
    const bool by = Next().text == "by";
    std::optional<std::vector<std::string>> names = ParseLabelList();
    if (!names) return std::nullopt;
    return LabelSet{by ? LabelSet::Mode::kOnly : LabelSet::Mode::kExcept, std::move(*names)};
  }

  // "(" [ name { "," name } ] ")", sorted and unique.
  std::optional<std::vector<std::string>> ParseLabelList() {
    if (!Expect("(")) return std::nullopt;
    std::vector<std::string> names;
    while (!IsPunct(")")) {
      if (Peek().kind != Tok::kIdent) {
        Expected("a label name");
        return std::nullopt;
      }
      names.push_back(Next().text);
      if (IsPunct(",")) {
        Next();
      } else if (!IsPunct(")")) {
        Expected("',' or ')'");
        return std::nullopt;
      }
    }
    Next();  // )
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

  // metric_name [ "{" [ matcher { "," matcher } ] "}" ]
  std::optional<Selector> ParseSelector() {
    Selector sel;
    sel.name = Next().text;
    if (IsPunct("{") && !ParseMatcherList(sel.matchers)) return std::nullopt;
    return sel;
  }

  // "{" [ matcher { "," matcher } ] "}"
  bool ParseMatcherList(std::vector<Matcher>& out) {
    Next();  // {
    while (!IsPunct("}")) {
      std::optional<Matcher> m = ParseMatcher();
      if (!m) return false;
      out.push_back(std::move(*m));
      if (IsPunct(",")) {
        Next();
      } else if (!IsPunct("}")) {
        Expected("',' or '}'");
        return false;
      }
    }
    Next();  // }
    return true;
  }

  std::optional<Matcher> ParseMatcher() {
    if (Peek().kind != Tok::kIdent) {
      Expected("a label name");
      return std::nullopt;
    }
    Matcher m;
    m.name = Next().text;
    if (IsKeyword("in") || IsKeyword("not")) {
      if (Next().text == "not") {
        if (!IsKeyword("in")) {
          Expected("'in' after 'not'");
          return std::nullopt;
        }
        Next();
        m.op = Matcher::Op::kNotIn;
      } else {
        m.op = Matcher::Op::kIn;
      }
      if (!ParseInList(m)) return std::nullopt;
      return m;
    }
    static constexpr std::pair<std::string_view, Matcher::Op> kOps[] = {
        {"=", Matcher::Op::kEq},
        {"!=", Matcher::Op::kNe},
        {"=~", Matcher::Op::kRe},
        {"!~", Matcher::Op::kNotRe}};
    bool found = false;
    for (const auto& [text, op] : kOps) {
      if (IsPunct(text)) {
        m.op = op;
        found = true;
      }
    }
    if (!found) {
      Expected(absl::StrCat("'=', '!=', '=~', '!~' or 'in' after label '", m.name, "'"));
      return std::nullopt;
    }
    Next();
    if (Peek().kind != Tok::kString) {
      Expected("a quoted label value");
      return std::nullopt;
    }
    const Token& value = Next();
    m.value = value.text;
    if (m.op == Matcher::Op::kRe || m.op == Matcher::Op::kNotRe) {
      try {
        // Anchored at both ends, as in PromQL.
        m.re = std::make_shared<const std::regex>(
            m.value, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        Error(value.offset, absl::StrCat("invalid regex \"", m.value, "\": ", e.what()));
        return std::nullopt;
      }
    }
    return m;
  }

  // "(" ( string { "," string } | list_name ) ")"
  bool ParseInList(Matcher& m) {
    if (!Expect("(")) return false;
    if (Peek().kind == Tok::kIdent) {
      const Token& name = Next();
      auto it = env_.lists.find(name.text);
      if (it == env_.lists.end()) {
        Error(name.offset, absl::StrCat("unknown list '", name.text, "'"));
        return false;
      }
      m.values = it->second;
    } else {
      while (true) {
        if (Peek().kind != Tok::kString) {
          Expected("a quoted value or a list name");
          return false;
        }
        m.values.push_back(Next().text);
        if (!IsPunct(",")) break;
        Next();
      }
    }
    if (!IsPunct(")")) {
      Expected("')' to close the 'in' list");
      return false;
    }
    Next();
    return true;
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  const ParseEnv& env_;
  std::vector<std::string> macro_stack_;
  ConditionError& err_;
  bool failed_ = false;
};

class ParsedCondition final : public Condition {
 public:
  explicit ParsedCondition(NodePtr root) : root_(std::move(root)) {}

  std::vector<VectorElement> Evaluate(const EvalContext& ctx) const override {
    cond::Vec v = root_->Eval(ctx, nullptr);
    std::vector<VectorElement> out;
    out.reserve(v.size());
    for (cond::Item& item : v) out.push_back(cond::Materialise(std::move(item)));
    return out;
  }
  std::string ToString() const override {
    std::string out;
    root_->Print(out);
    return out;
  }
  void CollectMetricNames(std::vector<std::string>& out) const override {
    root_->CollectMetricNames(out);
  }
  void CollectEventKinds(std::vector<std::string>& out) const override {
    root_->CollectEventKinds(out);
  }
  void CollectWindows(std::vector<std::pair<std::string, absl::Duration>>& out) const override {
    root_->CollectWindows(out);
  }

 private:
  NodePtr root_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Condition>> ParseCondition(std::string_view text,
                                                          const ParseEnv& env,
                                                          ConditionError* error) {
  ConditionError local;
  ConditionError& err = error ? *error : local;
  std::vector<Token> tokens;
  NodePtr root;
  if (Tokenize(text, tokens, err)) {
    root = Parser(std::move(tokens), env, {}, err).ParseAll();
    if (root && root->constant()) {
      err = {0, "the condition is a constant; it must read series or events", {}};
      root = nullptr;
    }
  }
  if (!root) {
    return absl::InvalidArgumentError(absl::StrCat("at offset ", err.offset, ": ", err.message));
  }
  return std::unique_ptr<Condition>(std::make_unique<ParsedCondition>(std::move(root)));
}

SeriesSelector::SeriesSelector(std::shared_ptr<const cond::Selector> selector)
    : selector_(std::move(selector)) {}

const std::string& SeriesSelector::name() const { return selector_->name; }

bool SeriesSelector::Matches(const Labels& labels) const {
  return cond::MatchesAll(selector_->matchers, labels);
}

std::string SeriesSelector::ToString() const {
  std::string out;
  selector_->Print(out);
  return out;
}

absl::StatusOr<std::optional<SeriesSelector>> ParseSeriesSelector(std::string_view text,
                                                                   ConditionError* error) {
  ConditionError local;
  ConditionError& err = error ? *error : local;
  std::vector<Token> tokens;
  if (!Tokenize(text, tokens, err)) {
    return absl::InvalidArgumentError(absl::StrCat("at offset ", err.offset, ": ", err.message));
  }
  const ParseEnv no_env;
  ConditionError inner;
  Parser parser(std::move(tokens), no_env, {}, inner);
  std::optional<Selector> sel = parser.ParsePlainSelector();
  if (sel) return SeriesSelector(std::make_shared<const Selector>(std::move(*sel)));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (parser.failed() && first != std::string_view::npos && text[first] == '{') {
    err = inner;
    return absl::InvalidArgumentError(absl::StrCat("at offset ", err.offset, ": ", err.message));
  }
  return std::nullopt;
}

}  // namespace railwatch
