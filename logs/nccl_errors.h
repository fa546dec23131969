#pragma once

// NCCL error messages (the text after "NCCL WARN"): IB completion errors in every historic
// format, verbs call failures, IB async events, socket and bootstrap errors.

#include <string>

#include "absl/strings/string_view.h"
#include "logs/log_event.h"

namespace railwatch::logs::internal {

// Gives `e` the kind and fields that `message` describes: nccl.ib_completion_error,
// nccl.call_failed, nccl.ib_async_event, nccl.socket_error, nccl.bootstrap_error,
// nccl.no_device; anything else stays "nccl.warn". `location` is the WARN's file:line ("" when
// unknown). Returns false, with the reason in `*problem`, when the message is one of those
// errors but its fields do not parse (e gets what could be read, or stays nccl.warn).
bool DescribeNcclError(absl::string_view message, absl::string_view location, LogEvent& e,
                       std::string* problem);

// True for messages DescribeNcclError has a specific kind for, even on an INFO line (NCCL
// downgrades some WARNs to INFO while it retries).
bool IsKnownNcclError(absl::string_view message);

}  // namespace railwatch::logs::internal
