#include "engine/series_notation.h"

#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace railwatch {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A cursor over the text that records the first error with its offset.
class Scanner {
 public:
  Scanner(std::string_view text, NotationError* error) : text_(text), error_(error) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[pos_]; }
  size_t pos() const { return pos_; }
  void advance(size_t n = 1) { pos_ += n; }
  void Rewind(size_t pos) { pos_ = pos; }
  void SkipBlanks() {
    while (!done() && absl::ascii_isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }
  bool Consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    if (!absl::StartsWithIgnoreCase(AsAbsl(text_.substr(pos_)), AsAbsl(word))) return false;
    pos_ += word.size();
    return true;
  }
  std::string_view Slice(size_t from) const { return text_.substr(from, pos_ - from); }

  absl::Status Fail(size_t offset, std::string message) {
    if (error_ != nullptr) *error_ = {offset, message};
    return absl::InvalidArgumentError(absl::StrCat("at offset ", offset, ": ", message));
  }

 private:
  std::string_view text_;
  NotationError* error_;
  size_t pos_ = 0;
};

// [sign] (digits [. digits] | . digits) [e [sign] digits] | Inf | NaN. Not strtod: it reads
// "0x5" as hexadecimal where promtool means "0 six times".
std::optional<double> ScanNumber(Scanner& s, bool allow_sign) {
  const size_t start = s.pos();
  double sign = 1;
  if (allow_sign && (s.peek() == '+' || s.peek() == '-')) {
    sign = s.peek() == '-' ? -1 : 1;
    s.advance();
  }
  if (s.ConsumeWord("inf")) return sign * std::numeric_limits<double>::infinity();
  if (s.ConsumeWord("nan")) return std::numeric_limits<double>::quiet_NaN();
  const size_t digits_start = s.pos();
  size_t digits = 0;
  while (IsDigit(s.peek())) s.advance(), ++digits;
  if (s.Consume('.')) {
    while (IsDigit(s.peek())) s.advance(), ++digits;
  }
  if (digits == 0) {
    s.Rewind(start);  // so that the caller reports the term's start
    return std::nullopt;
  }
  if (s.peek() == 'e' || s.peek() == 'E') {
    const size_t before = s.pos();
    s.advance();
    if (s.peek() == '+' || s.peek() == '-') s.advance();
    if (!IsDigit(s.peek())) {
      s.Rewind(before);  // "1ex" is 1 then junk
    } else {
      while (IsDigit(s.peek())) s.advance();
    }
  }
  double v = 0;
  if (!absl::SimpleAtod(AsAbsl(s.Slice(digits_start)), &v)) return std::nullopt;
  return sign * v;
}

std::optional<uint64_t> ScanCount(Scanner& s) {
  const size_t start = s.pos();
  while (IsDigit(s.peek())) s.advance();
  uint64_t n = 0;
  if (s.pos() == start || !absl::SimpleAtoi(AsAbsl(s.Slice(start)), &n)) return std::nullopt;
  return n;
}

bool AtTermEnd(const Scanner& s) {
  return s.done() || absl::ascii_isspace(static_cast<unsigned char>(s.peek()));
}

}  // namespace

