#pragma once

// NCCL reports a failure once (a WARN) and then each function that passes the error up prints
// "file.cc:line -> code" on the same thread, ending at the thread's top ("[Progress Thread]").
// ErrorChains groups those lines, per host:pid:tid, into one nccl.error_chain event headed by
// the first error.

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "logs/log_event.h"
#include "logs/nccl_line.h"
#include "logs/parse_context.h"

namespace railwatch::logs::internal {

class ErrorChains {
 public:
  // A chain whose last line is this many lines old is complete (its thread went quiet).
  static constexpr int kStaleLines = 2000;

  // A WARN from `nl`'s thread: ends that thread's previous chain and starts one headed by
  // `first` (the event the WARN produced).
  void Open(const NcclLine& nl, const LogEvent& first, Context& ctx);

  // "location -> code [thread]" from `nl`'s thread (opens a headless chain if none is open).
  void Add(const NcclLine& nl, const Line& line, absl::string_view location, absl::string_view code,
           absl::string_view thread, Context& ctx);

  // Any other line from `nl`'s thread ends its chain.
  void End(const NcclLine& nl, Context& ctx);

  // Emits chains that went stale by `line_number`.
  void Tick(int line_number, Context& ctx);

  // Emits every open chain, oldest first.
  void Flush(Context& ctx);

  bool empty() const { return open_.empty(); }

 private:
  struct Chain {
    LogEvent event;  // fields filled as steps arrive
    std::string steps;
    std::string first_code;
    std::string last_code;
    std::string thread;
    std::vector<std::pair<std::string, std::string>> launcher;  // appended last
    int depth = 0;
    int last_line = 0;
  };

  void Emit(Chain& chain, Context& ctx);

  absl::flat_hash_map<std::string, Chain> open_;
};

}  // namespace railwatch::logs::internal
