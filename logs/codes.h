#pragma once

// Names for the numeric codes that NCCL, libibverbs and libc print, so that events carry
// "IBV_WC_RETRY_EXC_ERR" next to "12" and triage can explain them.

#include <cstdint>

#include "absl/strings/string_view.h"

namespace railwatch::logs {

// ibv_wc_status name (rdma-core verbs.h): 12 -> "IBV_WC_RETRY_EXC_ERR"; "" when out of range.
absl::string_view IbvWcStatusName(int64_t status);
// Inverse of IbvWcStatusName; -1 when unknown.
int64_t IbvWcStatusFromName(absl::string_view name);

// ncclResult_t name: 6 -> "ncclRemoteError"; "" when unknown.
absl::string_view NcclResultName(int64_t code);

// Linux errno symbol: 110 -> "ETIMEDOUT"; "" when not in our table.
absl::string_view ErrnoName(int64_t err);
// errno from glibc's strerror text ("Connection timed out" -> 110); -1 when not in our table.
int64_t ErrnoFromText(absl::string_view text);

}  // namespace railwatch::logs