absl::StatusOr<std::vector<std::optional<double>>> ExpandSeriesValues(std::string_view text,
                                                                      NotationError* error,
                                                                      size_t max_samples) {
  Scanner s(text, error);
  std::vector<std::optional<double>> out;
  auto add = [&](size_t at, uint64_t count, auto value_of) -> absl::Status {
    if (count > max_samples || out.size() + count > max_samples) {
      return s.Fail(at, absl::StrCat("more than ", max_samples, " samples"));
    }
    for (uint64_t i = 0; i < count; ++i) out.push_back(value_of(i));
    return absl::OkStatus();
  };
  s.SkipBlanks();
  if (s.done()) return s.Fail(0, "no values");
  while (!s.done()) {
    const size_t term = s.pos();
    if (s.Consume('_')) {
      uint64_t n = 1;
      if (s.Consume('x')) {
        std::optional<uint64_t> count = ScanCount(s);
        if (!count) return s.Fail(s.pos(), "expected a repetition count after \"_x\"");
        n = *count;
      }
      if (!AtTermEnd(s)) return s.Fail(s.pos(), "expected a blank after \"_\"");
      if (absl::Status st = add(term, n, [](uint64_t) { return std::optional<double>(); });
          !st.ok()) {
        return st;
      }
    } else if (s.ConsumeWord("stale")) {
      if (!AtTermEnd(s)) return s.Fail(s.pos(), "expected a blank after \"stale\"");
      out.push_back(std::nullopt);
    } else {
      std::optional<double> a = ScanNumber(s, /*allow_sign=*/true);
      if (!a) {
        return s.Fail(
            term, "expected a number, \"_\" or \"stale\" (notation: a, a+bxn, a-bxn, axn, _xn)");
      }
      double step = 0;
      uint64_t n = 0;
      const size_t op = s.pos();
      if (s.peek() == '+' || s.peek() == '-') {
        const double sign = s.peek() == '-' ? -1 : 1;
        s.advance();
        std::optional<double> b = ScanNumber(s, /*allow_sign=*/false);
        if (!b)
          return s.Fail(s.pos(),
                        absl::StrCat("expected a step after \"", AsAbsl(text.substr(op, 1)), "\""));
        step = sign * *b;
        if (!s.Consume('x'))
          return s.Fail(s.pos(), "expected \"x\" and a count after the step (a+bxn)");
      } else if (!s.Consume('x')) {
        if (!AtTermEnd(s)) return s.Fail(s.pos(), "unexpected character in a value");
        out.push_back(*a);
        if (out.size() > max_samples)
          return s.Fail(term, absl::StrCat("more than ", max_samples, " samples"));
        s.SkipBlanks();
        continue;
      }
      std::optional<uint64_t> count = ScanCount(s);
      if (!count) return s.Fail(s.pos(), "expected a repetition count after \"x\"");
      n = *count;
      if (!AtTermEnd(s)) return s.Fail(s.pos(), "unexpected character after the repetition count");
      const double start = *a;
      if (absl::Status st =
              add(term, n + 1,
                  [&](uint64_t i) {
                    return std::optional<double>(start + step * static_cast<double>(i));
                  });
          !st.ok()) {
        return st;
      }
    }
    s.SkipBlanks();
  }
  return out;
}

namespace {

bool IsNameStart(char c, bool metric) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_' || (metric && c == ':');
}
bool IsNameChar(char c, bool metric) { return IsNameStart(c, metric) || IsDigit(c); }

std::string_view ScanName(Scanner& s, bool metric) {
  const size_t start = s.pos();
  if (!IsNameStart(s.peek(), metric)) return {};
  while (IsNameChar(s.peek(), metric)) s.advance();
  return s.Slice(start);
}

absl::StatusOr<std::string> ScanQuoted(Scanner& s) {
  const size_t open = s.pos();
  const char quote = s.peek();
  if (quote != '"' && quote != '\'') return s.Fail(open, "expected a quoted label value");
  s.advance();
  std::string out;
  while (true) {
    if (s.done()) return s.Fail(open, "unterminated string");
    char c = s.peek();
    s.advance();
    if (c == quote) return out;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    char e = s.peek();
    s.advance();
    switch (e) {
      case '\\':
      case '"':
      case '\'':
        out.push_back(e);
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 't':
        out.push_back('\t');
        break;
      default:
        return s.Fail(s.pos() - 2, absl::StrCat("unknown escape \"\\", std::string(1, e), "\""));
    }
  }
}

}  // namespace

absl::StatusOr<SeriesLiteral> ParseSeriesLiteral(std::string_view text, NotationError* error) {
  Scanner s(text, error);
  SeriesLiteral out;
  s.SkipBlanks();
  out.name = std::string(ScanName(s, /*metric=*/true));
  s.SkipBlanks();
  Labels labels;
  if (s.Consume('{')) {
    while (true) {
      s.SkipBlanks();
      if (s.Consume('}')) break;
      const size_t at = s.pos();
      std::string name(ScanName(s, /*metric=*/false));
      if (name.empty()) return s.Fail(at, "expected a label name or \"}\"");
      s.SkipBlanks();
      if (!s.Consume('=')) return s.Fail(s.pos(), "expected \"=\" after the label name");
      if (s.peek() == '~')
        return s.Fail(s.pos() - 1, "a series takes name=\"value\", not a regular expression");
      s.SkipBlanks();
      absl::StatusOr<std::string> value = ScanQuoted(s);
      if (!value.ok()) return value.status();
      for (const Label& l : labels) {
        if (l.name == name) return s.Fail(at, absl::StrCat("label \"", name, "\" given twice"));
      }
      if (name == "__name__") {
        if (!out.name.empty()) return s.Fail(at, "the metric name is given twice");
        out.name = *value;
      } else if (!value->empty()) {
        labels.push_back({name, *value});
      }
      s.SkipBlanks();
      if (s.Consume(',')) continue;
      if (s.Consume('}')) break;
      return s.Fail(s.pos(), "expected \",\" or \"}\"");
    }
  }
  s.SkipBlanks();
  if (!s.done()) return s.Fail(s.pos(), "unexpected text after the series");
  if (out.name.empty()) return s.Fail(0, "expected a metric name");
  NormalizeLabels(labels);
  out.labels = std::move(labels);
  return out;
}

}  // namespace railwatch
