#pragma once

// What launchers and log collectors put in front of a program's line, and the timestamps found
// there: everything before the NCCL/PyTorch/nccl-tests text itself.

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "logs/parse_context.h"

namespace railwatch::logs::internal {

// Sets line.text (and time, mpi_rank, launcher_tag, global_rank) from line.raw by removing, in
// any order and repeatedly:
//   ISO timestamps "2024-06-10T08:15:30.123456789Z " (kubectl --timestamps, also the CRI
//     "stdout F " that follows one), NCCL_DEBUG_TIMESTAMP_FORMAT's default "[2025-03-12 10:00:00]
//     ",
//   Open MPI --tag-output "[1,0]<stdout>:", launcher/pid tags "[155] " (also a bare "[155]"),
//   torchrun "[default0]:", srun --label "12: ", torch's "[rank3]:".
void StripPrefixes(Line& line);

// Parses "YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|+HH:MM|-HHMM]" at the start of `s`. Returns the
// number of characters consumed, 0 when `s` does not start with one. Without a zone the time is
// taken as UTC: the writer's zone is unknown.
size_t ParseIsoTimestamp(absl::string_view s, int64_t* unix_nano);

// A glog-style time without a year ("E0321 02:07:08.408271257"): the year is `now`'s, or the one
// before when that would put the line more than a day in the future (a December log read in
// January). Taken as UTC, like every zone-less timestamp. 0 when the fields are out of range.
int64_t TimeWithoutYear(int month, int day, int hour, int minute, int second, int64_t nanos,
                        absl::Time now);

// "408271257" -> nanoseconds (any number of digits up to 9; more are ignored).
int64_t FractionNanos(absl::string_view digits);

}  // namespace railwatch::logs::internal
