#include "triage/kernel.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "logs/kernel_line.h"
#include "triage/playbook_replay.h"

namespace railwatch {
namespace triage_kernel {

using logs::LogEvent;
using Level = TriageFinding::Level;

// An ordered set of strings.
class Names {
 public:
  void Add(const std::string& s) {
    if (!s.empty() && std::find(v_.begin(), v_.end(), s) == v_.end()) v_.push_back(s);
  }
  std::string Join(size_t max = 6) const {
    if (v_.size() <= max) return absl::StrJoin(v_, ", ");
    std::vector<std::string> head(v_.begin(), v_.begin() + static_cast<std::ptrdiff_t>(max));
    return absl::StrCat(absl::StrJoin(head, ", "), " and ", v_.size() - max, " more");
  }
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const std::string& front() const { return v_.front(); }

 private:
  std::vector<std::string> v_;
};

// The events of one finding: one kind on one adapter of one host.
struct Group {
  std::string kind;
  std::vector<const LogEvent*> events;
  Names hosts, drivers, pcis, devices, interfaces, reasons;
};

std::string Where(const Group& g) {
  std::string w = g.hosts.empty() ? "(no host in the lines)" : g.hosts.Join(3);
  if (!g.drivers.empty()) absl::StrAppend(&w, " ", g.drivers.Join(2));
  if (g.pcis.size() == 1) {
    absl::StrAppend(&w, " ", g.pcis.front());
  } else if (g.pcis.size() > 1) {
    absl::StrAppend(&w, " ", g.pcis.Join(8), " (", g.pcis.size(), " functions of one adapter)");
  }
  std::vector<std::string> extra;
  if (!g.devices.empty()) extra.push_back(g.devices.Join(4));
  if (!g.interfaces.empty()) extra.push_back(g.interfaces.Join(4));
  if (!extra.empty()) absl::StrAppend(&w, " (", absl::StrJoin(extra, "; "), ")");
  return w;
}

// The PCI address commands are run on: the first function named.
std::string Pci(const Group& g) { return g.pcis.empty() ? "<pci>" : g.pcis.front(); }

std::string Times(const Group& g) {
  const LogEvent& first = *g.events.front();
  const LogEvent& last = *g.events.back();
  std::string a = first.Value("uptime_s"), b = last.Value("uptime_s");
  if (a.empty()) return "";
  if (g.events.size() == 1 || a == b) return absl::StrCat(a, " s after boot");
  return absl::StrCat(a, " to ", b, " s after boot");
}

std::string ReasonText(const std::string& reason, const LogEvent& e) {
  if (reason == "miss_count") return "health poll missed (device's health compromised)";
  if (reason == "fatal_error") return absl::StrCat("fatal error ", e.Value("fatal_error"));
  if (reason == "health_info") return "firmware health report";
  if (reason == "fw_fatal_reset") return "firmware fatal reset";
  if (reason == "fw_reset") return "firmware reset";
  if (reason == "fw_reset_failed") return "firmware reset failed";
  if (reason == "high_temperature") return "high temperature";
  if (reason == "module_error") return absl::StrCat("module error: ", e.Value("module_error"));
  if (reason == "recovery_failed") return "health recovery failed";
  if (reason == "timeout") return "command timed out";
  if (reason == "no_done_completion") return "no completion for a command";
  if (reason == "queue_timeout") return "command canceled waiting in the queue";
  if (reason == "no_command_entry") return "no free command entry";
  if (reason == "hwrm_timeout") return "HWRM command timed out";
  return reason;
}

std::string Titled(const std::string& text, const Group& g) {
  return g.events.size() > 1 ? absl::StrCat(text, ", ", g.events.size(), " reports") : text;
}

void Health(const Group& g, TriageFinding& f, const std::map<std::string, std::string>& fw) {
  const LogEvent* block = nullptr;
  for (const LogEvent* e : g.events) {
    if (block == nullptr && !e->Value("synd").empty()) block = e;
  }
  std::string syndrome;
  if (block != nullptr) {
    syndrome = absl::StrCat("synd ", block->Value("synd"));
    if (!block->Value("synd_text").empty())
      absl::StrAppend(&syndrome, " (", block->Value("synd_text"), ")");
    if (!block->Value("ext_synd").empty())
      absl::StrAppend(&syndrome, ", ext_synd ", block->Value("ext_synd"));
  }
  f.title = Titled(absl::StrCat("NIC firmware health: ", g.reasons.Join(3),
                                syndrome.empty() ? "" : absl::StrCat(", ", syndrome)),
                   g);
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  if (block != nullptr) {
    if (!block->Value("health_issue").empty()) {
      f.details.emplace_back("issue", absl::StrCat(block->Value("health_issue"), ", severity ",
                                                   block->Value("fw_severity")));
    }
    f.details.emplace_back("syndrome", syndrome);
    std::string assert_text = absl::StrCat("assert_var ", block->Value("assert_var"));
    if (!block->Value("assert_exit_ptr").empty()) {
      absl::StrAppend(&assert_text, ", exit_ptr ", block->Value("assert_exit_ptr"), ", callra ",
                      block->Value("assert_callra"), ", irisc ", block->Value("irisc_index"));
    }
    if (!block->Value("assert_var").empty()) f.details.emplace_back("assert", assert_text);
  }
  std::string firmware = block != nullptr ? block->Value("fw_ver") : "";
  if (firmware.empty()) {
    auto it = fw.find(g.pcis.empty() ? "" : g.pcis.front());
    if (it != fw.end()) firmware = it->second;
  }
  if (!firmware.empty()) f.details.emplace_back("firmware", firmware);
  f.meaning =
      "The NIC's firmware is failing: mlx5's health poll found the firmware's health counter "
      "stuck (or a fatal sensor set) and printed the firmware's assert (the syndrome says which: "
      "0x1 firmware internal error, 0x7 irisc not responding, 0x8 unrecoverable hardware "
      "error); bnxt_en reports firmware resets. Every function of an adapter reports the same "
      "failure: it is the card, not a port. RDMA through it stalls until the driver recovers "
      "(resets) the device, and a NIC in this state often fails again or falls off the bus.";
  const std::string pci = Pci(g);
  f.next = {absl::StrCat("devlink health show pci/", pci,
                         "   # fw / fw_fatal reporters: errors, "
                         "recoveries, last dump"),
            absl::StrCat("devlink health dump show pci/", pci,
                         " reporter fw_fatal   # the "
                         "firmware's crash dump"),
            absl::StrCat("mlxfwmanager -d ", pci,
                         " --query   # firmware version against the "
                         "fleet's and the release notes for the "
                         "syndrome"),
            absl::StrCat("journalctl -k -b | grep ", logs::kernel::PciAdapter(pci),
                         "   # what came after: a recovery, a reset, the device gone")};
}

void CommandTimeouts(const Group& g, TriageFinding& f) {
  Names commands;
  for (const LogEvent* e : g.events) commands.Add(e->Value("command"));
  f.title = Titled(absl::StrCat("NIC firmware commands not answered: ", g.reasons.Join(3)), g);
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  if (!commands.empty()) f.details.emplace_back("commands", commands.Join(8));
  f.meaning =
      "The driver's commands to the NIC's firmware got no answer: each timed-out command holds "
      "one of the command interface's slots for good (\"Will cause a leak of a command "
      "resource\"), and once none is free every new command fails (\"failed to allocate "
      "command entry\"): memory registration, queue creation and link changes fail with "
      "-EAGAIN or -ETIMEDOUT. The firmware is hung or overloaded; a health report or a reset "
      "usually follows.";
  const std::string pci = Pci(g);
  f.next = {absl::StrCat("devlink health show pci/", pci,
                         "   # did the firmware's health "
                         "reporters see it too?"),
            absl::StrCat("journalctl -k -b | grep ", pci,
                         "   # the first timeout, and what "
                         "came before it"),
            absl::StrCat("mlxfwmanager -d ", pci, " --query   # firmware version")};
}

void ProbeFailed(const Group& g, TriageFinding& f, const std::map<std::string, std::string>& fw) {
  const LogEvent& e = *g.events.front();
  std::string error = e.Value("errno").empty()
                          ? ""
                          : absl::StrCat(", error ", e.Value("errno"),
                                         e.Value("errno_name").empty()
                                             ? ""
                                             : absl::StrCat(" (", e.Value("errno_name"), ")"));
  f.title = Titled(absl::StrCat("NIC probe failed: ", e.Value("failed_step"), " failed", error), g);
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  f.details.emplace_back("steps", e.Value("steps"));
  auto it = fw.find(e.Value("pci"));
  if (it != fw.end()) f.details.emplace_back("firmware", it->second);
  f.meaning =
      "The driver found the NIC but could not bring it up: it has no netdev and no RDMA device "
      "(jobs see it as missing: NCCL \"No device found\"). A capability query that fails "
      "(handle_hca_cap) with EINVAL is usually firmware and driver that do not agree (a "
      "firmware too old or too new for the kernel's mlx5_core, or a configuration the profile "
      "asks for that the firmware refuses).";
  const std::string pci = Pci(g);
  f.next = {absl::StrCat("journalctl -k -b | grep ", pci,
                         "   # the lines before the failure "
                         "say what the driver asked for"),
            absl::StrCat("mlxfwmanager -d ", pci,
                         " --query   # firmware version against the "
                         "driver's supported ones"),
            "modinfo mlx5_core | grep -E '^(version|vermagic)'   # the driver",
            absl::StrCat("lspci -vvv -s ", pci, "   # the device and its PCIe link")};
}

void Aer(const Group& g, bool corrected, TriageFinding& f) {
  Names layers, bits, roots, agents, ids, statuses;
  for (const LogEvent* e : g.events) {
    layers.Add(e->Value("layer"));
    for (absl::string_view bit : absl::StrSplit(e->Value("bits"), ", ", absl::SkipEmpty())) {
      bits.Add(std::string(bit));
    }
    roots.Add(e->Value("root_port"));
    agents.Add(e->Value("agent"));
    ids.Add(e->Value("vendor_device"));
    if (!e->Value("error_status").empty()) {
      statuses.Add(e->Value("error_status") + "/" + e->Value("error_mask"));
    }
  }
  Names severities;
  for (const LogEvent* e : g.events) severities.Add(e->Value("aer_severity"));
  f.title = Titled(absl::StrCat("PCIe AER ", corrected ? "corrected" : severities.Join(3),
                                " errors", layers.empty() ? "" : absl::StrCat(": ", layers.Join(3)),
                                bits.empty() ? "" : absl::StrCat(" (", bits.Join(4), ")")),
                   g);
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  if (!roots.empty()) f.details.emplace_back("root port", roots.Join(3));
  if (!agents.empty()) f.details.emplace_back("detected by", agents.Join(3));
  if (!ids.empty()) f.details.emplace_back("device id", ids.Join(3));
  if (!statuses.empty()) f.details.emplace_back("status/mask", statuses.Join(4));
  f.meaning =
      corrected
          ? "Corrected errors were retried by the PCIe link and lost no data, but each retry "
            "costs bandwidth and a steady stream (railwatch warns above 10 an hour) is a "
            "marginal slot, riser, retimer or card. Receiver ID: this device received bad "
            "packets; Transmitter ID: its link partner's replay timer expired."
          : "An uncorrectable PCIe error: a transaction was lost (a completion timeout, a "
            "poisoned or malformed packet, the link going down). A non-fatal one fails that "
            "transfer; a fatal one makes the kernel reset the link and the driver recover the "
            "device: its jobs fail.";
  const std::string pci = Pci(g);
  f.next = {absl::StrCat("lspci -vvv -s ", pci,
                         " | grep -E 'LnkCap|LnkSta|CESta|UESta'   # the "
                         "link as trained, the error status"),
            absl::StrCat("cat /sys/bus/pci/devices/", pci,
                         "/aer_dev_correctable /sys/bus/pci/"
                         "devices/",
                         pci,
                         "/aer_dev_fatal   # the "
                         "kernel's AER counts per error"),
            absl::StrCat("mlxlink -d ", pci,
                         " --port_type PCIE -c   # the NIC's own view of "
                         "its PCIe link (NVIDIA MFT)")};
}

void Dpc(const Group& g, TriageFinding& f) {
  Names bits, severities;
  for (const LogEvent* e : g.events) {
    bits.Add(e->Value("bits"));
    severities.Add(e->Value("aer_severity"));
  }
  f.title = Titled(
      absl::StrCat("PCIe Downstream Port Containment",
                   severities.empty() ? "" : absl::StrCat(": ", severities.Join(2), " error"),
                   bits.empty() ? "" : absl::StrCat(" (", bits.Join(3), ")")),
      g);
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  f.meaning =
      "The port cut its link to stop an uncorrectable error from spreading: the device below "
      "it is off the bus until the kernel recovers the link (its driver resets it) or the host "
      "reboots. SDES is a surprise link-down; every job using the device failed.";
  const std::string pci = Pci(g);
  f.next = {
      absl::StrCat("lspci -tv   # is the device below ", pci, " back?"),
      absl::StrCat("journalctl -k -b | grep -E 'DPC|", pci, "'   # recovered, or the device gone"),
      absl::StrCat("lspci -vvv -s ", pci, " | grep -E 'LnkSta|DpcSta'")};
}

void Power(const Group& g, TriageFinding& f) {
  const LogEvent& e = *g.events.front();
  f.title = Titled(
      absl::StrCat("PCIe slot gives the NIC too little power: ", e.Value("power_w"), " W"), g);
  f.details.emplace_back("where", Where(g));
  f.meaning =
      "The slot advertises less power than the NIC needs (a ConnectX needs a 75 W slot to "
      "power its modules fully): the NIC may limit itself or its modules, and can brown out "
      "under load.";
  f.next = {absl::StrCat("lspci -vvv -s ", Pci(g),
                         " | grep -iE 'SltCap|PowerLimit'   # the "
                         "slot's advertised power"),
            "ipmitool sdr type 'Power Supply'   # the server's power budget (BMC)"};
}

void LinkLimited(const Group& g, TriageFinding& f) {
  const LogEvent& e = *g.events.front();
  f.title = Titled(absl::StrCat("PCIe link downtrained: ", e.Value("available_gbps"), " Gb/s (",
                                e.Value("limited_by"), ") of ", e.Value("capable_gbps"), " Gb/s (",
                                e.Value("capable_link"), ")"),
                   g);
  f.details.emplace_back("where", Where(g));
  if (!e.Value("limiting_pci").empty())
    f.details.emplace_back("limited at", e.Value("limiting_pci"));
  f.meaning =
      "The NIC's PCIe link trained narrower or slower than the NIC can do, so it cannot reach "
      "its line rate (a 400G NIC needs PCIe Gen5 x16): the wrong slot, a riser or retimer, "
      "BIOS bifurcation, or a link that degraded.";
  const std::string pci = Pci(g);
  f.next = {absl::StrCat("lspci -vvv -s ", pci,
                         " | grep -E 'LnkCap|LnkSta'   # capable vs "
                         "trained"),
            absl::StrCat("cat /sys/bus/pci/devices/", pci,
                         "/current_link_width /sys/bus/pci/"
                         "devices/",
                         pci, "/max_link_width")};
}

void Generic(const Group& g, TriageFinding& f) {
  Names what;
  for (const LogEvent* e : g.events) {
    if (g.kind == "kernel.nic_error") {
      what.Add(absl::StrCat(
          e->Value("operation"), " (",
          e->Value("errno_name").empty() ? e->Value("errno") : e->Value("errno_name"), ")"));
    } else if (g.kind == "kernel.rdma_error") {
      what.Add(absl::StrCat("ae_id ", e->Value("ae_id"), " on QP ", e->Value("qp_id")));
    } else if (g.kind == "kernel.rdma_fatal") {
      what.Add(e->Value("reason") == "mad_qp"
                   ? absl::StrCat("fatal error (", e->Value("event"), ") on the MAD QP")
                   : e->Value("message"));
    }
  }
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  const std::string pci = Pci(g);
  if (g.kind == "kernel.nic_error") {
    f.title = Titled(absl::StrCat("NIC driver calls failed: ", what.Join(4)), g);
    f.meaning =
        "Driver calls into the NIC failed with an errno. EAGAIN (-11) from commands to the "
        "firmware follows a command interface that is full or hung (see any command-timeout "
        "finding); on their own, a failed call can be a resource limit.";
    f.next = {absl::StrCat("journalctl -k -b | grep ", pci, "   # what failed first")};
  } else if (g.kind == "kernel.rdma_error") {
    f.title = Titled(absl::StrCat("RDMA asynchronous errors: ", what.Join(4)), g);
    f.meaning =
        "The RDMA device raised an asynchronous error on a queue pair (irdma's 'abnormal "
        "ae_id'): the QP went to the error state. One is a connection that failed; a stream of "
        "them, or one on QP 1 (the management QP), is the device or the path failing.";
    f.next = {"rdma resource show qp   # the QPs in error", "rdma link show   # port states"};
  } else {
    f.title = Titled(absl::StrCat("RDMA device fatal error: ", what.Join(3)), g);
    f.meaning =
        "The RDMA device's management QP (the MAD QP, QP 1) failed: the port can no longer "
        "answer or send management packets, so connections through it cannot be set up (RDMA "
        "CM, SA queries) until the device is reset.";
    f.next = {
        "rdma link show   # is the port still ACTIVE?",
        absl::StrCat("journalctl -k -b | grep -E '", g.devices.empty() ? pci : g.devices.front(),
                     "'   # what the driver did next")};
  }
}

void Link(const Group& g, TriageFinding& f) {
  int down = 0, up = 0;
  for (const LogEvent* e : g.events) (e->Value("state") == "down" ? down : up) += 1;
  const LogEvent& last = *g.events.back();
  std::string speed =
      last.Value("speed_mbps").empty() ? "" : absl::StrCat(last.Value("speed_mbps"), " Mb/s");
  std::vector<std::string> attrs;
  if (!speed.empty()) attrs.push_back(speed);
  if (!last.Value("duplex").empty()) attrs.push_back(last.Value("duplex") + " duplex");
  if (!last.Value("fec").empty()) attrs.push_back("FEC " + last.Value("fec"));
  if (!last.Value("flow_control").empty())
    attrs.push_back("flow control " + last.Value("flow_control"));
  f.title = down > 0 ? absl::StrCat("NIC link went down ", down, " time(s), up ", up, " time(s)")
                     : absl::StrCat("NIC link up",
                                    attrs.empty() ? "" : ": " + absl::StrJoin(attrs, ", "));
  f.details.emplace_back("where", Where(g));
  if (!Times(g).empty()) f.details.emplace_back("when", Times(g));
  if (down > 0) {
    f.meaning =
        "The driver saw the link go down: a flap (cable, optic, the switch port) or a "
        "reset of the NIC.";
    f.next = {absl::StrCat("ethtool ", g.interfaces.empty() ? "<netdev>" : g.interfaces.front(),
                           "   # link state, speed, FEC now")};
  }
}

}  // namespace triage_kernel

void AnalyzeKernelMessages(const std::vector<logs::LogEvent>& events,
                           std::vector<TriageFinding>& findings,
                           std::vector<std::string>& context) {
  using triage_kernel::Group;
  using Level = TriageFinding::Level;
  // What the NICs said at probe, per PCI function: context, and the firmware of a finding.
  std::map<std::string, std::vector<std::string>> info;
  std::vector<std::string> info_order;
  std::map<std::string, std::string> firmware;
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const logs::LogEvent& e : events) {
    if (!absl::StartsWith(e.kind, "kernel.")) continue;
    const std::string pci = e.Value("pci");
    if (e.kind == "kernel.nic_info") {
      const std::string key =
          absl::StrCat(e.Value("host"), "|", pci.empty() ? e.Value("device") : pci);
      if (!info.contains(key)) info_order.push_back(key);
      std::vector<std::string>& parts = info[key];
      const std::string what = e.Value("what");
      if (what == "firmware_version") {
        parts.push_back("firmware " + e.Value("fw_version"));
        firmware[pci] = e.Value("fw_version");
      } else if (what == "pcie_bandwidth") {
        parts.push_back(
            absl::StrCat("PCIe ", e.Value("available_gbps"), " Gb/s (", e.Value("link"), ")"));
      } else if (what == "slot_power") {
        parts.push_back(e.Value("power_w").empty()
                            ? "slot power not advertised"
                            : absl::StrCat("slot power ", e.Value("power_w"), " W"));
      } else if (what == "module_event") {
        parts.push_back(absl::StrCat("module ", e.Value("module"), ": ", e.Value("module_status")));
      }
      continue;
    }
    // One finding per kind and adapter (an AER's corrected errors apart from its
    // uncorrectable ones).
    std::string where = e.Value("adapter");
    if (where.empty()) where = e.Value("device");
    if (where.empty()) where = e.Value("interface");
    std::string key = absl::StrCat(e.kind, "|", e.Value("host"), "|", where);
    if (e.kind == "kernel.pcie_aer") {
      absl::StrAppend(&key, "|", e.Value("aer_severity") == "corrected" ? "c" : "u", "|", pci);
    }
    auto [it, inserted] = groups.try_emplace(key);
    if (inserted) order.push_back(key);
    Group& g = it->second;
    g.kind = e.kind;
    g.events.push_back(&e);
    g.hosts.Add(e.Value("host"));
    g.drivers.Add(e.Value("driver"));
    g.pcis.Add(pci);
    g.devices.Add(e.Value("device"));
    g.interfaces.Add(e.Value("interface"));
    g.reasons.Add(triage_kernel::ReasonText(e.Value("reason"), e));
  }
  for (const std::string& key : order) {
    const Group& g = groups[key];
    const logs::LogEvent& first = *g.events.front();
    TriageFinding f;
    f.kind = g.kind;
    f.first_seen = absl::StrCat(first.source, ":", first.line);
    f.first_time_unix_nano = first.time_unix_nano;
    f.count = static_cast<int>(g.events.size());
    for (const logs::LogEvent* e : g.events) {
      std::string host = TriageHostLabel(*e);
      if (std::find(f.hosts.begin(), f.hosts.end(), host) == f.hosts.end()) f.hosts.push_back(host);
    }
    if (g.kind == "kernel.nic_health") {
      f.level = Level::kFailure;
      triage_kernel::Health(g, f, firmware);
    } else if (g.kind == "kernel.nic_command_timeout") {
      f.level = Level::kFailure;
      triage_kernel::CommandTimeouts(g, f);
    } else if (g.kind == "kernel.nic_probe_failed") {
      f.level = Level::kFailure;
      triage_kernel::ProbeFailed(g, f, firmware);
    } else if (g.kind == "kernel.pcie_aer") {
      const bool corrected = first.Value("aer_severity") == "corrected";
      f.level = corrected ? Level::kWarning : Level::kFailure;
      triage_kernel::Aer(g, corrected, f);
    } else if (g.kind == "kernel.pcie_dpc") {
      f.level = Level::kFailure;
      triage_kernel::Dpc(g, f);
    } else if (g.kind == "kernel.pcie_power") {
      f.level = Level::kWarning;
      triage_kernel::Power(g, f);
    } else if (g.kind == "kernel.pcie_link_limited") {
      f.level = Level::kWarning;
      triage_kernel::LinkLimited(g, f);
    } else if (g.kind == "kernel.nic_link") {
      bool down = false;
      for (const logs::LogEvent* e : g.events) down = down || e->Value("state") == "down";
      f.level = down ? Level::kWarning : Level::kInfo;
      triage_kernel::Link(g, f);
    } else {
      f.level = g.kind == "kernel.rdma_fatal" ? Level::kFailure : Level::kWarning;
      triage_kernel::Generic(g, f);
    }
    findings.push_back(std::move(f));
  }
  for (const std::string& key : info_order) {
    const std::string nic = key.substr(key.find('|') + 1);
    const std::string host = key.substr(0, key.find('|'));
    context.push_back(absl::StrCat("NIC ", nic, host.empty() ? "" : " on " + host, ": ",
                                   absl::StrJoin(info[key], ", ")));
  }
}

}  // namespace railwatch
