#include "triage/findings.h"

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "triage/ib.h"
#include "triage/inspector.h"
#include "triage/kernel.h"
#include "triage/optics.h"
#include "triage/log_detail.h"
#include "triage/playbook_replay.h"
#include "triage/rdma.h"

namespace railwatch {
namespace {

using logs::LogEvent;
using Level = TriageFinding::Level;

int64_t N(const LogEvent& e, std::string_view key, int64_t fallback = -1) {
  int64_t v;
  return absl::SimpleAtoi(e.Value(key), &v) ? v : fallback;
}

// An ordered set of strings, printed as "a, b, c and 4 more".
class NameList {
 public:
  void Add(const std::string& s) {
    if (!s.empty() && std::find(v_.begin(), v_.end(), s) == v_.end()) v_.push_back(s);
  }
  std::string Join(size_t max = 6) const {
    if (v_.size() <= max) return absl::StrJoin(v_, ", ");
    std::vector<std::string> head(v_.begin(), v_.begin() + max);
    return absl::StrCat(absl::StrJoin(head, ", "), " and ", v_.size() - max, " more");
  }
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const std::vector<std::string>& items() const { return v_; }

 private:
  std::vector<std::string> v_;
};

// What the rest of the log says about a process: its ranks and the NICs NCCL chose.
struct ProcessFacts {
  NameList ranks;  // "3/16"
  NameList nics;   // "mlx5_0,mlx5_1"
};

class Analyzer {
 public:
  Analyzer(const std::vector<LogEvent>& events, const std::vector<TriageDiagnosis>& diagnoses)
      : events_(events), diagnoses_(diagnoses) {}
  TriageReport Run();

 private:
  static std::string ProcKey(const LogEvent& e) { return e.Value("host") + ":" + e.Value("pid"); }
  std::string Where(const LogEvent& e) const;
  TriageFinding& Group(const std::string& key, Level level, const LogEvent& e);
  std::string ChainFor(const LogEvent& e) const;

  void IbCompletion();
  void CallFailed();
  void SimpleNccl(absl::string_view kind, Level level, absl::string_view title,
                  absl::string_view meaning, std::vector<std::string> next);
  void Watchdog();
  void PytorchErrors();
  void Ras();
  void NcclTests();
  void OtherWarnings();
  void Context(TriageReport& r) const;
  void AttachDiagnoses(std::vector<TriageFinding>& findings) const;

