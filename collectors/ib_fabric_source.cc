#include "collectors/ib_fabric_source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "ib/ibdiagnet_cables.h"
#include "ib/ibdiagnet_db.h"
#include "ib/ibdiagnet_net_dump.h"
#include "ib/ibdiagnet_pm.h"
#include "ib/iblinkinfo.h"
#include "ib/ibnetdiscover.h"
#include "ib/ibqueryerrors.h"
#include "ib/perfquery.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;

// "SW  1719 10 0x7cfe9003009ce5b0 4x EDR - ..." / "CA   134  1 0x...": a -p report line.
bool LooksLikePortsLine(std::string_view line) {
  size_t i = line.find_first_not_of(" \t>");
  if (i == std::string_view::npos) return false;
  line.remove_prefix(i);
  if (!line.starts_with("SW ") && !line.starts_with("CA ") && !line.starts_with("RT ")) {
    return false;
  }
  return line.find(" 0x") != std::string_view::npos;
}

// ibdiagnet's net_dump / net_dump_ext: a column header naming "IB#" / "#IB", or a row of
// " : "-separated cells (an excerpt below its header). No other tool prints eight " : " a line.
bool LooksLikeNetDumpLine(std::string_view line) {
  if (line.find(" IB# ") != std::string_view::npos ||
      line.find(" #IB ") != std::string_view::npos) {
    return true;
  }
  int separators = 0;
  for (size_t at = line.find(" : "); at != std::string_view::npos; at = line.find(" : ", at + 2)) {
    ++separators;
  }
  return separators >= 8;
}

// The line after an ibdiagnet "Port=... Lid=... GUID=..." block header says which file it is:
// `name=value` (ibdiagnet2.pm) or `Key: value` (ibdiagnet2.cables); "" when it says neither.
std::string_view IbdiagnetBlockKind(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (std::islower(static_cast<unsigned char>(line[i])) ||
                             std::isdigit(static_cast<unsigned char>(line[i])) || line[i] == '_')) {
    ++i;
  }
  if (i > 0 && i < line.size() && line[i] == '=') return "ibdiagnet-pm";
  const size_t colon = line.find(':');
  if (colon != std::string_view::npos && colon > 0 && line.find('=') == std::string_view::npos) {
    return "ibdiagnet-cables";
  }
  return "";
}

void Append(IbFabricScan& into, const IbFabricScan& from) {
  into.nodes.insert(into.nodes.end(), from.nodes.begin(), from.nodes.end());
  into.links.insert(into.links.end(), from.links.begin(), from.links.end());
  into.counters.insert(into.counters.end(), from.counters.begin(), from.counters.end());
  into.cables.insert(into.cables.end(), from.cables.begin(), from.cables.end());
  into.temperatures.insert(into.temperatures.end(), from.temperatures.begin(),
                           from.temperatures.end());
  into.problems.insert(into.problems.end(), from.problems.begin(), from.problems.end());
  into.inputs_read += from.inputs_read;
  into.inputs_unrecognised += from.inputs_unrecognised;
}

}  // namespace

IbFabricScan ParseIbToolOutput(std::string_view text, const std::string& path, int64_t mtime) {
  IbFabricScan out;
  const std::string kind = IbToolOutputKind(text);
  auto add_counters = [&](const std::vector<ib::IbPortCounters>& ports) {
    for (const ib::IbPortCounters& p : ports) out.counters.push_back({p, mtime});
  };
  if (kind == "ibnetdiscover" || kind == "ibnetdiscover-ports") {
    ib::IbTopology t = kind == "ibnetdiscover" ? ib::ParseIbnetdiscover(text, path)
                                               : ib::ParseIbnetdiscoverPorts(text, path);
    out.nodes = std::move(t.nodes);
    out.links = std::move(t.links);
    out.problems = std::move(t.problems);
  } else if (kind == "perfquery") {
    ib::PerfqueryResult r = ib::ParsePerfquery(text, path);
    add_counters(r.ports);
    out.problems = std::move(r.problems);
  } else if (kind == "ibdiagnet-db") {
    // ibdiagnet2.db_csv: NODES and LINKS are the topology (each link's speed from PORTS),
    // PM_INFO the counters, one record per attribute.
    ib::IbdiagnetDb db = ib::ParseIbdiagnetDbCsv(text, path);
    std::map<std::pair<std::string, int>, ib::IbLinkSpeed> speeds;
    for (const ib::IbdiagnetPort& p : db.ports) speeds[{ib::GuidString(p.node_guid), p.port}] = p.speed;
    for (ib::IbLink& l : db.links) {
      if (auto it = speeds.find({ib::GuidString(l.local.node_guid), l.local.port});
          !l.speed.known() && it != speeds.end()) {
        l.speed = it->second;
      }
    }
    out.nodes = std::move(db.nodes);
    out.links = std::move(db.links);
    out.temperatures = std::move(db.temperatures);
    add_counters(db.counters);
    out.problems = std::move(db.problems);
  } else if (kind == "ibdiagnet-pm") {
    // ibdiagnet2.pm: per port one record per attribute, as db_csv's PM_INFO.
    ib::IbdiagnetPm pm = ib::ParseIbdiagnetPm(text, path);
    add_counters(pm.Counters());
    out.problems = std::move(pm.problems);
  } else if (kind == "ibdiagnet-net-dump") {
    // ibdiagnet2.net_dump(_ext): its nodes, and each port with a known neighbour as a link.
    ib::IbdiagnetNetDump dump = ib::ParseIbdiagnetNetDump(text, path);
    out.links = dump.Links();
    out.nodes = std::move(dump.nodes);
    out.problems = std::move(dump.problems);
  } else if (kind == "ibdiagnet-cables") {
    ib::IbdiagnetCables cables = ib::ParseIbdiagnetCables(text, path);
    out.cables = std::move(cables.cables);
    out.problems = std::move(cables.problems);
  } else if (kind == "iblinkinfo") {
    ib::IblinkinfoResult r = ib::ParseIblinkinfo(text, path);
    for (ib::IblinkinfoPort& p : r.ports) out.links.push_back(std::move(p.link));
    out.problems = std::move(r.problems);
  } else if (kind == "ibqueryerrors") {
    // Per-port lines only: "port ALL" sums them, and counting both would count twice.
    ib::IbqueryerrorsResult r = ib::ParseIbqueryerrors(text, path);
    add_counters(r.ports);
    out.problems = std::move(r.problems);
  } else {
    out.inputs_unrecognised = 1;
    return out;
  }
  out.inputs_read = 1;
  return out;
}

