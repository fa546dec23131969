#pragma once

// The NCCL Inspector's records (the profiler plugin of NCCL 2.28+, NCCL_INSPECTOR_ENABLE=1) as
// per-rank counters: how many collectives each rank of each communicator on this host
// completed, how long they took and how many bus bytes they moved. docs/JOBS.md, "NCCL
// Inspector".
//
// Where: the plugin appends one JSON record per completed collective to a file per process
// under NCCL_INSPECTOR_DUMP_DIR; the collector follows the files its patterns name
// (`--nccl_inspector`, globs) with a LogTailer of its own, through rotation and truncation.
//
// What: per (comm, rank), fabric_nccl_collectives_total, _collective_microseconds_total and
// _collective_bus_bytes_total, labelled comm, rank and local_rank. Never per collective: the
// series are bounded by the job's shape, not by how many collectives it runs. Point-to-point
// records are left out (a pipeline's senders and receivers are not peers). The local rank is
// the rank's place among the communicator's ranks on this host in rank order (NCCL's own
// localRank), so the daemon can tell which NIC the rank's GPU uses (topology/fabric_map.h);
// it is fixed once all of the host's ranks have been seen (nranks / nnodes of them; at most
// `settle_cycles_known` cycles are waited for them), or after `settle_cycles` cycles when the
// records do not say. A rank that writes its first record after that takes the next place.
// The daemon prefers the GPU an NCCL log's Init line gives the rank (topology/fabric_map.h).
//
// Records of other hosts (a dump directory on shared storage) are skipped and counted: a
// record is this host's when its metadata.hostname's first label is `host`'s.
//
// A communicator with no record for `forget_after` goes idle: its series are no longer sent,
// and its totals are kept (at most `max_communicators`, the longest idle dropped first) so that
// its counters go on from where they were if it writes again. Lines that are not Inspector
// records are counted (railwatch_nccl_inspector_problems_total), the first of each file logged
// with file:line:column, and skipped.
//
// The Prometheus textfile of NCCL 2.30 (nccl_inspector_metrics_*.prom) already is an
// exposition: node_exporter's textfile collector serves it as it is; this collector does not
// read it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/log_tailer.h"
#include "common/clock.h"

namespace railwatch {

class NcclInspectorCollector final : public Collector {
 public:
  struct Options {
    LogTailer::Options tailer;
    size_t max_lines_per_collect = 200000;
    absl::Duration forget_after = absl::Minutes(10);
    size_t max_communicators = 4096;
    int settle_cycles = 3;
    int settle_cycles_known = 30;
    // This host's name (the agent's host label); empty: every record is this host's.
    std::string host;
  };

  NcclInspectorCollector(Options options, const Clock& clock);
  ~NcclInspectorCollector() override;

  std::string_view name() const override { return "nccl_inspector"; }
  absl::Status Collect(Emitter& emitter) override;

  // What one rank has done so far (tests).
  struct RankTotals {
    uint64_t collectives = 0;
    double microseconds = 0;
    double bus_bytes = 0;
    int local_rank = -1;  // -1 until the communicator's ranks on this host are known
  };
  // comm -> rank -> totals.
  std::map<std::string, std::map<int, RankTotals>> Totals() const;

 private:
  struct Rank {
    RankTotals totals;
    uint32_t collectives_id = 0, microseconds_id = 0, bus_bytes_id = 0;
    bool defined = false;
  };
  struct Comm {
    std::map<int, Rank> ranks;  // by rank
    int n_ranks = 0, n_nodes = 0;
    int cycles = 0;  // cycles since first seen
    bool settled = false;
    bool idle = false;  // no record for forget_after: not sent
    absl::Time last_record;
  };
  bool ThisHost(const std::string& record_host) const;

  void Settle(const std::string& id, Comm& comm, Emitter& emitter);

  Options options_;
  const Clock& clock_;
  LogTailer tailer_;
  bool started_ = false;
  std::vector<TailedLine> lines_;
  std::map<std::string, Comm> comms_;  // by communicator id
  // Streams whose first problem was logged already.
  std::map<uint64_t, bool> reported_;
  uint32_t records_id_ = 0, problems_id_ = 0, comms_id_ = 0, other_hosts_id_ = 0;
  uint64_t records_ = 0, problems_ = 0, other_hosts_ = 0;
  bool warned_other_hosts_ = false;
};

}  // namespace railwatch
