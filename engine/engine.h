#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "engine/alert.h"
#include "engine/alert_history.h"
#include "engine/correlator.h"
#include "engine/diagnosis_state.h"
#include "engine/diagnosis_text.h"
#include "engine/enricher.h"
#include "engine/playbook.h"
#include "engine/playbook_state.h"
#include "engine/scheduler.h"
#include "engine/state_saver.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

// Told about every diagnosis that starts firing or resolves (Alertmanager, logs, watchers),
// and, for those who want them, pending diagnoses. Called from the engine's thread after an
// evaluation, outside the engine's lock: a listener may query the engine, and must not block.
// A listener gets the engine's record (alert.h); one that speaks the Query API builds its
// v1::Diagnosis with ToDiagnosis (alert_proto.h).
class DiagnosisListener {
 public:
  virtual ~DiagnosisListener() = default;
  virtual void OnFiring(const AlertRecord& alert) = 0;
  virtual void OnResolved(const AlertRecord& alert) = 0;
  // A new diagnosis whose condition holds but not yet for the playbook's `for`.
  virtual void OnPending(const AlertRecord& alert) {}
  // A pending diagnosis whose condition stopped holding before it fired; it is forgotten
  // (state stays pending in the copy given here).
  virtual void OnPendingCleared(const AlertRecord& alert) {}
  // A firing diagnosis carried over from before a restart (Engine::Restore): already
  // announced, so not a new page; the Alertmanager notifier takes it up again (same id, same
  // startsAt) and re-sends it.
  virtual void OnRestored(const AlertRecord& alert) {}
};

// Evaluates playbooks against the series store and event log and keeps the diagnoses they
// raise.
//
// Each playbook result is keyed by (playbook, group_by or culprit labels). A new key starts
// pending and fires once its condition has held for `for`; a firing diagnosis that stops
// matching stays firing for `keep_firing_for` and then resolves. Playbooks that explain
// others are evaluated first: a symptom related to an active cause (ExplainRule) is attached
// to the cause as evidence and raises no diagnosis of its own; a symptom diagnosis already
// firing when its cause appears resolves with explained_by set.
//
// Evaluation runs every `interval` and soon after new data for a series or event a playbook
// reads (Poke): a poke that comes with a new event evaluates `min_interval` after the last
// evaluation ended; one for series alone (under continuous ingest, every batch of every
// agent) waits longer the longer the last evaluation took (PokeHoldOff), so that a large pod
// is evaluated a few times a second, not twenty, and a small one as promptly as ever.
//
// With Options::state_file the active diagnoses are saved after every evaluation that fired
// or resolved one (and every state_save_interval while any is active), before listeners are
// told; Restore() takes them up in a new process without announcing them again.
//
// Playbooks' conditions are evaluated in parallel on `threads` threads (each condition on one
// thread at a time); what follows from them (pending, firing, explained, resolved) is applied
// on one thread in the order above, so the result does not depend on `threads`.
//
// The engine is the owner of its parts, each in its own file: EvaluationScheduler and
// ConditionSchedule (scheduler.h: when, and on which threads), one PlaybookState per playbook
// (playbook_state.h: the pending/firing/resolved state machine over its own AlertRecords,
// alert.h), the Correlator (correlator.h: which active cause explains a result), the Enricher
// (enricher.h: culprit, words, runbook, blast radius, evidence), AlertHistory
// (alert_history.h: resolved diagnoses and repeat offenders) and StateSaver (state_saver.h:
// the state file). What it hands out (List, Get, listeners) are copies of its AlertRecords;
// the Query API, Alertmanager and the state file build their v1::Diagnosis from them
// (alert_proto.h).
class Engine {
 public:
  struct Options {
    absl::Duration interval = absl::Seconds(1);
    absl::Duration min_interval = absl::Milliseconds(50);
    // Resolved diagnoses kept for queries (and for repeat-offender counts).
    size_t history = 1000;
    // Cost of one stalled GPU for an hour, for Diagnosis.blast_radius.cost_per_minute.
    double gpu_hour_cost = 30;
    // Earlier incidents of the same playbook and key within this window are counted as
    // repeats (Diagnosis.previous_incidents).
    absl::Duration repeat_window = absl::Hours(24 * 7);
    // A poke for series alone waits at least this many times the last evaluation's duration
    // after it (never less than min_interval): evaluations that such pokes cause take at
    // most 1 / (1 + factor) of the engine's time.
    double poke_hold_factor = 8;
    // Threads that evaluate conditions, the engine's own included; 0: the hardware's, at
    // most 4.
    int threads = 0;
    // Where the active diagnoses are saved (diagnosis_state.h) on every transition and every
    // state_save_interval while any is active, and restored from by Restore(); empty: none.
    std::string state_file = "";
    absl::Duration state_save_interval = absl::Seconds(10);
    // A restored diagnosis is not resolved (nor a restored pending one cleared) for lack of
    // data until this long after the restore: agents reconnect and conditions' windows
    // refill meanwhile.
    absl::Duration restore_grace = absl::Minutes(2);
  };

