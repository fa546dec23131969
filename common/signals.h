#pragma once

#include "absl/synchronization/notification.h"

namespace railwatch {

// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts later) and
// starts a thread that waits for either with sigwait and then notifies `stop`. Call it first in
// main, before any other thread exists. The notification must outlive the process.
void NotifyOnTerminationSignal(absl::Notification& stop);

}  // namespace railwatch
