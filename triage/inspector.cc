#include "triage/inspector.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "triage/playbook_replay.h"

namespace railwatch {
// Named, not anonymous: the unity build puts this file beside the other triage sources.
namespace triage_inspector {

using logs::InspectorRecord;
using logs::InspectorStraggler;
using logs::InspectorSummary;
using logs::LogEvent;

constexpr char kSummaryKind[] = "nccl_inspector.summary";
// Stragglers with a finding of their own, the worst first; the others share one more.
constexpr size_t kStragglerFindings = 6;
constexpr size_t kListed = 12;  // names listed in one line; the rest are counted

bool Known(double v) { return !std::isnan(v); }

std::string Plural(size_t n, const char* noun) {
  return absl::StrCat(n, " ", noun, n == 1 ? "" : "s");
}

// "485 GB/s", "18.5 GB/s", "0.556 GB/s".
std::string Bandwidth(double gbs) {
  if (!Known(gbs)) return "unknown";
  if (gbs >= 100) return absl::StrFormat("%.0f GB/s", gbs);
  if (gbs >= 10) return absl::StrFormat("%.1f GB/s", gbs);
  return absl::StrFormat("%.3g GB/s", gbs);
}

// "62.0 ms", "110 us", "1.25 s".
std::string Duration(double us) {
  if (!Known(us)) return "unknown";
  if (us >= 1e6) return absl::StrFormat("%.2f s", us / 1e6);
  if (us >= 1e3) return absl::StrFormat("%.1f ms", us / 1e3);
  if (us >= 10) return absl::StrFormat("%.0f us", us);
  return absl::StrFormat("%.3g us", us);
}

// The first kListed of `v`, then "and N more".
std::string Head(const std::vector<std::string>& v, absl::string_view separator) {
  if (v.size() <= kListed) return absl::StrJoin(v, separator);
  return absl::StrCat(absl::StrJoin(v.begin(), v.begin() + kListed, separator), " and ",
                      v.size() - kListed, " more");
}

std::string Percent(double share) { return absl::StrFormat("%.0f%%", share * 100); }

// "0x7f8c496ae9f661", or a name in quotes ("DP Group 0" from the textfile).
std::string CommLabel(const std::string& comm) {
  if (comm.empty()) return "(unnamed)";
  return comm.rfind("0x", 0) == 0 ? comm : absl::StrCat("\"", comm, "\"");
}

// "rank 3 on host-b", "GPU0 on nvl72004-T01", "rank 3 (GPU1) on host-b".
std::string MemberLabel(const std::string& host, int rank, const std::string& gpu) {
  std::string m = rank >= 0 ? absl::StrCat("rank ", rank) : gpu.empty() ? "a member" : gpu;
  if (rank >= 0 && !gpu.empty()) absl::StrAppend(&m, " (", gpu, ")");
  if (!host.empty()) absl::StrAppend(&m, " on ", host);
  return m;
}

std::string CommKey(const InspectorRecord& r) {
  return r.comm_id.empty() ? r.comm_name : r.comm_id;
}

bool SameMember(const InspectorRecord& r, const InspectorSummary& s) {
  return CommKey(r) == s.comm && r.host == s.host && r.rank == s.rank && r.gpu == s.gpu &&
         r.op == s.op && r.p2p == s.p2p;
}

// Keys of a summary's (or straggler's) communicator and operation, and of its member there.
template <typename T>
std::string OperationKey(const T& s) {
  return absl::StrCat(s.comm, "\n", s.op, "\n", s.p2p);
}
template <typename T>
std::string MemberKey(const T& s) {
  return absl::StrCat(OperationKey(s), "\n", s.host, "\n", s.rank, "\n", s.gpu);
}

void SetNumber(LogEvent& e, std::string_view key, double v) {
  if (Known(v)) e.Set(key, absl::StrCat(v));
}

LogEvent SummaryEvent(const InspectorSummary& s, const InspectorRecord& first,
                      const std::string& source) {
  LogEvent e;
  e.kind = kSummaryKind;
  e.source = source;
  e.line = first.line;
  e.time_unix_nano = first.dump_time_unix_nano;
  e.Set("comm", s.comm);
  if (!first.comm_id.empty() && !first.comm_name.empty()) e.Set("comm_name", first.comm_name);
  if (!s.host.empty()) e.Set("host", s.host);
  if (s.rank >= 0) e.Set("rank", absl::StrCat(s.rank));
  if (!s.gpu.empty()) e.Set("gpu", s.gpu);
  if (first.pid > 0) e.Set("pid", absl::StrCat(first.pid));
  if (first.n_ranks > 0) e.Set("nranks", absl::StrCat(first.n_ranks));
  if (first.n_nodes > 0) e.Set("nnodes", absl::StrCat(first.n_nodes));
  e.Set("op", s.op);
  e.Set("p2p", s.p2p ? "true" : "false");
  e.Set("count", absl::StrCat(s.count));
  SetNumber(e, "avg_busbw_gbps", s.mean_busbw_gbs);
  SetNumber(e, "min_busbw_gbps", s.min_busbw_gbs);
  SetNumber(e, "max_busbw_gbps", s.max_busbw_gbs);
  SetNumber(e, "avg_exec_us", s.mean_exec_us);
  if (s.first_seq >= 0) {
    e.Set("first_seq", absl::StrCat(s.first_seq));
    e.Set("last_seq", absl::StrCat(s.last_seq));
  }
  e.Set("format", first.format);
  if (!first.version.empty()) e.Set("version", first.version);
  e.raw = absl::StrCat("NCCL Inspector ", s.op, " of communicator ", CommLabel(s.comm), " by ",
                       MemberLabel(s.host, s.rank, s.gpu), ": ", Plural(s.count, "record"),
                       ", mean bus bandwidth ", Bandwidth(s.mean_busbw_gbs), ", mean exec time ",
                       Duration(s.mean_exec_us));
  return e;
}

double Number(const LogEvent& e, std::string_view key) {
  double v;
  const std::string* s = e.Get(key);
  return s != nullptr && absl::SimpleAtod(*s, &v) ? v : std::nan("");
}

int64_t Integer(const LogEvent& e, std::string_view key, int64_t fallback) {
  int64_t v;
  const std::string* s = e.Get(key);
  return s != nullptr && absl::SimpleAtoi(*s, &v) ? v : fallback;
}

InspectorSummary FromEvent(const LogEvent& e) {
  InspectorSummary s;
  s.comm = e.Value("comm");
  s.host = e.Value("host");
  s.rank = static_cast<int>(Integer(e, "rank", -1));
  s.gpu = e.Value("gpu");
  s.op = e.Value("op");
  s.p2p = e.Value("p2p") == "true";
  s.count = static_cast<size_t>(Integer(e, "count", 0));
  s.mean_busbw_gbs = Number(e, "avg_busbw_gbps");
  s.min_busbw_gbs = Number(e, "min_busbw_gbps");
  s.max_busbw_gbs = Number(e, "max_busbw_gbps");
  s.mean_exec_us = Number(e, "avg_exec_us");
  s.first_seq = Integer(e, "first_seq", -1);
  s.last_seq = Integer(e, "last_seq", -1);
  return s;
}

// Whether the straggler was found on bus bandwidth (else on exec time alone).
bool SlowOnBandwidth(const InspectorStraggler& st) {
  return Known(st.busbw_gbs) && Known(st.peers_median_busbw_gbs) &&
         st.busbw_gbs < kInspectorStragglerRatio * st.peers_median_busbw_gbs;
}

// "242 GB/s, 50% of its 3 peers' median 485 GB/s", or in exec time.
std::string Shortfall(const InspectorStraggler& st, size_t peers) {
  const std::string whose = absl::StrCat("its ", Plural(peers, "peer"), "' median ");
  if (st.late) {
    return absl::StrCat(Duration(st.exec_us), " per operation, ", Percent(st.share), " of ", whose,
                        Duration(st.peers_median_exec_us), ": they wait for it");
  }
  if (SlowOnBandwidth(st)) {
    return absl::StrCat(Bandwidth(st.busbw_gbs), ", ", Percent(st.share), " of ", whose,
                        Bandwidth(st.peers_median_busbw_gbs));
  }
  return absl::StrCat(Duration(st.exec_us), " per operation, ",
                      Percent(st.exec_us / st.peers_median_exec_us), " of ", whose,
                      Duration(st.peers_median_exec_us));
}

constexpr char kStragglerMeaning[] =
    "A collective completes only when every member has done its part, so the whole "
    "communicator runs at the pace of its slowest member, and a member that falls further "
    "behind ends the job in its NCCL (or PyTorch watchdog) timeout. Inspector times each "
    "member's own share of the same operations: one far slower than its peers points at its "
    "GPU (clocks throttled by power or heat, XID errors, a degraded NVLink), its NIC or rail "
    "(link errors, a port that trained at a lower speed, congestion on its rail), or its host "
    "(CPU or PCIe contention). Look at them before the job hits its timeout. If that host is "
    "clean, the member may instead start its operations before the others and wait for them: "
    "then the others are late (compute or input), not this member's fabric.";

constexpr char kLateMeaning[] =
    "A collective ends for all its members together, once the last one has joined, and "
    "Inspector times each member from its own kernel's start: the member that launches last "
    "waits least, so its collectives look fastest while every peer waits for it. It is late "
    "from before the collective: its GPU computes slower (clocks throttled by power or heat, "
    "XID errors), its input pipeline or CPU is slow, or it does work the others do not. The "
    "whole communicator runs at its pace; a member that stops altogether hangs the job until "
    "its NCCL (or PyTorch watchdog) timeout. Its fabric is not the suspect.";

TriageFinding StragglerFinding(const InspectorStraggler& st, const LogEvent& e,
                               const InspectorSummary& s, size_t peers) {
  TriageFinding f;
  f.level = TriageFinding::Level::kWarning;
  f.kind = kSummaryKind;
  f.count = 1;
  f.first_seen = absl::StrCat(e.source, ":", e.line);
  f.first_time_unix_nano = e.time_unix_nano;
  f.hosts = {TriageHostLabel(e)};
  f.title =
      absl::StrCat("NCCL Inspector: ", MemberLabel(st.host, st.rank, st.gpu),
                   st.late ? " launches late in " : " is a straggler in ", st.op,
                   " of communicator ", CommLabel(st.comm), ": ", Shortfall(st, peers));
  std::string comm = CommLabel(st.comm);
  if (!e.Value("comm_name").empty()) absl::StrAppend(&comm, " (", e.Value("comm_name"), ")");
  if (!e.Value("nranks").empty()) absl::StrAppend(&comm, ", ", e.Value("nranks"), " ranks");
  if (!e.Value("nnodes").empty()) absl::StrAppend(&comm, " on ", e.Value("nnodes"), " nodes");
  f.details.emplace_back("communicator", comm);
  f.details.emplace_back("operation", st.p2p ? st.op + " (point-to-point)" : st.op);
  std::vector<std::string> member;
  if (!st.host.empty()) member.push_back("host " + st.host);
  if (st.rank >= 0) member.push_back(absl::StrCat("rank ", st.rank));
  if (!st.gpu.empty()) member.push_back("GPU " + st.gpu);
  if (!e.Value("pid").empty()) member.push_back("pid " + e.Value("pid"));
  f.details.emplace_back("member", absl::StrJoin(member, ", "));
  if (Known(st.busbw_gbs)) {
    f.details.emplace_back(
        "bus bandwidth", absl::StrCat("mean ", Bandwidth(st.busbw_gbs),
                                      s.min_busbw_gbs < s.max_busbw_gbs
                                          ? absl::StrCat(" (min ", Bandwidth(s.min_busbw_gbs),
                                                         ", max ", Bandwidth(s.max_busbw_gbs), ")")
                                          : "",
                                      "; peers' median ", Bandwidth(st.peers_median_busbw_gbs)));
  }
  if (Known(st.exec_us)) {
    f.details.emplace_back("exec time",
                           absl::StrCat("mean ", Duration(st.exec_us), "; peers' median ",
                                        Duration(st.peers_median_exec_us)));
  }
  std::string records = absl::StrCat(s.count);
  if (s.first_seq >= 0) {
    absl::StrAppend(&records, ", sequence numbers ", s.first_seq, " to ", s.last_seq);
  }
  f.details.emplace_back("records",
                         absl::StrCat(records, "; compared with ", Plural(peers, "peer")));
  f.details.emplace_back(
      "rule", st.late ? absl::StrCat("mean exec time below ", Percent(kInspectorStragglerRatio),
                                     " of every peer's (a collective: they wait for it)")
                      : absl::StrCat("mean bus bandwidth below ",
                                     Percent(kInspectorStragglerRatio),
                                     " of the peers' median, or mean exec time above ",
                                     Percent(1 / kInspectorStragglerRatio), " of theirs"));
  f.meaning = st.late ? kLateMeaning : kStragglerMeaning;
  const std::string host = st.host.empty() ? "<host>" : st.host;
  f.next = {
      absl::StrCat("ssh ", host, " nvidia-smi -q -d PERFORMANCE,CLOCK   # throttled (power, ",
                   "thermal, HW slowdown)? clocks below its peers'?"),
      absl::StrCat("ssh ", host, " dmesg -T | grep -iE 'xid|nvlink|mlx5'   # GPU, NVLink and ",
                   "NIC errors"),
      absl::StrCat("ssh ", host, " rdma statistic show link   # retries, timeouts, out_of_buffer ",
                   "on its NICs: compare with a peer's host"),
      absl::StrCat("railwatch diagnoses --host=", host, " --state=all   # what railwatchd saw ",
                   "there: link flaps, degraded links, PFC storms, straggler rails")};
  return f;
}

// One line of what was read: communicators, operations, members, records and the mean bus
// bandwidth per operation.
std::string ContextLine(const std::vector<InspectorSummary>& sums,
                        const std::map<std::string, size_t>& members_of, size_t stragglers) {
  std::vector<std::string> comms, ops;  // in the order first seen
  std::set<std::string> seen, members;
  size_t records = 0;
  for (const InspectorSummary& s : sums) {
    if (seen.insert("c" + s.comm).second) comms.push_back(CommLabel(s.comm));
    if (seen.insert("o" + s.op).second) ops.push_back(s.op);
    members.insert(absl::StrCat(s.comm, "\n", s.host, "\n", s.rank, "\n", s.gpu));
    records += s.count;
  }
  const bool comparable = std::any_of(members_of.begin(), members_of.end(),
                                      [](const auto& kv) { return kv.second >= 3; });
  std::vector<std::string> per_op;
  for (const std::string& op : ops) {
    double sum = 0;
    size_t n = 0;
    for (const InspectorSummary& s : sums) {
      if (s.op != op || !Known(s.mean_busbw_gbs)) continue;
      sum += s.mean_busbw_gbs * static_cast<double>(s.count);
      n += s.count;
    }
    per_op.push_back(absl::StrCat(
        op, " ", n > 0 ? Bandwidth(sum / static_cast<double>(n)) : "(no bus bandwidth)"));
  }
  return absl::StrCat(
      "NCCL Inspector: ", Plural(records, "record"), " of ", Plural(members.size(), "member"),
      " (host, rank, GPU) in ", Plural(comms.size(), "communicator"), " (", Head(comms, ", "),
      "), ", Plural(ops.size(), "operation"), "; mean bus bandwidth ", Head(per_op, ", "), "; ",
      stragglers > 0 ? Plural(stragglers, "straggler")
      : !comparable
          ? "too few members to compare (a straggler is found among at least 3 members of one "
            "communicator and operation: give every rank's file)"
          : absl::StrCat("no straggler (none below ", Percent(kInspectorStragglerRatio),
                         " of its peers' median bus bandwidth)"));
}

std::vector<LogEvent> SummaryEvents(const std::vector<InspectorRecord>& records,
                                    const std::vector<InspectorSource>& sources,
                                    std::vector<size_t>* from_source) {
  std::vector<LogEvent> out;
  const std::vector<InspectorSummary> sums = logs::SummariseInspector(records);
  // Summaries come in the order their member first appears, so one pass over the records finds
  // each one's first record (and, walking `sources` beside it, its input).
  size_t next = 0, input = 0, input_end = sources.empty() ? 0 : sources[0].records;
  for (size_t i = 0; i < records.size() && next < sums.size(); ++i) {
    while (i >= input_end && input + 1 < sources.size()) input_end += sources[++input].records;
    if (!SameMember(records[i], sums[next])) continue;
    out.push_back(
        SummaryEvent(sums[next], records[i], input < sources.size() ? sources[input].source : "-"));
    if (from_source != nullptr) from_source->push_back(input);
    ++next;
  }
  return out;
}

void Analyze(const std::vector<LogEvent>& events, std::vector<TriageFinding>& findings,
             std::vector<std::string>& context) {
  std::vector<const LogEvent*> by_summary;
  std::vector<InspectorSummary> sums;
  for (const LogEvent& e : events) {
    if (e.kind != kSummaryKind) continue;
    by_summary.push_back(&e);
    sums.push_back(FromEvent(e));
  }
  if (sums.empty()) return;
  std::vector<InspectorStraggler> stragglers =
      logs::FindInspectorStragglers(sums, kInspectorStragglerRatio);
  // The worst first (an unknown share last).
  std::stable_sort(stragglers.begin(), stragglers.end(),
                   [](const InspectorStraggler& a, const InspectorStraggler& b) {
                     return Known(a.share) && (!Known(b.share) || a.share < b.share);
                   });
  std::map<std::string, size_t> members_of, index_of;  // by OperationKey, by MemberKey
  for (size_t i = 0; i < sums.size(); ++i) {
    ++members_of[OperationKey(sums[i])];
    index_of.emplace(MemberKey(sums[i]), i);
  }
  std::vector<std::string> others;
  TriageFinding rest;  // the stragglers after the first kStragglerFindings
  for (size_t n = 0; n < stragglers.size(); ++n) {
    const InspectorStraggler& st = stragglers[n];
    const size_t index = index_of[MemberKey(st)];
    const size_t peers = members_of[OperationKey(st)] - 1;  // a straggler has at least 2
    const LogEvent& e = *by_summary[index];
    if (n < kStragglerFindings) {
      findings.push_back(StragglerFinding(st, e, sums[index], peers));
      continue;
    }
    if (others.empty()) rest.first_seen = absl::StrCat(e.source, ":", e.line);
    const std::string host = TriageHostLabel(e);
    if (std::find(rest.hosts.begin(), rest.hosts.end(), host) == rest.hosts.end()) {
      rest.hosts.push_back(host);
    }
    others.push_back(absl::StrCat(MemberLabel(st.host, st.rank, st.gpu), " in ", st.op, " of ",
                                  CommLabel(st.comm), ": ", Shortfall(st, peers)));
  }
  if (!others.empty()) {
    rest.level = TriageFinding::Level::kWarning;
    rest.kind = kSummaryKind;
    rest.count = static_cast<int>(others.size());
    rest.title = absl::StrCat("NCCL Inspector: ", Plural(others.size(), "more straggler"),
                              ", less far behind than those above");
    rest.details.emplace_back("stragglers", Head(others, "; "));
    rest.meaning = kStragglerMeaning;
    findings.push_back(std::move(rest));
  }
  context.push_back(ContextLine(sums, members_of, stragglers.size()));
}

}  // namespace triage_inspector

std::vector<logs::LogEvent> InspectorSummaryEvents(
    const std::vector<logs::InspectorRecord>& records, const std::vector<InspectorSource>& sources,
    std::vector<size_t>* from_source) {
  return triage_inspector::SummaryEvents(records, sources, from_source);
}

void AnalyzeInspector(const std::vector<logs::LogEvent>& events,
                      std::vector<TriageFinding>& findings, std::vector<std::string>& context) {
  triage_inspector::Analyze(events, findings, context);
}

}  // namespace railwatch