  // What the engine reads besides the series store; either may be null.
  struct Sources {
    EventStore* events = nullptr;  // written by ingest; the engine registers watched kinds
    const FabricMap* fabric = nullptr;
  };

  Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store, const Clock& clock,
         Sources sources);
  Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store, const Clock& clock);
  ~Engine();

  void AddListener(DiagnosisListener* listener);

  // Starts the evaluation thread.
  void Start();
  void Stop();
  // New data arrived for a watched series: evaluate soon.
  void Poke();
  // One evaluation at the clock's now (tests call this directly instead of Start).
  void EvaluateOnce();

  // What Restore() found.
  struct RestoreResult {
    size_t firing = 0;
    size_t pending = 0;
    // Firing diagnoses whose playbook is no longer loaded: resolved with a note.
    size_t orphaned = 0;
    // A state file that could not be read: the error (file, what is wrong) and where it was
    // moved; the engine starts empty.
    std::string error;
    std::string moved_to;
  };
  // Takes up the diagnoses saved in Options::state_file, keeping their ids and since times:
  // listeners get OnRestored for each firing one (no OnFiring: it is not paged again) and
  // OnResolved for a firing one whose playbook is gone. Call once, after AddListener and
  // before Start or the first EvaluateOnce.
  RestoreResult Restore();

  std::vector<AlertRecord> List() const;
  std::optional<AlertRecord> Get(const std::string& id) const;
  const std::vector<Playbook>& playbooks() const { return playbooks_; }

  struct Stats {
    uint64_t evaluations = 0;
    double last_duration_seconds = 0;
    // Results held back because a window they depend on does not hold its data yet.
    uint64_t unknown_results = 0;
  };
  Stats stats() const;

  // The threads conditions are evaluated on (Options::threads resolved).
  int threads() const;

  // How long after an evaluation that took `last_duration` a poke may start the next one:
  // min_interval when an event came (`event`), else at least poke_hold_factor times
  // last_duration.
  static absl::Duration PokeHoldOff(const Options& options, absl::Duration last_duration,
                                    bool event);

 private:
  // One evaluation (EvaluateOnce holds eval_mu_).
  void Evaluate() ABSL_EXCLUSIVE_LOCKS_REQUIRED(eval_mu_);
  // Events appended to the event store since the last call (a poke that came with one).
  bool EventsArrived();
  AlertMap& AlertsOf(const Playbook& pb) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The active diagnoses and incident times as the state file keeps them.
  EngineState Snapshot(int64_t now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Saves the state (StateSaver decides whether it is time).
  void SaveState(bool urgent, bool changed, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(eval_mu_);

  const Options options_;
  const std::vector<Playbook> playbooks_;
  SeriesStore& store_;
  const Clock& clock_;
  const Sources sources_;
  // Evaluation order (causes first) and who explains whom.
  const Correlator correlator_;
  const Enricher enricher_;
  // PlaybookState index by playbook (fixed at construction).
  absl::flat_hash_map<const Playbook*, size_t> state_index_;

  // One evaluation at a time (tests and the engine's thread may both call EvaluateOnce).
  absl::Mutex eval_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  ConditionSchedule conditions_;  // run under eval_mu_
  StateSaver saver_ ABSL_GUARDED_BY(eval_mu_);

  mutable absl::Mutex mu_;
  // One per playbook, in the correlator's order.
  std::vector<PlaybookState> states_ ABSL_GUARDED_BY(mu_);
  AlertHistory history_ ABSL_GUARDED_BY(mu_);
  std::vector<DiagnosisListener*> listeners_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);

  uint64_t events_seen_ = 0;  // the scheduler's thread only
  // Last: its thread evaluates, so it is stopped before anything above goes.
  EvaluationScheduler scheduler_;
};

}  // namespace railwatch
