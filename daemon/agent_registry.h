#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// What the daemon knows about each agent that has ever connected: identity, connection
// state, sequence progress and volume. Thread-safe.
class AgentRegistry {
 public:
  // Registers a stream's Hello. Returns the last sequence stored for this agent instance
  // (0 for a new instance), so a reconnecting agent can tell what was lost.
  uint64_t Connected(const v1::Hello& hello, const std::string& peer, int64_t now);
  void Disconnected(const std::string& agent_id, uint64_t instance_id, int64_t now);
  // Claims batch `sequence` of this agent instance for the stream about to store it: false
  // when a stream of the same instance has already claimed it or a later one (a reconnect
  // whose new stream is read while the old connection's last batches still are), so that no
  // batch is stored twice whatever the order the daemon reads two connections in. A batch of
  // an instance that is no longer the agent's current one is not deduplicated (true).
  bool ClaimSequence(const std::string& agent_id, uint64_t instance_id, uint64_t sequence);
  // Records a stored batch.
  void BatchStored(const std::string& agent_id, uint64_t sequence, uint64_t points,
                   uint32_t series, int64_t newest_point, int64_t now);
  // Last stored sequence of this instance, 0 if none.
  uint64_t LastSequence(const std::string& agent_id, uint64_t instance_id) const;

  std::vector<v1::AgentInfo> List() const;
  // Removes a decommissioned agent (Query ForgetAgent): NOT_FOUND when unknown,
  // FAILED_PRECONDITION while it has a stream open. Returns what was known about it.
  absl::StatusOr<v1::AgentInfo> Forget(const std::string& agent_id);
  int Connected() const;

 private:
  struct Entry {
    v1::AgentInfo info;
    uint64_t instance_id = 0;
    int streams = 0;  // open streams for this agent id (a reconnect may overlap the old one)
    uint64_t claimed = 0;  // the highest sequence of instance_id a stream has claimed
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> agents_ ABSL_GUARDED_BY(mu_);
};

}  // namespace railwatch
