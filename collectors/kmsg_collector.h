#pragma once

// The kernel's own word on NICs and PCIe: records of /dev/kmsg (or of a file of records in its
// format, --kmsg=PATH, which railwatch-sim writes at <root>/<host>/kmsg) parsed by
// logs::KernelMessageParser into kernel.* events (mlx5 health syndromes, command timeouts,
// probe failures, PCIe AER and DPC, slot power, downtrained links ...). docs/LINK_HEALTH.md,
// "Kernel messages (/dev/kmsg)".
//
// Each cycle reads whole records without blocking until there are none (EAGAIN, the end of the
// file), at most `max_records` records and `max_events` events (the rest waits for the next
// cycle; cycles cut short are counted). Records overwritten before they were read (EPIPE, a gap
// in sequence numbers) are counted as lost, and reading goes on. Only the kernel's records
// (facility 0) are parsed: what a process writes to /dev/kmsg gets facility 1 from the kernel
// and cannot pass for a driver's message.
//
// Times: a record's kernel timestamp (microseconds since boot) is put on the wall clock with
// CLOCK_REALTIME - CLOCK_MONOTONIC for /dev/kmsg; for a file, whose writer's boot is unknown,
// with the smallest (time read - timestamp) seen, so a record appended while the agent follows
// the file is timed within a cycle of when it was written.
//
// Restarts: the next sequence number and the boot id (/proc/sys/kernel/random/boot_id), or
// for a file its inode and byte offset, are kept in `<state_dir>/kmsg.state` (written at most
// every `state_write_interval`, only where no event is half made, and at exit), so a restarted
// agent goes on where it stopped; records overwritten while it was down are counted as lost.
// A first start (no state, another boot, another file) reads back `lookback` only: records
// older than that (by the kernel's clock now, or for a file by its newest record) are skipped.
//
// Events carry host (the agent's), pci, adapter, and the NIC behind the PCI function found in
// sysfs: device (<sysfs_root>/bus/pci/devices/<pci>/infiniband/*) and interface (.../net/*);
// for a bridge (a root port's AER and DPC) the NIC below it, when one adapter is there.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/kmsg_reader.h"
#include "common/clock.h"
#include "logs/kernel_messages.h"

namespace railwatch {

// The NIC behind a PCI function, from sysfs.
struct PciNic {
  std::string device;     // RDMA device (mlx5_3)
  std::string interface;  // netdev (ens1f0np0)
  std::string pci;        // the function they belong to (a bridge's: the NIC below it)
};

class PciNicResolver {
 public:
  PciNicResolver(std::string sysfs_root, const Clock& clock, absl::Duration retry)
      : root_(std::move(sysfs_root)), clock_(clock), retry_(retry) {}
  // What is behind `pci`; empty fields when nothing is (looked up again after `retry`).
  PciNic ForPci(const std::string& pci);
  // The PCI function of an RDMA device (<root>/class/infiniband/<device>/device), "" if none.
  std::string PciOfDevice(const std::string& device);

 private:
  struct Entry {
    PciNic nic;
    absl::Time looked_up;
  };
  PciNic Lookup(const std::string& pci) const;
  std::string root_;
  const Clock& clock_;
  absl::Duration retry_;
  std::map<std::string, Entry> cache_;
};

// What --kmsg names: "off" -> "", "auto" -> "/dev/kmsg" when `real_host` (--sysfs_root is /sys)
// and it can be read, else ""; anything else is a path (/dev/kmsg or a file of records). An
// error for an empty value.
absl::StatusOr<std::string> KmsgPathFromFlag(const std::string& flag, bool real_host);

class KmsgCollector final : public Collector {
 public:
  struct Options {
    std::string path = "/dev/kmsg";
    std::string sysfs_root = "/sys";
    // Where kmsg.state is kept; empty: no state (every start is a first start).
    std::string state_dir;
    std::string boot_id_path = "/proc/sys/kernel/random/boot_id";
    absl::Duration lookback = absl::Minutes(10);
    size_t max_records = 10000;
    size_t max_events = 1000;
    absl::Duration state_write_interval = absl::Seconds(5);
    absl::Duration resolve_retry = absl::Minutes(1);
  };

  KmsgCollector(Options options, const Clock& clock);
  ~KmsgCollector() override;

  std::string_view name() const override { return "kmsg"; }
  absl::Status Collect(Emitter& emitter) override;

  struct Stats {
    uint64_t records = 0;
    uint64_t lost = 0;
    uint64_t skipped_lookback = 0, skipped_user = 0, skipped_read = 0;
    uint64_t problems = 0;
    uint64_t limited_records = 0, limited_events = 0;
    uint64_t read_errors = 0;
    std::map<std::string, uint64_t> events;  // by kind
  };
  const Stats& stats() const { return stats_; }

  // Writes the state file now (tests; the destructor does it too).
  void SaveState();

 private:
  absl::Status Start();
  // The first start's floor (records older than it are skipped), from the kernel's clock or
  // the file's newest record.
  void BeginLookback();
  int64_t WallTime(const logs::KmsgRecord& r, int64_t now_ns);
  void Handle(const logs::KmsgRecord& r, int64_t now_ns, Emitter& emitter);
  void EmitEvents(int64_t now_ns, Emitter& emitter);
  void DefineSeries(Emitter& emitter);
  void EmitSelfMetrics(Emitter& emitter);
  KmsgPosition Position() const;

  Options options_;
  const Clock& clock_;
  KmsgReader reader_;
  logs::KernelMessageParser parser_;
  PciNicResolver resolver_;
  bool started_ = false;
  bool defined_ = false;
  std::string boot_id_;
  std::optional<uint64_t> next_seq_;     // the sequence number expected next
  std::optional<int64_t> lookback_floor_usec_;  // a first start's: skip older records
  std::optional<int64_t> file_offset_ns_;       // a file's estimated wall time of its clock's 0
  KmsgPosition saved_;                // the position at the last drained cycle
  bool have_saved_ = false;
  KmsgPosition written_;              // what the state file holds
  absl::Time last_write_ = absl::InfinitePast();
  bool warned_missing_ = false;
  bool warned_state_ = false;
  std::vector<logs::KmsgRecord> records_;
  std::vector<logs::LogEvent> events_;
  Stats stats_;
  uint64_t reported_problems_ = 0;
  struct {
    uint32_t records = 0, lost = 0, problems = 0, read_errors = 0;
    uint32_t skipped_lookback = 0, skipped_user = 0, skipped_read = 0;
    uint32_t limited_records = 0, limited_events = 0;
    std::map<std::string, uint32_t> events;
  } ids_;
};

}  // namespace railwatch
