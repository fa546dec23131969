// The engine's side of persistence: a snapshot of the active diagnoses written after
// evaluations (StateSaver decides when), and their restore at start-up (diagnosis_state.h has
// the file).
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/text.h"
#include "engine/alert_proto.h"
#include "engine/diagnosis_state.h"
#include "engine/engine.h"

namespace railwatch {

void StateSaver::Save(bool urgent, bool changed, bool empty, int64_t now,
                      absl::FunctionRef<EngineState()> snapshot) {
  if (path_.empty()) return;
  if (!urgent) {
    if (!changed && empty && saved_empty_) return;
    if (now - last_save_ < absl::ToInt64Nanoseconds(interval_)) return;
  }
  last_save_ = now;
  if (absl::Status s = WriteStateFile(path_, snapshot()); !s.ok()) {
    // Once per failing streak; the diagnoses themselves go on.
    if (!failing_) {
      spdlog::error("cannot save diagnoses (they will not survive a restart): {}", s.message());
    }
    failing_ = true;
    return;
  }
  if (failing_) spdlog::info("saving diagnoses to {} again", path_);
  failing_ = false;
  saved_empty_ = empty;
}

EngineState Engine::Snapshot(int64_t now) const {
  EngineState state;
  state.saved_at_unix_nano = now;
  for (const PlaybookState& ps : states_) {
    for (const auto& [key, a] : ps.alerts()) {
      SavedDiagnosis& s = state.diagnoses.emplace_back();
      s.key = a.key;
      s.labels = a.labels;
      s.last_true_unix_nano = a.last_true;
      // The readings behind each evidence line are most of a diagnosis' bytes (16 series x
      // a minute of samples), and the next evaluation where the condition holds refills
      // them: the summaries are kept, the points are not.
      s.diagnosis = ToDiagnosis(a, /*points=*/false);
      for (const auto& [skey, sym] : a.symptoms) {
        const size_t zero = skey.find('\0');
        s.symptoms.push_back({sym.playbook, zero == std::string::npos ? "" : skey.substr(zero + 1),
                              sym.labels, sym.value, sym.series, sym.raw, sym.first_seen,
                              sym.last_seen});
      }
    }
  }
  state.incidents = history_.SavedTimes();
  return state;
}

void Engine::SaveState(bool urgent, bool changed, int64_t now) {
  if (saver_.path().empty()) return;
  // The snapshot is taken under the lock; serialised and written outside it (queries go on).
  bool empty = true;
  EngineState state;
  {
    absl::MutexLock lock(&mu_);
    for (const PlaybookState& ps : states_) empty &= ps.alerts().empty();
  }
  saver_.Save(urgent, changed, empty, now, [&] {
    absl::MutexLock lock(&mu_);
    return Snapshot(now);
  });
}

Engine::RestoreResult Engine::Restore() {
  RestoreResult result;
  if (options_.state_file.empty()) return result;
  const std::string& file = options_.state_file;
  absl::MutexLock eval_lock(&eval_mu_);
  saver_.WriteNextTime();
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
    spdlog::error(
        "cannot restore diagnoses: {}; {}; starting with none", result.error,
        aside.ok() ? absl::StrCat("moved it to ", *aside) : std::string(aside.status().message()));
    return result;
  }

  absl::flat_hash_map<std::string, PlaybookState*> by_name;
  std::vector<AlertRecord> restored, orphans;
  std::vector<DiagnosisListener*> listeners;
  {
    absl::MutexLock lock(&mu_);
    for (PlaybookState& ps : states_) by_name[ps.playbook().name] = &ps;
    history_.Restore(state->incidents);
    for (SavedDiagnosis& s : state->diagnoses) {
      const v1::Diagnosis& d = s.diagnosis;
      const bool firing = d.state() == v1::DIAGNOSIS_STATE_FIRING;
      if (!firing && d.state() != v1::DIAGNOSIS_STATE_PENDING) continue;
      auto ps = by_name.find(d.playbook());
      if (ps == by_name.end() && !firing) continue;  // never announced: nothing to take back
      AlertRecord a = AlertFromDiagnosis(d);
      a.key = s.key;
      a.labels = std::move(s.labels);
      a.last_true = s.last_true_unix_nano;
      a.hold_until = now + absl::ToInt64Nanoseconds(options_.restore_grace);
      for (SavedSymptom& sym : s.symptoms) {
        a.symptoms[absl::StrCat(sym.playbook, std::string(1, '\0'), sym.key)] =
            Symptom{sym.playbook,           std::move(sym.labels), sym.value,
                    std::move(sym.series),  std::move(sym.raw),    sym.first_seen_unix_nano,
                    sym.last_seen_unix_nano};
      }
      if (ps == by_name.end()) {
        // Its playbook was removed, renamed or disabled: nothing will ever resolve it.
        spdlog::warn(
            "diagnosis {} ({}) was firing before the restart, but playbook {} is no "
            "longer loaded: resolved",
            a.id, a.summary, a.playbook);
        a.description =
            absl::StrCat("Resolved at restart: playbook ", a.playbook,
                         " is no longer loaded (removed, renamed or disabled). ", a.description);
        a.state = AlertState::kResolved;
        a.resolved_at = now;
        a.last_evaluated = now;
        history_.Add(a);
        orphans.push_back(a);
        ++result.orphaned;
        continue;
      }
      auto [it, inserted] = ps->second->alerts().try_emplace(a.key, std::move(a));
      if (!inserted) continue;
      enricher_.FillBlastRadius(ps->second->playbook(), it->second);
      if (firing) {
        restored.push_back(it->second);
        ++result.firing;
      } else {
        ++result.pending;
      }
    }
    listeners = listeners_;
  }
  spdlog::info(
      "restored {} firing and {} pending diagnoses from {} (saved {}); {} whose "
      "playbook is gone resolved; held for {} while agents reconnect",
      result.firing, result.pending, file, FormatTime(state->saved_at_unix_nano), result.orphaned,
      absl::FormatDuration(options_.restore_grace));
  for (DiagnosisListener* l : listeners) {
    for (const AlertRecord& a : restored) l->OnRestored(a);
    for (const AlertRecord& a : orphans) l->OnResolved(a);
  }
  return result;
}

}  // namespace railwatch
