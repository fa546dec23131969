// `railwatch series QUERY` and `railwatch topology`: the daemon's series store and its map of
// the fabric.
#include <algorithm>
#include <memory>
#include <ostream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/query_commands.h"
#include "cli/table.h"
#include "common/text.h"

namespace railwatch {
namespace {

constexpr absl::Duration kDefaultRange = absl::Minutes(5);

// name{label="value",...}, as selectors are written.
std::string SeriesText(const v1::Series& s) {
  std::vector<std::string> labels;
  for (const v1::Label& l : s.labels())
    labels.push_back(absl::StrCat(l.name(), "=\"", l.value(), "\""));
  return absl::StrCat(s.name(), "{", absl::StrJoin(labels, ","), "}");
}

// --range, or --start/--end, as the request's window.
absl::Status SetWindow(const CliOptions& o, absl::Time now, v1::QuerySeriesRequest* request) {
  if (!o.range.empty() && !o.start.empty()) {
    return absl::InvalidArgumentError("give --range or --start, not both");
  }
  int64_t end = absl::ToUnixNanos(now);
  if (!o.end.empty()) {
    absl::StatusOr<int64_t> t = ParseTimeFlag("end", o.end, now);
    if (!t.ok()) return t.status();
    end = *t;
  }
  int64_t start = end - absl::ToInt64Nanoseconds(kDefaultRange);
  if (!o.range.empty()) {
    absl::StatusOr<absl::Duration> range = ParseDuration(o.range);
    if (!range.ok() || *range <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--range=", o.range, ": want a duration such as 5m"));
    }
    start = end - absl::ToInt64Nanoseconds(*range);
  } else if (!o.start.empty()) {
    absl::StatusOr<int64_t> t = ParseTimeFlag("start", o.start, now);
    if (!t.ok()) return t.status();
    start = *t;
  }
  if (start > end) return absl::InvalidArgumentError("--start is after --end");
  request->set_start_unix_nano(start);
  request->set_end_unix_nano(end);
  return absl::OkStatus();
}

std::string SelectorTable(const v1::QuerySeriesResponse& response) {
  Table t({"SERIES", "POINTS", "FIRST", "LAST", "LAST AT"});
  for (const v1::Series& s : response.series()) {
    if (s.points().empty()) {
      t.Add({SeriesText(s), "0", "-", "-", "-"});
      continue;
    }
    const v1::EvidencePoint& last = s.points(s.points_size() - 1);
    t.Add({SeriesText(s), absl::StrCat(s.points_size()), ShortNumber(s.points(0).value()),
           ShortNumber(last.value()), FormatTime(last.time_unix_nano())});
  }
  return t.Render();
}

// One column per label (the union, sorted), then the value: expressions keep or drop labels,
// and topology() adds some, so the columns come from the result.
std::string ExpressionTable(const v1::QuerySeriesResponse& response) {
  std::set<std::string> names;
  bool named = false;
  for (const v1::Series& s : response.series()) {
    named |= !s.name().empty();
    for (const v1::Label& l : s.labels()) names.insert(l.name());
  }
  std::vector<std::string> header;
  if (named) header.push_back("NAME");
  for (const std::string& n : names) header.push_back(n);
  header.push_back("VALUE");
  Table t(header);
  for (const v1::Series& s : response.series()) {
    std::vector<std::string> row;
    if (named) row.push_back(s.name());
    for (const std::string& n : names) {
      std::string v = LabelValue(s.labels(), n);
      row.push_back(v.empty() ? "-" : v);
    }
    row.push_back(s.points().empty() ? "-" : ShortNumber(s.points(0).value()));
    t.Add(std::move(row));
  }
  return t.Render();
}

}  // namespace

int RunSeries(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err) {
  v1::QuerySeriesRequest request;
  request.set_query(absl::StrJoin(args.begin() + 1, args.end(), " "));
  absl::Status window = SetWindow(o, absl::Now(), &request);
  if (!window.ok()) return UsageError("series", std::string(window.message()), err);
  if (o.limit < -1) return UsageError("series", "--limit must be 1 or more", err);
  if (o.limit > 0) request.set_limit(o.limit);
  v1::QuerySeriesResponse response;
  if (std::optional<int> done =
          QueryForTable(o, &v1::Query::Stub::QuerySeries, request, &response, out, err)) {
    return *done;
  }
  if (response.truncated()) {
    err << "railwatch: " << response.matched() << " series matched; showing the first "
        << response.series_size() << " (--limit=N shows more)\n";
  }
  if (response.series().empty()) {
    out << "No series matched.\n";
    return kExitOk;
  }
  out << (response.query_type() == "expression" ? ExpressionTable(response)
                                                : SelectorTable(response));
  return kExitOk;
}

namespace {

// Whether any cable says where it comes from (a daemon that discovers): then a FROM column.
bool HasProvenance(const v1::TopologyResponse& topology) {
  for (const v1::TopologyHost& h : topology.hosts()) {
    for (const v1::TopologyNic& n : h.nics()) {
      if (!n.provenance().empty()) return true;
    }
  }
  for (const v1::TopologySwitch& s : topology.switches()) {
    for (const v1::TopologyLink& l : s.links()) {
      if (!l.provenance().empty()) return true;
    }
  }
  return false;
}

std::string OrDash(const std::string& s) { return s.empty() ? "-" : s; }

std::string NicsTable(const v1::TopologyResponse& topology) {
  const bool from = HasProvenance(topology);
  std::vector<std::string> header = {"HOST", "DEVICE", "NETDEV", "RAIL", "SWITCH", "SWITCH PORT"};
  if (from) header.push_back("FROM");
  Table t(header);
  for (const v1::TopologyHost& h : topology.hosts()) {
    if (h.nics().empty()) {
      std::vector<std::string> row = {h.name(), "-", "-", "-", "-", "-"};
      if (from) row.push_back("-");
      t.Add(row);
    }
    for (const v1::TopologyNic& n : h.nics()) {
      std::vector<std::string> row = {h.name(), n.device(), OrDash(n.netdev()),
                                      n.rail() < 0 ? "-" : absl::StrCat(n.rail()),
                                      OrDash(n.switch_()), OrDash(n.switch_port())};
      if (from) row.push_back(OrDash(n.provenance()));
      t.Add(row);
    }
  }
  return t.Render();
}

std::string SwitchesTable(const v1::TopologyResponse& topology) {
  Table t({"SWITCH", "ROLE", "DIALECT", "LINKS"});
  for (const v1::TopologySwitch& s : topology.switches()) {
    t.Add({s.name(), s.role().empty() ? "-" : s.role(), s.dialect().empty() ? "-" : s.dialect(),
           absl::StrCat(s.links_size())});
  }
  return t.Render();
}

std::string LinksTable(const v1::TopologyResponse& topology) {
  const bool from = HasProvenance(topology);
  std::vector<std::string> header = {"SWITCH", "PORT", "PEER", "PEER PORT"};
  if (from) header.push_back("FROM");
  Table t(header);
  for (const v1::TopologySwitch& s : topology.switches()) {
    for (const v1::TopologyLink& l : s.links()) {
      std::vector<std::string> row = {s.name(), l.port(), l.peer(), l.peer_port()};
      if (from) row.push_back(OrDash(l.provenance()));
      t.Add(row);
    }
  }
  return t.rows() == 0 ? "" : t.Render();
}

std::string JobsTable(const v1::TopologyResponse& topology) {
  Table t({"JOB", "GPUS", "RANKS", "HOSTS", "SOURCE", "LAST SEEN", "DETAIL"});
  for (const v1::TopologyJob& j : topology.jobs()) {
    const int shown = std::min(j.hosts_size(), 4);
    std::string hosts = absl::StrJoin(j.hosts().begin(), j.hosts().begin() + shown, ",");
    if (j.hosts_size() > shown) absl::StrAppend(&hosts, " +", j.hosts_size() - shown);
    t.Add({j.name(), absl::StrCat(j.gpus()), absl::StrCat(j.ranks()), hosts, j.source(),
           j.last_seen_unix_nano() == 0 ? "-" : Ago(j.last_seen_unix_nano()), j.detail()});
  }
  return t.Render();
}

}  // namespace

int RunTopology(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                std::ostream& err) {
  if (o.discovered && o.declared) {
    return UsageError("topology", "--discovered and --declared name different maps: give one", err);
  }
  if (!o.output.empty() && o.output != "yaml") {
    return UsageError("topology", "-o takes yaml (a topology file), not \"" + o.output + "\"", err);
  }
  v1::TopologyRequest request;
  request.set_view(o.discovered ? "discovered" : o.declared ? "declared" : "");
  v1::TopologyResponse topology;
  int rc = QueryOnce(o, &v1::Query::Stub::Topology, request, &topology, err);
  if (rc != kExitOk) return rc;
  const std::string view = topology.view().empty() ? "effective" : topology.view();
  if (o.output == "yaml") {
    if (topology.yaml().empty()) {
      err << "railwatch: the daemon has no " << (view == "effective" ? "" : view + " ")
          << "topology"
          << (view == "declared" ? " (no --topology file)"
                                 : " yet (no agent has reported NICs or LLDP neighbours)")
          << "\n";
      return kExitNotFound;
    }
    out << "# railwatch topology" << (view == "effective" ? "" : " --" + view) << " -o yaml"
        << (topology.source().empty() ? "" : "; source: " + topology.source()) << "\n"
        << topology.yaml();
    return kExitOk;
  }
  if (o.diff) {
    if (o.json) {
      v1::TopologyResponse diff;
      *diff.mutable_differences() = topology.differences();
      out << ToJson(diff) << "\n";
      return kExitOk;
    }
    if (topology.file().empty()) {
      out << "railwatchd runs without a topology file (--topology): nothing to compare; "
             "`railwatch topology --discovered` shows the discovered map.\n";
      return kExitOk;
    }
    if (topology.discovered_unix_nano() == 0) {
      out << "No discovery pass yet (railwatchd --topology_discovery=false, or it just "
             "started).\n";
      return kExitOk;
    }
    if (topology.differences().empty()) {
      out << "The topology file and discovery agree.\n";
      return kExitOk;
    }
    Table t({"WHERE", "WHAT", "DECLARED", "DISCOVERED", "CONFLICT"});
    size_t conflicts = 0;
    for (const v1::TopologyDifference& d : topology.differences()) {
      conflicts += d.conflict() ? 1 : 0;
      t.Add({d.where(), d.what(), d.declared().empty() ? "-" : d.declared(),
             d.discovered().empty() ? "-" : d.discovered(), d.conflict() ? "yes" : "no"});
    }
    out << t.Render() << "\n"
        << topology.differences_size() << " differences, " << conflicts
        << " conflicts (both sides speak: topology_mismatch); the map in use keeps the file's "
           "view\n";
    return kExitOk;
  }
  if (o.json) {
    if (o.jobs) {
      v1::TopologyResponse jobs;
      *jobs.mutable_jobs() = topology.jobs();
      out << ToJson(jobs) << "\n";
    } else {
      out << ToJson(topology) << "\n";
    }
    return kExitOk;
  }
  if (o.jobs) {
    if (topology.jobs().empty()) {
      out << "No jobs known (none in the topology file, none from Slurm or Kubernetes, none "
             "learnt from NCCL logs yet).\n";
    } else {
      out << JobsTable(topology);
    }
    return kExitOk;
  }
  if (topology.hosts().empty() && topology.switches().empty()) {
    if (view == "declared") {
      out << "railwatchd runs without a topology file (--topology).\n";
    } else if (view == "discovered" || topology.file().empty()) {
      out << "No topology: " << (topology.file().empty() ? "no topology file (--topology) and " : "")
          << "nothing discovered yet (no agent has reported NICs or LLDP neighbours).\n";
    } else {
      out << "Topology file: " << topology.file() << " (empty)\n";
    }
    return kExitOk;
  }
  if (view == "effective") {
    if (!topology.file().empty()) out << "Topology file: " << topology.file() << "\n";
    if (!topology.source().empty()) out << "Map from: " << topology.source() << "\n";
  } else {
    out << "The " << view << " map"
        << (view == "declared" ? " (" + topology.file() + ")" : std::string()) << "\n";
  }
  size_t nics = 0;
  for (const v1::TopologyHost& h : topology.hosts()) nics += h.nics_size();
  out << topology.hosts_size() << " hosts, " << nics << " NICs, " << topology.switches_size()
      << " switches, " << topology.jobs_size() << " jobs (--jobs lists them)\n";
  if (!topology.hosts().empty()) out << "\n" << NicsTable(topology);
  if (!topology.switches().empty()) out << "\n" << SwitchesTable(topology);
  const std::string links = LinksTable(topology);
  if (!links.empty()) out << "\n" << links;
  if (!topology.notes().empty() && view != "declared") {
    out << "\nDiscovery could not place:\n";
    for (const std::string& n : topology.notes()) out << "  " << n << "\n";
  }
  const size_t conflicts =
      std::count_if(topology.differences().begin(), topology.differences().end(),
                    [](const v1::TopologyDifference& d) { return d.conflict(); });
  if (conflicts > 0) {
    out << "\n" << conflicts
        << " conflicts between the file and discovery: railwatch topology --diff\n";
  }
  return kExitOk;
}

}  // namespace railwatch
