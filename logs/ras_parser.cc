#include "logs/ras_parser.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsDigits;
using scan::Trim;
using scan::Words;

bool IsUnderline(absl::string_view t) {
  return !t.empty() && t.find_first_not_of('=') == absl::string_view::npos;
}

bool AllDigits(const std::vector<absl::string_view>& w) {
  for (absl::string_view x : w) {
    if (!IsDigits(x)) return false;
  }
  return !w.empty();
}

// "ranks have launched up to operation 640" style counts: "N <what> M".
absl::string_view LastWord(absl::string_view t) {
  std::vector<absl::string_view> w = Words(t);
  return w.empty() ? absl::string_view() : w.back();
}

}  // namespace

// "Group     Comms     Nodes     Ranks ..." (the communicators table's first header line).
bool IsGroupTableHeader(absl::string_view t) {
  std::vector<absl::string_view> w = Words(t);
  return w.size() >= 4 && w[0] == "Group" && w[1] == "Comms" && w[2] == "Nodes";
}

// "#0-0 (fa93daea854b060b) MISMATCH": a communicator's block.
bool IsCommBlockHeader(absl::string_view t) {
  std::vector<absl::string_view> w = Words(t);
  return w.size() >= 3 && w[0].size() >= 4 && w[0][0] == '#' && scan::IsDigit(w[0][1]) &&
         absl::StrContains(w[0], "-") && absl::StartsWith(w[1], "(") && absl::EndsWith(w[1], ")");
}

bool RasParser::StartsReport(absl::string_view text) {
  const absl::string_view t = Trim(text);
  return (absl::StartsWith(text, "NCCL version ") && absl::StrContains(text, "compiled with")) ||
         t == "Job summary" || absl::StartsWith(t, "Communicators... (") ||
         IsGroupTableHeader(t) || ((t == "Errors" || t == "Warnings") && t == text) ||
         (t == text && IsCommBlockHeader(t));
}

Outcome RasParser::FeedMonitorLine(const Line& line, Context& ctx) {
  // "[YYYY-MM-DD hh:mm:ss] EVENT: details"; the line reader has already taken the timestamp
  // off `text` (and into time_unix_nano), so it is read back from `raw`.
  absl::string_view rest = line.text;
  const size_t open = line.raw.find('[');
  if (open == absl::string_view::npos || line.raw.size() < open + 22 ||
      line.raw[open + 20] != ']') {
    return Outcome::kNotMine;
  }
  const absl::string_view stamp = line.raw.substr(open + 1, 19);
  if (stamp[4] != '-' || stamp[7] != '-' || stamp[10] != ' ' || stamp[13] != ':') {
    return Outcome::kNotMine;
  }
  if (absl::StartsWith(rest, "[")) rest = Trim(rest.substr(std::min(rest.size(), size_t{21})));
  const size_t colon = rest.find(": ");
  if (colon == absl::string_view::npos || colon == 0) return Outcome::kNotMine;
  const absl::string_view event = rest.substr(0, colon);
  for (char c : event) {
    if (!(c == '_' || (c >= 'A' && c <= 'Z'))) return Outcome::kNotMine;
  }
  const absl::string_view details = rest.substr(colon + 2);
  // The peer: "Process 1524345 on node 172.16.64.245 managing GPU 1".
  std::vector<absl::string_view> w = Words(details);
  if (w.size() < 5 || w[0] != "Process" || !IsDigits(w[1]) || w[2] != "on" || w[3] != "node") {
    return Outcome::kNotMine;
  }
  LogEvent e = ctx.Begin("nccl_ras.event", line);
  Set(e, "event", event);
  Set(e, "timestamp", stamp);
  Set(e, "pid", w[1]);
  Set(e, "node", w[4]);
  if (w.size() >= 8 && w[5] == "managing" && w[6] == "GPU") Set(e, "gpus", w[7]);
  Set(e, "details", details);
  ctx.Emit(std::move(e));
  return Outcome::kEvent;
}

void RasParser::Append(std::string& list, absl::string_view value) {
  if (value.empty()) return;
  for (absl::string_view existing : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    if (existing == value) return;
  }
  absl::StrAppend(&list, list.empty() ? "" : ",", value);
}

void RasParser::Start(const Line& line, Context& ctx) {
  Finish(ctx);
  active_ = true;
  started_mid_ = false;
  section_ = Section::kHeader;
  report_ = ctx.Begin("nccl_ras.report", line);
}

