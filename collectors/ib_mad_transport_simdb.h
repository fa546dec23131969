#pragma once

// The simulator's InfiniBand subnet served through MADs (railwatch-agent --role=ib-fabric
// --ib_source=simdb:FILE). railwatch-sim --fabric=ib writes its switches, HCAs, links and PMA
// counters as ibdiagnet's `ibdiagnet2.db_csv`; this transport rebuilds an in-memory subnet
// (collectors/ib_mad_transport_sim.h's SimIbFabric) from that file whenever it changes and
// answers the MAD source's queries from it: directed-route discovery, PortInfo widths and
// speeds, PortCounters and PortCountersExtended. So the simulator's faults (a slow receiver's
// credit waits, a flap, a bad cable) reach the scanner through the same discovery, PMA
// decoding and rediscovery on link-down as a real subnet's, not only through the tool-output
// reader.

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectors/ib_mad_transport_sim.h"
#include "ib/ibdiagnet_db.h"

namespace railwatch {

// The subnet a db_csv describes: its nodes in file order (switches get LIDs 1.. as the file
// lists them, HCA ports after), LINKS cabled at PORTS' width and speed, PM_INFO's counters
// (PortCountersExtended over PortCounters where a port has both). The first HCA is the local
// port. Links at a width or speed PortInfo cannot say are left out.
absl::StatusOr<std::unique_ptr<SimIbFabric>> SimIbFabricFromDb(const ib::IbdiagnetDb& db);

class SimDbMadTransport final : public IbMadTransport {
 public:
  struct Options {
    std::string path;  // the db_csv
    int max_outstanding = 8;
    // How often the file's modification time is looked at (a query between two looks uses
    // the subnet as last read).
    absl::Duration recheck = absl::Milliseconds(500);
  };
  // Reads the file once: an error names it and why (missing, not a db_csv, no HCA).
  static absl::StatusOr<std::unique_ptr<SimDbMadTransport>> Open(Options options);

  std::string Describe() const override { return "simdb:" + options_.path; }
  int MaxOutstanding() const override { return options_.max_outstanding; }
  absl::StatusOr<MadNodeInfo> QueryNodeInfo(const DrPath& path) override;
  absl::StatusOr<std::string> QueryNodeDescription(const DrPath& path) override;
  absl::StatusOr<MadPortInfo> QueryPortInfo(const DrPath& path, int port) override;
  absl::StatusOr<bool> QueryFdr10Active(const DrPath& path, int port) override;
  absl::StatusOr<MadPortCounters> QueryPortCounters(uint32_t lid, int port) override;
  absl::StatusOr<MadPortCounters> QueryPortCountersExtended(uint32_t lid, int port) override;

  // Times the subnet was rebuilt from the file (the first read included).
  int loads() const;

 private:
  explicit SimDbMadTransport(Options options) : options_(std::move(options)) {}
  // The subnet now: read again when the file changed since the last look.
  std::shared_ptr<SimIbMadTransport> Current();
  absl::Status Load() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Options options_;
  mutable absl::Mutex mu_;
  std::shared_ptr<SimIbMadTransport> current_ ABSL_GUARDED_BY(mu_);
  int64_t mtime_ns_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time checked_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int loads_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace railwatch
