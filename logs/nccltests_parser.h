#pragma once

// nccl-tests output (all_reduce_perf and friends): the parameter header, the device list, one
// event per result row in every column layout nccl-tests has used, and the summary
// ("Out of bounds values", "Avg bus bandwidth").

#include <string>

#include "absl/strings/string_view.h"
#include "logs/parse_context.h"

namespace railwatch::logs::internal {

class NcclTestsParser {
 public:
  // '#' lines of nccl-tests and result rows; kNotMine for anything else.
  Outcome Feed(const Line& line, Context& ctx);

  // A command line such as "mpirun ... all_reduce_perf -b 8": remembers the test's name. True
  // when it named one.
  bool ObserveCommand(absl::string_view text);

  // A table whose summary never came (a cut log) still gets one, marked complete=0.
  void Finish(Context& ctx);

 private:
  Outcome Comment(const Line& line, absl::string_view t, Context& ctx);
  Outcome Row(const Line& line, Context& ctx);
  // avg_busbw is "" when the table ended without its "Avg bus bandwidth" line.
  void EmitSummary(const Line& line, absl::string_view avg_busbw, Context& ctx);
  void ResetTable();

  std::string test_;
  std::string version_headers_, version_library_;
  std::string error_column_;  // "#wrong" or "error", from the column header when seen
  std::string out_of_bounds_, out_of_bounds_status_;
  int rows_ = 0;
  double max_busbw_ = -1;
  std::string max_busbw_text_, max_busbw_size_;
  int64_t wrong_total_ = 0;
  bool wrong_seen_ = false;
  // Where the last row was, to anchor a summary emitted at Finish.
  int last_row_number_ = 0;
  int64_t last_row_time_ = 0;
  std::string last_row_raw_;
};

}  // namespace railwatch::logs::internal
