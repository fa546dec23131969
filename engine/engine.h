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
#include "engine/playbook.h"
#include "store/event_store.h"
#include "topology/fabric_map.h"
#include "railwatch/v1/query.pb.h"
#include "store/series_store.h"

namespace railwatch {

// Told about every diagnosis that starts firing or resolves (Alertmanager, logs, watchers).
class DiagnosisListener {
 public:
  virtual ~DiagnosisListener() = default;
  virtual void OnFiring(const v1::Diagnosis& diagnosis) = 0;
  virtual void OnResolved(const v1::Diagnosis& diagnosis) = 0;
};

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
    const EventStore* events = nullptr;
    const FabricMap* fabric = nullptr;
  };

  Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
         const Clock& clock, Sources sources = {});
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
  struct Active {
    v1::Diagnosis diagnosis;
    int64_t last_true = 0;
  };

  void Run();
  void EvaluatePlaybook(const Playbook& pb, int64_t now,
                        std::vector<std::pair<bool, v1::Diagnosis>>& transitions)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FillEvidence(const VectorElement& element, int64_t now, v1::Diagnosis& d) const;

  const Options options_;
  const std::vector<Playbook> playbooks_;
  SeriesStore& store_;
  const Clock& clock_;

  mutable absl::Mutex mu_;
  // key: playbook + '\0' + culprit labels
  absl::flat_hash_map<std::string, Active> active_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::Diagnosis> resolved_ ABSL_GUARDED_BY(mu_);
  std::vector<DiagnosisListener*> listeners_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);

  absl::Mutex wake_mu_;
  bool poked_ ABSL_GUARDED_BY(wake_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;
  std::thread thread_;
};

// "Link flap on {{host}}" with labels and value filled in.
std::string ExpandTemplate(const std::string& tmpl, const Labels& labels, double value);

}  // namespace railwatch
