#pragma once

// What the engine remembers of diagnoses that are over: the resolved ones kept for queries,
// and when each playbook + key last had incidents (repeat offenders). Not thread-safe: the
// engine holds it under its lock.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "engine/alert.h"
#include "engine/diagnosis_state.h"

namespace railwatch {

class AlertHistory {
 public:
  // Resolve times kept per key for repeat-offender counts.
  static constexpr size_t kMaxIncidentTimes = 64;

  // `capacity`: resolved diagnoses kept; `repeat_window`: how far back incidents count.
  AlertHistory(size_t capacity, absl::Duration repeat_window)
      : capacity_(capacity), repeat_window_(repeat_window) {}

  // Earlier incidents of `playbook` + `key` that resolved within the repeat window before now.
  uint32_t PreviousIncidents(const std::string& playbook, const std::string& key,
                             int64_t now) const;

  // A firing diagnosis that resolved: kept (the oldest beyond capacity dropped) and counted.
  void Add(const AlertRecord& resolved);

  // The resolved diagnoses, newest first.
  const std::deque<AlertRecord>& resolved() const { return resolved_; }

  // Incident times for the state file, and back.
  std::vector<SavedIncidents> SavedTimes() const;
  void Restore(const std::vector<SavedIncidents>& saved);

 private:
  static std::string IncidentKey(const std::string& playbook, const std::string& key);

  const size_t capacity_;
  const absl::Duration repeat_window_;
  std::deque<AlertRecord> resolved_;
  // playbook + '\0' + key -> times earlier incidents resolved, oldest first, bounded.
  absl::flat_hash_map<std::string, std::deque<int64_t>> incidents_;
};

}  // namespace railwatch
