#pragma once

// The InfiniBand fabric scanner's MAD source (railwatch-agent --role=ib-fabric
// --ib_source=mad:CA[:PORT], docs/INFINIBAND.md "The MAD source"): it asks the subnet itself,
// through an IbMadTransport, what ibnetdiscover and perfquery would print, and gives the same
// records as the tool-output source, so the collector cannot tell them apart.
//
// Discovery is breadth-first over directed routes from the local HCA port, as ibnetdiscover
// does: NodeInfo of the node behind every port that is up, each node once (by node GUID), a
// switch's ports 1..N, an HCA only through the port it was reached by (SMPs are not forwarded
// through HCAs), at most kMaxDrHops hops. Every cable is one link seen from both ends. Then each
// scan reads every switch port's PMA counters (PortCountersExtended, and PortCounters where the
// extended attribute lacks the error counters); HCA ports are left to the host agents.
//
// The topology is discovered again every `discover_interval`, and at once when a switch port's
// LinkDownedCounter moves (a link went down: a cable pulled, moved or flapping). A node that
// does not answer is a problem, reported once while it keeps failing, and the rest of the scan
// stands; the scan fails only when the local port itself does not answer.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectors/ib_fabric_source.h"
#include "collectors/ib_mad_transport.h"
#include "common/clock.h"

namespace railwatch {

class IbMadSource final : public IbFabricSource {
 public:
  struct Options {
    absl::Duration discover_interval = absl::Minutes(5);
    int max_hops = kMaxDrHops;
    // Queries kept outstanding at once (one thread each); 0: the transport's MaxOutstanding().
    // Discovery asks a BFS level's nodes in parallel, counters are read a switch per thread.
    int window = 0;
  };
  IbMadSource(Options options, std::unique_ptr<IbMadTransport> transport,
              const Clock& clock = RealClock::Get());

  absl::StatusOr<IbFabricScan> Scan() override;

  // For tests, benchmarks and logs.
  int discoveries() const { return discoveries_; }
  uint64_t queries_sent() const { return queries_.load(); }
  size_t switch_ports() const;
  // Asks for a discovery at the next scan.
  void RequestDiscovery() { rediscover_ = true; }

  // The switches and the ports whose counters each scan reads.
  struct SwitchPorts {
    uint64_t guid = 0;
    uint32_t lid = 0;
    std::string name;  // IbSwitchName of its description, else its GUID
    std::vector<int> ports;
    bool no_extended = false;  // its PMA has no PortCountersExtended
  };

 private:
  // What a discovery found: the records of the scan, and what the counter reads need.
  struct Topology {
    std::vector<ib::IbNode> nodes;
    std::vector<ib::IbLink> links;
    std::vector<SwitchPorts> switches;
  };
  // Problems reported once: a key that failed last time as well is not reported again.
  class ProblemLog {
   public:
    void Add(const std::string& key, ib::IbProblem problem, std::vector<ib::IbProblem>& out);
    void Finish();  // the keys that did not fail this round may be reported again

   private:
    std::set<std::string> previous_, current_;
  };

  absl::Status Discover(std::vector<ib::IbProblem>& problems);
  void ReadCounters(IbFabricScan& scan, bool& link_went_down);
  int Window() const;
  // Counts the query; the transports' calls all go through these.
  template <typename F>
  auto Ask(F&& query) {
    queries_.fetch_add(1, std::memory_order_relaxed);
    return query(*transport_);
  }

  Options options_;
  std::unique_ptr<IbMadTransport> transport_;
  const Clock& clock_;
  Topology topology_;
  bool discovered_ = false;
  bool rediscover_ = false;
  absl::Time discovered_at_ = absl::InfinitePast();
  int discoveries_ = 0;
  std::atomic<uint64_t> queries_{0};
  // Switch ports seen with a link: read even after their link went down (its LinkDownedCounter
  // and errors are what says why).
  std::set<std::pair<uint64_t, int>> ever_linked_;
  std::map<std::pair<uint64_t, int>, uint64_t> link_downed_;  // last LinkDownedCounter read
  ProblemLog discovery_problems_, counter_problems_;
};

}  // namespace railwatch
