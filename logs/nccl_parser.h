#pragma once

// NCCL_DEBUG output, 2.5 to 2.27: version, communicator init/teardown, the network in use,
// channels, environment settings, and errors (see nccl_errors.h) with their return-code chains.

#include "logs/nccl_chains.h"
#include "logs/nccl_line.h"
#include "logs/parse_context.h"

namespace railwatch::logs::internal {

class NcclParser {
 public:
  // True for the version line that rank 0 of NCCL <= 2.21 prints without the prefix.
  static bool IsBareVersionLine(absl::string_view text);

  // A line with the NCCL prefix (ParseNcclLine succeeded on line.text), or a bare version line.
  Outcome Feed(const Line& line, const NcclLine* nl, Context& ctx);

  // An NCCL error message quoted without any prefix (PyTorch's "Last error:" block): emits an
  // event only when the message is a known error.
  Outcome FeedBareError(const Line& line, Context& ctx);

  void Tick(const Line& line, Context& ctx) { chains_.Tick(line.number, ctx); }
  void Finish(Context& ctx) { chains_.Flush(ctx); }

 private:
  Outcome Warn(const Line& line, const NcclLine& nl, Context& ctx);
  Outcome Info(const Line& line, const NcclLine& nl, Context& ctx);

  ErrorChains chains_;
};

}  // namespace railwatch::logs::internal
