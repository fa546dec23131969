#include "logs/pytorch_parser.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "logs/line_prefix.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsDigit;
using scan::IsDigits;
using scan::IsInteger;
using scan::Trim;
using scan::TrimLeft;
using scan::Words;

// c10/glog prefix: "[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] ", the older
// "[E ProcessGroupNCCL.cpp:737] ", or glog's own "E0321 02:07:08.408271 80746 file.cc:607] ".
struct Glog {
  char severity = 0;
  absl::string_view location;
  int64_t time_unix_nano = 0;
  absl::string_view message;
};

bool ParseGlog(absl::string_view t, absl::Time now, Glog* g) {
  absl::ConsumePrefix(&t, "[");
  if (t.size() < 4 || std::string_view("IWEF").find(t[0]) == std::string_view::npos) return false;
  g->severity = t[0];
  t.remove_prefix(1);
  absl::string_view mmdd = scan::LeadingInteger(t);
  t.remove_prefix(mmdd.size());
  if (t.empty() || t[0] != ' ') return false;
  t = TrimLeft(t);
  size_t close = t.find(']');
  if (close == absl::string_view::npos) return false;
  std::vector<absl::string_view> w = Words(t.substr(0, close));
  if (w.empty()) return false;
  g->location = w.back();
  size_t colon = g->location.rfind(':');
  if (colon == absl::string_view::npos || !IsDigits(g->location.substr(colon + 1))) return false;
  // The time, when there is one: HH:MM:SS[.fraction].
  if (mmdd.size() >= 3 && w.size() >= 2 && w[0].size() >= 8 && w[0][2] == ':' && w[0][5] == ':') {
    int64_t h, m, s, md;
    if (scan::ToInt(w[0].substr(0, 2), &h) && scan::ToInt(w[0].substr(3, 2), &m) &&
        scan::ToInt(w[0].substr(6, 2), &s) && scan::ToInt(mmdd, &md)) {
      absl::string_view frac = w[0].size() > 9 ? w[0].substr(9) : absl::string_view();
      g->time_unix_nano = TimeWithoutYear(static_cast<int>(md / 100), static_cast<int>(md % 100),
                                          static_cast<int>(h), static_cast<int>(m),
                                          static_cast<int>(s), FractionNanos(frac), now);
    }
  }
  g->message = TrimLeft(t.substr(close + 1));
  return true;
}

// Process-group tags anywhere in the message: "[PG 1 Rank 0]", "[PG ID 0 PG GUID 0(default_pg)
// Rank 1]", "[Rank 1]". PG fields come from any tag, the rank from the last one.
void AddProcessGroup(absl::string_view m, LogEvent& e) {
  absl::string_view pg_id, pg_guid, pg_name, pg_rank;
  size_t pos = 0;
  while ((pos = m.find('[', pos)) != absl::string_view::npos) {
    size_t close = m.find(']', pos);
    if (close == absl::string_view::npos) break;
    absl::string_view inner = m.substr(pos + 1, close - pos - 1);
    pos = close;
    if (!absl::StartsWith(inner, "PG ") && !absl::StartsWith(inner, "Rank ")) continue;
    std::vector<absl::string_view> w = Words(inner);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] == "PG" && w[i + 1] == "ID" && i + 2 < w.size()) {
        pg_id = w[i += 2];
      } else if (w[i] == "PG" && w[i + 1] == "GUID" && i + 2 < w.size()) {
        absl::string_view g = w[i += 2];
        size_t lp = g.find('(');
        pg_guid = g.substr(0, lp);
        if (lp != absl::string_view::npos && g.back() == ')') {
          pg_name = g.substr(lp + 1, g.size() - lp - 2);
        }
      } else if (w[i] == "PG" && IsInteger(w[i + 1])) {
        pg_id = w[++i];
      } else if (w[i] == "Rank" && IsInteger(w[i + 1])) {
        pg_rank = w[++i];
      }
    }
  }
  SetIf(e, "pg_id", pg_id);
  SetIf(e, "pg_guid", pg_guid);
  SetIf(e, "pg_name", pg_name);
  SetIf(e, "pg_rank", pg_rank);
}

