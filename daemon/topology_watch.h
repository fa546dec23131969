#pragma once

// The daemon's fabric map, kept current (docs/TOPOLOGY.md): every `interval` it reads what the
// agents report about the fabric from the series store (NIC identities, LLDP neighbours on
// switch ports and host interfaces), discovers the topology (topology/discovery.h), lays the
// topology file over it when there is one, and hands a changed map to the FabricMap (and the
// topology info series) without a restart. Where the file and discovery disagree it writes
// fabric_topology_mismatch{...} = 1 into the store, which the topology_mismatch playbook
// turns into a diagnosis; 0 once they agree again.

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "store/series_store.h"
#include "topology/discovery.h"
#include "topology/fabric_map.h"

namespace railwatch {

class TopologyCollectable;

class TopologyWatch {
 public:
  struct Options {
    absl::Duration interval = absl::Seconds(10);
    // NIC identities and host LLDP neighbours not reported for this long are left out (a NIC
    // removed, a host gone). Switch ports' neighbours are on-change and never age out; a
    // newer report for the same port replaces an older one.
    absl::Duration stale_after = absl::Minutes(5);
    bool discover = true;  // false: the file alone, as before discovery
  };
  // Where the map in use comes from.
  struct View {
    std::shared_ptr<const Topology> declared;    // the file; null without one
    std::shared_ptr<const Topology> discovered;  // null before the first pass / discover=false
    std::shared_ptr<const Topology> effective;   // what the FabricMap holds
    absl::flat_hash_map<std::string, Provenance> provenance;  // of effective's cables
    absl::flat_hash_map<std::string, Provenance> discovered_provenance;
    std::vector<TopologyDifference> differences;              // declared vs discovered
    std::vector<std::string> notes;                           // discovery's
    int64_t updated_unix_nano = 0;                            // last pass
    uint64_t changes = 0;                                     // times the map changed
  };

  TopologyWatch(Options options, std::shared_ptr<const Topology> declared, SeriesStore& store,
                FabricMap& fabric, const Clock& clock);
  ~TopologyWatch();
  TopologyWatch(const TopologyWatch&) = delete;
  TopologyWatch& operator=(const TopologyWatch&) = delete;

  // Also updates these info series when the map changes (may be null).
  void set_collectable(TopologyCollectable* c) { collectable_ = c; }

  // One pass now: read the facts, discover, merge, swap the map when it changed, write the
  // mismatch series. Returns true when the map changed.
  bool RunOnce();
  // Passes every `interval` on a thread of its own, until Stop().
  void Start();
  void Stop();

  View view() const;
  // What the agents reported, as of the last pass (for tests and `railwatch topology`).
  DiscoveryFacts ReadFacts() const;

 private:
  void WriteMismatches(const std::vector<TopologyDifference>& differences, int64_t now);

  const Options options_;
  SeriesStore& store_;
  FabricMap& fabric_;
  const Clock& clock_;
  TopologyCollectable* collectable_ = nullptr;
  std::string effective_yaml_;  // of the map the FabricMap holds, to see a change

  mutable absl::Mutex mu_;
  View view_ ABSL_GUARDED_BY(mu_);
  // Mismatch series written, and whether they are at 1 now.
  absl::flat_hash_map<SeriesRef, bool> mismatch_series_;

  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace railwatch