std::string IbToolOutputKind(std::string_view text) {
  // Decided by the first line that says; a shell prompt or a mail's "> " before it is no
  // obstacle because the markers are searched for, not expected on line 1.
  size_t start = 0;
  bool after_block_header = false;  // an ibdiagnet "Port=..." line: the next line says which
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    // ibdiagnet's .pm and .cables: "Port=1 Lid=0x00b4 GUID=0x... [Device=...] Port Name=...",
    // dashes, then the block's values.
    std::string_view bare = line;
    while (!bare.empty() && (bare.front() == ' ' || bare.front() == '\t' || bare.front() == '\r')) {
      bare.remove_prefix(1);
    }
    while (!bare.empty() && (bare.back() == ' ' || bare.back() == '\t' || bare.back() == '\r')) {
      bare.remove_suffix(1);
    }
    if (bare.starts_with("Port=") && bare.find(" GUID=") != std::string_view::npos) {
      after_block_header = true;
      continue;
    }
    if (after_block_header) {
      if (bare.empty() || bare.starts_with("---")) continue;
      if (std::string_view kind = IbdiagnetBlockKind(bare); !kind.empty()) return std::string(kind);
      after_block_header = false;
    }
    if (LooksLikeNetDumpLine(line)) return "ibdiagnet-net-dump";
    if (line.find("# Port extended counters:") != std::string_view::npos ||
        line.find("# Port counters:") != std::string_view::npos ||
        line.find("# PortRcvErrorDetails counters:") != std::string_view::npos ||
        line.find("# PortXmitDiscardDetails counters:") != std::string_view::npos) {
      return "perfquery";
    }
    if (line.find("Errors for ") != std::string_view::npos ||
        line.find("## Summary:") != std::string_view::npos) {
      return "ibqueryerrors";
    }
    if (line.starts_with("START_") || line.starts_with("# INDEX_TABLE")) return "ibdiagnet-db";
    if (line.find("switchguid=") != std::string_view::npos ||
        line.find("caguid=") != std::string_view::npos ||
        line.find("vendid=") != std::string_view::npos ||
        line.find("Topology file:") != std::string_view::npos) {
      return "ibnetdiscover";
    }
    if (LooksLikePortsLine(line)) return "ibnetdiscover-ports";
    // iblinkinfo: "Switch: 0x... <desc>:" (default mode) or a port's "==( 4X ... )==>".
    if (line.find(")==>") != std::string_view::npos || line.starts_with("Switch: 0x") ||
        line.starts_with("Switch 0x")) {
      return "iblinkinfo";
    }
  }
  return "";
}

absl::StatusOr<IbFabricScan> IbToolOutputSource::Scan() {
  std::error_code ec;
  fs::directory_iterator it(options_.dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot list ", options_.dir, ": ", ec.message()));
  }
  std::map<std::string, Parsed> seen;
  IbFabricScan scan;
  // Stepped with an error code: a file removed while we list is no exception.
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& e = *it;
    const std::string path = e.path().string();
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // editors' and rsync's temporary files
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                          st.st_mtim.tv_nsec;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (auto old = files_.find(path);
        old != files_.end() && old->second.mtime_unix_nano == mtime && old->second.size == size) {
      // Unchanged: its records still hold (its counters keep their time, so the collector
      // sends nothing new for them); its problems were reported when it was read.
      Parsed kept = std::move(old->second);
      IbFabricScan view = kept.scan;
      view.problems.clear();
      Append(scan, view);
      seen.emplace(path, std::move(kept));
      continue;
    }
    Parsed parsed;
    parsed.mtime_unix_nano = mtime;
    parsed.size = size;
    if (size > options_.max_file_bytes) {
      parsed.scan.problems.push_back(
          {path, absl::StrCat("skipped: ", size, " bytes, over the limit of ",
                              options_.max_file_bytes)});
    } else if (absl::StatusOr<std::string> text = ReadFile(path); !text.ok()) {
      parsed.scan.problems.push_back({path, std::string(text.status().message())});
    } else {
      parsed.scan = ParseIbToolOutput(*text, path, mtime);
    }
    Append(scan, parsed.scan);
    seen.emplace(path, std::move(parsed));
  }
  files_ = std::move(seen);  // files that left the directory are forgotten
  return scan;
}

}  // namespace railwatch
