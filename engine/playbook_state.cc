#include "engine/playbook_state.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"

namespace railwatch {

void PlaybookState::Resolve(const std::string& key, const std::string& explained_by,
                            const Step& step) {
  auto it = alerts_.find(key);
  if (it == alerts_.end()) return;
  AlertRecord& a = it->second;
  a.last_evaluated = step.now;
  if (a.state == AlertState::kFiring) {
    a.state = AlertState::kResolved;
    a.resolved_at = step.now;
    if (!explained_by.empty()) a.explained_by = explained_by;
    step.history.Add(a);
    step.transitions.push_back({Transition::kResolved, std::move(a)});
  } else {
    step.transitions.push_back({Transition::kPendingCleared, std::move(a)});
  }
  alerts_.erase(it);
}

void PlaybookState::Evaluate(std::vector<Candidate> candidates, const Step& step) {
  const int64_t now = step.now;
  absl::flat_hash_set<std::string> seen;
  for (Candidate& c : candidates) {
    auto existing = alerts_.find(c.key);
    if (c.unknown) {
      // A window that does not hold its data yet: no new diagnosis, and an active one is
      // neither resolved nor refreshed.
      if (existing != alerts_.end()) seen.insert(c.key);
      ++step.unknown_results;
      continue;
    }
    seen.insert(c.key);
    const int64_t first_seen = existing == alerts_.end() ? now : existing->second.active_since;
    // A pending cause holds back a symptom that has not paged yet; a symptom that has paged
    // is taken back only by a cause that fires, else a cause that never gets past pending
    // would resolve it and let it page again each time the cause's condition blinks.
    const bool paged = existing != alerts_.end() && existing->second.firing();
    if (AlertRecord* cause = step.correlator.FindCause(pb_, c.labels, first_seen,
                                                 /*firing_only=*/paged, step.fabric,
                                                 step.alerts_of)) {
      // A symptom of an active root cause: evidence there, no diagnosis here.
      Correlator::Attach(*cause, pb_, c, first_seen, now, step.store);
      if (existing != alerts_.end()) Resolve(c.key, cause->id, step);
      continue;
    }
    auto [it, inserted] = alerts_.try_emplace(c.key);
    AlertRecord& a = it->second;
    if (inserted) {
      step.enricher.Start(pb_, c, now, a);
      a.previous_incidents = step.history.PreviousIncidents(pb_.name, c.key, now);
    }
    step.enricher.Refresh(pb_, c, now, a);
    if (a.state == AlertState::kPending &&
        now - a.active_since >= absl::ToInt64Nanoseconds(pb_.for_duration)) {
      a.state = AlertState::kFiring;
      a.fired_at = now;
      step.transitions.push_back({Transition::kFiring, a});
    } else if (inserted) {
      step.transitions.push_back({Transition::kPending, a});
    }
  }
  // Results that no longer hold.
  std::vector<std::string> gone;
  for (auto& [key, a] : alerts_) {
    if (seen.contains(key)) continue;
    a.last_evaluated = now;
    // Restored at start-up: the agents may not be back yet, nor the condition's windows full.
    if (now < a.hold_until) continue;
    if (a.firing() && now - a.last_true < absl::ToInt64Nanoseconds(pb_.keep_firing_for)) {
      // Kept firing after the condition stopped holding: say what happened, not what is.
      step.enricher.Quiet(pb_, a);
      continue;
    }
    gone.push_back(key);
  }
  // In key order, not the map's: listeners see the same sequence from one run to the next.
  std::sort(gone.begin(), gone.end());
  for (const std::string& key : gone) Resolve(key, "", step);
}

}  // namespace railwatch
