// The condition language's lexer: names, numbers, durations, strings, operators, comments.

#include "engine/condition_lexer.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/labels.h"
#include "common/text.h"

namespace railwatch::cond {

namespace {
bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }
}  // namespace

bool Tokenize(std::string_view s, std::vector<Token>& out, ConditionError& err) {
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos >= s.size()) break;
    const size_t start = pos;
    const char c = s[pos];
    if (c == '#') {  // comment to the end of the line
      while (pos < s.size() && s[pos] != '\n') ++pos;
      continue;
    }
    if (IsIdentStart(c)) {
      while (pos < s.size() && IsIdentChar(s[pos])) ++pos;
      out.push_back({Tok::kIdent, std::string(s.substr(start, pos - start)), start});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[pos + 1])))) {
      // A number (1.5, 1e-3) or a duration (5m, 1h30m, 250ms).
      while (pos < s.size()) {
        const char d = s[pos];
        const bool exponent_sign = (d == '+' || d == '-') && (s[pos - 1] == 'e' || s[pos - 1] == 'E') &&
                                   std::isdigit(static_cast<unsigned char>(s[start]));
        if (!std::isalnum(static_cast<unsigned char>(d)) && d != '.' && !exponent_sign) break;
        ++pos;
      }
      std::string text(s.substr(start, pos - start));
      double v;
      if (absl::SimpleAtod(text, &v) && std::isfinite(v)) {
        out.push_back({Tok::kNumber, std::move(text), start});
      } else if (ParseDuration(text).ok()) {
        out.push_back({Tok::kDuration, std::move(text), start});
      } else {
        err = {start, absl::StrCat("'", text, "' is neither a number nor a duration"), {}};
        return false;
      }
      continue;
    }
    if (c == '"') {
      std::string value;
      ++pos;
      bool closed = false;
      while (pos < s.size()) {
        const char ch = s[pos++];
        if (ch == '"') {
          closed = true;
          break;
        }
        if (ch != '\\' || pos >= s.size()) {
          value += ch;
          continue;
        }
        // \" \\ \n \t are escapes; any other backslash is kept, so regexes read naturally
        // ("nccl\.ib" is the regex nccl\.ib).
        const char e = s[pos++];
        if (e == '"' || e == '\\') {
          value += e;
        } else if (e == 'n') {
          value += '\n';
        } else if (e == 't') {
          value += '\t';
        } else {
          value += '\\';
          value += e;
        }
      }
      if (!closed) {
        err = {start, "unterminated string", {}};
        return false;
      }
      out.push_back({Tok::kString, std::move(value), start});
      continue;
    }
    static constexpr std::string_view kTwo[] = {">=", "<=", "==", "!=", "=~", "!~"};
    const std::string_view two = s.substr(pos, 2);
    if (std::find(std::begin(kTwo), std::end(kTwo), two) != std::end(kTwo)) {
      out.push_back({Tok::kPunct, std::string(two), start});
      pos += 2;
      continue;
    }
    if (std::string_view("(){}[],<>=+-*/").find(c) == std::string_view::npos) {
      err = {start, absl::StrCat("unexpected character '", std::string(1, c), "'"), {}};
      return false;
    }
    out.push_back({Tok::kPunct, std::string(1, c), start});
    ++pos;
  }
  out.push_back({Tok::kEnd, "", s.size()});
  return true;
}

}  // namespace railwatch::cond
