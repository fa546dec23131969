#pragma once

// A simulated InfiniBand subnet that answers the MAD source's queries (IbMadTransport) from an
// in-memory model: switches with N ports, HCAs, cables with a width and a speed, LIDs, GUIDs and
// per-port PMA counters that tests and benchmarks move. railwatch-agent --ib_source=sim:SPEC
// scans one, and the simulator's IB mode is meant to drive the same model.
//
// It answers as a fabric does: a directed route is walked hop by hop from the local HCA port
// (an SMP dies at a port without a cable, at an HCA it would have to cross, and at a node that
// does not answer); PortCounters' counters stop at all ones of their width (ib/ib_records.h's
// table), PortCountersExtended gives 64 bits; a cable pulled bumps LinkDownedCounter at both
// ends.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectors/ib_mad_transport.h"

namespace railwatch {

class SimIbFabric {
 public:
  struct PortRef {
    uint64_t guid = 0;
    int port = 0;
    bool operator==(const PortRef&) const = default;
  };
  using PortCounters = std::map<std::string, uint64_t, std::less<>>;  // true counts by PMA name
  struct Port {
    std::optional<PortRef> peer;  // a cable, trained
    int width_lanes = 0;
    std::string generation;
    uint32_t lid = 0;        // an HCA port's (a switch has one LID, the node's)
    uint64_t port_guid = 0;  // an HCA port's
    PortCounters counters;   // absent names count 0
  };
  struct Node {
    ib::IbNodeType type = ib::IbNodeType::kUnknown;
    uint64_t guid = 0;
    std::string description;
    uint32_t lid = 0;  // a switch's
    uint32_t vendor_id = kMellanoxVendorId;
    uint32_t device_id = 0;
    std::vector<Port> ports;  // [0]: a switch's port 0; 1..N the external ports
    int num_ports() const { return static_cast<int>(ports.size()) - 1; }
    // Fault and capability knobs.
    bool unresponsive = false;              // answers (and forwards) nothing: every query times out
    bool extended_counters = true;          // has PortCountersExtended
    bool extended_error_counters = true;    // ... with the error counters (CapMask2 bit 1)
  };

  // Each returns the node's GUID; LIDs are given in order from 1 (a switch one, an HCA one a
  // port). The description is NVIDIA's: "MF0;<name>:MQM9700/U1", "<host> <device>".
  uint64_t AddSwitch(std::string_view name, uint64_t guid, int ports);
  uint64_t AddHca(std::string_view host, std::string_view device, uint64_t guid, int ports = 1);
  // A cable trained at `width_lanes` x `generation` ("HDR", "NDR", "FDR10", ...).
  absl::Status Connect(uint64_t a, int port_a, uint64_t b, int port_b, int width_lanes,
                       std::string_view generation);
  // Pulls the cable at guid:port (both ends' LinkDownedCounter + 1, as the ports count it).
  absl::Status Disconnect(uint64_t guid, int port);
  // The HCA port the scanner sits on (default: the first HCA added, port 1).
  absl::Status SetLocal(uint64_t hca_guid, int port);

  Node* FindNode(uint64_t guid);
  const Node* FindNode(uint64_t guid) const;
  // A port's counters, to move; aborts on a node or port the fabric does not have (a test's bug).
  PortCounters& Counters(uint64_t guid, int port);
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t switch_ports() const;  // external ports of all switches

  // The node a directed route reaches and the port it enters by; nullptr where the SMP dies.
  const Node* Walk(const DrPath& path, int* in_port) const;
  // The node owning a LID, and for an HCA the port.
  const Node* ByLid(uint32_t lid, int* port) const;

 private:
  Port* FindPort(uint64_t guid, int port);
  std::vector<Node> nodes_;
  std::map<uint64_t, size_t> by_guid_;
  std::map<uint32_t, std::pair<size_t, int>> by_lid_;
  uint32_t next_lid_ = 1;
  std::optional<PortRef> local_;
};

// A two-level fat tree: `leaves` leaf switches with `hosts_per_leaf` HCAs each (one HCA a host,
// "node-0001 mlx5_0"), each leaf cabled to each of `spines` spines by `uplinks` cables; every
// cable `width`x`speed`. Leaves have hosts_per_leaf + spines x uplinks ports, spines
// leaves x uplinks. The scanner sits on the first host's HCA.
struct SimFatTreeSpec {
  int leaves = 4;
  int spines = 2;
  int hosts_per_leaf = 8;
  int uplinks = 1;
  int width = 4;
  std::string speed = "NDR";
  absl::Duration latency = absl::ZeroDuration();  // per query (the transport's)
};
// "leaves=4,spines=2,hosts_per_leaf=8[,uplinks=1][,width=4][,speed=NDR][,latency_us=20]"
absl::StatusOr<SimFatTreeSpec> ParseSimFatTreeSpec(std::string_view text);
absl::StatusOr<std::unique_ptr<SimIbFabric>> BuildSimFatTree(const SimFatTreeSpec& spec);
// GUIDs BuildSimFatTree gives (1-based indexes).
uint64_t SimLeafGuid(int leaf);
uint64_t SimSpineGuid(int spine);
uint64_t SimHostGuid(int host);

// Answers IbMadTransport's queries from a SimIbFabric. The fabric is shared: tests move its
// counters and cables between scans (not during one: the transport reads it under its own lock,
// the test writes it without).
class SimIbMadTransport final : public IbMadTransport {
 public:
  struct Options {
    std::string name = "sim";
    absl::Duration latency = absl::ZeroDuration();  // each query's round trip
    absl::Duration timeout = absl::ZeroDuration();  // what a query nobody answers costs
    int max_outstanding = 8;
  };
  SimIbMadTransport(std::shared_ptr<SimIbFabric> fabric, Options options);

  std::string Describe() const override { return options_.name; }
  int MaxOutstanding() const override { return options_.max_outstanding; }
  absl::StatusOr<MadNodeInfo> QueryNodeInfo(const DrPath& path) override;
  absl::StatusOr<std::string> QueryNodeDescription(const DrPath& path) override;
  absl::StatusOr<MadPortInfo> QueryPortInfo(const DrPath& path, int port) override;
  absl::StatusOr<bool> QueryFdr10Active(const DrPath& path, int port) override;
  absl::StatusOr<MadPortCounters> QueryPortCounters(uint32_t lid, int port) override;
  absl::StatusOr<MadPortCounters> QueryPortCountersExtended(uint32_t lid, int port) override;

  // Queries answered or timed out, and the time they took in all (the latency as slept).
  uint64_t queries() const;
  absl::Duration time_in_queries() const;

 private:
  // Waits the query's latency (or the timeout for a failed one) outside the lock.
  template <typename T>
  absl::StatusOr<T> Finish(absl::StatusOr<T> answer, absl::Time start);
  absl::StatusOr<const SimIbFabric::Node*> Reach(const DrPath& path, int* in_port) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::pair<const SimIbFabric::Node*, int>> PmaOf(uint32_t lid, int port) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::shared_ptr<SimIbFabric> fabric_;
  Options options_;
  mutable absl::Mutex mu_;
  mutable absl::Mutex stats_mu_;
  uint64_t queries_ ABSL_GUARDED_BY(stats_mu_) = 0;
  absl::Duration time_ ABSL_GUARDED_BY(stats_mu_);
};

}  // namespace railwatch
