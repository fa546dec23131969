// libFuzzer target for the InfiniBand readers (ib/): any bytes go through every reader
// (ibnetdiscover and its -p report, perfquery, ibqueryerrors, iblinkinfo, ibstat, ibstatus,
// ibv_devinfo, ibdiagnet's db_csv, .pm, .cables, .net_dump and .net_dump_ext, UFM Telemetry's
// JSON and Prometheus), which must not crash or trip a sanitizer, and what comes back must hold
// together: ports are port numbers, a saturated counter has a width, only the data counters count
// 4-octet words, ibqueryerrors' "port ALL" sums stay apart from its ports, db_csv rows match their
// headers, a .pm block's records are one per attribute, a cable's "not supported" sentinel is
// never a reading, and every problem says where (in:line:column) within the input. Seeds: tests/fixtures/ib (the real-world samples).
//
//   scripts/fuzz ib_readers_fuzz     (docs/FUZZING.md)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "ib/host_status.h"
#include "ib/ibdiagnet_cables.h"
#include "ib/ibdiagnet_db.h"
#include "ib/ibdiagnet_net_dump.h"
#include "ib/ibdiagnet_pm.h"
#include "ib/iblinkinfo.h"
#include "ib/ibnetdiscover.h"
#include "ib/ibqueryerrors.h"
#include "ib/perfquery.h"
#include "ib/ufm_telemetry.h"

namespace {

using namespace railwatch::ib;  // NOLINT(build/namespaces): this file reads nothing else

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckProblems(const std::vector<IbProblem>& problems, long lines) {
  for (const IbProblem& p : problems) {
    Check(!p.message.empty());
    Check(p.where.rfind("in:", 0) == 0);
    char* end = nullptr;
    const long line = std::strtol(p.where.c_str() + 3, &end, 10);
    Check(line >= 1 && line <= lines);
    Check(*end == ':' && std::strtol(end + 1, nullptr, 10) >= 1);
  }
}

void CheckEnd(const IbLinkEnd& end) { Check(end.port >= 0 && end.port <= 255); }

void CheckLink(const IbLink& link) {
  CheckEnd(link.local);
  if (link.peer) CheckEnd(*link.peer);
  Check(link.speed.width_lanes >= 0 && link.speed.width_lanes <= 32);
  Check(link.speed.aggregate_gbps() >= 0);
}

void CheckCounters(const IbPortCounters& port) {
  Check(!port.port || (*port.port >= 0 && *port.port <= 255));
  for (const auto& [name, counter] : port.counters) {
    Check(!name.empty());
    Check(!counter.saturated || counter.width_bits > 0);
    Check(counter.data_4_octets == IsPmaDataCounter(name));
    Check(counter.width_bits == PmaCounterWidth(port.attribute, name));
  }
}

void CheckHost(const IbHostStatus& host) {
  for (const IbHostDevice& d : host.devices) {
    for (const IbHostPort& p : d.ports) Check(p.port >= 0 && p.port <= 255);
  }
}

// mW and mA: -999.999 is "not supported", and no power or current is negative.
void CheckReading(const std::optional<double>& v) { Check(!v || *v >= 0); }

void CheckCable(const IbCableRecord& c) {
  Check(c.port >= 0 && c.port <= 255);
  for (const auto& [n, lane] : c.lanes) {
    Check(n >= 1 && n <= 16);
    CheckReading(lane.rx_power_mw);
    CheckReading(lane.tx_power_mw);
    CheckReading(lane.tx_bias_ma);
    // A dBm without its mW would be a reading taken from a sentinel line.
    Check(!lane.rx_power_dbm || lane.rx_power_mw);
    Check(!lane.tx_power_dbm || lane.tx_power_mw);
  }
}

void FuzzOne(std::string_view input) {
  const long lines = 1 + std::count(input.begin(), input.end(), '\n');

  for (const IbTopology& t :
       {ParseIbnetdiscover(input, "in"), ParseIbnetdiscoverPorts(input, "in")}) {
    for (const IbNode& n : t.nodes) Check(n.num_ports >= 0 && n.num_ports <= 255);
    for (const IbLink& l : t.links) CheckLink(l);
    CheckProblems(t.problems, lines);
  }

  const PerfqueryResult perf = ParsePerfquery(input, "in");
  for (const IbPortCounters& p : perf.ports) CheckCounters(p);
  CheckProblems(perf.problems, lines);

  const IbqueryerrorsResult errors = ParseIbqueryerrors(input, "in");
  for (const IbPortCounters& p : errors.ports) {
    Check(p.port.has_value() && !p.all_ports);
    CheckCounters(p);
  }
  for (const IbPortCounters& p : errors.aggregates) Check(!p.port && p.all_ports);
  CheckProblems(errors.problems, lines);

  const IblinkinfoResult links = ParseIblinkinfo(input, "in");
  for (const IblinkinfoPort& p : links.ports) CheckLink(p.link);
  CheckProblems(links.problems, lines);

  for (const IbHostStatus& host :
       {ParseIbstat(input, "in"), ParseIbstatus(input, "in"), ParseIbvDevinfo(input, "in")}) {
    CheckHost(host);
    CheckProblems(host.problems, lines);
  }

  const IbdiagnetDb db = ParseIbdiagnetDbCsv(input, "in");
  for (const DbCsvSection& s : db.sections) {
    Check(s.rows.size() == s.row_lines.size());
    for (const auto& row : s.rows) Check(row.size() == s.header.size());
  }
  for (const IbPortCounters& p : db.counters) CheckCounters(p);
  for (const IbLink& l : db.links) CheckLink(l);
  CheckProblems(db.problems, lines);

  const IbdiagnetPm pm = ParseIbdiagnetPm(input, "in");
  for (const IbdiagnetPmBlock& b : pm.blocks) {
    Check(b.port >= 0 && b.port <= 255);
    for (size_t i = 0; i < b.counters.size(); ++i) {
      CheckCounters(b.counters[i]);
      Check(b.counters[i].port == b.port && !b.counters[i].counters.empty());
      for (size_t j = 0; j < i; ++j) Check(b.counters[j].attribute != b.counters[i].attribute);
    }
  }
  CheckProblems(pm.problems, lines);

  const IbdiagnetCables cables = ParseIbdiagnetCables(input, "in");
  for (const IbCableRecord& c : cables.cables) CheckCable(c);
  CheckProblems(cables.problems, lines);

  const IbdiagnetNetDump dump = ParseIbdiagnetNetDump(input, "in");
  for (const IbNode& n : dump.nodes) Check(n.num_ports >= 0 && n.num_ports <= 255);
  for (const IbdiagnetNetDumpPort& p : dump.ports) {
    Check(p.port && *p.port >= 0 && *p.port <= 255);
    Check(!p.neighbor_port || (*p.neighbor_port >= 0 && *p.neighbor_port <= 255));
    Check(p.speed.width_lanes >= 0 && p.speed.width_lanes <= 32);
  }
  for (const IbLink& l : dump.Links()) CheckLink(l);
  CheckProblems(dump.problems, lines);

  for (const UfmTelemetry& ufm :
       {ParseUfmTelemetryJson(input, "in"), ParseUfmPrometheus(input, "in")}) {
    for (const UfmPortSample& p : ufm.ports) CheckCounters(p.counters);
    CheckProblems(ufm.problems, lines);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