  const std::vector<LogEvent>& events_;
  const std::vector<TriageDiagnosis>& diagnoses_;
  std::map<std::string, ProcessFacts> procs_;
  std::vector<TriageFinding> findings_;
  std::map<std::string, size_t> groups_;
  std::map<std::string, std::string> chains_;    // "file:line" of the first error -> chain
  std::map<std::string, std::string> progress_;  // PyTorch SeqNum -> last completed/enqueued
};

std::string Analyzer::Where(const LogEvent& e) const {
  std::string w = e.Value("host").empty() ? "(no host in the line)" : e.Value("host");
  if (!e.Value("pid").empty()) absl::StrAppend(&w, " pid ", e.Value("pid"));
  if (!e.Value("cuda_dev").empty()) absl::StrAppend(&w, " cudaDev ", e.Value("cuda_dev"));
  auto it = procs_.find(ProcKey(e));
  if (it != procs_.end() && !it->second.ranks.empty()) {
    absl::StrAppend(&w, " (rank ", it->second.ranks.Join(4), ")");
  } else if (!e.Value("mpi_rank").empty()) {
    absl::StrAppend(&w, " (MPI rank ", e.Value("mpi_rank"), ")");
  } else if (!e.Value("global_rank").empty()) {
    absl::StrAppend(&w, " (rank ", e.Value("global_rank"), ")");
  }
  return w;
}

TriageFinding& Analyzer::Group(const std::string& key, Level level, const LogEvent& e) {
  auto [it, inserted] = groups_.try_emplace(key, findings_.size());
  if (inserted) {
    TriageFinding f;
    f.level = level;
    f.kind = e.kind;
    f.first_seen = absl::StrCat(e.source, ":", e.line);
    f.first_time_unix_nano = e.time_unix_nano;
    findings_.push_back(std::move(f));
  }
  TriageFinding& f = findings_[it->second];
  ++f.count;
  std::string host = TriageHostLabel(e);
  if (std::find(f.hosts.begin(), f.hosts.end(), host) == f.hosts.end()) {
    f.hosts.push_back(std::move(host));
  }
  return f;
}

// The return-code chain that followed `e` ("ncclRemoteError (6) via a -> b [Thread]").
std::string Analyzer::ChainFor(const LogEvent& e) const {
  auto it = chains_.find(absl::StrCat(e.source, ":", e.line));
  return it == chains_.end() ? "" : it->second;
}

void Analyzer::IbCompletion() {
  struct Extra {
    NameList where, peers, gids, remote_gids, dirs, devs, results;
    std::map<std::string, NameList> ports;  // by peer address
    NameList hosts;
    std::string peer;
  };
  std::map<size_t, Extra> extra;
  for (const LogEvent& e : events_) {
    if (e.kind != "nccl.ib_completion_error") continue;
    int64_t status = N(e, "status");
    int64_t vendor = N(e, "vendor_err");
    TriageFinding& f = Group(absl::StrCat("ib:", status, ":", vendor), Level::kFailure, e);
    Extra& x = extra[groups_[absl::StrCat("ib:", status, ":", vendor)]];
    x.where.Add(Where(e));
    if (!e.Value("peer_address").empty()) {
      x.peers.Add(e.Value("peer_address"));
      x.ports[e.Value("peer_address")].Add(e.Value("peer_port"));
      if (x.peer.empty()) x.peer = e.Value("peer_address");
    }
    x.hosts.Add(e.Value("host"));
    x.gids.Add(e.Value("local_gid"));
    x.remote_gids.Add(e.Value("remote_gids"));
    x.dirs.Add(e.Value("direction"));
    x.devs.Add(e.Value("dev"));
    x.results.Add(ChainFor(e));
    std::string name = e.Value("status_name").empty() ? "unknown status" : e.Value("status_name");
    f.title = absl::StrCat("IB completion error ", name, " (status ", status, ")",
                           vendor >= 0 ? absl::StrCat(", vendor err ", e.Value("vendor_err_hex")) : "",
                           f.count > 1 ? absl::StrCat(", ", f.count, " times") : "");
    f.meaning = triage::IbStatusMeaning(status, vendor);
    std::string candidates;
    auto it = procs_.find(ProcKey(e));
    if (it != procs_.end()) candidates = it->second.nics.Join();
    std::string dev = x.devs.empty() ? "" : x.devs.items()[0];
    if (dev.empty() && it != procs_.end() && it->second.nics.size() == 1 &&
        !absl::StrContains(candidates, ",")) {
      dev = candidates;
    }
    f.next = triage::IbStatusNext(status, x.hosts.Join(3), dev, x.gids.items(), candidates, x.peer);
    f.details.clear();
    f.details.emplace_back("where", x.where.Join(4));
    if (!x.dirs.empty()) f.details.emplace_back("direction", x.dirs.Join());
    if (!x.peers.empty()) {
      NameList peers;
      for (const std::string& p : x.peers.items()) {
        const NameList& ports = x.ports[p];
        peers.Add(absl::StrCat(p, " (port", ports.size() > 1 ? "s " : " ", ports.Join(), ")"));
      }
      f.details.emplace_back("peers", peers.Join());
    }
    if (!x.devs.empty()) f.details.emplace_back("hca", x.devs.Join());
    if (!x.gids.empty()) {
      f.details.emplace_back(
          "local GIDs",
          absl::StrCat(x.gids.Join(), x.gids.size() > 1 ? absl::StrCat(" (", x.gids.size(),
                                                                       " local ports: more than "
                                                                       "one rail is hit)")
                                                        : ""));
    }
    if (!x.remote_gids.empty()) f.details.emplace_back("remote GIDs", x.remote_gids.Join());
    if (!candidates.empty()) f.details.emplace_back("NCCL NICs", candidates);
    if (!x.results.empty()) f.details.emplace_back("result", x.results.Join(2));
  }
}

void Analyzer::CallFailed() {
  for (const LogEvent& e : events_) {
    if (e.kind != "nccl.call_failed") continue;
    std::string call = e.Value("call");
    TriageFinding& f = Group(absl::StrCat("call:", call, ":", e.Value("error")), Level::kFailure, e);
    f.title =
        absl::StrCat("Verbs call ", call, " failed",
                     e.Value("error").empty() ? "" : absl::StrCat(": ", e.Value("error")),
                     e.Value("errno_name").empty() ? "" : absl::StrCat(" (", e.Value("errno_name"), ")"),
                     f.count > 1 ? absl::StrCat(", ", f.count, " times") : "");
    if (f.count == 1) {
      f.details.emplace_back("where", Where(e));
      if (!e.Value("dev").empty()) {
        f.details.emplace_back("device", absl::StrCat(e.Value("dev"), ":", e.Value("port")));
      }
      if (!e.Value("curr_state").empty()) {
        f.details.emplace_back(
            "QP", absl::StrCat(e.Value("curr_state"), " -> ", e.Value("next_state"), ", local GID index ",
                               e.Value("local_gid_index"), ", local GID ", e.Value("local_gid"),
                               ", remote GID ", e.Value("remote_gid")));
      }
      std::string chain = ChainFor(e);
      if (!chain.empty()) f.details.emplace_back("result", chain);
    }
    f.meaning =
        triage::CallFailedMeaning(call, e.Value("errno_name"), e.Value("curr_state"), e.Value("next_state"));
    // Without a device in the message, the process's only NCCL NIC is the one.
    std::string dev = e.Value("dev");
    auto proc = procs_.find(ProcKey(e));
    if (dev.empty() && proc != procs_.end() && proc->second.nics.size() == 1 &&
        proc->second.nics.items()[0].find(',') == std::string::npos) {
      dev = proc->second.nics.items()[0];
    }
    f.next = triage::CallFailedNext(call, e.Value("errno_name"), dev, e.Value("port"));
  }
}

// One finding per kind: where it happened, with the peers it names.
void Analyzer::SimpleNccl(absl::string_view kind, Level level, absl::string_view title,
                          absl::string_view meaning, std::vector<std::string> next) {
  NameList where, peers, errors;
  for (const LogEvent& e : events_) {
    if (absl::string_view(e.kind) != kind) continue;
    std::string key = absl::StrCat(kind, ":", kind == "nccl.ib_async_event" ? e.Value("event") : "");
    TriageFinding& f = Group(key, level, e);
    where.Add(Where(e));
    if (!e.Value("peer_address").empty()) {
      peers.Add(e.Value("peer_address") + " port " + e.Value("peer_port"));
    }
    errors.Add(e.Value("error").empty() ? e.Value("event") : e.Value("error"));
    f.title = absl::StrCat(title, errors.empty() ? "" : absl::StrCat(": ", errors.Join(3)),
                           f.count > 1 ? absl::StrCat(", ", f.count, " times") : "");
    f.details = {{"where", where.Join(4)}};
    if (!peers.empty()) f.details.emplace_back("peers", peers.Join());
    if (!e.Value("dev").empty()) f.details.emplace_back("device", e.Value("dev") + ":" + e.Value("port"));
    f.meaning =
        kind == "nccl.ib_async_event" ? triage::AsyncEventMeaning(e.Value("event")) : std::string(meaning);
    f.next = next;
  }
}

void Analyzer::Watchdog() {
  struct Extra {
    NameList ranks, pg_ranks;
    int64_t max_elapsed = 0;
  };
  std::map<size_t, Extra> extra;
  for (const LogEvent& e : events_) {
    if (e.kind != "pytorch.watchdog_timeout") continue;
    std::string key =
        absl::StrCat("wd:", e.Value("pg_id"), ":", e.Value("seq_num"), ":", e.Value("op_type"));
    TriageFinding& f = Group(key, Level::kFailure, e);
    Extra& x = extra[groups_[key]];
    x.ranks.Add(e.Value("global_rank"));
    x.pg_ranks.Add(e.Value("pg_rank"));
    x.max_elapsed = std::max(x.max_elapsed, N(e, "elapsed_ms", 0));
    f.title =
        absl::StrCat("PyTorch watchdog timeout: ", e.Value("op_type"), " SeqNum ", e.Value("seq_num"),
                     e.Value("pg_id").empty() ? "" : absl::StrCat(" (PG ", e.Value("pg_id"), ")"),
                     " did not finish within ", e.Value("timeout_ms"), " ms, reported by ", f.count,
                     f.count > 1 ? " ranks" : " rank");
    f.details.clear();
    if (!x.ranks.empty()) f.details.emplace_back("global ranks", x.ranks.Join(16));
    if (!x.pg_ranks.empty()) f.details.emplace_back("PG ranks", x.pg_ranks.Join(16));
    f.details.emplace_back("waited", absl::StrCat("up to ", x.max_elapsed, " ms"));
    if (!e.Value("numel_in").empty()) {
      f.details.emplace_back(
          "size", absl::StrCat("NumelIn ", e.Value("numel_in"), ", NumelOut ", e.Value("numel_out")));
    }
    auto progress = progress_.find(e.Value("seq_num"));
    if (progress != progress_.end()) f.details.emplace_back("progress", progress->second);
    f.meaning = std::string(triage::kWatchdogMeaning);
    f.next = {"py-spy dump --pid <pid>   # on a rank that did not report: where is it stuck?",
              "rerun with TORCH_NCCL_TRACE_BUFFER_SIZE=2000 NCCL_DEBUG=INFO "
              "NCCL_DEBUG_SUBSYS=INIT,NET   # flight recorder and NCCL's view"};
  }
}

void Analyzer::PytorchErrors() {
  for (const LogEvent& e : events_) {
    if (e.kind == "pytorch.process_group_error") {
      // A watchdog timeout that terminated the process is told by the timeout finding.
      if (absl::StrContains(e.Value("message"), "Watchdog caught")) continue;
      TriageFinding& f = Group("pg:" + e.Value("exception_type"), Level::kFailure, e);
      f.title = absl::StrCat("PyTorch process group error ", e.Value("exception_type"));
      f.details = {{"message", e.Value("message").substr(0, 300)}};
      if (!e.Value("raised_at").empty()) f.details.emplace_back("raised at", e.Value("raised_at"));
    } else if (e.kind == "pytorch.nccl_error") {
      TriageFinding& f = Group("ncclerr:" + e.Value("error"), Level::kFailure, e);
      f.title =
          absl::StrCat("PyTorch NCCL error: ", e.Value("error"),
                       e.Value("nccl_version").empty() ? "" : " (NCCL " + e.Value("nccl_version") + ")",
                       f.count > 1 ? absl::StrCat(", ", f.count, " times") : "");
      f.details = {{"where", Where(e)}, {"raised at", e.Value("nccl_location")}};
      f.meaning = absl::StrContains(e.Value("error"), "remote process exited")
                    ? "A peer died or the network failed; the NCCL warning PyTorch quotes after "
                      "'Last error:' (its own finding) says which."
                    : "NCCL returned an error to PyTorch; run with NCCL_DEBUG=INFO to see the "
                      "NCCL warning behind it.";
    }
  }
}

// "640:30,641:2" -> {{640, 30}, {641, 2}}, most ranks first.
std::vector<std::pair<int64_t, int64_t>> OpCounts(const std::string& text) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, ':');
    int64_t op, ranks;
    if (absl::SimpleAtoi(kv.first, &op) && absl::SimpleAtoi(kv.second, &ranks)) {
      out.emplace_back(op, ranks);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

void Analyzer::Ras() {
  std::string job;
  for (const LogEvent& e : events_) {
    if (e.kind == "nccl_ras.report") {
      // A report pasted from its middle, or in JSON, has no job summary: say what there is.
      job = absl::StrCat("NCCL ", e.Value("nccl_version").empty() ? "?" : e.Value("nccl_version"));
      for (const char* what : {"nodes", "processes", "gpus", "comms"}) {
        if (e.Value(what).empty()) continue;
        absl::StrAppend(&job, ", ", e.Value(what), " ",
                        std::string_view(what) == "gpus" ? "GPUs"
                        : std::string_view(what) == "comms" ? "communicators" : what);
      }
      // Its communicator blocks (next events) tell the story; a report without any still fails.
      if (e.Value("errors") == "OK" || N(e, "issues", 0) > 0) continue;
      TriageFinding& f = Group("ras:" + e.source + ":" + absl::StrCat(e.line), Level::kFailure, e);
      f.title = absl::StrCat("NCCL RAS: communicators ", e.Value("status"), " with ", e.Value("errors"));
      f.details = {{"job", job}};
      if (!e.Value("dead_nodes").empty()) f.details.emplace_back("dead", e.Value("dead_nodes"));
      if (!e.Value("missing_nodes").empty()) f.details.emplace_back("missing", e.Value("missing_nodes"));
      f.meaning =
          "Some job processes did not answer the RAS query: they crashed, hang hard, or "
          "their node lost its network.";
      f.next = {"ncclras   # again in a minute: same answer?"};
      continue;
    }
    if (e.kind != "nccl_ras.comm_issue") continue;
    TriageFinding& f = Group(
        absl::StrCat("rasc:", e.source, ":", e.line, ":", e.Value("comm_hash")), Level::kFailure, e);
    // The text report numbers communicators (#0-0); JSON names them by hash only.
    const std::string number = e.Value("group").empty()
                                   ? ""
                                   : absl::StrCat("#", e.Value("group"), "-", e.Value("comm"), " ");
    f.title = absl::StrCat(
        "NCCL RAS: communicator ", number, "(", e.Value("comm_hash"), ") ",
        e.Value("issue"), e.Value("op").empty() ? "" : ": " + e.Value("op") + " operation counts differ");
    if (!job.empty()) f.details.emplace_back("job", job);
    if (!e.Value("details").empty()) f.details.emplace_back("details", e.Value("details"));
    std::string outliers;
    if (!e.Value("ranks").empty()) {
      outliers = absl::StrCat("ranks ", e.Value("ranks"), " (GPUs ", e.Value("gpus"), ", pids ",
                              e.Value("pids"), ") on ", e.Value("nodes"));
      f.details.emplace_back("outliers", outliers);
    }
    auto counts = OpCounts(e.Value("op_counts"));
    if (counts.size() >= 2) {
      bool ahead = counts[1].first > counts[0].first;
      f.meaning = absl::StrCat(
          counts[0].second, " ranks have launched ", e.Value("op"), " up to operation ",
          counts[0].first, ", ", counts[1].second, " up to ", counts[1].first,
          ". A collective completes only when every rank has launched it, so the ranks behind "
          "hold the others. ",
          ahead ? "Here the outliers are ahead and waiting: find out why the other ranks stopped "
                  "launching (stuck in compute, in another collective, or hung)."
                : "Here the outliers are behind: find out where they are stuck.");
    } else {
      f.meaning =
          "Ranks of this communicator disagree (MISMATCH), failed (ERROR) or did not "
          "answer (INCOMPLETE).";
    }
    std::vector<std::string> pids = absl::StrSplit(e.Value("pids"), ',', absl::SkipEmpty());
    f.next = {absl::StrCat("py-spy dump --pid ", pids.empty() ? "<pid>" : pids[0], "   # on ",
                           e.Value("nodes").empty() ? "the outlier node" : e.Value("nodes"),
                           pids.size() > 1 ? " (and pids " + e.Value("pids") + ")" : "",
                           ": where are the outlier ranks?"),
              "ncclras   # again in a minute: do the operation counts move?"};
  }
}

void Analyzer::NcclTests() {
  for (const LogEvent& e : events_) {
    if (e.kind != "nccltests.summary") continue;
    bool wrong = N(e, "wrong_total", 0) > 0 || N(e, "out_of_bounds", 0) > 0;
    TriageFinding& f = Group("tests:" + e.source + ":" + absl::StrCat(e.line),
                             wrong ? Level::kFailure : Level::kInfo, e);
    std::string test = e.Value("test").empty() ? "nccl-tests" : e.Value("test");
    f.title = wrong
                  ? absl::StrCat(test, " found wrong results: ", e.Value("wrong_total"),
                                 " wrong elements, ", e.Value("out_of_bounds"), " out of bounds")
                  : absl::StrCat(test, ": average bus bandwidth ",
                                 e.Value("avg_busbw_gbps").empty() ? "(table cut)"
                                                                : e.Value("avg_busbw_gbps") + " GB/s",
                                 ", peak ", e.Value("max_busbw_gbps"), " GB/s at ",
                                 e.Value("max_busbw_size_bytes"), " B over ", e.Value("rows"), " sizes");
    if (wrong) {
      f.meaning =
          "Data arrived corrupted: a faulty GPU, NIC or PCIe path, or a driver/firmware "
          "bug. Rerun on subsets of nodes to isolate the host.";
    }
  }
}

void Analyzer::OtherWarnings() {
  for (const LogEvent& e : events_) {
    if (e.kind == "nccl.warn") {
      TriageFinding& f = Group("warn:" + e.Value("message").substr(0, 80), Level::kWarning, e);
      f.title = absl::StrCat("NCCL warning: ", e.Value("message").substr(0, 160),
                             f.count > 1 ? absl::StrCat(" (", f.count, " times)") : "");
      if (f.count == 1) f.details = {{"where", Where(e)}};
    } else if (e.kind == "nccl.error_chain" && e.Value("first_error_kind").empty()) {
      TriageFinding& f = Group("chain:" + e.Value("code") + e.Value("origin"), Level::kFailure, e);
      f.title = absl::StrCat("NCCL call failed with ", e.Value("code_name"), " (", e.Value("code"),
                             ") at ", e.Value("origin"));
      f.details = {{"where", Where(e)}, {"chain", e.Value("chain")}};
      f.meaning =
          "The warning that started it is not in this log (NCCL_DEBUG=WARN or higher "
          "prints it).";
    }
  }
}

void Analyzer::Context(TriageReport& r) const {
  NameList versions, nets, comms, hosts, env;
  for (const LogEvent& e : events_) {
    if (e.kind == "nccl.version") {
      versions.Add(e.Value("version") + (e.Value("cuda").empty() ? "" : "+cuda" + e.Value("cuda")));
    } else if (e.kind == "nccl.net") {
      nets.Add(absl::StrCat(e.Value("transport"), " ",
                            e.Value("devices").empty() ? e.Value("interfaces") : e.Value("devices")));
    } else if (e.kind == "nccl.comm_init") {
      comms.Add(absl::StrCat(e.Value("comm_id").empty() ? e.Value("comm") : e.Value("comm_id"), " (",
                             e.Value("nranks"), " ranks)"));
    } else if (e.kind == "nccl.env") {
      env.Add(e.Value("name") + "=" + e.Value("value"));
    }
    if (!e.Value("host").empty()) hosts.Add(e.Value("host"));
  }
  if (!versions.empty()) r.context.push_back("NCCL " + versions.Join());
  if (!nets.empty()) r.context.push_back("network: " + nets.Join(4));
  if (!comms.empty()) r.context.push_back("communicators: " + comms.Join(4));
  if (!hosts.empty()) r.context.push_back(absl::StrCat("hosts: ", hosts.Join(8)));
  if (!env.empty()) r.context.push_back("environment: " + env.Join(8));
}

TriageReport Analyzer::Run() {
  for (const LogEvent& e : events_) {
    if (e.kind == "nccl.comm_init" || e.kind == "nccl.comm_info") {
      procs_[ProcKey(e)].ranks.Add(e.Value("rank") + "/" + e.Value("nranks"));
    } else if (e.kind == "nccl.net" && !e.Value("device_names").empty()) {
      procs_[ProcKey(e)].nics.Add(e.Value("device_names"));
    } else if (e.kind == "nccl.error_chain" && !e.Value("first_error_line").empty()) {
      std::string chain = absl::StrCat(e.Value("code_name").empty() ? "code" : e.Value("code_name"), " (",
                                       e.Value("code"), ") via ", e.Value("chain"));
      if (!e.Value("thread").empty()) absl::StrAppend(&chain, " [", e.Value("thread"), "]");
      chains_.emplace(absl::StrCat(e.source, ":", e.Value("first_error_line")), chain);
    } else if (e.kind == "pytorch.watchdog_exception") {
      progress_.emplace(e.Value("seq_num"), absl::StrCat("last completed ", e.Value("last_completed"),
                                                      ", last enqueued ", e.Value("last_enqueued")));
    }
  }
  IbCompletion();
  CallFailed();
  SimpleNccl("nccl.ib_async_event", Level::kFailure, "IB async event", "",
             {"dmesg -T | grep -iE 'mlx5|link (is )?(up|down)'   # flaps and resets"});
  SimpleNccl("nccl.socket_error", Level::kFailure, "NCCL socket error", triage::kSocketMeaning,
             {"grep -n 'NCCL WARN' <the peer's log>   # the peer's own first error",
              "ping -c3 <peer>; ip -br addr   # reachability and the interface in use"});
  SimpleNccl("nccl.bootstrap_error", Level::kFailure, "NCCL bootstrap error",
             triage::kBootstrapMeaning,
             {"ip -br addr   # does NCCL_SOCKET_IFNAME exist and carry an address on every host?",
              "ping -c3 <peer>   # from this host to the root/peer"});
  Watchdog();
  PytorchErrors();
  Ras();
  SimpleNccl("nccl.no_device", Level::kWarning, "NCCL uses no RDMA device", triage::kNoDeviceMeaning,
             {"ls /dev/infiniband; env | grep -E 'NCCL_IB_(HCA|DISABLE)'   # in the job's "
              "container: devices passed in, NCCL told to use none?"});
  OtherWarnings();
  NcclTests();
  std::vector<std::string> tool_context;
  AnalyzeRdmaTool(events_, findings_, tool_context);
  AnalyzeIbTools(events_, findings_, tool_context);
  AnalyzeInspector(events_, findings_, tool_context);
  AnalyzeKernelMessages(events_, findings_, tool_context);
  AnalyzeOptics(events_, findings_, tool_context);

  TriageReport r;
  r.findings = std::move(findings_);
  std::stable_sort(
      r.findings.begin(), r.findings.end(),
      [](const TriageFinding& a, const TriageFinding& b) { return a.level < b.level; });
  Context(r);
  r.context.insert(r.context.end(), tool_context.begin(), tool_context.end());
  AttachDiagnoses(r.findings);
  r.diagnoses = diagnoses_;
  return r;
}

void Analyzer::AttachDiagnoses(std::vector<TriageFinding>& findings) const {
  for (TriageFinding& f : findings) {
    for (const TriageDiagnosis& d : diagnoses_) {
      const bool same_host = d.host.empty() || std::find(f.hosts.begin(), f.hosts.end(),
                                                         d.host) != f.hosts.end();
      if (same_host && d.Reads(f.kind)) f.diagnoses.push_back(d);
    }
  }
}

}  // namespace

std::string LevelName(TriageFinding::Level level) {
  switch (level) {
    case Level::kFailure:
      return "FAIL";
    case Level::kWarning:
      return "WARN";
    case Level::kInfo:
      return "INFO";
  }
  return "INFO";
}

bool TriageDiagnosis::Reads(absl::string_view kind) const {
  // A playbook's kinds are exact, or a prefix ending in '.' ("nccl.").
  return std::any_of(event_kinds.begin(), event_kinds.end(), [&](const std::string& k) {
    return k == kind || (absl::EndsWith(k, ".") && absl::StartsWith(kind, k));
  });
}

TriageReport AnalyzeEvents(const std::vector<LogEvent>& events,
                           const std::vector<TriageDiagnosis>& diagnoses) {
  return Analyzer(events, diagnoses).Run();
}

}  // namespace railwatch
