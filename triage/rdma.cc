#include "triage/rdma.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace railwatch {
namespace {

using logs::LogEvent;
using Level = TriageFinding::Level;

constexpr size_t kMaxRawBytes = 4096;

// Retransmissions, timeouts and sequence errors: the path (or the peer) lost packets.
// The *_retries_exceeded ones broke a queue pair: the job saw a completion error.
constexpr std::string_view kRetryCounters[] = {
    "req_transport_retries_exceeded", "req_rnr_retries_exceeded", "local_ack_timeout_err",
    "rnr_nak_retry_err", "packet_seq_err", "implied_nak_seq_err", "out_of_sequence",
    "duplicate_request", "roce_adp_retrans", "roce_adp_retrans_to"};
constexpr std::string_view kCqeCounters[] = {
    "req_cqe_error", "req_cqe_flush_error", "resp_cqe_error", "resp_cqe_flush_error",
    "req_remote_access_errors", "resp_remote_access_errors", "req_remote_invalid_request",
    "resp_local_length_error"};
constexpr std::string_view kCongestionCounters[] = {
    "np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled", "roce_slow_restart_cnps"};

absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

const std::string* Field(const LogEvent& e, std::string_view key) { return e.Get(key); }

std::optional<uint64_t> U(const LogEvent& e, std::string_view key) {
  const std::string* v = Field(e, key);
  uint64_t n;
  if (v == nullptr || !absl::SimpleAtoi(*v, &n)) return std::nullopt;
  return n;
}

uint64_t U0(const LogEvent& e, std::string_view key) { return U(e, key).value_or(0); }

std::string Where(const LogEvent& e) { return absl::StrCat(e.source, ":", e.line); }

// Every reading of one device/port, in input order.
struct Port {
  std::string name;  // "mlx5_1/1"
  std::string device;
  std::string port;
  std::vector<const LogEvent*> stats;  // rdma.statistic
  std::vector<const LogEvent*> links;  // rdma.link
  std::string netdev;
};

// What the NCCL events say about NICs.
struct NcclError {
  std::string what;   // "IB completion error IBV_WC_RETRY_EXC_ERR (status 12)"
  std::string where;  // "file:line"
};
struct Nccl {
  std::map<std::string, NcclError> failing;  // by device
  std::vector<std::string> used;               // NET/IB devices, in order
};

Nccl ReadNccl(const std::vector<LogEvent>& events) {
  Nccl n;
  for (const LogEvent& e : events) {
    std::string dev = e.Value("dev");
    if (e.kind == "nccl.ib_completion_error" && !dev.empty()) {
      n.failing.try_emplace(dev, NcclError{absl::StrCat("IB completion error ", e.Value("status_name"),
                                                        " (status ", e.Value("status"), ")"),
                                           Where(e)});
    } else if (e.kind == "nccl.call_failed" && !dev.empty()) {
      n.failing.try_emplace(dev, NcclError{absl::StrCat(e.Value("call"), " failed"), Where(e)});
    } else if (e.kind == "nccl.ib_async_event" && !dev.empty()) {
      n.failing.try_emplace(dev,
                            NcclError{absl::StrCat("IB async event ", e.Value("event")), Where(e)});
    } else if (e.kind == "nccl.net") {
      for (absl::string_view d : absl::StrSplit(e.Value("device_names"), ',', absl::SkipEmpty())) {
        if (std::find(n.used.begin(), n.used.end(), d) == n.used.end()) n.used.emplace_back(d);
      }
    }
  }
  return n;
}

// The "NCCL" detail of a finding on `device`, "" when the NCCL log says nothing about NICs.
std::string NcclNote(const Nccl& nccl, const std::string& device) {
  auto failing = nccl.failing.find(device);
  if (failing != nccl.failing.end()) {
    return absl::StrCat("the NCCL log's ", failing->second.what, " (", failing->second.where,
                        ") names ", device, " too: the same NIC");
  }
  if (std::find(nccl.used.begin(), nccl.used.end(), device) != nccl.used.end()) {
    return absl::StrCat("NCCL uses ", device, " (NET/IB devices: ", absl::StrJoin(nccl.used, ", "),
                        ")");
  }
  if (!nccl.used.empty()) {
    return absl::StrCat("NCCL does not use ", device, " (it uses ", absl::StrJoin(nccl.used, ", "),
                        "): these counts come from other traffic");
  }
  return "";
}

// "name 19, name 15" for the nonzero counters of `names` in `e`.
std::string Nonzero(const LogEvent& e, std::span<const std::string_view> names) {
  std::vector<std::string> parts;
  for (std::string_view name : names) {
    uint64_t v = U0(e, name);
    if (v > 0) parts.push_back(absl::StrCat(A(name), " ", v));
  }
  return absl::StrJoin(parts, ", ");
}

// How the nonzero counters of `names` moved from the first reading to the last:
// "+4 local_ack_timeout_err" ..., "unchanged", or "reset" when one went down.
struct Change {
  std::string text;
  bool moved = false;
};
std::optional<Change> ChangeBetween(const Port& p, std::span<const std::string_view> names) {
  if (p.stats.size() < 2) return std::nullopt;
  const LogEvent& first = *p.stats.front();
  const LogEvent& last = *p.stats.back();
  std::vector<std::string> parts;
  Change c;
  for (std::string_view name : names) {
    uint64_t a = U0(first, name), b = U0(last, name);
    if (b < a) {
      parts.push_back(absl::StrCat(A(name), " went down (", a, " -> ", b, "): counters reset"));
      c.moved = true;
    } else if (b > a) {
      parts.push_back(absl::StrCat("+", b - a, " ", A(name)));
      c.moved = true;
    }
  }
  c.text = absl::StrCat(parts.empty() ? "unchanged" : absl::StrJoin(parts, ", "), " between ",
                        Where(first), " and ", Where(last));
  return c;
}

std::string Netdev(const Port& p) { return p.netdev.empty() ? "<netdev>" : p.netdev; }

std::string WatchCommand(const Port& p) {
  return absl::StrCat("watch -d -n 5 rdma statistic show link ", p.name,
                      "   # still growing? the counters are totals since the driver loaded");
}

TriageFinding NewFinding(const Port& p, Level level, const LogEvent& first) {
  TriageFinding f;
  f.level = level;
  f.kind = first.kind;
  f.first_seen = Where(first);
  f.count = static_cast<int>(p.stats.size());
  f.details.emplace_back("where", p.netdev.empty() ? p.name
                                                   : absl::StrCat(p.name, " (netdev ", p.netdev,
                                                                  ")"));
  return f;
}

void AddCommon(TriageFinding& f, const Port& p, std::span<const std::string_view> names,
               const Nccl& nccl) {
  std::optional<Change> change = ChangeBetween(p, names);
  if (change) {
    f.details.emplace_back("change", change->text);
    if (!change->moved) {
      f.level = Level::kInfo;
      absl::StrAppend(&f.title, " (unchanged between ", p.stats.size(), " readings: old)");
    }
  }
  std::string note = NcclNote(nccl, p.device);
  if (!note.empty()) f.details.emplace_back("NCCL", note);
}

void Retries(const Port& p, const Nccl& nccl, std::vector<TriageFinding>& out) {
  const LogEvent& last = *p.stats.back();
  std::string counts = Nonzero(last, kRetryCounters);
  if (counts.empty()) return;
  uint64_t exceeded =
      U0(last, "req_transport_retries_exceeded") + U0(last, "req_rnr_retries_exceeded");
  TriageFinding f = NewFinding(p, exceeded > 0 ? Level::kFailure : Level::kWarning,
                               *p.stats.front());
  f.title = absl::StrCat("RDMA ", p.name, ": retries and timeouts: ", counts);
  f.details.emplace_back("counters", counts);
  f.meaning =
      "The NIC retransmitted because packets to or from its peers were lost or not "
      "acknowledged in time (local_ack_timeout_err: no ACK; packet_seq_err/out_of_sequence: a "
      "gap in the sequence; rnr_nak_retry_err: the receiver had no buffer posted; "
      "roce_adp_retrans: adaptive retransmission). On RoCE that is a lossless class that drops "
      "(PFC off or on another priority than the traffic, NCCL_IB_TC unset, ECN/buffer "
      "misconfiguration), link errors or flaps, or a peer that stopped answering.";
  if (exceeded > 0) {
    absl::StrAppend(&f.meaning, " req_transport_retries_exceeded (", 
                    U0(last, "req_transport_retries_exceeded"),
                    ") and req_rnr_retries_exceeded count queue pairs that gave up: each is an "
                    "IB completion error (status 12, or 13 for RNR) in some job's log.");
  }
  f.next = {WatchCommand(p),
            absl::StrCat("ethtool -S ", Netdev(p),
                         " | grep -E 'prio[0-7]_pause|discard|out_of_buffer|link_down'   # PFC "
                         "pauses and drops on the RoCE netdev"),
            absl::StrCat("mlnx_qos -i ", Netdev(p),
                         "   # PFC on the priority RoCE traffic uses (NCCL_IB_TC, DSCP)"),
            absl::StrCat("rdma link show ", p.name,
                         "; dmesg -T | grep -iE 'mlx5|link (is )?(up|down)'   # state, flaps, "
                         "resets"),
            "railwatch diagnoses --state=all   # link flap, PFC storm or ECN diagnoses here"};
  AddCommon(f, p, kRetryCounters, nccl);
  out.push_back(std::move(f));
}

void CqeErrors(const Port& p, const Nccl& nccl, std::vector<TriageFinding>& out) {
  const LogEvent& last = *p.stats.back();
  std::string counts = Nonzero(last, kCqeCounters);
  if (counts.empty()) return;
  auto not_flushed = [&](std::string_view all, std::string_view flushed) -> uint64_t {
    uint64_t a = U0(last, all), b = U0(last, flushed);
    return a > b ? a - b : 0;
  };
  uint64_t req = not_flushed("req_cqe_error", "req_cqe_flush_error");
  uint64_t resp = not_flushed("resp_cqe_error", "resp_cqe_flush_error");
  uint64_t other = U0(last, "req_remote_access_errors") + U0(last, "resp_remote_access_errors") +
                   U0(last, "req_remote_invalid_request") + U0(last, "resp_local_length_error");
  bool real = req + resp + other > 0;
  TriageFinding f =
      NewFinding(p, real ? Level::kFailure : Level::kWarning, *p.stats.front());
  f.title = absl::StrCat("RDMA ", p.name, ": completion errors: ", counts);
  f.details.emplace_back("counters", counts);
  f.details.emplace_back("not flushed",
                         absl::StrCat("requester ", req, ", responder ", resp,
                                      " (cqe_error minus cqe_flush_error)"));
  f.meaning =
      "Work requests completed with an error. A flushed completion is a consequence: its queue "
      "pair was already in the error state (an earlier error, or the job tearing down), so the "
      "errors that were not flushed are the ones to explain.";
  uint64_t explained = U0(last, "req_transport_retries_exceeded") +
                       U0(last, "req_rnr_retries_exceeded") +
                       U0(last, "req_remote_access_errors") + U0(last, "req_remote_invalid_request");
  if (req > 0 && explained == req) {
    absl::StrAppend(&f.meaning, " Here the ", req,
                    " requester errors that were not flushed match the retries exceeded and "
                    "remote errors counted alongside: see those.");
  } else if (!real) {
    absl::StrAppend(&f.meaning,
                    " Here every error was flushed: the cause is on the peer, or in an earlier "
                    "reading, or a job was killed with queue pairs in flight.");
  }
  f.next = {WatchCommand(p),
            "grep -nE 'Got completion|NCCL WARN' <the job's logs>   # which job, peer and status "
            "(5 = flush, 12 = retry exceeded, 4/10 = memory protection)",
            "dmesg -T | grep -iE 'mlx5_core|infiniband'   # NIC errors at that time"};
  AddCommon(f, p, kCqeCounters, nccl);
  out.push_back(std::move(f));
}

void OutOfBuffer(const Port& p, const Nccl& nccl, std::vector<TriageFinding>& out) {
  static constexpr std::string_view kNames[] = {"out_of_buffer"};
  uint64_t n = U0(*p.stats.back(), "out_of_buffer");
  if (n == 0) return;
  TriageFinding f = NewFinding(p, Level::kWarning, *p.stats.front());
  f.title = absl::StrCat("RDMA ", p.name, ": ", n,
                         " packets dropped for lack of a receive buffer (out_of_buffer)");
  f.meaning =
      "Packets arrived for a receive queue with no buffer posted: the receiving process did not "
      "replenish its receive queues in time (CPU starved, wrong NUMA node, too many queue pairs "
      "for the receive resources). The senders then retransmit. Usually a host problem, not the "
      "fabric.";
  f.next = {WatchCommand(p),
            absl::StrCat("ethtool -S ", Netdev(p),
                         " | grep -E 'out_of_buffer|rx_discards'   # the netdev's own drops"),
            absl::StrCat("cat /sys/class/infiniband/", p.device,
                         "/device/numa_node; top -H   # CPU and NUMA placement of the receiver")};
  AddCommon(f, p, kNames, nccl);
  out.push_back(std::move(f));
}

void Congestion(const Port& p, const Nccl& nccl, std::vector<TriageFinding>& out) {
  std::string counts = Nonzero(*p.stats.back(), kCongestionCounters);
  if (counts.empty()) return;
  TriageFinding f = NewFinding(p, Level::kInfo, *p.stats.front());
  f.title = absl::StrCat("RDMA ", p.name, ": congestion control at work: ", counts);
  f.meaning =
      "ECN marks and CNPs are RoCE congestion control (DCQCN) doing its job: rp_cnp_handled "
      "counts CNPs this NIC received and slowed down for, np_cnp_sent CNPs it sent for "
      "ECN-marked packets. They matter when they grow fast together with PFC pauses or low "
      "bandwidth.";
  f.next = {"railwatch top ecn   # where marks and CNPs grow now, across the fabric"};
  AddCommon(f, p, kCongestionCounters, nccl);
  out.push_back(std::move(f));
}

void LinkState(const Port& p, const Nccl& nccl, std::vector<TriageFinding>& out) {
  const LogEvent& last = *p.links.back();
  std::string state = last.Value("state"), phys = last.Value("physical_state");
  if ((state.empty() || state == "ACTIVE") && (phys.empty() || phys == "LINK_UP")) return;
  TriageFinding f;
  f.level = Level::kFailure;
  f.kind = last.kind;
  f.first_seen = Where(last);
  f.count = static_cast<int>(p.links.size());
  f.title = absl::StrCat("RDMA ", p.name, " is ", state.empty() ? "?" : state,
                         phys.empty() ? "" : absl::StrCat(" (physical state ", phys, ")"),
                         ", not ACTIVE/LINK_UP");
  f.details.emplace_back("where", p.netdev.empty() ? p.name
                                                   : absl::StrCat(p.name, " (netdev ", p.netdev,
                                                                  ")"));
  if (phys == "POLLING") {
    f.meaning = "No link partner: the cable, optic or switch port is down or unplugged.";
  } else if (phys == "DISABLED") {
    f.meaning = "The port is disabled: administratively (ip link set ... down), or by the driver.";
  } else if (phys == "LINK_ERROR_RECOVERY") {
    f.meaning = "The link is retraining after errors: a bad cable or optic, a flapping link.";
  } else if (phys == "LINK_UP") {
    f.meaning =
        "The physical link is up but the port is not ACTIVE: on InfiniBand the subnet manager "
        "has not configured it (INIT/ARMED); on RoCE the netdev is down or has no address.";
  } else {
    f.meaning = "The port cannot carry RDMA traffic; NCCL will fail or avoid this NIC.";
  }
  f.next = {absl::StrCat("ibv_devinfo -d ", p.device, "   # the port as verbs sees it"),
            absl::StrCat("ip link show ", Netdev(p), "; ethtool ", Netdev(p),
                         "   # carrier, speed, autonegotiation"),
            absl::StrCat("mlxlink -d ", p.device,
                         "   # cable/optic, FEC and the link-down reason (NVIDIA MFT)"),
            "dmesg -T | grep -iE 'mlx5|link (is )?(up|down)'   # flaps and resets"};
  if (phys == "LINK_UP") f.next.push_back("sminfo   # InfiniBand: is a subnet manager running?");
  std::string note = NcclNote(nccl, p.device);
  if (!note.empty()) f.details.emplace_back("NCCL", note);
  out.push_back(std::move(f));
}

// The NCCL log names a failing NIC: is it in the rdma output, and do its counters agree?
void CrossCheck(const std::map<std::string, Port>& ports, const Nccl& nccl,
                std::vector<TriageFinding>& out) {
  bool any_stats = false;
  for (const auto& [name, p] : ports) any_stats |= !p.stats.empty();
  if (!any_stats) return;
  for (const auto& [device, error] : nccl.failing) {
    const Port* port = nullptr;
    for (const auto& [name, p] : ports) {
      if (p.device == device && !p.stats.empty()) port = &p;
    }
    TriageFinding f;
    f.kind = "rdma.cross_check";
    if (port == nullptr) {
      f.level = Level::kWarning;
      f.title = absl::StrCat("The NCCL log's failing NIC ", device, " is not in the rdma output");
      f.first_seen = error.where;
      f.details.emplace_back("NCCL", absl::StrCat(error.what, " at ", error.where));
      f.next = {absl::StrCat("rdma statistic show link ", device,
                             "/1   # on the host of that log")};
    } else {
      const LogEvent& last = *port->stats.back();
      if (!Nonzero(last, kRetryCounters).empty() || !Nonzero(last, kCqeCounters).empty()) continue;
      f.level = Level::kInfo;
      f.title = absl::StrCat("RDMA ", port->name,
                             ": no retries or completion errors, although the NCCL log reports "
                             "an error on ", device);
      f.first_seen = Where(last);
      f.details.emplace_back("NCCL", absl::StrCat(error.what, " at ", error.where));
      f.meaning =
          "An error on this NIC normally shows in its counters (status 12 adds to "
          "req_transport_retries_exceeded, status 5 to req_cqe_flush_error). The rdma output "
          "is from another host, was read before the error, or the driver reloaded since.";
      f.next = {"hostname; uptime   # same host as the log, and since when"};
    }
    out.push_back(std::move(f));
  }
}

}  // namespace

