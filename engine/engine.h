#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "engine/diagnosis_text.h"
#include "engine/playbook.h"
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
// firing when its cause appears resolves with explained_by set. Evaluation runs every
// `interval` and, at most every `min_interval`, soon after new data for a series or event a
// playbook reads (Poke).
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

  std::vector<v1::Diagnosis> List() const;
  std::optional<v1::Diagnosis> Get(const std::string& id) const;
  const std::vector<Playbook>& playbooks() const { return playbooks_; }

  struct Stats {
    uint64_t evaluations = 0;
    double last_duration_seconds = 0;
  };
  Stats stats() const;

 private:
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
    absl::flat_hash_map<std::string, Symptom> symptoms;  // by playbook + '\0' + key
  };
  struct Candidate {
    std::string key;
    Labels labels;  // enriched
    double value = 0;
    std::vector<EvidenceRef> evidence;
    std::vector<EventEvidence> events;
  };
  struct Runbook {
    std::string text;
    std::vector<std::string> commands;  // templates
  };

  void Run();
  void EvaluatePlaybook(const Playbook& pb, int64_t now,
                        std::vector<std::pair<Transition, v1::Diagnosis>>& transitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<Candidate> Candidates(const Playbook& pb, int64_t now) const;
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
  std::thread thread_;
};


}  // namespace railwatch
