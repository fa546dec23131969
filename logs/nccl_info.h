#pragma once

// NCCL INFO messages worth an event: version, bootstrap interface, net plugin, network devices,
// communicator init/split/teardown, init timings, channels, environment settings.

#include "absl/strings/string_view.h"
#include "logs/log_event.h"

namespace railwatch::logs::internal {

// Gives `e` the kind and fields of `message` when it is one of those; false otherwise (the line
// is known NCCL chatter).
bool DescribeNcclInfo(absl::string_view message, LogEvent& e);

// "NCCL version 2.22.3+cuda12.5" (with or without the line prefix): sets version and cuda.
bool DescribeNcclVersion(absl::string_view message, LogEvent& e);

// "transport/net.cc:1302 -> 6 [Progress Thread]": the pieces of a return-code trace line.
bool ParseReturnTrace(absl::string_view message, absl::string_view* location,
                      absl::string_view* code, absl::string_view* thread);

}  // namespace railwatch::logs::internal
