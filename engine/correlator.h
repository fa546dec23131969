#pragma once

// Cause and symptom: a symptom result related to an active cause (a playbook's `explains:`
// rule) is folded into that cause as evidence instead of raising a diagnosis of its own.
//
// The correlator holds only what the playbooks say (which playbook explains which, and how):
// which cause a result belongs to is a function of the active alerts and the fabric map alone.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "engine/alert.h"
#include "engine/candidates.h"
#include "engine/playbook.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

// A playbook's active alerts by group key.
using AlertMap = absl::flat_hash_map<std::string, AlertRecord>;

class Correlator {
 public:
  // `playbooks`: the enabled ones with a condition.
  explicit Correlator(const std::vector<const Playbook*>& playbooks);

  // Evaluation order: causes before the symptoms they explain (depth-first; a cycle keeps
  // file order).
  const std::vector<const Playbook*>& order() const { return order_; }

  // The active alert that a result of `symptom` (labels, first seen at `first_seen`) is an
  // effect of, or nullptr; only a firing one when `firing_only`. Of several, the oldest (then
  // the smallest key) of the first cause playbook that has one. `alerts_of` gives a cause
  // playbook's active alerts.
  AlertRecord* FindCause(const Playbook& symptom, const Labels& labels, int64_t first_seen,
                   bool firing_only, const FabricMap* fabric,
                   absl::FunctionRef<AlertMap&(const Playbook&)> alerts_of) const;

  // Whether `symptom` labels are related to `cause` under `rule`.
  static bool Related(const ExplainRule& rule, const AlertRecord& cause, const Labels& symptom,
                      const FabricMap* fabric);

  // Folds a symptom result into `cause` (its evidence, its `explains`).
  static void Attach(AlertRecord& cause, const Playbook& symptom, const Candidate& c,
                     int64_t first_seen, int64_t now, const SeriesStore& store);

 private:
  std::vector<const Playbook*> order_;
  // symptom playbook name -> (cause playbook, rule)
  absl::flat_hash_map<std::string, std::vector<std::pair<const Playbook*, const ExplainRule*>>>
      causes_of_;
};

}  // namespace railwatch
