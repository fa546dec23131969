#pragma once

// The Query API's v1::Diagnosis from the engine's AlertRecord (alert.h), and back. Built where a
// diagnosis leaves the engine for the outside: the Query API and its watch streams, the
// Alertmanager notifier, the daemon's log, and the state file (state_saver.h).

#include "engine/alert.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// The Query API's message for an alert (evidence: series and events, then up to 32 symptoms,
// oldest first). `points` false leaves the readings out (the state file: the next evaluation
// refills them).
v1::Diagnosis ToDiagnosis(const AlertRecord& alert, bool points = true);

// Back from a saved diagnosis (engine_state.cc); symptoms and labels are the caller's.
AlertRecord AlertFromDiagnosis(const v1::Diagnosis& d);

}  // namespace railwatch
