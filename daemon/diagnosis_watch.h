#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "daemon/diagnosis_filter.h"
#include "engine/engine.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

class WatchSession;

// Fans the engine's diagnosis transitions out to WatchDiagnoses streams.
//
// Registered once as an engine listener. Each transition is made into one DiagnosisEvent,
// shared by every watch whose filter it matches, and queued per watch; the engine's thread
// only locks and appends, never waits for a network write. A watch whose queue holds
// `queue_limit` unsent events has fallen behind: its stream ends with RESOURCE_EXHAUSTED
// ("watcher fell behind; reconnect") and the engine and the other watches carry on.
//
// A RESOLVED or CLEARED event is also sent for a diagnosis that the watch sent before (as
// INITIAL, PENDING or FIRING) even when the filter's states leave RESOLVED out, so that a
// watch of firing diagnoses hears when each one ends.
class DiagnosisWatchHub final : public DiagnosisListener {
 public:
  struct Options {
    // Unsent change events a watch may hold (its initial diagnoses come on top).
    size_t queue_limit = 1024;
  };
  struct Stats {
    uint64_t started = 0;
    uint64_t fell_behind = 0;  // ended with RESOURCE_EXHAUSTED
    size_t open = 0;
  };

  DiagnosisWatchHub(const Engine& engine, const Clock& clock, Options options);
  DiagnosisWatchHub(const Engine& engine, const Clock& clock)
      : DiagnosisWatchHub(engine, clock, Options{}) {}
  ~DiagnosisWatchHub() override;

  // The reactor of one WatchDiagnoses call; `filter` must have passed
  // DiagnosisFilter::Validate. With send_initial, the diagnoses that match now go first
  // (KIND_INITIAL), then KIND_SYNCED; without, only SYNCED.
  grpc::ServerWriteReactor<v1::DiagnosisEvent>* Watch(grpc::CallbackServerContext* ctx,
                                                      const v1::WatchDiagnosesRequest& request);

  // Ends every open watch with UNAVAILABLE and refuses new ones. Call before the gRPC server
  // shuts down, so that its shutdown does not wait for streams that never end by themselves.
  void Close();

  Stats stats() const;

  // DiagnosisListener: called on the engine's thread; each builds the Query API's diagnosis
  // from the record (alert_proto.h) and publishes it.
  void OnPending(const AlertRecord& a) override;
  void OnFiring(const AlertRecord& a) override;
  void OnResolved(const AlertRecord& a) override;
  void OnPendingCleared(const AlertRecord& a) override;

  // Queues one change for every watch whose filter it matches.
  void Publish(v1::DiagnosisEvent::Kind kind, const v1::Diagnosis& d);

 private:
  friend class WatchSession;
  // A session's OnDone: it is gone.
  void Remove(WatchSession* session);

  const Engine& engine_;
  const Clock& clock_;
  const Options options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<WatchSession*> sessions_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

// A WatchDiagnoses call refused before it started (a bad filter): finishes at once.
grpc::ServerWriteReactor<v1::DiagnosisEvent>* RefusedWatch(grpc::Status status);

}  // namespace railwatch
