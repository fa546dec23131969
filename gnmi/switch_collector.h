#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collectors/collector.h"
#include "gnmi/client.h"
#include "gnmi/decode.h"
#include "gnmi/profile.h"
#include "gnmi/targets.h"
#include "topology/topology.h"

namespace railwatch {

// The switch agent's collector: one streaming gNMI subscription per target, every update
// mapped by the target's path profile onto canonical series labelled switch=<target name>.
//
// Responses are decoded on gRPC's threads into a per-target buffer of pending points; each
// agent cycle Collect() drains the buffers on the poll thread, so every update is forwarded
// with its notification's timestamp (no "latest value only", no gaps). Series are defined
// lazily on the poll thread, through a per-target cache from leaf path to series: the
// profile's Map runs once per distinct path, and the steady state allocates nothing per
// update.
class GnmiSwitchCollector final : public Collector {
 public:
  struct Options {
    std::vector<GnmiTargetConfig> targets;
    GnmiChannelOptions channel;
    // Labels of the collector's own railwatch_gnmi_* series besides target=<name>
    // (agent=<agent id>: a switch agent's series carry no host label).
    Labels self_labels;
    // Points kept per target between two cycles; beyond this they are dropped and counted
    // (the poll thread has stalled).
    size_t max_pending_per_target = size_t{1} << 18;
    // Distinct leaf paths remembered per target; a target that invents paths without end is
    // counted, not remembered.
    size_t max_paths_per_target = size_t{1} << 16;
    // When set, LLDP neighbours (fabric_lldp_neighbor_info) are checked against it:
    // fabric_lldp_neighbor_mismatch{switch,interface} and lldp.mismatch events.
    std::shared_ptr<const Topology> topology;
  };

  struct TargetStats {
    std::string name;
    GnmiClient::Stats client;
    uint64_t updates = 0;   // leaves forwarded as points
    uint64_t unmapped = 0;  // leaves no mapping of the profile matched
    uint64_t errors = 0;    // decode errors, values that are not numbers, error responses
    uint64_t dropped = 0;   // points dropped because the buffer was full
    uint64_t deletes = 0;
    bool synced = false;    // sync_response seen on the current or an earlier stream
    // Streams whose paths the target refused on the last attempt (a profile's optional
    // subscriptions it does not serve, or a profile that does not fit it at all).
    int refused_subscriptions = 0;
  };

  // Fails when a target names a profile that is not in `profiles` (with the target's
  // file:line).
  static absl::StatusOr<std::unique_ptr<GnmiSwitchCollector>> Create(
      Options options, std::vector<GnmiProfile> profiles);
  // Loads the targets file and the profiles directory (the switch agent's start-up). The
  // targets in `options` are replaced by the file's. Errors carry file:line.
  static absl::StatusOr<std::unique_ptr<GnmiSwitchCollector>> FromFiles(
      const std::string& targets_file, const std::string& profiles_dir, Options options);
  ~GnmiSwitchCollector() override;

  // Starts subscribing to every target (a target that cannot be reached is retried).
  void Start();
  // Stops every subscription; Collect() still drains what has arrived.
  void Stop();

  std::string_view name() const override { return "gnmi"; }
  absl::Status Collect(Emitter& emitter) override;

  // Handles a response as if target `index` had sent it (the benchmark's entry point; the
  // clients call the same code).
  void HandleResponse(size_t index, const ::gnmi::SubscribeResponse& response);
  size_t target_count() const { return targets_.size(); }
  TargetStats target_stats(size_t index) const;

 private:
  class Target;
  GnmiSwitchCollector(Options options, std::vector<GnmiProfile> profiles);

  Options options_;
  std::vector<GnmiProfile> profiles_;
  std::unique_ptr<GnmiScheduler> scheduler_;
  std::vector<std::unique_ptr<Target>> targets_;
  bool health_defined_ = false;
};

}  // namespace railwatch