// "WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=.., NumelOut=.., Timeout(ms)=600000)".
bool AddWork(absl::string_view m, LogEvent& e) {
  bool found;
  absl::string_view r = scan::After(m, "WorkNCCL(", &found);
  if (!found) return false;
  int depth = 1;
  size_t end = 0;
  for (; end < r.size() && depth > 0; ++end) {
    if (r[end] == '(') ++depth;
    if (r[end] == ')') --depth;
  }
  if (depth != 0) return false;
  for (absl::string_view kv : absl::StrSplit(r.substr(0, end - 1), ',')) {
    kv = Trim(kv);
    size_t eq = kv.find('=');
    if (eq == absl::string_view::npos) continue;
    absl::string_view k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "SeqNum") {
      Set(e, "seq_num", v);
    } else if (k == "OpType") {
      Set(e, "op_type", v);
    } else if (k == "NumelIn") {
      Set(e, "numel_in", v);
    } else if (k == "NumelOut") {
      Set(e, "numel_out", v);
    } else if (k == "Timeout(ms)") {
      Set(e, "timeout_ms", v);
    }
  }
  return e.Get("seq_num") != nullptr;
}

// The integer after `marker`, or "".
absl::string_view IntAfter(absl::string_view m, absl::string_view marker) {
  bool found;
  absl::string_view r = scan::After(m, marker, &found);
  return found ? scan::LeadingInteger(r) : absl::string_view();
}

bool IsChatter(absl::string_view m) {
  return absl::StrContains(m, "Some NCCL operations have failed or timed out") ||
         absl::StrContains(m, "To avoid data inconsistency");
}

}  // namespace

bool PytorchParser::Claims(const Line& line) {
  absl::string_view t = line.text;
  if (!line.global_rank.empty()) return true;
  static constexpr absl::string_view kMarkers[] = {"ProcessGroupNCCL",
                                                   "WorkNCCL(",
                                                   "Watchdog caught",
                                                   "terminate called after throwing",
                                                   "what():",
                                                   "NCCL error in:",
                                                   "DistBackendError",
                                                   "detected by watchdog",
                                                   "Last error:",
                                                   "[PG ",
                                                   "Exception raised from"};
  for (absl::string_view m : kMarkers) {
    if (absl::StrContains(t, m)) return true;
  }
  return false;
}

Outcome PytorchParser::Continue(const Line& line, Context& ctx) {
  if (!pending_) return Outcome::kNotMine;
  absl::string_view t = TrimLeft(line.text);
  if (absl::StartsWith(t, "frame #")) {
    ++frames_;
    return Outcome::kEvent;
  }
  if (absl::ConsumePrefix(&t, "Exception raised from ")) {
    // "checkTimeout at /opt/.../ProcessGroupNCCL.cpp:567 (most recent call first):"
    std::vector<absl::string_view> w = Words(t);
    if (!w.empty()) Set(*pending_, "raised_from", w[0]);
    if (w.size() >= 3 && w[1] == "at") Set(*pending_, "raised_at", w[2]);
    return Outcome::kEvent;
  }
  if (absl::StrContains(t, "what():") && pending_->Get("message") == nullptr) {
    return Outcome::kNotMine;  // Feed attaches it
  }
  FlushPending(ctx);
  return Outcome::kNotMine;
}

void PytorchParser::FlushPending(Context& ctx) {
  if (!pending_) return;
  if (frames_ > 0) pending_->Set("frames", absl::StrCat(frames_));
  ctx.Emit(std::move(*pending_));
  pending_.reset();
  frames_ = 0;
}

