#pragma once

// PyTorch ProcessGroupNCCL errors: watchdog timeouts (every format since torch 1.x), the
// watchdog's "last enqueued/completed work" report, c10::DistBackendError termination blocks
// with their C++ frames, and "NCCL error in: ..." exceptions.

#include <optional>

#include "absl/strings/string_view.h"
#include "logs/log_event.h"
#include "logs/parse_context.h"

namespace railwatch::logs::internal {

class PytorchParser {
 public:
  // Could `line` be PyTorch's? (Cheap substring tests; Feed decides.)
  static bool Claims(const Line& line);

  // Lines that continue a pending termination block (C++ frames, "Exception raised from")
  // are taken here; any other line ends the block (it is emitted) and returns kNotMine.
  Outcome Continue(const Line& line, Context& ctx);

  Outcome Feed(const Line& line, Context& ctx);

  // True once, for the line after "Last error:": it quotes an NCCL error message.
  bool TakeQuotedNcclError() {
    bool q = quote_next_;
    quote_next_ = false;
    return q;
  }

  void Finish(Context& ctx) { FlushPending(ctx); }

 private:
  void FlushPending(Context& ctx);

  std::optional<LogEvent> pending_;  // a pytorch.process_group_error being assembled
  int frames_ = 0;
  bool quote_next_ = false;
};

}  // namespace railwatch::logs::internal
