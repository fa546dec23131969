#pragma once

// One playbook's diagnoses from one evaluation to the next: the state machine of each of its
// incidents (pending -> firing -> resolved, or pending -> cleared), keyed by group key.
//
// A new key starts pending and fires once its condition has held for the playbook's `for`; a
// firing alert that stops matching stays firing for `keep_firing_for` and then resolves. A
// result that an active cause explains (correlator.h) is folded into the cause instead.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "engine/alert.h"
#include "engine/alert_history.h"
#include "engine/candidates.h"
#include "engine/correlator.h"
#include "engine/enricher.h"
#include "engine/playbook.h"

namespace railwatch {

// What happened to a diagnosis in one evaluation.
enum class Transition { kPending, kFiring, kResolved, kPendingCleared };

struct AlertTransition {
  Transition what;
  AlertRecord alert;  // as it was at that moment
};

class PlaybookState {
 public:
  // What one evaluation step reads and writes besides the playbook's own alerts.
  struct Step {
    int64_t now = 0;
    const Correlator& correlator;
    const Enricher& enricher;
    const SeriesStore& store;
    const FabricMap* fabric = nullptr;
    absl::FunctionRef<AlertMap&(const Playbook&)> alerts_of;  // any playbook's alerts
    AlertHistory& history;
    std::vector<AlertTransition>& transitions;
    uint64_t& unknown_results;
  };

  explicit PlaybookState(const Playbook& pb) : pb_(pb) {}

  // Takes this evaluation's results: starts, refreshes, fires, folds into causes, resolves.
  void Evaluate(std::vector<Candidate> candidates, const Step& step);

  // Ends the alert keyed `key`: a firing one resolves (into `step.history`), a pending one is
  // cleared. `explained_by`: the cause's id when a cause took it over.
  void Resolve(const std::string& key, const std::string& explained_by, const Step& step);

  const Playbook& playbook() const { return pb_; }
  AlertMap& alerts() { return alerts_; }
  const AlertMap& alerts() const { return alerts_; }

 private:
  const Playbook& pb_;
  AlertMap alerts_;
};

}  // namespace railwatch
