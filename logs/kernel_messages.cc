#include "logs/kernel_messages.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "logs/codes.h"
#include "logs/kernel_internal.h"
#include "logs/text_scan.h"

namespace railwatch::logs {
namespace kernel {
namespace {

using scan::Trim;

// "-11" at the end of a message ("alloc td failed, -11", "status -11", "err(-22)").
bool TrailingErrno(absl::string_view s, int64_t* value) {
  s = scan::StripTrailing(Trim(s), ".)");
  size_t i = s.size();
  while (i > 0 && scan::IsDigit(s[i - 1])) --i;
  if (i == s.size() || i < 2 || s[i - 1] != '-') return false;
  --i;
  if (s[i - 1] != ' ' && s[i - 1] != '(') return false;
  return absl::SimpleAtoi(s.substr(i), value);
}

// "EINVAL" for -22: the project's table, else glibc's.
std::string ErrnoSymbol(int64_t errno_value) {
  const int64_t v = errno_value < 0 ? -errno_value : errno_value;
  if (v <= 0 || v > 4095) return "";
  absl::string_view known = ErrnoName(v);
  if (!known.empty()) return std::string(known);
  const char* name = strerrorname_np(static_cast<int>(v));
  return name == nullptr ? "" : name;
}

// Drivers of NICs whose probe failure is a NIC's.
bool IsNicDriver(absl::string_view d) {
  static constexpr absl::string_view kDrivers[] = {
      "mlx5_core", "mlx4_core", "bnxt_en", "bnxt_re", "ice",   "i40e",  "irdma", "efa",
      "ena",       "qede",      "qedr",    "ionic",   "ixgbe", "cxgb4", "hfi1",  "mana"};
  for (absl::string_view k : kDrivers) {
    if (d == k) return true;
  }
  return false;
}

// A line of mlx5's print_health_info block ("assert_var[0] 0x0521945b", "synd 0x1: ...").
bool IsHealthKey(absl::string_view t) {
  static constexpr absl::string_view kKeys[] = {
      "assert_var[", "assert_exit_ptr ", "assert_callra ", "fw_ver ",
      "time ",       "hw_id ",           "rfr ",           "crr ",
      "severity ",   "irisc_index ",     "synd ",          "ext_synd ",
      "raw fw_ver ", "health_counter"};
  for (absl::string_view k : kKeys) {
    if (absl::StartsWith(t, k)) return true;
  }
  return false;
}

// "ENABLE_HCA(0x104) timeout. ..." / "cmd[3]: CREATE_MKEY(0x200) Async, timeout. ...".
void CommandFields(absl::string_view t, LogEvent& e) {
  if (absl::StartsWith(t, "cmd[")) {
    const size_t close = t.find(']');
    if (close != absl::string_view::npos) Put(e, "cmd_index", t.substr(4, close - 4));
  }
  const size_t op = t.find("(0x");
  if (op != absl::string_view::npos) {
    size_t start = op;
    while (start > 0 && t[start - 1] != ' ' && t[start - 1] != ':') --start;
    Put(e, "command", t.substr(start, op - start));
    const size_t close = t.find(')', op);
    if (close != absl::string_view::npos) Put(e, "opcode", t.substr(op + 1, close - op - 1));
  }
  if (absl::StrContains(t, "Async")) e.Set("async", "1");
}

// "10000 Mbps", "100 Gbps" -> Mb/s.
std::string LinkSpeedMbps(absl::string_view t) {
  std::vector<absl::string_view> w = scan::Words(t);
  for (size_t i = 1; i < w.size(); ++i) {
    int64_t n;
    absl::string_view unit = scan::StripTrailing(w[i], ",");
    if (!absl::SimpleAtoi(w[i - 1], &n)) continue;
    if (unit == "Mbps") return absl::StrCat(n);
    if (unit == "Gbps") return absl::StrCat(n * 1000);
  }
  return "";
}

// The value after "<key>: " up to the next ", " (or the end).
absl::string_view ValueAfter(absl::string_view t, absl::string_view key) {
  const size_t p = t.find(key);
  if (p == absl::string_view::npos) return {};
  absl::string_view v = t.substr(p + key.size());
  return Trim(v.substr(0, v.find(", ")));
}

}  // namespace

LogEvent Classifier::Begin(absl::string_view kind, const Message& m) const {
  LogEvent e;
  e.kind = std::string(kind);
  e.source = source_;
  e.line = m.line;
  e.time_unix_nano = m.time_unix_nano;
  e.raw = std::string(m.raw.substr(0, internal::kMaxRawBytes));
  Put(e, "driver", m.origin.driver);
  Put(e, "pci", m.pci);
  if (!m.pci.empty()) Put(e, "adapter", PciAdapter(m.pci));
  Put(e, "device", m.device);
  Put(e, "interface", m.interface);
  Put(e, "port", m.origin.port);
  Put(e, "host", m.host);
  Put(e, "uptime_s", m.uptime);
  Put(e, "level", LevelName(m.level));
  if (m.seq >= 0) e.Set("seq", absl::StrCat(m.seq));
  Put(e, "func", m.origin.func);
  return e;
}

void Classifier::Emit(LogEvent e) {
  ++stats_.events;
  out_->push_back(std::move(e));
}

void Classifier::Problem(int line, std::string reason) {
  if (stats_.problems.size() < internal::kMaxProblems) {
    stats_.problems.push_back({line, std::move(reason)});
  }
}

Block& Classifier::Open(BlockKind kind, LogEvent e, const Message& m) {
  const std::string key(m.pci);
  if (open_.count(key) > 0) Close(key);
  if (open_.size() >= kMaxOpenBlocks) Close(open_.begin()->first);
  Block& b = open_[key];
  b.kind = kind;
  b.event = std::move(e);
  b.event.Set("message", std::string(Trim(m.text).substr(0, kMaxMessageField)));
  last_block_ = key;
  return b;
}

void Classifier::Close(const std::string& pci) {
  auto it = open_.find(pci);
  if (it == open_.end()) return;
  // `pci` may be the map's own key (FlushAll, Open's eviction): done with it before the erase.
  if (last_block_ == pci) last_block_.clear();
  CloseBlock(it->second);
  open_.erase(it);
}

void Classifier::CloseBlock(Block& b) {
  switch (b.kind) {
    case BlockKind::kHealth:
      if (!b.values.empty()) b.event.Set("assert_var", absl::StrJoin(b.values, ","));
      break;
    case BlockKind::kAer:
    case BlockKind::kDpc:
      FinishAer(b);
      break;
    case BlockKind::kProbe:
    case BlockKind::kLink:
      break;
  }
  // The message (set first) goes last, after the block's fields.
  std::string message = b.event.Value("message");
  auto& f = b.event.fields;
  f.erase(std::remove_if(f.begin(), f.end(), [](const auto& kv) { return kv.first == "message"; }),
          f.end());
  Put(b.event, "message", message);
  Emit(std::move(b.event));
}

void Classifier::FlushAll() {
  while (!open_.empty()) Close(open_.begin()->first);
  for (auto& [source, header] : aer_headers_) Emit(std::move(header.event));
  aer_headers_.clear();
  last_block_.clear();
}

bool Classifier::Continue(absl::string_view text) {
  auto it = open_.find(last_block_);
  if (last_block_.empty() || it == open_.end()) return false;
  Block& b = it->second;
  absl::StrAppend(&b.event.raw, "\n", text);
  if (b.kind == BlockKind::kLink) {
    // A wrapped link line: "... 10000 Mbps full" + "duplex, Flow control: ON - receive & transmit".
    std::string joined = absl::StrCat(b.event.Value("message"), " ", Trim(text));
    b.event.Set("message", joined.substr(0, kMaxMessageField));
    ContinueLink(joined, b);
  }
  return true;
}

Outcome Classifier::Handle(Message m) {
  absl::string_view name = m.device.empty() ? m.interface : m.device;
  if (!name.empty()) {
    if (!m.pci.empty()) {
      if (pci_of_name_.size() < 1024) pci_of_name_[std::string(name)] = std::string(m.pci);
    } else if (auto known = pci_of_name_.find(std::string(name)); known != pci_of_name_.end()) {
      m.pci = known->second;
    }
  }
  const std::string key(m.pci);
  auto it = open_.find(key);
  if (it != open_.end()) {
    if (ContinueBlock(m, it->second)) {
      last_block_ = key;
      return Outcome::kEvent;
    }
    Close(key);
  }
  last_block_.clear();
  Outcome o = Pcie(m);
  if (o == Outcome::kNotMine) o = Mlx5(m);
  if (o == Outcome::kNotMine) o = Broadcom(m);
  if (o == Outcome::kNotMine) o = Rdma(m);
  if (o == Outcome::kNotMine) o = Generic(m);
  return o;
}

bool Classifier::ContinueBlock(const Message& m, Block& b) {
  switch (b.kind) {
    case BlockKind::kHealth:
      return ContinueHealth(m, b);
    case BlockKind::kAer:
    case BlockKind::kDpc:
      return ContinueAer(m, b);
    case BlockKind::kProbe:
      return ContinueProbe(m, b);
    case BlockKind::kLink:
      if (absl::StartsWith(m.text, "FEC ") || absl::StartsWith(m.text, "EEE ") ||
          absl::StartsWith(m.text, "Flow control")) {
        absl::StrAppend(&b.event.raw, "\n", m.raw.substr(0, internal::kMaxRawBytes));
        return ContinueLink(m.text, b);
      }
      return false;
  }
  return false;
}

bool Classifier::ContinueHealth(const Message& m, Block& b) {
  absl::string_view t = Trim(m.text);
  if (absl::StrContains(t, "health compromised") || absl::StartsWith(t, "Fatal error ")) {
    return false;  // the next report
  }
  if (absl::StartsWith(t, "Health issue observed, ")) {
    absl::string_view rest = t.substr(23);
    const size_t sev = rest.find(", severity(");
    Put(b.event, "health_issue", rest.substr(0, sev));
    if (sev != absl::string_view::npos) {
      absl::string_view s = rest.substr(sev + 11);
      const size_t close = s.find(')');
      if (close != absl::string_view::npos) {
        Put(b.event, "fw_severity_level", s.substr(0, close));
        Put(b.event, "fw_severity", scan::StripTrailing(Trim(s.substr(close + 1)), ":"));
      }
    }
    return true;
  }
  if (absl::StartsWith(t, "FW is unable to respond")) {
    b.event.Set("fw_unresponsive", "1");
    return true;
  }
  if (m.origin.func != "print_health_info" && !IsHealthKey(t)) return false;
  std::vector<absl::string_view> w = scan::Words(t);
  if (w.size() < 2) return true;
  if (absl::StartsWith(w[0], "assert_var[")) {
    size_t i = 0;
    if (absl::SimpleAtoi(w[0].substr(11, w[0].find(']') - 11), &i) && i < 16) {
      if (b.values.size() <= i) b.values.resize(i + 1);
      b.values[i] = std::string(w[1]);
    }
  } else if (w[0] == "raw" && w.size() >= 3 && w[1] == "fw_ver") {
    Put(b.event, "raw_fw_ver", w[2]);
  } else if (w[0] == "time") {
    Put(b.event, "fw_time", w[1]);
  } else if (w[0] == "severity") {
    Put(b.event, "fw_severity_level", w[1]);
    if (w.size() >= 3) Put(b.event, "fw_severity", scan::StripTrailing(w[2].substr(1), ")"));
  } else if (w[0] == "synd") {
    absl::string_view synd = scan::StripTrailing(w[1], ":");
    Put(b.event, "synd", synd);
    const size_t colon = t.find(": ");
    if (colon != absl::string_view::npos) Put(b.event, "synd_text", Trim(t.substr(colon + 2)));
  } else if (w[0] == "assert_exit_ptr" || w[0] == "assert_callra" || w[0] == "fw_ver" ||
             w[0] == "hw_id" || w[0] == "rfr" || w[0] == "crr" || w[0] == "irisc_index" ||
             w[0] == "ext_synd") {
    Put(b.event, w[0], w[1]);
  }
  return true;
}

bool Classifier::ContinueProbe(const Message& m, Block& b) {
  absl::string_view t = Trim(m.text);
  if (absl::StartsWith(t, "probe of ")) {
    int64_t err;
    if (TrailingErrno(t, &err)) {
      b.event.Set("errno", absl::StrCat(err));
      Put(b.event, "errno_name", ErrnoSymbol(err));
    }
    absl::StrAppend(&b.event.raw, "\n", m.raw.substr(0, internal::kMaxRawBytes));
    b.event.Set("steps", absl::StrCat(b.event.Value("steps"), ", probe"));
    Close(std::string(m.pci));  // the driver core's line ends it
    return true;
  }
  absl::string_view step = scan::LeadingWord(t);
  if (!absl::StrContains(t, " failed") || !absl::StartsWith(t.substr(step.size()), " failed")) {
    return false;
  }
  b.event.Set("steps", absl::StrCat(b.event.Value("steps"), ", ", step));
  int64_t err;
  if (TrailingErrno(t, &err)) {
    b.event.Set("errno", absl::StrCat(err));
    Put(b.event, "errno_name", ErrnoSymbol(err));
  }
  absl::StrAppend(&b.event.raw, "\n", m.raw.substr(0, internal::kMaxRawBytes));
  return true;
}

bool Classifier::ContinueLink(absl::string_view text, Block& b) {
  absl::string_view t = Trim(text);
  if (absl::StartsWith(t, "FEC autoneg ")) {
    // bnxt_en: "FEC autoneg off encoding: None".
    Put(b.event, "fec_autoneg", scan::LeadingWord(t.substr(12)));
    Put(b.event, "fec", ValueAfter(t, "encoding: "));
    return true;
  }
  if (absl::StartsWith(t, "EEE ")) return true;
  const std::string speed = LinkSpeedMbps(t);
  if (!speed.empty() && b.event.Value("speed_mbps").empty()) b.event.Set("speed_mbps", speed);
  const std::string lower = absl::AsciiStrToLower(t);
  if (b.event.Value("duplex").empty()) {
    if (absl::StrContains(lower, "full duplex") || absl::StrContains(lower, "full\nduplex")) {
      b.event.Set("duplex", "full");
    } else if (absl::StrContains(lower, "half duplex")) {
      b.event.Set("duplex", "half");
    }
  }
  for (absl::string_view key : {"Flow control: ", "Flow Control: "}) {
    absl::string_view fc = ValueAfter(t, key);
    if (!fc.empty()) b.event.Set("flow_control", std::string(fc));
  }
  absl::string_view fec = ValueAfter(t, "Negotiated FEC: ");
  if (!fec.empty()) b.event.Set("fec", std::string(fec));
  return true;
}

Outcome Classifier::Mlx5(const Message& m) {
  absl::string_view t = Trim(m.text);
  const bool mlx5 = absl::StartsWith(m.origin.driver, "mlx5") || absl::StartsWith(m.device, "mlx5");
  if (absl::StrContains(t, "health compromised")) {
    LogEvent e = Begin("kernel.nic_health", m);
    e.Set("reason", "miss_count");
    Open(BlockKind::kHealth, std::move(e), m);
    return Outcome::kEvent;
  }
  if (mlx5 && absl::StartsWith(t, "Fatal error ") && absl::EndsWith(t, "detected")) {
    LogEvent e = Begin("kernel.nic_health", m);
    e.Set("reason", "fatal_error");
    Put(e, "fatal_error", scan::LeadingInteger(t.substr(12)));
    Open(BlockKind::kHealth, std::move(e), m);
    return Outcome::kEvent;
  }
  if (mlx5 && (absl::StartsWith(t, "Health issue observed, ") ||
               m.origin.func == "print_health_info" || absl::StartsWith(t, "assert_var[") ||
               absl::StartsWith(t, "synd 0x") || absl::StartsWith(t, "ext_synd 0x"))) {
    // A block whose "health compromised" line came before what was read (or a health report
    // that prints the block alone).
    LogEvent e = Begin("kernel.nic_health", m);
    e.Set("reason", "health_info");
    Block& b = Open(BlockKind::kHealth, std::move(e), m);
    ContinueHealth(m, b);
    return Outcome::kEvent;
  }
  if (mlx5 && absl::StrContains(t, "High temperature")) {
    LogEvent e = Begin("kernel.nic_health", m);
    e.Set("reason", "high_temperature");
    bool found;
    Put(e, "sensors", Trim(scan::After(t, "bit set", &found)));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (mlx5 && absl::StartsWith(t, "Port module event")) {
    // "Port module event: module 0, Cable plugged"; "Port module event[error]: module 0, Cable
    // error, High Temperature".
    const bool error = absl::StartsWith(t, "Port module event[error]");
    LogEvent e = Begin(error ? "kernel.nic_health" : "kernel.nic_info", m);
    e.Set(error ? "reason" : "what", error ? "module_error" : "module_event");
    absl::string_view rest = t.substr(t.find(':') + 1);
    std::vector<absl::string_view> parts = absl::StrSplit(rest, ", ");
    bool found;
    if (!parts.empty()) Put(e, "module", Trim(scan::After(parts[0], "module", &found)));
    if (parts.size() > 1) Put(e, "module_status", Trim(parts[1]));
    if (parts.size() > 2) Put(e, "module_error", Trim(parts[2]));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (mlx5 && (absl::StrContains(t, "health recovery flow aborted") ||
               absl::StrContains(t, "PCI slot is unavailable"))) {
    LogEvent e = Begin("kernel.nic_health", m);
    e.Set("reason", "recovery_failed");
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  // The command interface: firmware commands that got no answer.
  const char* reason = nullptr;
  if (absl::StrContains(t, "Will cause a leak of a command resource")) {
    reason = "timeout";
  } else if (absl::StrContains(t, "No done completion")) {
    reason = "no_done_completion";
  } else if (absl::StrContains(t, "canceled on out of queue timeout")) {
    reason = "queue_timeout";
  } else if (absl::StrContains(t, "failed to allocate command entry")) {
    reason = "no_command_entry";
  }
  if (reason != nullptr) {
    LogEvent e = Begin("kernel.nic_command_timeout", m);
    e.Set("reason", reason);
    CommandFields(t, e);
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (!mlx5) return Outcome::kNotMine;
  if (absl::StrContains(t, "recovered after timeout")) return Outcome::kKnown;
  // Probe: "handle_hca_cap failed", "mlx5_load_one failed with error code -22".
  absl::string_view step = scan::LeadingWord(t);
  if (absl::StartsWith(t.substr(step.size()), " failed") && m.origin.func.empty() &&
      (absl::StartsWith(step, "mlx5_") || absl::EndsWith(step, "_cap") ||
       absl::StartsWith(step, "set_hca") || absl::StartsWith(step, "handle_hca"))) {
    LogEvent e = Begin("kernel.nic_probe_failed", m);
    e.Set("failed_step", std::string(step));
    e.Set("steps", std::string(step));
    int64_t err;
    if (TrailingErrno(t, &err)) {
      e.Set("errno", absl::StrCat(err));
      Put(e, "errno_name", ErrnoSymbol(err));
    }
    Open(BlockKind::kProbe, std::move(e), m);
    return Outcome::kEvent;
  }
  if (absl::StartsWith(t, "firmware version: ")) {
    LogEvent e = Begin("kernel.nic_info", m);
    e.Set("what", "firmware_version");
    Put(e, "fw_version", Trim(t.substr(18)));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (t == "Link up" || t == "Link down") {
    LogEvent e = Begin("kernel.nic_link", m);
    e.Set("state", t == "Link up" ? "up" : "down");
    Put(e, "message", t);
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  return Outcome::kNotMine;
}

Outcome Classifier::Broadcom(const Message& m) {
  if (!absl::StartsWith(m.origin.driver, "bnxt")) return Outcome::kNotMine;
  absl::string_view t = Trim(m.text);
  const char* reason = nullptr;
  if (absl::StartsWith(t, "Firmware fatal reset event")) {
    reason = "fw_fatal_reset";
  } else if (absl::StartsWith(t, "Firmware non-fatal reset event")) {
    reason = "fw_reset";
  } else if (absl::StrContains(t, "reset aborted") ||
             absl::StrContains(t, "Firmware recovery failed")) {
    reason = "fw_reset_failed";
  }
  if (reason != nullptr) {
    LogEvent e = Begin("kernel.nic_health", m);
    e.Set("reason", reason);
    bool found;
    absl::string_view wait = scan::After(t, "max wait time ", &found);
    if (found) Put(e, "max_wait_ms", scan::LeadingInteger(wait));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (absl::StartsWith(t, "Error (timeout: ")) {
    // HWRM: "Error (timeout: 500015) msg {0x23 0x1a5} len:0".
    LogEvent e = Begin("kernel.nic_command_timeout", m);
    e.Set("reason", "hwrm_timeout");
    Put(e, "timeout_ms", scan::LeadingInteger(t.substr(16)));
    bool found;
    absl::string_view msg = scan::After(t, "msg {", &found);
    if (found) {
      std::vector<absl::string_view> w = scan::Words(msg.substr(0, msg.find('}')));
      if (!w.empty()) Put(e, "command", w[0]);
      if (w.size() > 1) Put(e, "seq_id", w[1]);
    }
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  return Outcome::kNotMine;
}

Outcome Classifier::Rdma(const Message& m) {
  absl::string_view t = Trim(m.text);
  if (absl::StartsWith(t, "abnormal ae_id = ")) {
    // irdma: "abnormal ae_id = 0x401 bool qp=1 qp_id = 1, ae_src=5".
    LogEvent e = Begin("kernel.rdma_error", m);
    e.Set("reason", "abnormal_ae");
    Put(e, "ae_id", scan::LeadingWord(t.substr(17)));
    bool found;
    absl::string_view qp = scan::After(t, "qp_id = ", &found);
    if (found) Put(e, "qp_id", scan::LeadingInteger(qp));
    absl::string_view src = scan::After(t, "ae_src=", &found);
    if (found) Put(e, "ae_src", scan::LeadingWord(src));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (absl::StartsWith(t, "Fatal error (") && !m.device.empty()) {
    // ib_core's MAD agent: "Fatal error (1) on MAD QP (1)": the port's management QP is dead.
    LogEvent e = Begin("kernel.rdma_fatal", m);
    Put(e, "event", t.substr(13, t.find(')') - 13));
    bool found;
    absl::string_view qp = scan::After(t, "QP (", &found);
    if (found) Put(e, "qp", qp.substr(0, qp.find(')')));
    if (absl::StrContains(t, "MAD QP")) e.Set("reason", "mad_qp");
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  return Outcome::kNotMine;
}

Outcome Classifier::Generic(const Message& m) {
  absl::string_view t = Trim(m.text);
  // Link up / down as NIC drivers print it (bnxt_en, ice, i40e ...).
  if (absl::StartsWith(t, "NIC Link is ")) {
    LogEvent e = Begin("kernel.nic_link", m);
    const bool up = absl::StartsWith(absl::AsciiStrToLower(t.substr(12)), "up");
    e.Set("state", up ? "up" : "down");
    Block& b = Open(BlockKind::kLink, std::move(e), m);
    ContinueLink(t, b);
    return Outcome::kEvent;
  }
  if (absl::StartsWith(t, "probe of ") && IsNicDriver(m.origin.driver)) {
    LogEvent e = Begin("kernel.nic_probe_failed", m);
    e.Set("failed_step", "probe");
    e.Set("steps", "probe");
    int64_t err;
    if (TrailingErrno(t, &err)) {
      e.Set("errno", absl::StrCat(err));
      Put(e, "errno_name", ErrnoSymbol(err));
    }
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  // A driver call that failed with an errno, on an RDMA device or an mlx5 function.
  const bool rdma = m.origin.rdma_name || m.origin.driver == "infiniband" ||
                    absl::StartsWith(m.origin.driver, "mlx5");
  int64_t err;
  if (rdma && absl::StrContains(t, "failed") && TrailingErrno(t, &err)) {
    LogEvent e = Begin("kernel.nic_error", m);
    const size_t failed = t.find(" failed");
    Put(e, "operation", Trim(t.substr(0, failed)));
    e.Set("errno", absl::StrCat(err));
    Put(e, "errno_name", ErrnoSymbol(err));
    Put(e, "message", t.substr(0, kMaxMessageField));
    Emit(std::move(e));
    return Outcome::kEvent;
  }
  return Outcome::kNotMine;
}

}  // namespace kernel

namespace {

constexpr std::string_view kKinds[] = {"kernel.nic_health",       "kernel.nic_command_timeout",
                                       "kernel.nic_probe_failed", "kernel.nic_error",
                                       "kernel.rdma_fatal",       "kernel.rdma_error",
                                       "kernel.pcie_aer",         "kernel.pcie_dpc",
                                       "kernel.pcie_power",       "kernel.pcie_link_limited",
                                       "kernel.nic_link",         "kernel.nic_info"};

using kernel::Outcome;

// A wrapped line's rest: "duplex, Flow control: ..." (bugzilla), "destMAC=..." (a mailer), or a
// "[....]" elision. Not a line of another format (NCCL's "host:pid:tid" prefix).
bool IsContinuation(absl::string_view s) {
  s = scan::Trim(s);
  if (s.empty()) return false;
  if (absl::StartsWith(s, "[...") || s == "...") return true;
  if (!absl::ascii_islower(static_cast<unsigned char>(s[0]))) return false;
  if (absl::StrContains(s, "NCCL")) return false;
  // NCCL's "host:pid:tid " prefix.
  std::vector<absl::string_view> parts = absl::StrSplit(scan::LeadingWord(s), ':');
  return !(parts.size() == 3 && scan::IsDigits(parts[1]) && scan::IsDigits(parts[2]));
}

}  // namespace

std::span<const std::string_view> KernelEventKinds() { return kKinds; }

struct KernelMessageParser::State {
  State(std::string source, const Clock& c) : clock(c), classifier(std::move(source), stats) {}

  void Count(Outcome o) {
    switch (o) {
      case Outcome::kEvent:
        ++stats.recognized;
        break;
      case Outcome::kMalformed:
        ++stats.malformed;
        break;
      case Outcome::kKnown:
      case Outcome::kNotMine:
        ++stats.known;
        break;
    }
  }

  const Clock& clock;
  LogParser::Stats stats;
  kernel::Classifier classifier;
  bool last_taken = false;    // the line before was a kernel message
  bool after_record = false;  // ... and a kmsg record, whose dictionary lines may follow
};

KernelMessageParser::KernelMessageParser(std::string source, const Clock& clock)
    : state_(std::make_unique<State>(std::move(source), clock)) {}
KernelMessageParser::~KernelMessageParser() = default;
KernelMessageParser::KernelMessageParser(KernelMessageParser&&) noexcept = default;
KernelMessageParser& KernelMessageParser::operator=(KernelMessageParser&&) noexcept = default;

bool KernelMessageParser::FeedLine(std::string_view text, int line_number,
                                   std::vector<LogEvent>& out) {
  State& s = *state_;
  s.classifier.set_out(&out);
  absl::string_view raw(text.data(), text.size());
  bool truncated = false;
  if (raw.size() > internal::kMaxLineBytes) {
    raw = raw.substr(0, internal::kMaxLineBytes);
    truncated = true;
  }
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == '\r')) raw.remove_suffix(1);
  auto take = [&](bool kernel_line) {
    ++s.stats.lines;
    if (truncated) ++s.stats.truncated;
    s.last_taken = kernel_line;
    return true;
  };
  // The dictionary of a pasted kmsg record: " SUBSYSTEM=pci", " DEVICE=+pci:0000:0d:00.0".
  if (s.after_record && !raw.empty() && raw[0] == ' ' && raw.size() > 2 &&
      absl::ascii_isupper(static_cast<unsigned char>(raw[1])) && absl::StrContains(raw, "=")) {
    ++s.stats.known;
    return take(true);
  }
  kernel::TextLine tl = kernel::StripKernelPrefixes(raw, s.clock.Now());
  s.after_record = false;
  absl::string_view msg = scan::TrimRight(tl.message);
  if (msg.empty()) {
    if (!tl.kernel_prefix && !(tl.quoted && s.last_taken)) {
      s.last_taken = false;
      return false;
    }
    ++s.stats.blank;
    return take(s.last_taken || tl.kernel_prefix);
  }
  if (kernel::IsKernelLogCommand(msg)) {
    ++s.stats.known;
    return take(true);
  }
  kernel::Message m;
  m.raw = raw;
  m.line = line_number;
  m.time_unix_nano = tl.time_unix_nano;
  m.uptime = tl.uptime;
  m.host = tl.host;
  m.level = tl.level;
  m.seq = tl.seq;
  m.has_origin = kernel::ParseOrigin(msg, &m.origin);
  m.text = m.has_origin ? m.origin.text : msg;
  m.pci = m.origin.pci;
  (m.origin.rdma_name ? m.device : m.interface) = m.origin.name;
  const bool kernel_looking =
      tl.kernel_prefix ||
      (m.has_origin && (!m.origin.pci.empty() || m.origin.driver == "infiniband" ||
                        !m.origin.port.empty() || m.origin.aer || absl::StartsWith(msg, "DPC:")));
  if (!kernel_looking) {
    if (s.last_taken && IsContinuation(msg)) {
      if (s.classifier.Continue(msg)) {
        ++s.stats.recognized;
      } else {
        ++s.stats.known;
      }
      return take(true);
    }
    s.last_taken = false;
    return false;
  }
  s.after_record = tl.kmsg_record;
  const Outcome o = s.classifier.Handle(m);
  s.Count(o);
  return take(true);
}

void KernelMessageParser::FeedRecord(const KmsgRecord& record, int64_t time_unix_nano,
                                     std::vector<LogEvent>& out) {
  State& s = *state_;
  s.classifier.set_out(&out);
  ++s.stats.lines;
  const std::string uptime =
      absl::StrFormat("%d.%06d", record.timestamp_usec / 1000000, record.timestamp_usec % 1000000);
  kernel::Message m;
  absl::string_view msg = record.message;
  if (msg.size() > internal::kMaxLineBytes) {
    msg = msg.substr(0, internal::kMaxLineBytes);
    ++s.stats.truncated;
  }
  m.raw = msg;
  m.line = static_cast<int>(std::min<uint64_t>(record.seq, INT_MAX));  // problems name the record
  m.time_unix_nano = time_unix_nano;
  m.uptime = uptime;
  m.level = record.level;
  m.seq = static_cast<int64_t>(record.seq);
  m.has_origin = kernel::ParseOrigin(msg, &m.origin);
  m.text = m.has_origin ? m.origin.text : msg;
  m.pci = m.origin.pci;
  (m.origin.rdma_name ? m.device : m.interface) = m.origin.name;
  // The record's dictionary names the device when the text does not ("infiniband mlx5_0:",
  // a message without a prefix).
  const std::string device = record.Dictionary("DEVICE");
  absl::string_view d = device;
  if (m.pci.empty() && absl::StartsWith(d, "+pci:") && kernel::IsPciAddress(d.substr(5))) {
    m.pci = d.substr(5);
  }
  if (m.device.empty() && absl::StartsWith(d, "+infiniband:")) m.device = d.substr(12);
  if (scan::Trim(msg).empty()) {
    ++s.stats.blank;
    return;
  }
  s.Count(s.classifier.Handle(m));
}

void KernelMessageParser::Flush(std::vector<LogEvent>& out) {
  state_->classifier.set_out(&out);
  state_->classifier.FlushAll();
  state_->last_taken = false;
}

const KernelMessageParser::Stats& KernelMessageParser::stats() const { return state_->stats; }

}  // namespace railwatch::logs
