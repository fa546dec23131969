// The engine's side of persistence: a snapshot of the active diagnoses written after
// evaluations, and their restore at start-up (diagnosis_state.h has the file).
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/text.h"
#include "engine/diagnosis_state.h"
#include "engine/engine.h"

namespace railwatch {

Engine::RestoreResult Engine::Restore() {
  RestoreResult result;
  if (options_.state_file.empty()) return result;
  const std::string& file = options_.state_file;
  absl::MutexLock eval_lock(&eval_mu_);
  // Whatever is found, the first evaluation writes the file again (an orphan resolved here
  // must not come back at the next start).
  saved_empty_ = false;
  last_state_save_ = 0;
  const int64_t now = clock_.NowNanos();
  absl::StatusOr<EngineState> state = ReadStateFile(file);
  if (!state.ok()) {
    if (absl::IsNotFound(state.status())) {
      spdlog::info("no saved diagnoses at {}: starting empty", file);
      return result;
    }
    result.error = std::string(state.status().message());
    absl::StatusOr<std::string> aside = MoveStateFileAside(file, absl::FromUnixNanos(now));
    if (aside.ok()) result.moved_to = *aside;
    spdlog::error("cannot restore diagnoses: {}; {}; starting with none", result.error,
                  aside.ok() ? absl::StrCat("moved it to ", *aside)
                             : std::string(aside.status().message()));
    return result;
  }

  absl::flat_hash_map<std::string, const Playbook*> by_name;
  for (const Playbook* pb : order_) by_name[pb->name] = pb;
  std::vector<v1::Diagnosis> restored;
  std::vector<std::pair<Transition, v1::Diagnosis>> transitions;
  std::vector<DiagnosisListener*> listeners;
  {
    absl::MutexLock lock(&mu_);
    for (const SavedIncidents& i : state->incidents) {
      std::deque<int64_t>& times = incidents_[absl::StrCat(i.playbook, std::string(1, '\0'), i.key)];
      times.assign(i.resolved_unix_nano.begin(), i.resolved_unix_nano.end());
      while (times.size() > kMaxIncidentTimes) times.pop_front();
    }
    for (SavedDiagnosis& s : state->diagnoses) {
      v1::Diagnosis& d = s.diagnosis;
      const bool firing = d.state() == v1::DIAGNOSIS_STATE_FIRING;
      if (!firing && d.state() != v1::DIAGNOSIS_STATE_PENDING) continue;
      const std::string full_key = absl::StrCat(d.playbook(), std::string(1, '\0'), s.key);
      auto pb = by_name.find(d.playbook());
      if (pb == by_name.end() && !firing) continue;  // never announced: nothing to take back
      auto [it, inserted] = active_.try_emplace(full_key);
      if (!inserted) continue;
      Active& a = it->second;
      a.key = s.key;
      a.labels = std::move(s.labels);
      a.last_true = s.last_true_unix_nano;
      a.hold_until = now + absl::ToInt64Nanoseconds(options_.restore_grace);
      for (SavedSymptom& sym : s.symptoms) {
        a.symptoms[absl::StrCat(sym.playbook, std::string(1, '\0'), sym.key)] =
            Symptom{sym.playbook,           std::move(sym.labels),    sym.value,
                    std::move(sym.series),  std::move(sym.raw),       sym.first_seen_unix_nano,
                    sym.last_seen_unix_nano};
      }
      a.diagnosis = std::move(d);
      if (pb == by_name.end()) {
        // Its playbook was removed, renamed or disabled: nothing will ever resolve it.
        spdlog::warn("diagnosis {} ({}) was firing before the restart, but playbook {} is no "
                     "longer loaded: resolved",
                     a.diagnosis.id(), a.diagnosis.summary(), a.diagnosis.playbook());
        a.diagnosis.set_description(absl::StrCat(
            "Resolved at restart: playbook ", a.diagnosis.playbook(),
            " is no longer loaded (removed, renamed or disabled). ", a.diagnosis.description()));
        Resolve(full_key, now, "", transitions);
        ++result.orphaned;
        continue;
      }
      a.playbook = pb->second;
      FillBlastRadius(a);
      if (firing) {
        restored.push_back(a.diagnosis);
        ++result.firing;
      } else {
        ++result.pending;
      }
    }
    listeners = listeners_;
  }
  spdlog::info("restored {} firing and {} pending diagnoses from {} (saved {}); {} whose "
               "playbook is gone resolved; held for {} while agents reconnect",
               result.firing, result.pending, file, FormatTime(state->saved_at_unix_nano),
               result.orphaned, absl::FormatDuration(options_.restore_grace));
  for (DiagnosisListener* l : listeners) {
    for (const v1::Diagnosis& d : restored) l->OnRestored(d);
    for (const auto& [what, d] : transitions) l->OnResolved(d);
  }
  return result;
}

void Engine::SaveState(bool urgent, bool changed, int64_t now) {
  if (options_.state_file.empty()) return;
  bool empty;
  {
    absl::MutexLock lock(&mu_);
    empty = active_.empty();
  }
  if (!urgent) {
    if (!changed && empty && saved_empty_) return;
    if (now - last_state_save_ < absl::ToInt64Nanoseconds(options_.state_save_interval)) return;
  }
  last_state_save_ = now;
  if (absl::Status s = WriteState(now); !s.ok()) {
    // Once per failing streak; the diagnoses themselves go on.
    if (!state_failing_) {
      spdlog::error("cannot save diagnoses (they will not survive a restart): {}", s.message());
    }
    state_failing_ = true;
    return;
  }
  if (state_failing_) spdlog::info("saving diagnoses to {} again", options_.state_file);
  state_failing_ = false;
  saved_empty_ = empty;
}

absl::Status Engine::WriteState(int64_t now) {
  EngineState state;
  state.saved_at_unix_nano = now;
  {
    absl::MutexLock lock(&mu_);
    state.diagnoses.reserve(active_.size());
    for (const auto& [full_key, a] : active_) {
      SavedDiagnosis& s = state.diagnoses.emplace_back();
      s.key = a.key;
      s.labels = a.labels;
      s.last_true_unix_nano = a.last_true;
      s.diagnosis = a.diagnosis;
      // The readings behind each evidence line are most of a diagnosis' bytes (16 series x
      // a minute of samples), and the next evaluation where the condition holds refills
      // them: the summaries are kept, the points are not.
      for (v1::Evidence& e : *s.diagnosis.mutable_evidence()) e.clear_points();
      for (const auto& [skey, sym] : a.symptoms) {
        const size_t zero = skey.find('\0');
        s.symptoms.push_back({sym.playbook,
                              zero == std::string::npos ? "" : skey.substr(zero + 1),
                              sym.labels, sym.value, sym.series, sym.raw, sym.first_seen,
                              sym.last_seen});
      }
    }
    for (const auto& [full_key, times] : incidents_) {
      const size_t zero = full_key.find('\0');
      if (zero == std::string::npos) continue;
      state.incidents.push_back({full_key.substr(0, zero), full_key.substr(zero + 1),
                                 std::vector<int64_t>(times.begin(), times.end())});
    }
  }
  // Serialised and written outside the lock: queries go on meanwhile.
  return WriteStateFile(options_.state_file, state);
}

}  // namespace railwatch
