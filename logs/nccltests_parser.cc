#include "logs/nccltests_parser.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsDigits;
using scan::IsInteger;
using scan::IsNumber;
using scan::Trim;
using scan::Words;

// A data type column: float, bfloat16, int8, uint64, half, f8e4m3 ...
bool IsTypeName(absl::string_view w) {
  if (w.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(w[0]))) return false;
  for (char c : w) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

bool IsMetric(absl::string_view w) { return IsNumber(w) || w == "N/A"; }

// "size count type" or "size count type redop [root]": a row starts with two integers and a
// type name.
bool LooksLikeRow(const std::vector<absl::string_view>& w) {
  return w.size() >= 4 && IsDigits(w[0]) && IsDigits(w[1]) && IsTypeName(w[2]);
}

std::string SnakeKey(absl::string_view key) {
  std::string out;
  for (char c : key) {
    if (c >= 'A' && c <= 'Z') {
      out.push_back('_');
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else if (c != ':') {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

bool NcclTestsParser::ObserveCommand(absl::string_view text) {
  for (absl::string_view w : Words(text)) {
    if (absl::EndsWith(w, "_perf") || absl::EndsWith(w, "_perf_mpi")) {
      size_t slash = w.rfind('/');
      test_ = std::string(slash == absl::string_view::npos ? w : w.substr(slash + 1));
      return true;
    }
  }
  return false;
}

void NcclTestsParser::ResetTable() {
  rows_ = 0;
  max_busbw_ = -1;
  max_busbw_text_.clear();
  max_busbw_size_.clear();
  wrong_total_ = 0;
  wrong_seen_ = false;
  out_of_bounds_.clear();
  out_of_bounds_status_.clear();
}

Outcome NcclTestsParser::Feed(const Line& line, Context& ctx) {
  absl::string_view t = Trim(line.text);
  if (absl::ConsumePrefix(&t, "#")) return Comment(line, Trim(t), ctx);
  return Row(line, ctx);
}

Outcome NcclTestsParser::Comment(const Line& line, absl::string_view t, Context& ctx) {
  std::vector<absl::string_view> w = Words(t);
  if (w.empty() || t == "Using devices" || absl::StartsWith(t, "out-of-place") ||
      absl::StartsWith(t, "(B)")) {
    return Outcome::kKnown;
  }
  bool found;
  if (absl::StartsWith(t, "nThread ")) {
    ResetTable();
    LogEvent e = ctx.Begin("nccltests.header", line);
    SetIf(e, "test", test_);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      absl::string_view k = w[i], v = w[i + 1];
      if (k == "nThread" || k == "nGpus") {
        e.Set(scan::Lower(k), std::string(v));
        ++i;
      } else if (k == "minBytes" || k == "maxBytes") {
        e.Set(SnakeKey(k), std::string(v));
        ++i;
      } else if (k == "step:") {
        size_t lp = v.find('(');
        Set(e, "step", v.substr(0, lp));
        if (lp != absl::string_view::npos) {
          Set(e, "step_kind", scan::StripTrailing(v.substr(lp + 1), ")"));
        }
        ++i;
      } else if ((k == "warmup" || k == "agg") && v == "iters:" && i + 2 < w.size()) {
        e.Set(absl::StrCat(k, "_iters"), std::string(w[i + 2]));
        i += 2;
      } else if (absl::EndsWith(k, ":")) {
        e.Set(SnakeKey(k), std::string(v));
        ++i;
      }
    }
    SetIf(e, "nccl_headers", version_headers_);
    SetIf(e, "nccl_library", version_library_);
    Context::AddLauncher(e, line);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (w[0] == "Rank" && absl::StrContains(t, " on ")) {
    // "Rank  0 [Group  0] Pid   1465 on ip-10-0-139-244 device  0 [0x00] NVIDIA A10G"
    LogEvent e = ctx.Begin("nccltests.device", line);
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] == "Rank") Set(e, "rank", w[i + 1]);
      if (w[i] == "Group") Set(e, "group", w[i + 1]);
      if (w[i] == "Pid") Set(e, "pid", w[i + 1]);
      if (w[i] == "on") Set(e, "host", w[i + 1]);
      if (w[i] == "device") {
        Set(e, "device", w[i + 1]);
        if (i + 2 < w.size() && absl::StartsWith(w[i + 2], "[")) {
          Set(e, "bus_id", scan::StripTrailing(w[i + 2].substr(1), "]"));
          size_t name_at = t.find(w[i + 2]) + w[i + 2].size();
          SetIf(e, "gpu", Trim(t.substr(name_at)));
        }
        break;
      }
    }
    Context::AddLauncher(e, line);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (w.size() >= 3 && w[0] == "size" && w[1] == "count" && w[2] == "type") {
    ResetTable();
    for (absl::string_view col : w) {
      if (col == "#wrong" || col == "error") error_column_ = std::string(col);
    }
    return Outcome::kKnown;
  }
  if (absl::string_view r = scan::After(t, "Out of bounds values", &found); found) {
    std::vector<absl::string_view> v = Words(r);
    if (v.size() >= 2) out_of_bounds_ = std::string(v[1]);
    if (v.size() >= 3) out_of_bounds_status_ = std::string(v[2]);
    return Outcome::kEvent;
  }
  if (absl::string_view r = scan::After(t, "Avg bus bandwidth", &found); found) {
    std::vector<absl::string_view> v = Words(r);
    if (v.size() < 2 || !IsNumber(v[1])) {
      ctx.Problem(line.number, "nccl-tests 'Avg bus bandwidth' without a number");
      return Outcome::kMalformed;
    }
    EmitSummary(line, v[1], ctx);
    return Outcome::kEvent;
  }
  for (absl::string_view x : w) {
    if (absl::StartsWith(x, "nccl-headers=")) version_headers_ = std::string(x.substr(13));
    if (absl::StartsWith(x, "nccl-library=")) version_library_ = std::string(x.substr(13));
  }
  if (absl::string_view r = scan::After(t, "Collective test starting: ", &found); found) {
    test_ = std::string(scan::LeadingWord(r));
  }
  if (!version_headers_.empty() || absl::StartsWith(t, "Collective test") ||
      absl::StartsWith(t, "nccl-tests")) {
    return Outcome::kKnown;
  }
  return Outcome::kNotMine;
}

Outcome NcclTestsParser::Row(const Line& line, Context& ctx) {
  std::vector<absl::string_view> w = Words(line.text);
  if (!LooksLikeRow(w)) return Outcome::kNotMine;
  size_t i = 3;
  absl::string_view redop, root;
  if (!IsMetric(w[i])) redop = w[i++];
  if (w.size() - i == 9 && IsInteger(w[i])) root = w[i++];
  size_t metrics = w.size() - i;
  if (metrics != 8 && metrics != 4) {
    ctx.Problem(line.number, absl::StrCat("nccl-tests row with ", w.size(), " columns"));
    return Outcome::kMalformed;
  }
  for (size_t j = i; j < w.size(); ++j) {
    if (!IsMetric(w[j])) {
      ctx.Problem(line.number, absl::StrCat("nccl-tests row: '", w[j], "' is not a number"));
      return Outcome::kMalformed;
    }
  }
  // Which validation column: the header said, or the value shows (a count vs "0e+00").
  std::string error_column = error_column_;
  if (error_column.empty()) {
    absl::string_view v = w[i + 3];
    error_column = IsInteger(v) ? "#wrong" : "error";
  }
  absl::string_view suffix = error_column == "#wrong" ? "wrong" : "error";

  LogEvent e = ctx.Begin("nccltests.result", line);
  Set(e, "size_bytes", w[0]);
  Set(e, "count", w[1]);
  Set(e, "type", w[2]);
  SetIf(e, "redop", redop);
  SetIf(e, "root", root);
  static constexpr absl::string_view kPlaces[] = {"oop", "ip"};
  for (size_t p = 0; p < metrics / 4; ++p) {
    size_t b = i + 4 * p;
    Set(e, absl::StrCat(kPlaces[p], "_time_us"), w[b]);
    Set(e, absl::StrCat(kPlaces[p], "_algbw_gbps"), w[b + 1]);
    Set(e, absl::StrCat(kPlaces[p], "_busbw_gbps"), w[b + 2]);
    Set(e, absl::StrCat(kPlaces[p], "_", suffix), w[b + 3]);
    int64_t wrong;
    if (suffix == "wrong" && absl::SimpleAtoi(w[b + 3], &wrong)) {
      wrong_total_ += wrong;
      wrong_seen_ = true;
    }
  }
  Set(e, "layout",
      redop.empty() ? (root.empty() ? "no_redop" : "root")
                    : (root.empty() ? "redop" : "redop_root"));
  Context::AddLauncher(e, line);
  ctx.Emit(std::move(e));

  double busbw;
  if (absl::SimpleAtod(w[i + 2], &busbw) && busbw > max_busbw_) {
    max_busbw_ = busbw;
    max_busbw_text_ = std::string(w[i + 2]);
    max_busbw_size_ = std::string(w[0]);
  }
  ++rows_;
  last_row_number_ = line.number;
  last_row_time_ = line.time_unix_nano;
  last_row_raw_ = std::string(line.raw.substr(0, kMaxRawBytes));
  return Outcome::kEvent;
}

void NcclTestsParser::EmitSummary(const Line& line, absl::string_view avg_busbw, Context& ctx) {
  LogEvent e = ctx.Begin("nccltests.summary", line);
  SetIf(e, "test", test_);
  SetIf(e, "avg_busbw_gbps", avg_busbw);
  Set(e, "rows", absl::StrCat(rows_));
  SetIf(e, "max_busbw_gbps", max_busbw_text_);
  SetIf(e, "max_busbw_size_bytes", max_busbw_size_);
  if (wrong_seen_) Set(e, "wrong_total", absl::StrCat(wrong_total_));
  SetIf(e, "out_of_bounds", out_of_bounds_);
  SetIf(e, "out_of_bounds_status", out_of_bounds_status_);
  Set(e, "complete", avg_busbw.empty() ? "0" : "1");
  Context::AddLauncher(e, line);
  ctx.Emit(std::move(e));
  ResetTable();
}

void NcclTestsParser::Finish(Context& ctx) {
  if (rows_ == 0) return;
  Line anchor;
  anchor.number = last_row_number_;
  anchor.time_unix_nano = last_row_time_;
  anchor.raw = last_row_raw_;
  EmitSummary(anchor, "", ctx);
}

}  // namespace railwatch::logs::internal
