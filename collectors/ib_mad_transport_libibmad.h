#pragma once

// The MAD source's transport over rdma-core's libibmad and the kernel's umad devices
// (/dev/infiniband/umad*, module ib_umad): SMPs by directed route with smp_query_via, PMA
// queries by LID with pma_query_via, decoded with mad_decode_field. Nothing is ever set or
// reset (no smp_set_via, no performance_reset_via): the scanner only reads.
//
// libibmad's mad_rpc is synchronous (one outstanding MAD a port handle: another thread's
// answer would be dropped as a TID mismatch), so the transport opens `max_outstanding` handles
// on the same CA port and lends one to each call; that many queries are in flight at once.
// Needs read-write access to /dev/infiniband/umad* (root or the rdma group's udev rule).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectors/ib_mad_transport.h"

struct ibmad_port;

namespace railwatch {

class LibibmadTransport final : public IbMadTransport {
 public:
  struct Options {
    std::string ca;  // "mlx5_0"; "" for libibumad's default (the first CA with an active port)
    int port = 0;    // 0: the CA's first active port
    absl::Duration timeout = absl::Seconds(1);  // each try
    int retries = 2;
    int max_outstanding = 4;
  };
  // Fails with a message naming the CA and the reason (no umad devices, no such CA, no access).
  static absl::StatusOr<std::unique_ptr<LibibmadTransport>> Open(Options options);
  ~LibibmadTransport() override;

  std::string Describe() const override;
  int MaxOutstanding() const override { return static_cast<int>(ports_.size()); }
  void TopologyChanged() override;
  absl::StatusOr<MadNodeInfo> QueryNodeInfo(const DrPath& path) override;
  absl::StatusOr<std::string> QueryNodeDescription(const DrPath& path) override;
  absl::StatusOr<MadPortInfo> QueryPortInfo(const DrPath& path, int port) override;
  absl::StatusOr<bool> QueryFdr10Active(const DrPath& path, int port) override;
  absl::StatusOr<MadPortCounters> QueryPortCounters(uint32_t lid, int port) override;
  absl::StatusOr<MadPortCounters> QueryPortCountersExtended(uint32_t lid, int port) override;

 private:
  struct ClassPortInfo {
    uint32_t cap_mask = 0;
    uint32_t cap_mask2 = 0;
  };
  LibibmadTransport(Options options, std::vector<ibmad_port*> ports);
  // Lends a port handle for one call.
  class Lease;
  // An SMP by directed route into `buf` (64 bytes of attribute data).
  absl::Status Smp(const DrPath& path, unsigned attribute, unsigned modifier, uint8_t* buf);
  // A PMA Get into `buf` (the MAD's data, at least 1024 bytes as perfquery keeps).
  absl::Status Pma(uint32_t lid, int port, unsigned attribute, uint8_t* buf);
  absl::StatusOr<ClassPortInfo> PmaCapabilities(uint32_t lid);

  Options options_;
  std::vector<ibmad_port*> ports_;
  absl::Mutex mu_;
  std::vector<ibmad_port*> free_ ABSL_GUARDED_BY(mu_);
  std::map<uint32_t, ClassPortInfo> class_port_info_ ABSL_GUARDED_BY(mu_);
};

}  // namespace railwatch
