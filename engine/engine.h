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
#include "engine/diagnosis_text.h"
#include "engine/playbook.h"
#include "engine/worker_pool.h"
#include "store/event_store.h"
#include "topology/fabric_map.h"
#include "railwatch/v1/query.pb.h"
#include "store/series_store.h"

namespace railwatch {

// Told about every diagnosis that starts firing or resolves (Alertmanager, logs, watchers),
// and, for those who want them, pending diagnoses. Called from the engine's thread after an
// evaluation, outside the engine's lock: a listener may query the engine, and must not block.
class DiagnosisListener {
 public:
  virtual ~DiagnosisListener() = default;
  virtual void OnFiring(const v1::Diagnosis& diagnosis) = 0;
  virtual void OnResolved(const v1::Diagnosis& diagnosis) = 0;
  // A new diagnosis whose condition holds but not yet for the playbook's `for`.
  virtual void OnPending(const v1::Diagnosis& diagnosis) {}
  // A pending diagnosis whose condition stopped holding before it fired; it is forgotten
  // (state stays PENDING in the copy given here).
  virtual void OnPendingCleared(const v1::Diagnosis& diagnosis) {}
  // A firing diagnosis carried over from before a restart (Engine::Restore): already
  // announced, so not a new page; the Alertmanager notifier takes it up again (same id, same
  // startsAt) and re-sends it.
  virtual void OnRestored(const v1::Diagnosis& diagnosis) {}
};

// What happened to a diagnosis in one evaluation.
enum class Transition { kPending, kFiring, kResolved, kPendingCleared };

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

  Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
         const Clock& clock, Sources sources);
  Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
         const Clock& clock);
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

  std::vector<v1::Diagnosis> List() const;
  std::optional<v1::Diagnosis> Get(const std::string& id) const;
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
  // Resolve times kept per key for repeat-offender counts.
  static constexpr size_t kMaxIncidentTimes = 64;

  // A symptom result folded into a cause.
  struct Symptom {
    std::string playbook;
    Labels labels;
    double value = 0;
    std::string series;  // the first evidence series (or event), formatted
    std::string raw;     // the newest event's raw line, when the symptom came from events
    int64_t first_seen = 0;
    int64_t last_seen = 0;
  };
  struct Active {
    v1::Diagnosis diagnosis;
    const Playbook* playbook = nullptr;
    std::string key;     // group key (without the playbook)
    Labels labels;       // the first element's labels, topology-enriched
    BlastRadius blast;
    int64_t last_true = 0;
    // The condition's largest value (in magnitude) while it held, for {{peak}}.
    double peak = 0;
    // The element's labels and value when it last held, for the summary once it is quiet.
    Labels words;
    double last_value = 0;
    // Restored: held (not resolved for lack of data) until then.
    int64_t hold_until = 0;
    absl::flat_hash_map<std::string, Symptom> symptoms;  // by playbook + '\0' + key
  };
  struct Candidate {
    std::string key;
    Labels labels;  // enriched
    double value = 0;
    // Every element of it is unknown (VectorElement::unknown): a window does not yet hold its
    // data. It neither starts a diagnosis nor resolves one.
    bool unknown = false;
    std::vector<EvidenceRef> evidence;
    std::vector<EventEvidence> events;
  };
  struct Runbook {
    std::string text;
    std::vector<std::string> commands;  // templates
  };

  void Run();
  // Events appended to the event store since the last call (a poke that came with one).
  bool EventsArrived();
  void EvaluatePlaybook(const Playbook& pb, int64_t now, std::vector<Candidate> candidates,
                        std::vector<std::pair<Transition, v1::Diagnosis>>& transitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Candidate> Candidates(const Playbook& pb, int64_t now) const;
  // The diagnosis' summary: now (quiet_since 0), or once its condition stopped holding at
  // quiet_since while it is kept firing.
  static std::string Summary(const Playbook& pb, const Active& a, int64_t quiet_since);
  // The active cause that explains this symptom result, or nullptr.
  // An active diagnosis that `symptom` is an effect of; only a firing one when `firing_only`.
  Active* FindCause(const Playbook& symptom, const Candidate& c, int64_t first_seen,
                    bool firing_only)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool Related(const ExplainRule& rule, const Active& cause, const Labels& symptom) const;
  void Attach(Active& cause, const Playbook& symptom, const Candidate& c, int64_t first_seen,
              int64_t now);
  void Resolve(const std::string& full_key, int64_t now, const std::string& explained_by,
               std::vector<std::pair<Transition, v1::Diagnosis>>& transitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FillEvidence(const Candidate& c, const Active& a, int64_t now, v1::Diagnosis& d) const;
  void FillBlastRadius(Active& a) const;
  // Saves the active diagnoses at once when one fired or resolved (`urgent`), else when the
  // save interval has passed and there is something new to save (`changed`: a pending one
  // came or went; any active one: its evidence moves).
  void SaveState(bool urgent, bool changed, int64_t now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(eval_mu_);
  absl::Status WriteState(int64_t now) ABSL_LOCKS_EXCLUDED(mu_);
  void FillRunbook(const Playbook& pb, const Labels& labels, double value, v1::Diagnosis& d) const;

  const Options options_;
  const std::vector<Playbook> playbooks_;
  SeriesStore& store_;
  const Clock& clock_;
  const Sources sources_;
  // Evaluation order: playbooks that explain others before the ones they explain.
  std::vector<const Playbook*> order_;
  // symptom playbook name -> (cause playbook, rule)
  absl::flat_hash_map<std::string, std::vector<std::pair<const Playbook*, const ExplainRule*>>>
      causes_of_;
  absl::flat_hash_map<std::string, Runbook> runbooks_;  // by playbook name

  // One evaluation at a time (tests and the engine's thread may both call EvaluateOnce).
  absl::Mutex eval_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<WorkerPool> pool_;
  // order_ indices, the costliest condition of the last evaluation first (so that the long
  // ones start first and the threads finish together), and each one's last cost.
  std::vector<size_t> schedule_ ABSL_GUARDED_BY(eval_mu_);
  std::vector<double> cost_seconds_ ABSL_GUARDED_BY(eval_mu_);
  int64_t last_state_save_ ABSL_GUARDED_BY(eval_mu_) = 0;
  bool saved_empty_ ABSL_GUARDED_BY(eval_mu_) = true;  // the last save had no diagnosis
  bool state_failing_ ABSL_GUARDED_BY(eval_mu_) = false;

  mutable absl::Mutex mu_;
  // key: playbook + '\0' + group key
  absl::flat_hash_map<std::string, Active> active_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::Diagnosis> resolved_ ABSL_GUARDED_BY(mu_);
  // key -> times earlier incidents resolved (repeat offenders), newest last, bounded.
  absl::flat_hash_map<std::string, std::deque<int64_t>> incidents_ ABSL_GUARDED_BY(mu_);
  std::vector<DiagnosisListener*> listeners_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);

  absl::Mutex wake_mu_;
  bool poked_ ABSL_GUARDED_BY(wake_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;
  uint64_t events_seen_ = 0;  // the engine's thread only
  std::thread thread_;
};


}  // namespace railwatch
