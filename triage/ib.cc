#include "triage/ib.h"

#include <algorithm>
#include <functional>
#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectors/ib_fabric_collector.h"
#include "collectors/ib_fabric_source.h"

namespace railwatch {
// Named, not anonymous: the unity build puts this file beside triage/rdma.cc, whose own Port,
// U and Where live in its anonymous namespace.
namespace triage_ib {

using logs::LogEvent;
using Level = TriageFinding::Level;

constexpr size_t kMaxRawBytes = 512;
constexpr size_t kListed = 12;  // ports named in one finding's details; the rest are counted

// Counters that say a link corrupts or loses its signal.
constexpr std::string_view kLinkErrorCounters[] = {
    "SymbolErrorCounter",        "LinkErrorRecoveryCounter",    "LinkDownedCounter",
    "PortRcvErrors",             "PortRcvRemotePhysicalErrors", "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors"};

std::string NodeName(const std::string& description, const std::string& guid) {
  std::string name = IbSwitchName(description);
  return name.empty() ? guid : name;
}

uint64_t U(const LogEvent& e, std::string_view key) {
  uint64_t v = 0;
  const std::string* s = e.Get(key);
  return s != nullptr && absl::SimpleAtoi(*s, &v) ? v : 0;
}

// One port's last counter reading, named as well as the inputs allow.
struct Port {
  const LogEvent* event = nullptr;
  std::string name;  // "ys23ib4 port 5", "LID 2052 port 1"
  std::string guid, lid, port;
};

std::string Where(const LogEvent& e) { return absl::StrCat(e.source, ":", e.line); }

std::string PerfqueryCommand(const Port& p) {
  if (!p.guid.empty()) return absl::StrCat("perfquery -x -G ", p.guid, " ", p.port);
  return absl::StrCat("perfquery -x ", p.lid, " ", p.port);
}

// A finding over several ports: the title says how many, the details name them.
TriageFinding PortsFinding(Level level, std::string kind, const std::vector<const Port*>& ports,
                           const std::function<std::string(const Port&)>& what) {
  TriageFinding f;
  f.level = level;
  f.kind = std::move(kind);
  f.count = static_cast<int>(ports.size());
  f.first_seen = Where(*ports.front()->event);
  for (size_t i = 0; i < ports.size() && i < kListed; ++i) {
    f.details.emplace_back(ports[i]->name, what(*ports[i]));
  }
  if (ports.size() > kListed) {
    f.details.emplace_back("and", absl::StrCat(ports.size() - kListed, " more ports"));
  }
  return f;
}

std::string Counts(const LogEvent& e, const std::vector<std::string_view>& names) {
  std::vector<std::string> parts;
  for (std::string_view n : names) {
    if (const uint64_t v = U(e, n); v > 0) parts.push_back(absl::StrCat(std::string(n), " ", v));
  }
  return absl::StrJoin(parts, ", ");
}

void AnalyzeCounters(const std::vector<Port>& ports, std::vector<TriageFinding>& findings) {
  std::vector<const Port*> discards, link_errors, saturated, waits;
  for (const Port& p : ports) {
    if (U(*p.event, "PortXmitDiscards") > 0) discards.push_back(&p);
    for (std::string_view c : kLinkErrorCounters) {
      if (U(*p.event, c) > 0) {
        link_errors.push_back(&p);
        break;
      }
    }
    if (!p.event->Value("saturated").empty()) saturated.push_back(&p);
    if (U(*p.event, "PortXmitWait") > 0) waits.push_back(&p);
  }
  if (!discards.empty()) {
    std::stable_sort(discards.begin(), discards.end(), [](const Port* a, const Port* b) {
      return U(*a->event, "PortXmitDiscards") > U(*b->event, "PortXmitDiscards");
    });
    TriageFinding f = PortsFinding(Level::kFailure, "ib.port_counters", discards, [](const Port& p) {
      return absl::StrCat("PortXmitDiscards ", U(*p.event, "PortXmitDiscards"));
    });
    f.title = absl::StrCat("InfiniBand: ", discards.size(), " port", discards.size() > 1 ? "s" : "",
                           " discarded packets on a lossless fabric (PortXmitDiscards)");
    f.meaning =
        "InfiniBand does not drop for congestion: a switch port discards what it could not send "
        "because the head-of-queue lifetime ran out while it waited for credits (a receiver that "
        "does not drain, a credit loop), because the port went down with packets queued, or "
        "because the packet had nowhere to go. Every discard is a lost packet that RC transport "
        "resends only after its timeout (seconds at NCCL's default IB timeout): collectives "
        "through these ports stall. The counters are totals since they were last cleared: read "
        "them twice, minutes apart, to see whether they still grow.";
    const Port& top = *discards.front();
    f.next = {absl::StrCat(PerfqueryCommand(top), "   # twice, a minute apart: still growing?"),
              absl::StrCat("iblinkinfo -G ", top.guid.empty() ? "<guid>" : top.guid,
                           "   # the port's link, its peer and its width/speed"),
              "ibqueryerrors -k   # every port with errors, beyond thresholds",
              "ibdiagnet --pc -P all=1   # clear, then count again over a window (congestion, "
              "HOQ drops)"};
    findings.push_back(std::move(f));
  }
  if (!link_errors.empty()) {
    const bool downed = std::any_of(link_errors.begin(), link_errors.end(), [](const Port* p) {
      return U(*p->event, "LinkDownedCounter") > 0;
    });
    const std::vector<std::string_view> names(std::begin(kLinkErrorCounters),
                                              std::end(kLinkErrorCounters));
    TriageFinding f = PortsFinding(downed ? Level::kFailure : Level::kWarning, "ib.port_counters",
                                   link_errors,
                                   [&](const Port& p) { return Counts(*p.event, names); });
    f.title = absl::StrCat("InfiniBand: link errors on ", link_errors.size(), " port",
                           link_errors.size() > 1 ? "s" : "",
                           downed ? " (links went down)" : "");
    f.meaning =
        "Symbol errors, receive errors and link error recoveries mean the link corrupts bits (a "
        "cable, an optic or a port going bad); LinkDownedCounter counts times the link failed "
        "and retrained, which tears down the queue pairs that cross it. Operators' bar: more "
        "than 120 symbol errors an hour (or any growth on an HDR/NDR link, where FEC hides the "
        "rest) is a cable to replace. These are totals since the last clear.";
    const Port& top = *link_errors.front();
    f.next = {absl::StrCat(PerfqueryCommand(top), "   # again in a few minutes: the rate"),
              absl::StrCat("mlxlink -d lid-", top.lid.empty() ? "<lid>" : top.lid, " -p ",
                           top.port, " -c -e   # BER, FEC and the cable's own counters"),
              absl::StrCat("ibportstate -G ", top.guid.empty() ? "<guid>" : top.guid, " ",
                           top.port, " query   # width, speed, state")};
    findings.push_back(std::move(f));
  }
  if (!saturated.empty()) {
    TriageFinding f = PortsFinding(Level::kWarning, "ib.port_counters", saturated,
                                   [](const Port& p) { return p.event->Value("saturated"); });
    f.title = absl::StrCat("InfiniBand: counters stuck at all ones on ", saturated.size(),
                           " port", saturated.size() > 1 ? "s" : "",
                           " (the true counts are higher)");
    f.meaning =
        "PortCounters' 16- and 32-bit counters stop at their maximum (65535, 4294967295) "
        "instead of wrapping: from then on they count nothing. Read the 64-bit extended "
        "counters where the port has them (perfquery -x), and clear the rest after reading "
        "(perfquery -R) so that the next reading means something.";
    const Port& top = *saturated.front();
    f.next = {absl::StrCat(PerfqueryCommand(top), "   # the extended (64-bit) counters"),
              absl::StrCat("perfquery -R ", top.lid.empty() ? "<lid>" : top.lid, " ", top.port,
                           "   # clear after reading")};
    findings.push_back(std::move(f));
  }
  if (!waits.empty()) {
    std::stable_sort(waits.begin(), waits.end(), [](const Port* a, const Port* b) {
      return U(*a->event, "PortXmitWait") > U(*b->event, "PortXmitWait");
    });
    waits.resize(std::min<size_t>(waits.size(), 5));
    TriageFinding f = PortsFinding(Level::kInfo, "ib.port_counters", waits, [](const Port& p) {
      return absl::StrCat("PortXmitWait ", U(*p.event, "PortXmitWait"), " ticks");
    });
    f.title = "InfiniBand: where ports waited longest for credits (PortXmitWait)";
    f.meaning =
        "PortXmitWait counts ticks a port had data to send and no credits from its peer: "
        "congestion, backpressure spreading upstream from a receiver that does not drain. A "
        "snapshot says where it accumulated, not when; the congestion's root is the port whose "
        "own downstream is the sink, not the upstream ports that wait behind it. Two readings "
        "minutes apart give the rate.";
    findings.push_back(std::move(f));
  }
}

void AnalyzeLinks(const std::vector<const LogEvent*>& links, std::vector<TriageFinding>& findings) {
  // The fabric's usual speed: the most common width x generation among its links.
  std::map<std::pair<std::string, std::string>, int> seen;
  for (const LogEvent* e : links) {
    if (!e->Value("width").empty() && !e->Value("speed").empty()) {
      ++seen[{e->Value("width"), e->Value("speed")}];
    }
  }
  if (seen.size() < 2) return;  // one speed (or none): nothing below it
  const auto usual = std::max_element(seen.begin(), seen.end(), [](const auto& a, const auto& b) {
                       return a.second < b.second;
                     })->first;
  const uint64_t usual_gbps = U(**std::find_if(links.begin(), links.end(), [&](const LogEvent* e) {
    return e->Value("width") == usual.first && e->Value("speed") == usual.second;
  }), "gbps");
  std::vector<const LogEvent*> below;
  for (const LogEvent* e : links) {
    if (!e->Value("gbps").empty() && U(*e, "gbps") < usual_gbps) below.push_back(e);
  }
  if (below.empty()) return;
  TriageFinding f;
  f.level = Level::kWarning;
  f.kind = "ib.link";
  f.count = static_cast<int>(below.size());
  f.first_seen = Where(*below.front());
  f.title = absl::StrCat("InfiniBand: ", below.size(), " link", below.size() > 1 ? "s" : "",
                         " below the fabric's usual ", usual.first, usual.second, " (",
                         usual_gbps, " Gb/s)");
  // A name several nodes share ("Voltaire 4036 - 36 QDR ports switch", "MT25408 ConnectX
  // Mellanox Technologies") says which one by its GUID.
  std::map<std::string, std::set<std::string>> guids_of;
  for (const LogEvent* e : links) {
    guids_of[e->Value("node")].insert(e->Value("guid"));
    guids_of[e->Value("peer")].insert(e->Value("peer_guid"));
  }
  auto name = [&](const LogEvent& e, const std::string& prefix) {
    const std::string n = e.Value(prefix.empty() ? "node" : "peer");
    const std::string g = e.Value(prefix + "guid");
    return guids_of[n].size() > 1 && !g.empty() ? absl::StrCat(n, " (", g, ")") : n;
  };
  for (size_t i = 0; i < below.size() && i < kListed; ++i) {
    const LogEvent& e = *below[i];
    f.details.emplace_back(absl::StrCat(name(e, ""), " port ", e.Value("port")),
                           absl::StrCat(e.Value("width"), e.Value("speed"), " to ",
                                        name(e, "peer_"), " port ", e.Value("peer_port")));
  }
  if (below.size() > kListed) {
    f.details.emplace_back("and", absl::StrCat(below.size() - kListed, " more links"));
  }
  f.meaning =
      "A link that trained narrower (4x to 1x or 2x) or slower (NDR to HDR) than its peers "
      "carries a fraction of their traffic and makes every collective through it as slow as "
      "it: a straggler. Causes: a cable or optic with a bad lane, a port forced to a lower "
      "speed, or an older HCA (that one is expected: check the node's model before the cable).";
  f.next = {"iblinkinfo --switches-only -l | grep -v 'Could be' | grep -E ' (1X|2X) '   # "
            "narrow links across the fabric",
            "iblinkinfo -l | grep 'Could be'   # links both ends could run faster",
            "mlxlink -d lid-<lid> -p <port> -m -c   # the cable's module info and BER"};
  findings.push_back(std::move(f));
}

// ibdiagnet2.cables: modules near their own temperature alarm or with a flag set; otherwise
// what was read (the hottest module, twin-port modules).
void AnalyzeCables(const std::vector<const LogEvent*>& cables,
                   std::vector<TriageFinding>& findings) {
  std::vector<const LogEvent*> hot, flagged;
  const LogEvent* hottest = nullptr;
  std::map<std::string, int> serials;
  for (const LogEvent* e : cables) {
    if (!e->Value("sn").empty()) ++serials[e->Value("sn")];
    double t = 0, alarm = 0;
    const bool has_t = absl::SimpleAtod(e->Value("temperature"), &t);
    if (has_t && (hottest == nullptr ||
                  t > std::stod(hottest->Value("temperature")))) {
      hottest = e;
    }
    if (has_t && absl::SimpleAtod(e->Value("alarm_high"), &alarm) && t >= alarm - 5) {
      hot.push_back(e);
    }
    if (!e->Value("flags").empty()) flagged.push_back(e);
  }
  auto module = [](const LogEvent& e) {
    return absl::StrCat(e.Value("node"), " port ", e.Value("port"));
  };
  auto next = [](const LogEvent& e) {
    return std::vector<std::string>{
        absl::StrCat("mlxlink -d lid-", e.Value("lid").empty() ? "<lid>" : e.Value("lid"),
                     " -p ", e.Value("port"), " -m   # the module's readings now"),
        absl::StrCat("perfquery -x -G ", e.Value("guid"), " ", e.Value("port"),
                     "   # the link's errors")};
  };
  auto add = [&](Level level, std::string title, const std::vector<const LogEvent*>& list,
                 std::function<std::string(const LogEvent&)> what, std::string meaning) {
    TriageFinding f;
    f.level = level;
    f.kind = "ib.cable";
    f.count = static_cast<int>(list.size());
    f.first_seen = Where(*list.front());
    f.title = std::move(title);
    for (size_t i = 0; i < list.size() && i < kListed; ++i) {
      f.details.emplace_back(module(*list[i]), what(*list[i]));
    }
    if (list.size() > kListed) {
      f.details.emplace_back("and", absl::StrCat(list.size() - kListed, " more modules"));
    }
    f.meaning = std::move(meaning);
    f.next = next(*list.front());
    findings.push_back(std::move(f));
  };
  if (!hot.empty()) {
    add(Level::kWarning,
        absl::StrCat("InfiniBand: ", hot.size(), " cable module", hot.size() > 1 ? "s" : "",
                     " within 5 °C of ", hot.size() > 1 ? "their" : "its",
                     " own temperature alarm"),
        hot,
        [](const LogEvent& e) {
          return absl::StrCat(e.Value("temperature"), " °C, alarm at ", e.Value("alarm_high"),
                              " °C (", e.Value("pn"), " ", e.Value("sn"), ")");
        },
        "The module (an optic or an active cable's end) declares the temperature at which it "
        "raises its alarm; this one is close. Hot optics lose signal, then the link errors "
        "and goes down. Check the switch's airflow and fans at that end, then the module.");
  }
  if (!flagged.empty()) {
    add(Level::kWarning,
        absl::StrCat("InfiniBand: ", flagged.size(), " cable module",
                     flagged.size() > 1 ? "s" : "", " with alarm or warning flags set"),
        flagged, [](const LogEvent& e) { return e.Value("flags"); },
        "The module's own latched flags: receive power low (a dirty or damaged fibre, the far "
        "end's transmitter), transmit bias or power out of range (an ageing laser), voltage, "
        "temperature, loss of signal or lock. The module says it is out of its limits.");
  }
  if (hot.empty() && flagged.empty() && hottest != nullptr) {
    std::vector<std::string> twins;
    for (const auto& [sn, n] : serials) {
      if (n > 1) twins.push_back(absl::StrCat(sn, " (", n, " ports)"));
    }
    TriageFinding f;
    f.level = Level::kInfo;
    f.kind = "ib.cable";
    f.count = static_cast<int>(cables.size());
    f.first_seen = Where(*cables.front());
    f.title = absl::StrCat("InfiniBand: ", cables.size(), " cable module",
                           cables.size() > 1 ? "s" : "",
                           " read, none near its temperature alarm or flagged");
    f.details.emplace_back("hottest", absl::StrCat(module(*hottest), ": ",
                                                   hottest->Value("temperature"), " °C",
                                                   hottest->Value("alarm_high").empty()
                                                       ? std::string()
                                                       : absl::StrCat(", alarm at ",
                                                                      hottest->Value("alarm_high"),
                                                                      " °C")));
    if (!twins.empty()) {
      f.details.emplace_back("twin-port modules", absl::StrJoin(twins, ", "));
    }
    f.meaning = "One serial number on two ports is one twin-port module: a fault in it takes "
                "both ports.";
    findings.push_back(std::move(f));
  }
}

}  // namespace triage_ib

bool LooksLikeIbToolOutput(std::string_view head) { return !IbToolOutputKind(head).empty(); }

std::string IbToolKind(std::string_view text) { return IbToolOutputKind(text); }

std::vector<logs::LogEvent> IbToolEvents(std::string_view text, const std::string& source,
                                         std::vector<std::string>& problems) {
  using logs::LogEvent;
  std::vector<LogEvent> events;
  const IbFabricScan scan = ParseIbToolOutput(text, source, 0);
  for (const ib::IbProblem& p : scan.problems) problems.push_back(p.ToString());
  std::map<std::string, std::string> names;  // guid -> node description
  for (const ib::IbNode& n : scan.nodes) names[ib::GuidString(n.guid)] = n.description;
  // Records say where they start as "<source>:<line>".
  auto line_of = [&source](const std::string& where) {
    int line = 0;
    if (where.size() > source.size() && where.compare(0, source.size(), source) == 0) {
      std::string_view rest = std::string_view(where).substr(source.size() + 1);
      rest = rest.substr(0, rest.find(':'));
      if (!absl::SimpleAtoi(std::string(rest), &line)) line = 0;
    }
    return line;
  };
  // One port's attributes (PortCounters, PortCountersExtended, the details: one record each in
  // a db_csv's PM_INFO or an ibdiagnet2.pm block, several blocks of perfquery) are one reading:
  // merged, of two counters of one name the one that holds more of the count kept
  // (ib::MoreOfTheCount), the later of two alike (a paste of two runs).
  std::vector<ib::IbPortCounters> merged;
  std::map<std::string, size_t> merged_at;
  for (const IbFabricScan::Counters& c : scan.counters) {
    const ib::IbPortCounters& p = c.port;
    if (p.all_ports || !p.port) continue;
    const ib::IbGuid& g = p.node_guid.valid() ? p.node_guid : p.guid;
    const std::string key = absl::StrCat(g.valid() ? ib::GuidString(g)
                                         : p.lid   ? absl::StrCat("LID ", *p.lid)
                                                   : p.where,
                                         "/", *p.port);
    auto [it, inserted] = merged_at.try_emplace(key, merged.size());
    if (inserted) {
      merged.push_back(p);
      continue;
    }
    ib::IbPortCounters& into = merged[it->second];
    for (const auto& [name, counter] : p.counters) {
      auto [at, added] = into.counters.try_emplace(name, counter);
      if (!added && !ib::MoreOfTheCount(at->second, counter)) at->second = counter;
    }
  }
  for (const ib::IbPortCounters& p : merged) {
    LogEvent e;
    e.kind = "ib.port_counters";
    e.source = source;
    e.line = line_of(p.where);
    const ib::IbGuid& g = p.node_guid.valid() ? p.node_guid : p.guid;
    e.Set("node", p.node_description);
    e.Set("guid", ib::GuidString(g));
    e.Set("lid", p.lid ? absl::StrCat(*p.lid) : "");
    e.Set("port", absl::StrCat(*p.port));
    std::vector<std::string> stuck;
    e.raw = absl::StrCat(p.node_description.empty() ? e.Value("guid") : p.node_description,
                         " port ", *p.port);
    for (const auto& [name, counter] : p.counters) {
      e.Set(name, absl::StrCat(counter.value));
      if (counter.saturated) stuck.push_back(absl::StrCat(name, " ", counter.value));
      if (e.raw.size() < triage_ib::kMaxRawBytes) {
        absl::StrAppend(&e.raw, " ", name, " ", counter.value);
      }
    }
    e.Set("saturated", absl::StrJoin(stuck, ", "));
    events.push_back(std::move(e));
  }
  for (const ib::IbCableRecord& c : scan.cables) {
    LogEvent e;
    e.kind = "ib.cable";
    e.source = source;
    e.line = line_of(c.where);
    e.Set("node", c.port_name);
    e.Set("guid", ib::GuidString(c.guid));
    e.Set("lid", c.lid ? absl::StrCat(*c.lid) : "");
    e.Set("port", absl::StrCat(c.port));
    e.Set("pn", c.pn);
    e.Set("sn", c.sn);
    e.Set("temperature", c.temperature_c ? absl::StrCat(*c.temperature_c) : "");
    e.Set("alarm_high", c.thresholds.alarm_temperature_high_c
                            ? absl::StrCat(*c.thresholds.alarm_temperature_high_c)
                            : "");
    std::vector<std::string> flags;
    for (const auto& [name, value] : ib::NamedFlags(c.flags)) {
      if (value && *value != 0) {
        flags.push_back(absl::StrCat(std::string(name), " 0x", absl::Hex(*value)));
      }
    }
    e.Set("flags", absl::StrJoin(flags, ", "));
    e.raw = absl::StrCat(c.port_name, " ", c.pn, " ", c.sn, " ", e.Value("temperature"), "C");
    events.push_back(std::move(e));
  }
  for (const ib::IbLink& l : scan.links) {
    if (!l.peer) continue;
    LogEvent e;
    e.kind = "ib.link";
    e.source = source;
    e.line = line_of(l.where);
    auto describe = [&](const ib::IbLinkEnd& end) {
      std::string d = end.description;
      if (auto it = names.find(ib::GuidString(end.node_guid)); d.empty() && it != names.end()) {
        d = it->second;
      }
      return triage_ib::NodeName(d, ib::GuidString(end.node_guid));
    };
    e.Set("node", describe(l.local));
    e.Set("guid", ib::GuidString(l.local.node_guid));
    e.Set("lid", l.local.lid ? absl::StrCat(*l.local.lid) : "");
    e.Set("port", absl::StrCat(l.local.port));
    e.Set("type", std::string(ib::NodeTypeName(l.local.type)));
    e.Set("peer", describe(*l.peer));
    e.Set("peer_guid", ib::GuidString(l.peer->node_guid));
    e.Set("peer_lid", l.peer->lid ? absl::StrCat(*l.peer->lid) : "");
    e.Set("peer_port", absl::StrCat(l.peer->port));
    e.Set("peer_type", std::string(ib::NodeTypeName(l.peer->type)));
    e.Set("width", l.speed.width_lanes > 0 ? absl::StrCat(l.speed.width_lanes, "x") : "");
    e.Set("speed", l.speed.generation);
    e.Set("gbps", l.speed.known() ? absl::StrCat(static_cast<uint64_t>(l.speed.aggregate_gbps()))
                                  : "");
    e.raw = absl::StrCat(e.Value("node"), " port ", e.Value("port"), " ", e.Value("width"),
                         e.Value("speed"), " ", e.Value("peer"), " port ", e.Value("peer_port"));
    events.push_back(std::move(e));
  }
  return events;
}

void AnalyzeIbTools(const std::vector<logs::LogEvent>& events,
                    std::vector<TriageFinding>& findings, std::vector<std::string>& context) {
  using logs::LogEvent;
  using triage_ib::Port;
  // Names for LIDs and GUIDs from any topology among the inputs (perfquery says only a LID).
  std::map<std::string, std::string> by_lid, by_guid;
  std::vector<const LogEvent*> links, cables;
  for (const LogEvent& e : events) {
    if (e.kind == "ib.cable") cables.push_back(&e);
  }
  std::map<std::string, Port> ports;  // by guid|lid / port: the last reading wins
  std::vector<std::string> order;
  for (const LogEvent& e : events) {
    if (e.kind != "ib.link") continue;
    links.push_back(&e);
    if (!e.Value("lid").empty()) by_lid.try_emplace(e.Value("lid"), e.Value("node"));
    if (!e.Value("guid").empty()) by_guid.try_emplace(e.Value("guid"), e.Value("node"));
    if (!e.Value("peer_lid").empty()) by_lid.try_emplace(e.Value("peer_lid"), e.Value("peer"));
    if (!e.Value("peer_guid").empty()) by_guid.try_emplace(e.Value("peer_guid"), e.Value("peer"));
  }
  for (const LogEvent& e : events) {
    if (e.kind != "ib.port_counters") continue;
    Port p;
    p.event = &e;
    p.guid = e.Value("guid");
    p.lid = e.Value("lid");
    p.port = e.Value("port");
    std::string node = triage_ib::NodeName(e.Value("node"), "");
    if (node.empty() && by_guid.contains(p.guid)) node = by_guid[p.guid];
    if (node.empty() && by_lid.contains(p.lid)) node = by_lid[p.lid];
    if (node.empty()) node = !p.guid.empty() ? p.guid : absl::StrCat("LID ", p.lid);
    p.name = absl::StrCat(node, " port ", p.port);
    const std::string key = absl::StrCat(p.guid.empty() ? p.lid : p.guid, "/", p.port);
    if (!ports.contains(key)) order.push_back(key);
    ports[key] = std::move(p);
  }
  std::vector<Port> readings;
  for (const std::string& key : order) readings.push_back(ports[key]);
  if (!readings.empty()) triage_ib::AnalyzeCounters(readings, findings);
  if (!links.empty()) triage_ib::AnalyzeLinks(links, findings);
  if (!cables.empty()) triage_ib::AnalyzeCables(cables, findings);
  if (readings.empty() && links.empty() && cables.empty()) return;
  std::vector<std::string> parts;
  if (!cables.empty()) parts.push_back(absl::StrCat(cables.size(), " cable modules"));
  if (!links.empty()) parts.push_back(absl::StrCat(links.size(), " port lines"));
  if (!readings.empty()) parts.push_back(absl::StrCat(readings.size(), " ports' counters"));
  context.push_back(absl::StrCat("InfiniBand tool output: ", absl::StrJoin(parts, ", ")));
}

}  // namespace railwatch