Outcome PytorchParser::Feed(const Line& line, Context& ctx) {
  absl::string_view t = line.text;
  Glog g;
  bool glog = ParseGlog(t, ctx.clock().Now(), &g);
  absl::string_view m = glog ? g.message : t;
  Line at = line;
  if (glog && g.time_unix_nano != 0) at.time_unix_nano = g.time_unix_nano;

  auto begin = [&](absl::string_view kind) {
    LogEvent e = ctx.Begin(kind, at);
    SetIf(e, "global_rank", line.global_rank);
    return e;
  };
  auto finish = [&](LogEvent& e) {
    if (glog) {
      Set(e, "severity", absl::string_view(&g.severity, 1));
      Set(e, "location", g.location);
    }
    Context::AddLauncher(e, line);
  };

  bool found;
  if (absl::string_view r =
          scan::After(m, "terminate called after throwing an instance of '", &found);
      found) {
    FlushPending(ctx);
    pending_ = begin("pytorch.process_group_error");
    Set(*pending_, "exception_type", r.substr(0, r.find('\'')));
    Context::AddLauncher(*pending_, line);
    return Outcome::kEvent;
  }
  Outcome outcome = Outcome::kKnown;
  if (absl::string_view what = scan::After(m, "what():", &found); found) {
    if (!pending_) pending_ = begin("pytorch.process_group_error");
    AddProcessGroup(what, *pending_);
    Set(*pending_, "message", Trim(what));
    outcome = Outcome::kEvent;
  }
  if (absl::StrContains(m, "Watchdog caught collective operation timeout")) {
    LogEvent e = begin("pytorch.watchdog_timeout");
    AddProcessGroup(m, e);
    if (!AddWork(m, e)) {
      ctx.Problem(line.number, "watchdog timeout without a readable WorkNCCL(...)");
      return Outcome::kMalformed;
    }
    SetIf(e, "elapsed_ms", IntAfter(m, "ran for "));
    finish(e);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (outcome == Outcome::kEvent) return outcome;
  if (absl::StrContains(m, "last enqueued NCCL work:")) {
    // "[PG 1 Rank 0] Exception (either an error or timeout) detected by watchdog at work: 1580,
    //  last enqueued NCCL work: 1582, last completed NCCL work: 1579." (also "Timeout at NCCL
    //  work: N, ..." in torch 2.3-2.4)
    LogEvent e = begin("pytorch.watchdog_exception");
    AddProcessGroup(m, e);
    absl::string_view work = IntAfter(m, "at work: ");
    if (work.empty()) work = IntAfter(m, "at NCCL work: ");
    SetIf(e, "seq_num", work);
    SetIf(e, "last_enqueued", IntAfter(m, "last enqueued NCCL work: "));
    SetIf(e, "last_completed", IntAfter(m, "last completed NCCL work: "));
    finish(e);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (absl::string_view r = scan::After(m, "NCCL error in: ", &found); found) {
    // "NCCL error in: .../ProcessGroupNCCL.cpp:1970, unhandled system error (run with
    //  NCCL_DEBUG=INFO for details), NCCL version 2.19.3"
    LogEvent e = begin("pytorch.nccl_error");
    AddProcessGroup(m, e);
    size_t comma = r.find(", ");
    Set(e, "nccl_location", r.substr(0, comma));
    absl::string_view rest = comma == absl::string_view::npos ? "" : r.substr(comma + 2);
    absl::string_view version = scan::After(rest, "NCCL version ", &found);
    if (found) rest = rest.substr(0, rest.find("NCCL version "));
    rest = rest.substr(0, rest.find(" (run with"));
    SetIf(e, "error", scan::StripTrailing(Trim(rest), ","));
    SetIf(e, "nccl_version", scan::LeadingWord(version));
    finish(e);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (absl::StrContains(m, "Last error:")) {
    quote_next_ = true;
    return Outcome::kKnown;
  }
  if (absl::string_view r = scan::After(m, "DistBackendError: ", &found); found) {
    LogEvent e = begin("pytorch.process_group_error");
    Set(e, "exception_type", "DistBackendError");
    AddProcessGroup(r, e);
    Set(e, "message", Trim(r));
    finish(e);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (glog && (g.severity == 'E' || g.severity == 'F') && !IsChatter(m)) {
    LogEvent e = begin("pytorch.error");
    AddProcessGroup(m, e);
    Set(e, "message", m);
    finish(e);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (glog || !line.global_rank.empty()) return Outcome::kKnown;
  return Outcome::kNotMine;
}

}  // namespace railwatch::logs::internal
