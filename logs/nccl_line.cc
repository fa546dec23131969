#include "logs/nccl_line.h"

#include "absl/strings/str_cat.h"
#include "logs/parse_context.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsDigits;
using scan::TrimLeft;
using scan::TrimRight;

bool IsLevel(absl::string_view w) {
  return w == "INFO" || w == "WARN" || w == "TRACE" || w == "CALL" || w == "ABORT";
}

// Removes the last whitespace-separated token of `s` and returns it.
absl::string_view PopToken(absl::string_view& s) {
  size_t sp = s.find_last_of(" \t");
  absl::string_view tok = sp == absl::string_view::npos ? s : s.substr(sp + 1);
  s = sp == absl::string_view::npos ? absl::string_view() : TrimRight(s.substr(0, sp));
  return tok;
}

// Parses "host:pid:tid", "host:pid", "host" into `out`.
void SplitHostToken(absl::string_view token, NcclLine* out) {
  size_t r1 = token.rfind(':');
  if (r1 == absl::string_view::npos) {
    out->host = token;
    return;
  }
  absl::string_view last = token.substr(r1 + 1);
  absl::string_view head = token.substr(0, r1);
  size_t r2 = head.rfind(':');
  if (r2 != absl::string_view::npos && IsDigits(last) && IsDigits(head.substr(r2 + 1))) {
    out->host = head.substr(0, r2);
    out->pid = head.substr(r2 + 1);
    out->tid = last;
    return;
  }
  // "host:pid" without a tid, or a masked "host:XXXXXX".
  out->host = head;
  if (IsDigits(last)) out->pid = last;
}

}  // namespace

bool ParseNcclLine(absl::string_view text, NcclLine* out) {
  size_t pos = 0;
  while ((pos = text.find("NCCL ", pos)) != absl::string_view::npos) {
    size_t at = pos;
    pos += 5;
    if (at > 0 && text[at - 1] != ' ' && text[at - 1] != '\t') continue;
    absl::string_view after = text.substr(at + 5);
    absl::string_view level = scan::LeadingWord(after);
    if (!IsLevel(level)) continue;

    NcclLine nl;
    nl.level = level;
    nl.message = TrimLeft(after.substr(level.size()));
    absl::string_view before = TrimRight(text.substr(0, at));
    if (level != "INFO") {
      // "[dev] file:line (function) NCCL WARN"; TRACE lines also carry a float time.
      if (!before.empty() && before.back() == ')') {
        size_t lp = before.rfind('(');
        if (lp == absl::string_view::npos) return false;
        nl.function = before.substr(lp + 1, before.size() - lp - 2);
        before = TrimRight(before.substr(0, lp));
      }
      if (!before.empty() && before.back() != ']') {
        absl::string_view tok = PopToken(before);
        if (tok.find(':') != absl::string_view::npos) nl.location = tok;
      }
      if (!before.empty() && before.back() != ']') PopToken(before);
    }
    if (before.empty() || before.back() != ']') return false;
    size_t lb = before.rfind('[');
    if (lb == absl::string_view::npos) return false;
    nl.cuda_dev = before.substr(lb + 1, before.size() - lb - 2);
    if (!IsDigits(nl.cuda_dev)) return false;
    absl::string_view host_part = TrimRight(before.substr(0, lb));
    if (host_part.empty()) return false;
    SplitHostToken(PopToken(host_part), &nl);
    *out = nl;
    return true;
  }
  return false;
}

std::string ThreadKey(const NcclLine& nl) {
  return absl::StrCat(nl.host, ":", nl.pid, ":", nl.tid);
}

void AddNcclOrigin(LogEvent& e, const NcclLine& nl) {
  Set(e, "host", nl.host);
  SetIf(e, "pid", nl.pid);
  SetIf(e, "tid", nl.tid);
  SetIf(e, "cuda_dev", nl.cuda_dev);
}

}  // namespace railwatch::logs::internal
