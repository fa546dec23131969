#pragma once

// Kernel messages about NIC and PCIe health, from /dev/kmsg (the host agent's kmsg collector)
// or pasted dmesg / journal / syslog text (`railwatch triage`), as events of kinds `kernel.*`
// (docs/LINK_HEALTH.md, "Kernel messages (/dev/kmsg)"):
//
//   kernel.nic_health           the NIC's firmware or health monitor: mlx5 "device's health
//                               compromised", "Fatal error N detected" and the print_health_info
//                               block folded into one event (syndrome, ext_synd, fw_ver ...);
//                               bnxt_en firmware fatal and non-fatal resets; mlx5 high
//                               temperature and module errors
//   kernel.nic_command_timeout  the driver's commands to the firmware are not answered: mlx5
//                               "timeout. Will cause a leak of a command resource", "No done
//                               completion", "failed to allocate command entry"; bnxt_en HWRM
//                               "Error (timeout: ...)"
//   kernel.nic_probe_failed     the NIC never came up: handle_hca_cap / mlx5_load_one / the driver
//                               core's "probe of <BDF> failed with error <n>", folded
//   kernel.nic_error            a driver call that failed with an errno (alloc td failed, -11)
//   kernel.rdma_fatal           the RDMA device's fatal errors (ib_core "Fatal error (n) on MAD
//                               QP")
//   kernel.rdma_error           irdma "abnormal ae_id" (a QP's asynchronous error)
//   kernel.pcie_aer             a PCIe Advanced Error Reporting block (aer_severity corrected,
//                               nonfatal or fatal; layer, agent, error bits), with the root port
//                               that received it
//   kernel.pcie_dpc             Downstream Port Containment: the port cut the link off
//   kernel.pcie_power           the slot gives the NIC less power than it needs
//   kernel.pcie_link_limited    "available PCIe bandwidth, limited by ...": a downtrained link
//   kernel.nic_link             link up / down as the driver prints it (speed, duplex, FEC)
//   kernel.nic_info             what a NIC says at probe: firmware version, PCIe bandwidth, slot
//                               power, module events
//
// Every event has the fields `driver`, `pci` (the function's BDF), `adapter` (the BDF without
// its function: the physical functions of one adapter are one device), `device` (an RDMA
// device the line names), `interface` (a netdev the line names) where known, `host` where the
// line says (journal, syslog), `uptime_s` (dmesg, kmsg), `level`, `seq` (kmsg), `func` (mlx5's
// function name), then the kind's own fields and `message`. Of those, kKernelEventLabels are
// the event's labels once it is sent (collectors/log_event_record.h).

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "logs/kernel_line.h"
#include "logs/log_event.h"
#include "logs/log_parser.h"

namespace railwatch::logs {

// Every kind the parser emits.
std::span<const std::string_view> KernelEventKinds();

// Fields of a kernel.* event that become the sent event's labels (bounded: a host has a few
// adapters): pci, adapter, device, interface, aer_severity (kernel.pcie_aer: corrected,
// nonfatal, fatal, or for a block whose first line was cut uncorrectable or unknown;
// kernel.pcie_dpc: the error that triggered it). Not `severity`: that is a diagnosis' own label.
inline constexpr std::string_view kKernelEventLabels[] = {"pci", "adapter", "device", "interface",
                                                          "aer_severity"};

class KernelMessageParser {
 public:
  // The same counts as LogParser's: lines that made an event (recognized), kernel lines with
  // nothing worth an event (known), kernel-looking lines that did not parse (malformed, with
  // problems), events.
  using Stats = LogParser::Stats;

  // `source` names the input in events (a file, "-", "/dev/kmsg"); `clock` gives the year of a
  // journal time and must outlive the parser.
  explicit KernelMessageParser(std::string source, const Clock& clock = RealClock::Get());
  ~KernelMessageParser();
  KernelMessageParser(KernelMessageParser&&) noexcept;
  KernelMessageParser& operator=(KernelMessageParser&&) noexcept;

  // One line of pasted text, numbered `line_number`. False (and nothing counted) when it is not
  // a kernel message: no kernel prefix, no driver or device a NIC or PCIe message has, not the
  // wrapped continuation of the line before. Events complete after it go to `out`.
  bool FeedLine(std::string_view line, int line_number, std::vector<LogEvent>& out);

  // One /dev/kmsg record, whose time (wall clock) the caller knows.
  void FeedRecord(const KmsgRecord& record, int64_t time_unix_nano, std::vector<LogEvent>& out);

  // Emits the events still open (a print_health_info block, an AER block waiting for its bit
  // lines). Call when the input has nothing more for now: the end of a paste, a drained
  // /dev/kmsg.
  void Flush(std::vector<LogEvent>& out);

  const Stats& stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace railwatch::logs
