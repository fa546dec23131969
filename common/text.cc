#include "common/text.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace railwatch {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<uint64_t> ParseCounterText(absl::string_view text) {
  text = absl::StripLeadingAsciiWhitespace(text);
  size_t end = 0;
  while (end < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[end]))) ++end;
  if (end == 0) return std::nullopt;
  // Anything after the digits must be whitespace: "12abc" is not a counter.
  for (size_t i = end; i < text.size(); ++i) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(text[i]))) return std::nullopt;
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text.substr(0, end), &value)) return std::nullopt;
  return value;
}

absl::string_view FirstLine(absl::string_view text) {
  size_t nl = text.find('\n');
  if (nl != absl::string_view::npos) text = text.substr(0, nl);
  return absl::StripTrailingAsciiWhitespace(text);
}

absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  if (s.empty()) return absl::InvalidArgumentError("empty duration");
  absl::Duration total = absl::ZeroDuration();
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[i]))) ++i;
    int64_t n = 0;
    if (i == start || !absl::SimpleAtoi(s.substr(start, i - start), &n)) {
      return absl::InvalidArgumentError(absl::StrCat("bad duration \"", s,
                                                     "\": expected a number at offset ", start));
    }
    size_t ustart = i;
    while (i < s.size() && absl::ascii_isalpha(static_cast<unsigned char>(s[i]))) ++i;
    absl::string_view unit = s.substr(ustart, i - ustart);
    if (unit == "ms") total += absl::Milliseconds(n);
    else if (unit == "s") total += absl::Seconds(n);
    else if (unit == "m") total += absl::Minutes(n);
    else if (unit == "h") total += absl::Hours(n);
    else if (unit == "d") total += absl::Hours(24 * n);
    else if (unit == "w") total += absl::Hours(24 * 7 * n);
    else {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad duration \"", s, "\": unit \"", unit, "\" is not one of ms, s, m, h, d, w"));
    }
  }
  return total;
}

std::string HumanDuration(absl::Duration d) {
  if (d == absl::ZeroDuration()) return "0s";
  std::string out;
  int64_t ms = absl::ToInt64Milliseconds(d);
  if (ms < 0) {
    out += '-';
    ms = -ms;
  }
  const struct { int64_t ms; const char* unit; } units[] = {
      {7LL * 24 * 3600 * 1000, "w"}, {24LL * 3600 * 1000, "d"}, {3600LL * 1000, "h"},
      {60LL * 1000, "m"}, {1000, "s"}, {1, "ms"}};
  for (const auto& u : units) {
    if (ms >= u.ms) {
      absl::StrAppend(&out, ms / u.ms, u.unit);
      ms %= u.ms;
    }
  }
  return out;
}

std::string FormatTime(int64_t unix_nanos) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::FromUnixNanos(unix_nanos),
                          absl::UTCTimeZone());
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1] ? 1u : 0u)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string ClosestWord(absl::string_view word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& k : known) {
    const size_t d = EditDistance(word, k);
    if (best.empty() || d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  // A typo: one letter in a short word, two (a swap) or a third of a longer one.
  const size_t allowed = word.size() <= 3 ? 1 : std::max<size_t>(2, word.size() / 3);
  return best_distance <= allowed ? best : "";
}

std::string TextPosition(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat(line, ":", column);
}

}  // namespace railwatch