std::vector<LogEvent> RdmaToolEvents(const RdmaToolOutput& output, const std::string& source) {
  std::vector<LogEvent> events;
  for (const RdmaToolPort& p : output.ports) {
    LogEvent e;
    e.kind = p.IsLink() ? "rdma.link" : "rdma.statistic";
    e.source = source;
    e.line = p.line;
    e.Set("device", p.device);
    e.Set("port", absl::StrCat(p.port));
    e.raw = absl::StrCat("link ", p.Name());
    for (const auto& [key, value] : p.attributes) {
      e.Set(key, value);
      if (e.raw.size() < kMaxRawBytes) absl::StrAppend(&e.raw, " ", key, " ", value);
    }
    for (const RdmaToolCounter& c : p.counters) {
      e.Set(c.name, absl::StrCat(c.value));
      if (e.raw.size() < kMaxRawBytes) absl::StrAppend(&e.raw, " ", c.name, " ", c.value);
    }
    events.push_back(std::move(e));
  }
  return events;
}

void AnalyzeRdmaTool(const std::vector<LogEvent>& events, std::vector<TriageFinding>& findings,
                     std::vector<std::string>& context) {
  std::map<std::string, Port> ports;
  std::vector<std::string> order;
  for (const LogEvent& e : events) {
    if (e.kind != "rdma.statistic" && e.kind != "rdma.link") continue;
    std::string name = absl::StrCat(e.Value("device"), "/", e.Value("port"));
    auto [it, inserted] = ports.try_emplace(name);
    Port& p = it->second;
    if (inserted) {
      order.push_back(name);
      p.name = name;
      p.device = e.Value("device");
      p.port = e.Value("port");
    }
    (e.kind == "rdma.link" ? p.links : p.stats).push_back(&e);
    if (!e.Value("netdev").empty()) p.netdev = e.Value("netdev");
  }
  if (ports.empty()) return;
  Nccl nccl = ReadNccl(events);
  std::vector<std::string> summary;
  for (const std::string& name : order) {
    const Port& p = ports[name];
    if (!p.links.empty()) LinkState(p, nccl, findings);
    if (!p.stats.empty()) {
      Retries(p, nccl, findings);
      CqeErrors(p, nccl, findings);
      OutOfBuffer(p, nccl, findings);
      Congestion(p, nccl, findings);
    }
    std::string s = name;
    std::vector<std::string> about;
    if (!p.netdev.empty()) about.push_back(p.netdev);
    if (!p.links.empty()) {
      about.push_back(absl::StrCat(p.links.back()->Value("state"), "/",
                                   p.links.back()->Value("physical_state")));
    }
    if (!p.stats.empty()) {
      about.push_back(absl::StrCat(p.stats.size(), " counter reading",
                                   p.stats.size() > 1 ? "s" : ""));
    }
    if (!about.empty()) absl::StrAppend(&s, " (", absl::StrJoin(about, ", "), ")");
    summary.push_back(s);
  }
  CrossCheck(ports, nccl, findings);
  context.push_back(absl::StrCat("RDMA ports (rdma tool output): ", absl::StrJoin(summary, ", ")));
}

}  // namespace railwatch
