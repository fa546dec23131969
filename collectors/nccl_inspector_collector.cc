#include "collectors/nccl_inspector_collector.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "logs/nccl_inspector.h"
#include "spdlog/spdlog.h"

namespace railwatch {

NcclInspectorCollector::NcclInspectorCollector(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), tailer_(options_.tailer, clock) {}

NcclInspectorCollector::~NcclInspectorCollector() { tailer_.Stop(); }

absl::Status NcclInspectorCollector::Collect(Emitter& emitter) {
  if (!started_) {
    if (absl::Status s = tailer_.Start(); !s.ok()) return s;
    started_ = true;
    records_id_ =
        emitter.DefineSeries("railwatch_nccl_inspector_records_total", MetricKind::kCounter, {});
    problems_id_ =
        emitter.DefineSeries("railwatch_nccl_inspector_problems_total", MetricKind::kCounter, {});
    comms_id_ =
        emitter.DefineSeries("railwatch_nccl_inspector_communicators", MetricKind::kGauge, {});
    other_hosts_id_ = emitter.DefineSeries("railwatch_nccl_inspector_other_host_records_total",
                                           MetricKind::kCounter, {});
  }
  const absl::Time now = clock_.Now();
  lines_.clear();
  tailer_.Drain(lines_, options_.max_lines_per_collect);
  for (const TailedLine& line : lines_) {
    if (line.end_of_stream) {
      reported_.erase(line.stream);
      continue;
    }
    if (line.text.find_first_not_of(" \t\r") == std::string::npos) continue;
    logs::InspectorParse parse = logs::ParseInspectorOutput(line.text);
    if (!parse.problems.empty() || parse.records.empty()) {
      // A record the plugin had not finished writing is read whole later: the tailer hands out
      // complete lines only. What is left is not an Inspector record.
      if (parse.records.empty() && parse.without_perf > 0) continue;  // dump_stats
      ++problems_;
      if (!reported_[line.stream]) {
        reported_[line.stream] = true;
        // The parser numbers the line alone as line 1: its column is the line's own.
        std::string why = parse.problems.empty() ? std::string("no Inspector record")
                                                 : parse.problems.front();
        if (absl::StartsWith(why, "1:")) why.erase(0, 2);
        spdlog::warn("nccl_inspector: {}:{}:{} (later problems of this file are only counted)",
                     line.path, line.line_number, why);
      }
    }
    for (const logs::InspectorRecord& r : parse.records) {
      if (r.p2p || r.rank < 0 || r.comm_id.empty() || !std::isfinite(r.exec_us) ||
          r.exec_us < 0) {
        continue;
      }
      if (!ThisHost(r.host)) {
        ++other_hosts_;
        continue;
      }
      ++records_;
      Comm& comm = comms_[r.comm_id];
      comm.idle = false;
      if (r.n_ranks > 0) comm.n_ranks = r.n_ranks;
      if (r.n_nodes > 0) comm.n_nodes = r.n_nodes;
      comm.last_record = now;
      RankTotals& t = comm.ranks[r.rank].totals;
      ++t.collectives;
      t.microseconds += r.exec_us;
      if (std::isfinite(r.busbw_gbs) && r.busbw_gbs > 0) {
        t.bus_bytes += r.busbw_gbs * 1e9 * r.exec_us * 1e-6;
      }
    }
  }
  if (other_hosts_ > 0 && records_ == 0 && !warned_other_hosts_ && other_hosts_ >= 100) {
    warned_other_hosts_ = true;
    spdlog::warn("nccl_inspector: {} records read, none of host {} (their hostname differs): "
                 "a shared dump directory holds other hosts' records, or --hostname is not the "
                 "name the ranks see",
                 other_hosts_, options_.host);
  }
  const int64_t now_ns = absl::ToUnixNanos(now);
  size_t active = 0;
  for (auto& [id, comm] : comms_) {
    if (comm.idle || now - comm.last_record > options_.forget_after) {
      comm.idle = true;  // kept, not sent
      continue;
    }
    ++active;
    ++comm.cycles;
    Settle(id, comm, emitter);
    for (auto& [rank, r] : comm.ranks) {
      if (!r.defined) continue;
      emitter.Counter(r.collectives_id, r.totals.collectives, now_ns);
      emitter.Counter(r.microseconds_id, static_cast<uint64_t>(r.totals.microseconds), now_ns);
      emitter.Counter(r.bus_bytes_id, static_cast<uint64_t>(r.totals.bus_bytes), now_ns);
    }
  }
  // Bounded: the longest idle go first (one that writes again then restarts from 0: a counter
  // reset, which rates take in their stride).
  while (comms_.size() > options_.max_communicators) {
    auto oldest = comms_.end();
    for (auto it = comms_.begin(); it != comms_.end(); ++it) {
      if (it->second.idle && (oldest == comms_.end() ||
                              it->second.last_record < oldest->second.last_record)) {
        oldest = it;
      }
    }
    if (oldest == comms_.end()) break;  // all active: the job's shape, not a leak
    comms_.erase(oldest);
  }
  emitter.Counter(records_id_, records_, now_ns);
  emitter.Counter(problems_id_, problems_, now_ns);
  emitter.Counter(other_hosts_id_, other_hosts_, now_ns);
  emitter.Gauge(comms_id_, static_cast<double>(active), now_ns);
  return absl::OkStatus();
}

void NcclInspectorCollector::Settle(const std::string& id, Comm& comm, Emitter& emitter) {
  if (!comm.settled) {
    // NCCL's localRank: the place among the ranks of the same host, in rank order. Known for
    // sure once every rank this host holds has written a record.
    const int per_host = comm.n_nodes > 0 && comm.n_ranks > 0 && comm.n_ranks % comm.n_nodes == 0
                             ? comm.n_ranks / comm.n_nodes
                             : 0;
    const bool all_seen = per_host > 0 && static_cast<int>(comm.ranks.size()) >= per_host;
    const int wait = per_host > 0 ? options_.settle_cycles_known : options_.settle_cycles;
    if (!all_seen && comm.cycles < wait) return;
    comm.settled = true;
  }
  int next_local = 0;
  for (const auto& [rank, r] : comm.ranks) {
    if (r.defined) next_local = std::max(next_local, r.totals.local_rank + 1);
  }
  for (auto& [rank, r] : comm.ranks) {
    if (r.defined) continue;
    // A rank first seen after the others were numbered takes the next place.
    r.totals.local_rank = next_local++;
    Labels labels = {{"comm", id},
                     {"local_rank", absl::StrCat(r.totals.local_rank)},
                     {"rank", absl::StrCat(rank)}};
    r.collectives_id =
        emitter.DefineSeries("fabric_nccl_collectives_total", MetricKind::kCounter, labels);
    r.microseconds_id = emitter.DefineSeries("fabric_nccl_collective_microseconds_total",
                                             MetricKind::kCounter, labels);
    r.bus_bytes_id = emitter.DefineSeries("fabric_nccl_collective_bus_bytes_total",
                                          MetricKind::kCounter, std::move(labels));
    r.defined = true;
  }
}

bool NcclInspectorCollector::ThisHost(const std::string& record_host) const {
  if (options_.host.empty() || record_host.empty()) return true;
  const auto short_name = [](std::string_view name) {
    name = name.substr(0, name.find('.'));
    return absl::string_view(name.data(), name.size());
  };
  return absl::EqualsIgnoreCase(short_name(record_host), short_name(options_.host));
}

std::map<std::string, std::map<int, NcclInspectorCollector::RankTotals>>
NcclInspectorCollector::Totals() const {
  std::map<std::string, std::map<int, RankTotals>> out;
  for (const auto& [id, comm] : comms_) {
    for (const auto& [rank, r] : comm.ranks) out[id][rank] = r.totals;
  }
  return out;
}

}  // namespace railwatch
