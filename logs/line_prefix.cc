#include "logs/line_prefix.h"

#include "absl/strings/match.h"
#include "absl/time/civil_time.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsDigit;
using scan::IsDigits;

// Reads `n` digits at `s[pos]`; false if any is not a digit.
bool Digits(absl::string_view s, size_t pos, size_t n, int* value) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!IsDigit(s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  *value = v;
  return true;
}

bool ConsumePrefix(absl::string_view& s, absl::string_view prefix) {
  if (!absl::StartsWith(s, prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

}  // namespace

int64_t FractionNanos(absl::string_view digits) {
  int64_t ns = 0;
  int n = 0;
  for (char c : digits) {
    if (!IsDigit(c) || n == 9) break;
    ns = ns * 10 + (c - '0');
    ++n;
  }
  for (; n < 9; ++n) ns *= 10;
  return ns;
}

size_t ParseIsoTimestamp(absl::string_view s, int64_t* unix_nano) {
  int year, month, day, hour, minute, second;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':') {
    return 0;
  }
  if (!Digits(s, 0, 4, &year) || !Digits(s, 5, 2, &month) || !Digits(s, 8, 2, &day) ||
      !Digits(s, 11, 2, &hour) || !Digits(s, 14, 2, &minute) || !Digits(s, 17, 2, &second)) {
    return 0;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return 0;
  }
  size_t pos = 19;
  int64_t nanos = 0;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    size_t start = ++pos;
    while (pos < s.size() && IsDigit(s[pos])) ++pos;
    nanos = FractionNanos(s.substr(start, pos - start));
  }
  int64_t offset_seconds = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    size_t len = 0;
    if (Digits(s, pos + 1, 2, &oh) && pos + 3 < s.size() && s[pos + 3] == ':' &&
        Digits(s, pos + 4, 2, &om)) {
      len = 6;
    } else if (Digits(s, pos + 1, 2, &oh) && Digits(s, pos + 3, 2, &om)) {
      len = 5;
    }
    if (len > 0) {
      offset_seconds = (s[pos] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
      pos += len;
    }
  }
  absl::Time t = absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                                 absl::UTCTimeZone());
  *unix_nano = absl::ToUnixNanos(t) - offset_seconds * 1'000'000'000 + nanos;
  return pos;
}

int64_t TimeWithoutYear(int month, int day, int hour, int minute, int second, int64_t nanos,
                        absl::Time now) {
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return 0;
  }
  absl::TimeZone utc = absl::UTCTimeZone();
  int64_t year = absl::ToCivilYear(now, utc).year();
  absl::Time t = absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second), utc);
  if (t > now + absl::Hours(24)) {
    t = absl::FromCivil(absl::CivilSecond(year - 1, month, day, hour, minute, second), utc);
  }
  return absl::ToUnixNanos(t) + nanos;
}

void StripPrefixes(Line& line) {
  absl::string_view t = line.raw;
  for (int round = 0; round < 8 && !t.empty(); ++round) {
    int64_t ns = 0;
    if (IsDigit(t[0])) {
      size_t n = ParseIsoTimestamp(t, &ns);
      if (n > 0 && (n == t.size() || t[n] == ' ')) {
        line.time_unix_nano = ns;
        t.remove_prefix(n);
        ConsumePrefix(t, " ");
        // Container runtimes (CRI) write "<time> stdout F <line>".
        if (ConsumePrefix(t, "stdout F ") || ConsumePrefix(t, "stderr F ") ||
            ConsumePrefix(t, "stdout P ") || ConsumePrefix(t, "stderr P ")) {
        }
        continue;
      }
      // srun --label: "12: <line>".
      size_t colon = t.find(": ");
      if (colon != absl::string_view::npos && colon <= 6 && IsDigits(t.substr(0, colon))) {
        line.launcher_tag = t.substr(0, colon);
        t.remove_prefix(colon + 2);
        continue;
      }
      break;
    }
    if (t[0] != '[') break;
    size_t close = t.find(']');
    if (close == absl::string_view::npos) break;
    absl::string_view inner = t.substr(1, close - 1);
    absl::string_view rest = t.substr(close + 1);
    if (!inner.empty() && IsDigit(inner[0]) && ParseIsoTimestamp(inner, &ns) == inner.size()) {
      line.time_unix_nano = ns;
      t = rest;
      ConsumePrefix(t, " ");
      continue;
    }
    if (IsDigits(inner)) {
      // "[155] line", a bare "[155]", "[155]:line".
      if (rest.empty() || rest[0] == ' ' || rest[0] == ':') {
        line.launcher_tag = inner;
        t = rest.empty() ? rest : rest.substr(1);
        continue;
      }
      break;
    }
    size_t comma = inner.find(',');
    if (comma != absl::string_view::npos && IsDigits(inner.substr(0, comma)) &&
        IsDigits(inner.substr(comma + 1)) && !rest.empty() && rest[0] == '<') {
      size_t gt = rest.find(">:");
      if (gt != absl::string_view::npos && gt < 10) {
        line.mpi_rank = inner.substr(comma + 1);
        t = rest.substr(gt + 2);
        continue;
      }
    }
    if (!rest.empty() && rest[0] == ':') {
      if (absl::StartsWith(inner, "rank") && IsDigits(inner.substr(4))) {
        line.global_rank = inner.substr(4);
        t = rest.substr(1);
        continue;
      }
      if (absl::StartsWith(inner, "default") && IsDigits(inner.substr(7))) {
        line.launcher_tag = inner;
        t = rest.substr(1);
        continue;
      }
    }
    break;
  }
  line.text = t;
}

}  // namespace railwatch::logs::internal
