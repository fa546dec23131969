// PCIe messages: AER (drivers/pci/pcie/aer.c, old and new wording), DPC (dpc.c), the slot power
// mlx5 reads from the PCIe events (mlx5/core/events.c) and the link bandwidth the PCI core
// prints at probe (pcie_print_link_status).
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "logs/kernel_internal.h"
#include "logs/text_scan.h"

namespace railwatch::logs::kernel {
namespace {

using scan::Trim;

// "Corrected", "Correctable" -> corrected; "Uncorrected (Non-Fatal)", "Uncorrectable
// (Non-Fatal)" -> nonfatal; "... (Fatal)" -> fatal; "" when none of them.
std::string AerSeverity(absl::string_view s) {
  if (absl::StartsWith(s, "Corrected") || absl::StartsWith(s, "Correctable")) return "corrected";
  if (absl::StartsWith(s, "Uncorrected") || absl::StartsWith(s, "Uncorrectable")) {
    if (absl::StrContains(s, "Non-Fatal")) return "nonfatal";
    if (absl::StrContains(s, "Fatal")) return "fatal";
    return "uncorrectable";
  }
  return "";
}

// Error bit names of the correctable status register, new (aer.c since 4.x) and old wording.
bool IsCorrectableBit(absl::string_view name) {
  static constexpr absl::string_view kNames[] = {"RxErr",
                                                 "BadTLP",
                                                 "BadDLLP",
                                                 "Rollover",
                                                 "Timeout",
                                                 "NonFatalErr",
                                                 "CorrIntErr",
                                                 "HeaderOF",
                                                 "Receiver Error",
                                                 "Bad TLP",
                                                 "Bad DLLP",
                                                 "RELAY_NUM Rollover",
                                                 "Replay Timer Timeout",
                                                 "Advisory Non-Fatal",
                                                 "Corrected Internal Error",
                                                 "Header Log Overflow"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// A detail line of an AER block: "device [vvvv:dddd] error status/mask=...", "[ 6] BadTLP",
// "TLP Header: ...", "Error of this Agent is reported first", old "aer_status: 0x..., aer_mask:
// 0x...", "aer_layer=..., aer_agent=...".
bool IsAerDetail(absl::string_view t) {
  if (absl::StartsWith(t, "device [") || absl::StartsWith(t, "TLP Header:") ||
      absl::StartsWith(t, "Error of this Agent") || absl::StartsWith(t, "aer_status:") ||
      absl::StartsWith(t, "aer_layer=")) {
    return true;
  }
  if (t.size() < 4 || t[0] != '[') return false;
  const size_t close = t.find(']');
  return close != absl::string_view::npos && close <= 4 &&
         scan::IsDigits(Trim(t.substr(1, close - 1)));
}

}  // namespace

Outcome Classifier::Pcie(const Message& m) {
  absl::string_view t = Trim(m.text);
  if (absl::StartsWith(t, "PCIe Bus Error: ")) return AerBusError(m, t.substr(16));
  if (absl::StartsWith(t, "PCIe Bus Error:")) return AerBusError(m, t.substr(15));
  if (IsAerDetail(t) && !m.pci.empty()) return AerDetail(m, t, nullptr);
  if (absl::StrContains(t, " error received: ") ||
      absl::StrContains(t, " error message received from ")) {
    return AerHeaderLine(m, t);
  }
  if (absl::StartsWith(t, "DPC: containment event")) {
    LogEvent e = Begin("kernel.pcie_dpc", m);
    bool found;
    absl::string_view status = scan::After(t, "status:", &found);
    if (found) Put(e, "dpc_status", scan::LeadingWord(status));
    absl::string_view source = scan::After(t, "source:", &found);
    if (found) Put(e, "dpc_source", scan::LeadingWord(source));
    Open(BlockKind::kDpc, std::move(e), m);
    return Outcome::kEvent;
  }
  bool found;
  absl::string_view power = scan::After(t, "insufficient power on the PCIe slot (", &found);
  if (found) {
    LogEvent e = Begin("kernel.pcie_power", m);
    e.Set("status", "insufficient");
    Put(e, "power_w", scan::LeadingInteger(power));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (absl::StrContains(t, "PCIe slot advertised sufficient power") ||
      absl::StrContains(t, "PCIe slot power capability was not advertised")) {
    LogEvent e = Begin("kernel.nic_info", m);
    e.Set("what", "slot_power");
    absl::string_view w = scan::After(t, "power (", &found);
    e.Set("status", found ? "sufficient" : "not_advertised");
    if (found) Put(e, "power_w", scan::LeadingInteger(w));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  const size_t bw = t.find(" Gb/s available PCIe bandwidth");
  if (bw != absl::string_view::npos) {
    // "63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0
    // (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)", or without the limit:
    // "126.016 Gb/s available PCIe bandwidth (8 GT/s x16 link)".
    absl::string_view rest = t.substr(bw + 30);
    absl::string_view limited = scan::After(rest, ", limited by ", &found);
    LogEvent e = Begin(found ? "kernel.pcie_link_limited" : "kernel.nic_info", m);
    if (!found) e.Set("what", "pcie_bandwidth");
    Put(e, "available_gbps", t.substr(0, bw).substr(t.substr(0, bw).rfind(' ') + 1));
    if (found) {
      const size_t at = limited.find(" link at ");
      Put(e, "limited_by", limited.substr(0, at));
      if (at != absl::string_view::npos) {
        Put(e, "limiting_pci", scan::LeadingWord(limited.substr(at + 9)));
      }
      absl::string_view capable = scan::After(limited, "(capable of ", &found);
      if (found) {
        Put(e, "capable_gbps", scan::LeadingWord(capable));
        absl::string_view with = scan::After(capable, " with ", &found);
        if (found) {
          absl::string_view link = with.substr(0, with.find(')'));
          if (absl::EndsWith(link, " link")) link.remove_suffix(5);
          Put(e, "capable_link", link);
        }
      }
    } else {
      const size_t open = rest.find('(');
      if (open != absl::string_view::npos) {
        absl::string_view link = rest.substr(open + 1, rest.find(')') - open - 1);
        if (absl::EndsWith(link, " link")) link.remove_suffix(5);
        Put(e, "link", link);
      }
    }
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  return Outcome::kNotMine;
}

Outcome Classifier::AerBusError(const Message& m, absl::string_view rest) {
  // "severity=Corrected, type=Data Link Layer, (Receiver ID)"; "severity=Uncorrected (Fatal)".
  bool found;
  absl::string_view sev_text = scan::After(rest, "severity=", &found);
  const std::string severity = AerSeverity(sev_text);
  if (!found || severity.empty()) {
    Problem(m.line, "AER \"PCIe Bus Error\" line without a severity the parser knows");
    return Outcome::kMalformed;
  }
  LogEvent e = Begin("kernel.pcie_aer", m);
  e.Set("aer_severity", severity);
  absl::string_view type = scan::After(rest, "type=", &found);
  if (found) Put(e, "layer", Trim(type.substr(0, type.find(','))));
  const size_t open = rest.rfind('(');
  if (open != absl::string_view::npos && absl::EndsWith(rest, "ID)")) {
    Put(e, "agent", rest.substr(open + 1, rest.size() - open - 2));
  }
  // The root port's "error message received from <this device>" before it.
  auto header = aer_headers_.find(std::string(m.pci));
  if (header != aer_headers_.end()) {
    Put(e, "root_port", header->second.root_port);
    if (header->second.multiple) e.Set("multiple", "1");
    aer_headers_.erase(header);
  }
  Open(BlockKind::kAer, std::move(e), m);
  return Outcome::kEvent;
}

Outcome Classifier::AerDetail(const Message& m, absl::string_view t, Block* b) {
  if (!IsAerDetail(t)) return Outcome::kNotMine;
  if (b == nullptr) {
    // Its "PCIe Bus Error" line is not in what was read (a capture cut above it).
    LogEvent e = Begin("kernel.pcie_aer", m);
    e.Set("partial", "1");
    b = &Open(BlockKind::kAer, std::move(e), m);
    b->partial = true;
  }
  LogEvent& e = b->event;
  if (absl::StartsWith(t, "device [")) {
    const size_t close = t.find(']');
    if (close != absl::string_view::npos) Put(e, "vendor_device", t.substr(8, close - 8));
    bool found;
    absl::string_view sm = scan::After(t, "status/mask=", &found);
    if (found) {
      sm = scan::LeadingWord(sm);
      const size_t slash = sm.find('/');
      Put(e, "error_status", sm.substr(0, slash));
      if (slash != absl::string_view::npos) Put(e, "error_mask", sm.substr(slash + 1));
    }
  } else if (absl::StartsWith(t, "TLP Header:")) {
    Put(e, "tlp_header", Trim(t.substr(11)));
  } else if (absl::StartsWith(t, "aer_status:")) {
    // Old wording: "aer_status: 0x00000001, aer_mask: 0x00002000".
    std::vector<absl::string_view> w = scan::Words(t);
    if (w.size() >= 2) Put(e, "error_status", scan::StripTrailing(w[1], ","));
    if (w.size() >= 4) Put(e, "error_mask", w[3]);
  } else if (absl::StartsWith(t, "aer_layer=")) {
    Put(e, "layer", t.substr(10, t.find(',') - 10));
    bool found;
    absl::string_view agent = scan::After(t, "aer_agent=", &found);
    if (found) Put(e, "agent", Trim(agent));
  } else if (t[0] == '[') {
    const size_t close = t.find(']');
    b->numbers.push_back(std::string(Trim(t.substr(1, close - 1))));
    absl::string_view name = Trim(t.substr(close + 1));
    const bool first = absl::EndsWith(name, "(First)");
    if (first) name = Trim(name.substr(0, name.size() - 7));
    b->values.push_back(std::string(name));
    if (first) Put(e, "first_error", name);
  }
  last_block_ = std::string(m.pci);
  return Outcome::kEvent;
}

bool Classifier::ContinueAer(const Message& m, Block& b) {
  absl::string_view t = Trim(m.text);
  if (b.kind == BlockKind::kDpc) {
    if (absl::StartsWith(t, "DPC: containment event")) return false;  // the next one
    if (absl::StartsWith(t, "DPC: ")) {
      if (b.event.Get("dpc_reason") == nullptr) Put(b.event, "dpc_reason", Trim(t.substr(5)));
      return true;
    }
    if (absl::StartsWith(t, "PCIe Bus Error:")) {
      bool found;
      absl::string_view rest = scan::After(t, "severity=", &found);
      if (found) Put(b.event, "aer_severity", AerSeverity(rest));
      absl::string_view type = scan::After(t, "type=", &found);
      if (found) Put(b.event, "layer", Trim(type.substr(0, type.find(','))));
      return true;
    }
  }
  return AerDetail(m, t, &b) == Outcome::kEvent;
}

void Classifier::FinishAer(Block& b) {
  if (!b.values.empty()) {
    b.event.Set("bits", absl::StrJoin(b.values, ", "));
    b.event.Set("bit_numbers", absl::StrJoin(b.numbers, ","));
  }
  if (b.kind == BlockKind::kAer && b.event.Get("aer_severity") == nullptr) {
    // A block whose first line was cut: its bits say which register they are from.
    std::string severity = "unknown";
    if (!b.values.empty()) {
      const bool correctable = std::all_of(b.values.begin(), b.values.end(), IsCorrectableBit);
      const bool uncorrectable = std::none_of(b.values.begin(), b.values.end(), IsCorrectableBit);
      severity = correctable ? "corrected" : uncorrectable ? "uncorrectable" : "unknown";
    }
    b.event.Set("aer_severity", severity);
  }
}

Outcome Classifier::AerHeaderLine(const Message& m, absl::string_view t) {
  // Old: "Corrected error received: 0000:07:00.0", "Uncorrected (Fatal) error received: id=0010";
  // new: "Correctable error message received from 0000:06:00.0", "Multiple Uncorrectable
  // (Non-Fatal) error message received from ...".
  bool multiple = false;
  absl::string_view s = t;
  if (absl::StartsWith(s, "Multiple ")) {
    multiple = true;
    s.remove_prefix(9);
  }
  const std::string severity = AerSeverity(s);
  if (severity.empty()) return Outcome::kNotMine;
  bool found;
  absl::string_view from = scan::After(s, " received from ", &found);
  if (!found) from = scan::After(s, " received: ", &found);
  absl::string_view source = scan::StripTrailing(scan::LeadingWord(Trim(from)), ".");
  if (!IsPciAddress(source)) {
    // No address ("id=00e0"): the root port's own event.
    LogEvent e = Begin("kernel.pcie_aer", m);
    e.Set("aer_severity", severity);
    e.Set("header_only", "1");
    Put(e, "source_id", source);
    if (multiple) e.Set("multiple", "1");
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  const std::string key(source);
  auto it = aer_headers_.find(key);
  if (it != aer_headers_.end() && it->second.root_port == m.pci &&
      it->second.severity == severity) {
    // "Multiple ..." after the first message of the same interrupt.
    it->second.multiple = it->second.multiple || multiple;
    if (multiple) it->second.event.Set("multiple", "1");
    return Outcome::kEvent;
  }
  if (it != aer_headers_.end()) {
    Emit(std::move(it->second.event));
    aer_headers_.erase(it);
  }
  if (aer_headers_.size() >= kMaxOpenBlocks) {
    Emit(std::move(aer_headers_.begin()->second.event));
    aer_headers_.erase(aer_headers_.begin());
  }
  // The event the header makes when no block of its source follows (a rate-limited report).
  Message h = m;
  h.pci = source;
  h.device = h.interface = {};
  h.origin.driver = h.origin.func = {};
  AerHeader& header = aer_headers_[key];
  header.root_port = std::string(m.pci);
  header.severity = severity;
  header.multiple = multiple;
  header.event = Begin("kernel.pcie_aer", h);
  header.event.Set("aer_severity", severity);
  Put(header.event, "root_port", m.pci);
  header.event.Set("header_only", "1");
  if (multiple) header.event.Set("multiple", "1");
  Put(header.event, "message", t.substr(0, kMaxMessageField));
  return Outcome::kEvent;
}

}  // namespace railwatch::logs::kernel
