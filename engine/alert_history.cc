#include "engine/alert_history.h"

#include "absl/strings/str_cat.h"

namespace railwatch {

std::string AlertHistory::IncidentKey(const std::string& playbook, const std::string& key) {
  return absl::StrCat(playbook, std::string(1, '\0'), key);
}

uint32_t AlertHistory::PreviousIncidents(const std::string& playbook, const std::string& key,
                                         int64_t now) const {
  auto it = incidents_.find(IncidentKey(playbook, key));
  if (it == incidents_.end()) return 0;
  const int64_t since = now - absl::ToInt64Nanoseconds(repeat_window_);
  uint32_t n = 0;
  for (int64_t t : it->second) n += t >= since ? 1 : 0;
  return n;
}

void AlertHistory::Add(const AlertRecord& resolved) {
  std::deque<int64_t>& times = incidents_[IncidentKey(resolved.playbook, resolved.key)];
  times.push_back(resolved.resolved_at);
  if (times.size() > kMaxIncidentTimes) times.pop_front();
  resolved_.push_front(resolved);
  if (resolved_.size() > capacity_) resolved_.pop_back();
}

std::vector<SavedIncidents> AlertHistory::SavedTimes() const {
  std::vector<SavedIncidents> out;
  out.reserve(incidents_.size());
  for (const auto& [full_key, times] : incidents_) {
    const size_t zero = full_key.find('\0');
    if (zero == std::string::npos) continue;
    out.push_back({full_key.substr(0, zero), full_key.substr(zero + 1),
                   std::vector<int64_t>(times.begin(), times.end())});
  }
  return out;
}

void AlertHistory::Restore(const std::vector<SavedIncidents>& saved) {
  for (const SavedIncidents& i : saved) {
    std::deque<int64_t>& times = incidents_[IncidentKey(i.playbook, i.key)];
    times.assign(i.resolved_unix_nano.begin(), i.resolved_unix_nano.end());
    while (times.size() > kMaxIncidentTimes) times.pop_front();
  }
}

}  // namespace railwatch
