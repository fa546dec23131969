#pragma once

// Small, allocation-free scanning helpers shared by the log format parsers. Everything works on
// absl::string_view slices of the line being parsed; nothing here owns memory.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace railwatch::logs::scan {

inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

inline absl::string_view TrimLeft(absl::string_view s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  return s.substr(i);
}

inline absl::string_view TrimRight(absl::string_view s) {
  size_t n = s.size();
  while (n > 0 && (IsSpace(s[n - 1]) || s[n - 1] == '\r' || s[n - 1] == '\n')) --n;
  return s.substr(0, n);
}

inline absl::string_view Trim(absl::string_view s) { return TrimRight(TrimLeft(s)); }

inline bool IsDigits(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// An optionally negative decimal integer and nothing else.
inline bool IsInteger(absl::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  return IsDigits(s);
}

// A decimal number as printf writes one: 12, -1, 0.73, 1e+00, 0e+00.
inline bool IsNumber(absl::string_view s) {
  double d;
  return !s.empty() && (IsDigit(s[0]) || s[0] == '-' || s[0] == '.') && absl::SimpleAtod(s, &d);
}

inline bool ToInt(absl::string_view s, int64_t* v) { return absl::SimpleAtoi(s, v); }

// Whitespace-separated words (spaces and tabs), empty ones skipped.
inline std::vector<absl::string_view> Words(absl::string_view s) {
  std::vector<absl::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// The text after the first occurrence of `marker`; `found` says whether there was one.
inline absl::string_view After(absl::string_view s, absl::string_view marker, bool* found) {
  size_t p = s.find(marker);
  *found = p != absl::string_view::npos;
  return *found ? s.substr(p + marker.size()) : absl::string_view();
}

// The leading run of decimal digits (with an optional '-').
inline absl::string_view LeadingInteger(absl::string_view s) {
  size_t i = (!s.empty() && s[0] == '-') ? 1 : 0;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == 0 || (i == 1 && s[0] == '-')) return absl::string_view();
  return s.substr(0, i);
}

// The word (up to a space, tab, comma or the end) at the start of `s`.
inline absl::string_view LeadingWord(absl::string_view s) {
  size_t i = 0;
  while (i < s.size() && !IsSpace(s[i]) && s[i] != ',') ++i;
  return s.substr(0, i);
}

// Splits "10.0.0.1<54862>" or "fe80::1%ib0<53249>" (NCCL's socket-address notation) into the
// address and the port. False when `s` has no "<digits>" suffix.
inline bool SplitAddrPort(absl::string_view s, absl::string_view* addr, absl::string_view* port) {
  if (s.size() < 3 || s.back() != '>') return false;
  size_t lt = s.rfind('<');
  if (lt == absl::string_view::npos || lt == 0) return false;
  absl::string_view p = s.substr(lt + 1, s.size() - lt - 2);
  if (!IsDigits(p)) return false;
  *addr = s.substr(0, lt);
  *port = p;
  return true;
}

// The first word of `s` that is an NCCL socket address ("addr<port>"), with trailing
// punctuation removed.
inline bool FindAddrPort(absl::string_view s, absl::string_view* addr, absl::string_view* port) {
  for (absl::string_view w : Words(s)) {
    while (!w.empty() && (w.back() == ',' || w.back() == ':' || w.back() == ';')) {
      w.remove_suffix(1);
    }
    if (SplitAddrPort(w, addr, port)) return true;
  }
  return false;
}

inline absl::string_view StripTrailing(absl::string_view s, absl::string_view chars) {
  while (!s.empty() && chars.find(s.back()) != absl::string_view::npos) s.remove_suffix(1);
  return s;
}

inline absl::string_view StripTrailingDot(absl::string_view s) {
  while (!s.empty() && s.back() == '.') s.remove_suffix(1);
  return s;
}

inline std::string Lower(absl::string_view s) { return absl::AsciiStrToLower(s); }

}  // namespace railwatch::logs::scan