Outcome RasParser::Feed(const Line& line, Context& ctx) {
  absl::string_view text = line.text;
  absl::string_view t = Trim(text);
  if (!active_ && StartsReport(text) && !absl::StartsWith(text, "NCCL version ") &&
      t != "Job summary") {
    // A report pasted from its middle: begin it in the section this line opens.
    Start(line, ctx);
    started_mid_ = true;
    if (absl::StartsWith(t, "Communicators... (") || IsGroupTableHeader(t)) {
      section_ = Section::kCommunicators;
    } else {
      section_ = t == "Warnings" ? Section::kWarnings : Section::kErrors;
      if (t == "Errors" || t == "Warnings") return Outcome::kKnown;
    }
  } else if (StartsReport(text) && (absl::StartsWith(text, "NCCL version ") ||
                                    t == "Job summary")) {
    if (!active_ || absl::StartsWith(text, "NCCL version ") || section_ != Section::kHeader) {
      Start(line, ctx);
    }
    bool found;
    absl::string_view v = scan::After(t, "NCCL version ", &found);
    if (found) {
      Set(report_, "nccl_version", scan::LeadingWord(v));
      SetIf(report_, "cuda_version", scan::LeadingWord(scan::After(t, "with CUDA ", &found)));
    } else {
      section_ = Section::kJob;
    }
    return Outcome::kEvent;
  }
  if (!active_) return Outcome::kNotMine;
  if (IsUnderline(t)) return Outcome::kKnown;
  bool indented = !text.empty() && (text[0] == ' ' || text[0] == '\t');

  if (absl::StartsWith(t, "CUDA runtime version ")) {
    std::vector<absl::string_view> w = Words(t);
    if (w.size() >= 7) {
      Set(report_, "cuda_runtime", scan::StripTrailing(w[3], ","));
      Set(report_, "cuda_driver", w[6]);
    }
    return Outcome::kEvent;
  }
  if (absl::StartsWith(t, "Communicators...")) {
    section_ = Section::kCommunicators;
    size_t lp = t.find('(');
    if (lp != absl::string_view::npos) {
      Set(report_, "collection_s", scan::StripTrailing(t.substr(lp + 1), "s)"));
    }
    return Outcome::kEvent;
  }
  if (t == "Errors") {
    section_ = Section::kErrors;
    block_.clear();
    return Outcome::kKnown;
  }
  if (t == "Warnings") {
    section_ = Section::kWarnings;
    block_.clear();
    return Outcome::kKnown;
  }
  switch (section_) {
    case Section::kHeader:
      return indented ? Outcome::kKnown : Outcome::kNotMine;
    case Section::kJob:
      return JobLine(t);
    case Section::kCommunicators:
      // A pasted report may go on from the table to a communicator's block with no "Errors"
      // or "Warnings" title between them (the title elided).
      if (!IsCommBlockHeader(t)) return GroupLine(line, t, ctx);
      section_ = Section::kErrors;
      [[fallthrough]];
    case Section::kErrors:
    case Section::kWarnings:
      if (absl::StartsWith(t, "#") && t.size() > 1 && scan::IsDigit(t[1])) {
        // "#0-0 (fa93daea854b060b) MISMATCH"
        std::vector<absl::string_view> w = Words(t);
        std::vector<absl::string_view> gc = absl::StrSplit(w[0].substr(1), '-');
        if (w.size() < 3 || gc.size() != 2 || w[1].size() < 3) {
          ctx.Problem(line.number, "RAS communicator block header not understood");
          return Outcome::kMalformed;
        }
        LogEvent issue = ctx.Begin("nccl_ras.comm_issue", line);
        Set(issue, "group", gc[0]);
        Set(issue, "comm", gc[1]);
        Set(issue, "comm_hash", w[1].substr(1, w[1].size() - 2));
        Set(issue, "issue", w[2]);
        if (const std::string* v = report_.Get("nccl_version")) issue.Set("nccl_version", *v);
        issues_.push_back(std::move(issue));
        block_.clear();
        return Outcome::kEvent;
      }
      if (!indented) {
        if (t == "INCOMPLETE" || t == "DEAD" || t == "TIMEOUT") {
          block_ = std::string(t);
          return Outcome::kEvent;
        }
        return Outcome::kNotMine;
      }
      return DetailLine(t);
  }
  return Outcome::kKnown;
}

