#pragma once

// What the InfiniBand fabric scanner's MAD source (collectors/ib_mad_source.h) asks the fabric,
// at the level of attribute queries: subnet management (SMPs by directed route from the local
// HCA port: NodeInfo 0x0011, NodeDescription 0x0010, PortInfo 0x0015 and Mellanox's
// ExtendedPortInfo 0xFF90 for FDR10) and performance management (GMPs to a LID: PortCounters
// 0x0012, PortCountersExtended 0x001D). Two implementations: libibmad over the kernel's umad
// devices (ib_mad_transport_libibmad.h) and an in-memory fabric (ib_mad_transport_sim.h).
//
// Values are the attributes' own encodings (IBA vol. 1 ch. 14.2.5); turning them into records
// (ib/ib_records.h) is the source's job, so that both transports go through the same decoding.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ib/ib_records.h"

namespace railwatch {

// A directed route: the port out of each node, starting at the local one (libibmad's
// ib_dr_path_t without its leading 0). Empty: the local node itself.
struct DrPath {
  std::vector<uint8_t> ports;

  DrPath Then(int port) const;
  int hops() const { return static_cast<int>(ports.size()); }
  // "0,1,5", as str2drpath() and ibnetdiscover's -D print it.
  std::string ToString() const;
  bool operator==(const DrPath&) const = default;
};

// The longest directed route an SMP carries (IB_SUBNET_PATH_HOPS_MAX - 1: the path array's
// first entry is the local node).
inline constexpr int kMaxDrHops = 63;

struct MadNodeInfo {
  ib::IbNodeType type = ib::IbNodeType::kUnknown;
  uint64_t node_guid = 0;
  uint64_t port_guid = 0;  // the port the query came in by (a switch: port 0's)
  uint64_t system_image_guid = 0;
  int num_ports = 0;
  int local_port = 0;  // the port the query came in by
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
};

// PortInfo's fields the scanner reads, as encoded.
struct MadPortInfo {
  uint32_t lid = 0;             // a switch's only in port 0's PortInfo
  uint32_t capability_mask = 0;  // a switch's only in port 0's PortInfo
  int state = 0;           // PortState: 1 Down, 2 Initialize, 3 Armed, 4 Active
  int physical_state = 0;  // PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp, ...
  int link_width_active = 0;      // 1 1x, 2 4x, 4 8x, 8 12x, 16 2x
  int link_speed_active = 0;      // 1 SDR, 2 DDR, 4 QDR
  int link_speed_ext_active = 0;  // 0 none, 1 FDR, 2 EDR, 4 HDR, 8 NDR (IsExtendedSpeedsSupported)
  // A link past Down carries SMPs, so it has a far end to discover.
  bool link_up() const { return state >= 2; }
};

// PortInfo CapabilityMask bit 14: LinkSpeedExtActive is valid.
inline constexpr uint32_t kPortCapExtendedSpeeds = 1u << 14;
// NodeInfo VendorID of Mellanox / NVIDIA Networking, whose ports may run FDR10.
inline constexpr uint32_t kMellanoxVendorId = 0x02c9;

// The active width and speed as a link speed ("4x", "HDR"). `ext_speeds_valid`: the node's
// CapabilityMask has IsExtendedSpeedsSupported (a switch's from port 0). `fdr10`: Mellanox's
// ExtendedPortInfo says FDR10 (its LinkSpeedActive bit 0). Unknown codes give an empty
// generation, never a guess.
ib::IbLinkSpeed MadLinkSpeed(const MadPortInfo& info, bool ext_speeds_valid, bool fdr10);
// The inverse, for simulated ports: PortInfo's codes for a width in lanes and a generation.
// False for a width or generation PortInfo cannot say (XDR: LinkSpeedExtActive2, which
// rdma-core 44's libibmad does not decode).
bool EncodeMadLinkSpeed(int width_lanes, std::string_view generation, MadPortInfo& info,
                        bool& fdr10);

// One PMA attribute's counters, by the PMA names ib/ uses (SymbolErrorCounter, PortXmitData,
// ...): only what the port's PMA says it has (PortXmitWait only with its capability bit, the
// extended error counters only with IsAdditionalPortCountersExtendedSupported).
struct MadPortCounters {
  struct Value {
    std::string_view name;  // a static string
    uint64_t value = 0;
  };
  std::vector<Value> values;
  uint32_t cap_mask = 0;   // ClassPortInfo CapabilityMask of the port's PMA
  uint32_t cap_mask2 = 0;  // ClassPortInfo CapabilityMask2
  const Value* Find(std::string_view name) const;
};

// PMA ClassPortInfo capability bits (IBA vol. 1 16.1.2; infiniband-diags' perfquery).
inline constexpr uint32_t kPmaCapExtendedWidth = 1u << 9;         // PortCountersExtended
inline constexpr uint32_t kPmaCapExtendedWidthNoIetf = 1u << 10;  // ... without uni/multicast
inline constexpr uint32_t kPmaCapXmitWait = 1u << 12;             // PortXmitWait
inline constexpr uint32_t kPmaCap2AllExtended = 1u << 1;  // error counters in the extended one

// Errors: kDeadlineExceeded when the node did not answer in time (after the transport's
// retries), kUnimplemented for an attribute the node does not have (PortCountersExtended on an
// old switch, ExtendedPortInfo on another vendor's), anything else for other failures.
// Thread safety: up to MaxOutstanding() calls may run at once, from as many threads.
class IbMadTransport {
 public:
  virtual ~IbMadTransport() = default;
  // For logs and problems: "mad:mlx5_0:1", "sim:leaves=4,...".
  virtual std::string Describe() const = 0;
  virtual int MaxOutstanding() const { return 1; }
  // Called when a discovery starts: anything kept per LID may be stale now.
  virtual void TopologyChanged() {}

  virtual absl::StatusOr<MadNodeInfo> QueryNodeInfo(const DrPath& path) = 0;
  virtual absl::StatusOr<std::string> QueryNodeDescription(const DrPath& path) = 0;
  virtual absl::StatusOr<MadPortInfo> QueryPortInfo(const DrPath& path, int port) = 0;
  // Mellanox ExtendedPortInfo's LinkSpeedActive: whether the port runs FDR10.
  virtual absl::StatusOr<bool> QueryFdr10Active(const DrPath& path, int port) = 0;
  virtual absl::StatusOr<MadPortCounters> QueryPortCounters(uint32_t lid, int port) = 0;
  virtual absl::StatusOr<MadPortCounters> QueryPortCountersExtended(uint32_t lid, int port) = 0;
};

}  // namespace railwatch
