#pragma once

// A simulated host's kernel log as /dev/kmsg hands it out (Documentation/ABI/testing/
// dev-kmsg): one record per message, "PRIORITY,SEQUENCE,TIMESTAMP_US,FLAGS;MESSAGE\n", then
// " KEY=VALUE" dictionary lines (SUBSYSTEM=pci, DEVICE=+pci:<bdf>) for messages a device
// logged. Appended to <root>/<host>/kmsg, which the host agent follows with --kmsg=<file>.
// The NIC health faults (sim/faults/nic_health.cc) write through it what mlx5_core and the
// PCIe AER driver print.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace railwatch::sim {

class KmsgWriter {
 public:
  // `boot`: the simulated host's boot time (timestamps count from it).
  KmsgWriter(std::string path, absl::Time boot);

  // Creates (truncates) the file with the boot messages of a host with `nics` ConnectX NICs.
  absl::Status Create(int nics);
  // Appends one record. `level` is the syslog level (3 err, 4 warning, 6 info); `pci`, when
  // not empty, adds the record's SUBSYSTEM=pci and DEVICE=+pci:<pci> lines.
  absl::Status Append(absl::Time now, int level, const std::string& message,
                      const std::string& pci = "");

  // What mlx5_core prints when the firmware stops answering its health poll (the
  // print_health_info block, one record a line), for the NIC at PCI address `pci`.
  absl::Status Mlx5HealthCompromised(absl::Time now, const std::string& pci);
  // A corrected PCIe error the AER driver reports on the NIC at `pci`, below root port
  // `root_port`: Receiver ID, Physical Layer, RxErr.
  absl::Status AerCorrected(absl::Time now, const std::string& pci, const std::string& root_port);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  absl::Time boot_;
  uint64_t sequence_ = 0;
};

// The PCI address of simulated NIC `nic` ("0000:18:00.0" for mlx5_0), as sysfs_fabric lays
// out its functions.
std::string SimNicPciAddress(int nic);

}  // namespace railwatch::sim