Outcome RasParser::JobLine(absl::string_view t) {
  std::vector<absl::string_view> w = Words(t);
  if (absl::StartsWith(t, "(total)") || absl::StartsWith(t, "per ") ||
      absl::StrContains(t, "per node") || absl::StrContains(t, "per process")) {
    units_line_ = std::string(t);
    return Outcome::kKnown;
  }
  if (absl::StrContains(t, "Nodes") || absl::StrContains(t, "Processes")) {
    units_line_.clear();
    return Outcome::kKnown;
  }
  if (AllDigits(w)) {
    if (w.size() == 5) {
      Set(report_, "nodes", w[0]);
      Set(report_, "processes_per_node", w[1]);
      Set(report_, "gpus_per_process", w[2]);
      Set(report_, "processes", w[3]);
      Set(report_, "gpus", w[4]);
    } else if (w.size() == 3 && absl::StartsWith(units_line_, "(total)")) {
      Set(report_, "nodes", w[0]);
      Set(report_, "processes", w[1]);
      Set(report_, "gpus", w[2]);
    }
    return Outcome::kEvent;
  }
  if (absl::StartsWith(t, "The outlier node")) return Outcome::kKnown;
  if (absl::StartsWith(t, "Node ")) {
    // "Node 10.0.0.7 running processes 1234,1235"
    if (w.size() >= 2) Append(outlier_nodes_, w[1]);
    if (w.size() >= 5) {
      for (absl::string_view pid : absl::StrSplit(w[4], ',')) Append(outlier_pids_, pid);
    }
    return Outcome::kEvent;
  }
  return Outcome::kKnown;
}

Outcome RasParser::GroupLine(const Line& line, absl::string_view t, Context& ctx) {
  if (absl::StartsWith(t, "Group") || absl::StartsWith(t, "#")) return Outcome::kKnown;
  if (absl::StartsWith(t, "No communicator data")) {
    report_.Set("groups", "0");
    return Outcome::kEvent;
  }
  std::vector<absl::string_view> w = Words(t);
  if (w.empty() || !IsDigits(w[0])) return Outcome::kKnown;
  if (w.size() != 8) {
    ctx.Problem(line.number, absl::StrCat("RAS group row with ", w.size(), " columns, want 8"));
    return Outcome::kMalformed;
  }
  static constexpr absl::string_view kColumns[] = {
      "comms",          "nodes_per_comm", "ranks_per_node", "ranks_per_comm",
      "ranks_in_group", "status",         "errors"};
  for (size_t i = 0; i < 7; ++i) {
    report_.Set(absl::StrCat("group.", w[0], ".", kColumns[i]), std::string(w[i + 1]));
  }
  Append(statuses_, w[6]);
  for (absl::string_view err : absl::StrSplit(w[7], ',')) {
    if (err != "OK") Append(errors_, err);
  }
  ++groups_;
  return Outcome::kEvent;
}

void RasParser::AddRankDetail(absl::string_view t) {
  // "Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124", optionally with
  // "has launched up to operation N" / "has status S" before "--".
  std::vector<absl::string_view> w = Words(t);
  LogEvent* issue = issues_.empty() || !block_.empty() ? nullptr : &issues_.back();
  auto add = [&](absl::string_view key, absl::string_view value, std::string& report_list) {
    Append(report_list, value);
    if (issue == nullptr) return;
    std::string list = issue->Get(std::string(key)) ? *issue->Get(std::string(key)) : "";
    Append(list, value);
    issue->Set(std::string(key), list);
  };
  std::string unused;
  if (w.size() >= 2) add("ranks", w[1], outlier_ranks_);
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] == "GPU") add("gpus", w[i + 1], unused);
    if (w[i] == "process") add("pids", w[i + 1], outlier_pids_);
    if (w[i] == "node") add("nodes", w[i + 1], outlier_nodes_);
  }
}

