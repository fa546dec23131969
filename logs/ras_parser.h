#pragma once

// NCCL RAS status reports: the text that `ncclras` (or `echo STATUS | nc localhost 28028`)
// prints, NCCL 2.24+. One nccl_ras.report event per report, then one nccl_ras.comm_issue per
// "#G-C (hash) MISMATCH|ERROR|INCOMPLETE" block, emitted when the report ends.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "logs/log_event.h"
#include "logs/parse_context.h"

namespace railwatch::logs::internal {

class RasParser {
 public:
  // A report begins: "NCCL version 2.26.2 compiled with CUDA 12.6", "Job summary", or, in a
  // report pasted from its middle, "Communicators... (2.05s)", the group table's header,
  // "Errors" or "Warnings", or a "#0-0 (cf264af53edbe986) INCOMPLETE" communicator block.
  static bool StartsReport(absl::string_view text);

  // One line of `ncclras -m` (MONITOR mode, 2.29+): "[2025-12-19 13:07:07] PEER_DEAD: Process
  // 1524345 on node 172.16.64.245 managing GPU 1" becomes an nccl_ras.event. kNotMine when the
  // line is not one.
  static Outcome FeedMonitorLine(const Line& line, Context& ctx);

  bool active() const { return active_; }

  // Lines of a report (and the line that starts one). kNotMine ends the report: the line is
  // something else.
  Outcome Feed(const Line& line, Context& ctx);

  // Emits the report in progress, if any.
  void Finish(Context& ctx);

 private:
  enum class Section { kHeader, kJob, kCommunicators, kErrors, kWarnings };

  void Start(const Line& line, Context& ctx);
  Outcome JobLine(absl::string_view t);
  Outcome GroupLine(const Line& line, absl::string_view t, Context& ctx);
  Outcome DetailLine(absl::string_view t);
  void AddRankDetail(absl::string_view t);
  static void Append(std::string& list, absl::string_view value);

  bool active_ = false;
  bool started_mid_ = false;  // begun at a section, not at its title: maybe not a report
  Section section_ = Section::kHeader;
  LogEvent report_;
  std::vector<LogEvent> issues_;
  std::string block_;       // "INCOMPLETE", "DEAD", "TIMEOUT" outside a #G-C block
  std::string units_line_;  // the second header line of the last job-summary table
  std::string statuses_, errors_, outlier_nodes_, outlier_ranks_, outlier_pids_;
  std::string dead_nodes_, missing_nodes_, dead_pids_, missing_pids_;
  int groups_ = 0;
};

}  // namespace railwatch::logs::internal
