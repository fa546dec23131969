#include "daemon/agent_registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace railwatch {

uint64_t AgentRegistry::Connected(const v1::Hello& hello, const std::string& peer, int64_t now) {
  absl::MutexLock lock(&mu_);
  Entry& e = agents_[hello.agent_id()];
  if (e.instance_id != hello.instance_id()) {
    // A new agent process: its sequence numbers start again.
    e.instance_id = hello.instance_id();
    e.info.set_last_sequence(0);
    e.claimed = 0;
  }
  v1::AgentInfo& info = e.info;
  info.set_agent_id(hello.agent_id());
  info.set_role(hello.role());
  info.set_hostname(hello.hostname());
  info.set_version(hello.version());
  info.set_peer(peer);
  info.set_connected(true);
  info.set_connected_since_unix_nano(now);
  info.set_last_seen_unix_nano(now);
  info.clear_collectors();
  for (const std::string& c : hello.collectors()) info.add_collectors(c);
  ++e.streams;
  return info.last_sequence();
}

void AgentRegistry::Disconnected(const std::string& agent_id, uint64_t instance_id,
                                 int64_t now) {
  absl::MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  Entry& e = it->second;
  if (--e.streams <= 0) {
    e.streams = 0;
    e.info.set_connected(false);
    e.info.set_last_seen_unix_nano(now);
  }
}

bool AgentRegistry::ClaimSequence(const std::string& agent_id, uint64_t instance_id,
                                  uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.instance_id != instance_id) return true;
  if (sequence <= it->second.claimed) return false;
  it->second.claimed = sequence;
  return true;
}

void AgentRegistry::BatchStored(const std::string& agent_id, uint64_t sequence, uint64_t points,
                                uint32_t series, int64_t newest_point, int64_t now) {
  absl::MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  v1::AgentInfo& info = it->second.info;
  info.set_last_sequence(sequence);
  info.set_batches_received(info.batches_received() + 1);
  info.set_points_received(info.points_received() + points);
  info.set_series(series);
  info.set_last_seen_unix_nano(now);
  if (newest_point > 0) info.set_lag_seconds(static_cast<double>(now - newest_point) / 1e9);
}

uint64_t AgentRegistry::LastSequence(const std::string& agent_id, uint64_t instance_id) const {
  absl::MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.instance_id != instance_id) return 0;
  return it->second.info.last_sequence();
}

std::vector<v1::AgentInfo> AgentRegistry::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::AgentInfo> out;
  for (const auto& [id, e] : agents_) out.push_back(e.info);
  std::sort(out.begin(), out.end(), [](const v1::AgentInfo& a, const v1::AgentInfo& b) {
    return a.agent_id() < b.agent_id();
  });
  return out;
}

absl::StatusOr<v1::AgentInfo> AgentRegistry::Forget(const std::string& agent_id) {
  absl::MutexLock lock(&mu_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) {
    return absl::NotFoundError(absl::StrCat("no agent with id \"", agent_id, "\""));
  }
  if (it->second.streams > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("agent \"", agent_id, "\" is connected (from ", it->second.info.peer(),
                     "): stop it first, then forget it"));
  }
  v1::AgentInfo info = std::move(it->second.info);
  agents_.erase(it);
  return info;
}

int AgentRegistry::Connected() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [id, e] : agents_) n += e.info.connected();
  return n;
}

}  // namespace railwatch