Outcome RasParser::DetailLine(absl::string_view t) {
  std::vector<absl::string_view> w = Words(t);
  if (!block_.empty()) {
    // Job-wide problems: "Missing communicator data from 2 job processes", "1 job process is
    // considered dead", "Process 1234 on node 10.0.0.7 managing GPU 3", timeouts.
    if (block_ == "INCOMPLETE" && absl::StartsWith(t, "Missing communicator data from ")) {
      Set(report_, "missing_processes", w.size() > 4 ? w[4] : "");
    } else if (block_ == "DEAD" && absl::StrContains(t, "considered dead")) {
      Set(report_, "dead_processes", w[0]);
    } else if (block_ == "TIMEOUT" && absl::StartsWith(t, "Encountered ")) {
      Set(report_, "timeouts", w.size() > 1 ? w[1] : "");
    } else if (absl::StartsWith(t, "Process ") && w.size() >= 5) {
      // "Process 3487984 on node 172.16.64.213 managing GPU 5"
      Append(block_ == "DEAD" ? dead_nodes_ : missing_nodes_, w[4]);
      Append(block_ == "DEAD" ? dead_pids_ : missing_pids_, w[1]);
    }
    return Outcome::kEvent;
  }
  if (issues_.empty()) return Outcome::kKnown;
  LogEvent& issue = issues_.back();
  std::string details = issue.Get("details") ? *issue.Get("details") : "";
  if (details.size() < 2048) absl::StrAppend(&details, details.empty() ? "" : "; ", t);
  issue.Set("details", details);
  bool found;
  if (absl::string_view op = scan::After(t, "Communicator ranks have different ", &found);
      found && absl::EndsWith(op, " operation counts")) {
    Set(issue, "op", op.substr(0, op.size() - 17));
  } else if (absl::StartsWith(t, "Rank ")) {
    AddRankDetail(t);
    // 2.30's single-rank form: "Rank 7 has launched up to operation 60 -- GPU 3 managed by ..."
    if (const size_t dashes = t.find(" -- "); absl::StrContains(t, " has launched up to operation ") &&
                                              dashes != absl::string_view::npos) {
      std::string list = issue.Get("op_counts") ? *issue.Get("op_counts") : "";
      absl::StrAppend(&list, list.empty() ? "" : ",", LastWord(t.substr(0, dashes)), ":1");
      issue.Set("op_counts", list);
    }
  } else if (absl::StartsWith(t, "The missing rank") && absl::StrContains(t, ":")) {
    // 2.24: "The missing rank: 21" / "The missing ranks: 3, 21"
    for (absl::string_view id : absl::StrSplit(t.substr(t.find(':') + 1), ',')) {
      id = Trim(id);
      if (!IsDigits(id)) continue;
      std::string list = issue.Get("missing_rank_ids") ? *issue.Get("missing_rank_ids") : "";
      Append(list, id);
      issue.Set("missing_rank_ids", list);
    }
  } else if (w.size() >= 2 && IsDigits(w[0]) && w[1] == "ranks") {
    // "30 ranks have launched up to operation 640", "2 ranks have status RUNNING".
    absl::string_view key = absl::StrContains(t, "status") ? "status_counts" : "op_counts";
    absl::string_view value = absl::StrContains(t, "not launched any") ? "0" : LastWord(t);
    std::string list = issue.Get(std::string(key)) ? *issue.Get(std::string(key)) : "";
    absl::StrAppend(&list, list.empty() ? "" : ",", value, ":", w[0]);
    issue.Set(std::string(key), list);
  } else if (absl::StartsWith(t, "Missing communicator data from ") && w.size() > 4) {
    Set(issue, "missing_ranks", w[4]);
  }
  return Outcome::kEvent;
}

void RasParser::Finish(Context& ctx) {
  if (!active_) return;
  active_ = false;
  // A lone "Errors" or "Warnings" line of some other log is not a report: a report begun in
  // its middle is kept only if something of one followed.
  const bool empty = started_mid_ && issues_.empty() && groups_ == 0 && report_.fields.empty() &&
                     dead_nodes_.empty() && missing_nodes_.empty();
  started_mid_ = false;
  if (empty) {
    report_ = LogEvent();
    block_.clear();
    return;
  }
  report_.Set("groups", absl::StrCat(groups_));
  if (!statuses_.empty()) report_.Set("status", statuses_);
  report_.Set("errors", errors_.empty() ? "OK" : errors_);
  report_.Set("issues", absl::StrCat(issues_.size()));
  if (!outlier_nodes_.empty()) report_.Set("outlier_nodes", outlier_nodes_);
  if (!outlier_ranks_.empty()) report_.Set("outlier_ranks", outlier_ranks_);
  if (!outlier_pids_.empty()) report_.Set("outlier_pids", outlier_pids_);
  if (!dead_nodes_.empty()) report_.Set("dead_nodes", dead_nodes_);
  if (!missing_nodes_.empty()) report_.Set("missing_nodes", missing_nodes_);
  if (!dead_pids_.empty()) report_.Set("dead_pids", dead_pids_);
  if (!missing_pids_.empty()) report_.Set("missing_pids", missing_pids_);
  ctx.Emit(std::move(report_));
  for (LogEvent& issue : issues_) ctx.Emit(std::move(issue));
  report_ = LogEvent();
  issues_.clear();
  block_.clear();
  units_line_.clear();
  statuses_.clear();
  errors_.clear();
  outlier_nodes_.clear();
  outlier_ranks_.clear();
  outlier_pids_.clear();
  dead_nodes_.clear();
  missing_nodes_.clear();
  dead_pids_.clear();
  missing_pids_.clear();
  groups_ = 0;
}

}  // namespace railwatch::logs::internal
