#pragma once

// What a diagnosis says besides its state: its identity and culprit, where it is in words, the
// runbook with the culprit filled in, the summary, the blast radius and the evidence. The
// playbook state machines (playbook_state.h) call it; it reads the stores, the fabric map and
// the runbooks, and writes only the alert it is given.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/alert.h"
#include "engine/candidates.h"
#include "engine/playbook.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

class Enricher {
 public:
  // Reads each playbook's runbook file once (a URL is left as it is; a file that cannot be
  // read is logged and the diagnosis goes without its text).
  Enricher(const std::vector<const Playbook*>& playbooks, const SeriesStore& store,
           const FabricMap* fabric, double gpu_hour_cost);

  // A new alert: identity, culprit, location and runbook from its playbook and first result.
  void Start(const Playbook& pb, const Candidate& c, int64_t now, AlertRecord& a) const;
  // An evaluation where its condition holds: value, peak, summary, blast radius, evidence.
  void Refresh(const Playbook& pb, const Candidate& c, int64_t now, AlertRecord& a) const;
  // Kept firing after its condition stopped holding: the summary says what happened.
  void Quiet(const Playbook& pb, AlertRecord& a) const;
  // The blast radius from the fabric map (nothing without one).
  void FillBlastRadius(const Playbook& pb, AlertRecord& a) const;

  // The stable id of an incident of `playbook` keyed `key` that began at `since`.
  static std::string AlertId(const std::string& playbook, const std::string& key,
                             int64_t since);

 private:
  struct Runbook {
    std::string text;
    std::vector<std::string> commands;  // templates
  };
  // The summary: now (quiet_since 0), or once its condition stopped holding at quiet_since.
  static std::string Summary(const Playbook& pb, const AlertRecord& a, int64_t quiet_since);
  void FillEvidence(const Candidate& c, int64_t now, AlertRecord& a) const;

  const SeriesStore& store_;
  const FabricMap* const fabric_;
  const double gpu_hour_cost_;
  absl::flat_hash_map<std::string, Runbook> runbooks_;  // by playbook name
};

}  // namespace railwatch
