#include "collectors/ib_mad_source.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "collectors/ib_fabric_collector.h"

namespace railwatch {
namespace ib_mad_source_internal {

// Runs fn(0..n-1) on up to `window` threads (the caller's among them).
void ParallelFor(size_t n, int window, const std::function<void(size_t)>& fn) {
  const size_t threads = std::min<size_t>(static_cast<size_t>(std::max(window, 1)), n);
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

ib::IbGuid Guid(uint64_t value) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, value);
  return ib::IbGuid{buf, value};
}

std::string StatusText(const absl::Status& status) {
  return status.code() == absl::StatusCode::kDeadlineExceeded
             ? absl::StrCat("no answer (", status.message(), ")")
             : std::string(status.message());
}

// One node (a switch), or one HCA port, to ask about: reached at `path`, where NodeInfo
// answered `info`.
struct Visit {
  DrPath path;
  MadNodeInfo info;
  bool first = true;  // the node's first visit: its description is read
  uint64_t from_guid = 0;  // the node and port it was reached from (none for the local node)
  int from_port = 0;
};

struct PortAnswer {
  int port = 0;
  absl::StatusOr<MadPortInfo> info = absl::UnknownError("not asked");
  bool fdr10 = false;
  bool back = false;         // its far end is where the visit came from
  bool hop_limited = false;  // up, but one hop more than a directed route carries
  std::optional<absl::StatusOr<MadNodeInfo>> peer;  // asked only past a link that is up
};

struct VisitAnswer {
  absl::StatusOr<std::string> description = std::string();
  std::optional<absl::StatusOr<MadPortInfo>> port0;  // a switch's: its LID and capabilities
  std::vector<PortAnswer> ports;
};

struct NodeState {
  MadNodeInfo info;
  std::string description;
  std::string where;
  std::optional<uint32_t> lid;  // a switch's
  bool ext_speeds = false;      // a switch's CapabilityMask (port 0)
};

struct CaPort {
  uint64_t port_guid = 0;
  std::optional<uint32_t> lid;
};

using PortKey = std::pair<uint64_t, int>;

struct LinkState {
  PortKey a, b;
  ib::IbLinkSpeed speed;
  std::string where;
};

}  // namespace ib_mad_source_internal

void IbMadSource::ProblemLog::Add(const std::string& key, ib::IbProblem problem,
                                  std::vector<ib::IbProblem>& out) {
  if (current_.insert(key).second && !previous_.contains(key)) out.push_back(std::move(problem));
}

void IbMadSource::ProblemLog::Finish() {
  previous_ = std::move(current_);
  current_.clear();
}

IbMadSource::IbMadSource(Options options, std::unique_ptr<IbMadTransport> transport,
                         const Clock& clock)
    : options_(std::move(options)), transport_(std::move(transport)), clock_(clock) {}

int IbMadSource::Window() const {
  return options_.window > 0 ? options_.window : std::max(1, transport_->MaxOutstanding());
}

size_t IbMadSource::switch_ports() const {
  size_t n = 0;
  for (const SwitchPorts& s : topology_.switches) n += s.ports.size();
  return n;
}

absl::Status IbMadSource::Discover(std::vector<ib::IbProblem>& problems) {
  using namespace ib_mad_source_internal;  // NOLINT: this file's helpers (not at file scope:
                                           // the unity build shares it)
  transport_->TopologyChanged();
  const std::string origin = transport_->Describe();
  absl::StatusOr<MadNodeInfo> local = Ask([](IbMadTransport& t) { return t.QueryNodeInfo({}); });
  if (!local.ok()) {
    return absl::Status(local.status().code(),
                        absl::StrCat(origin, ": the local port does not answer NodeInfo: ",
                                     StatusText(local.status())));
  }
  const int max_hops = std::clamp(options_.max_hops, 1, kMaxDrHops);

  std::map<uint64_t, NodeState> nodes;
  std::vector<uint64_t> node_order;
  std::map<PortKey, CaPort> ca_ports;
  std::set<PortKey> visited_ca_ports;
  std::map<std::pair<PortKey, PortKey>, size_t> link_index;
  std::vector<LinkState> links;
  std::map<uint64_t, std::vector<std::pair<int, bool>>> switch_ports;  // ports: (port, up)
  auto node_name = [&](uint64_t guid) {
    auto it = nodes.find(guid);
    std::string name = it != nodes.end() ? IbSwitchName(it->second.description) : "";
    return name.empty() ? Guid(guid).text : name;
  };
  auto add_link = [&](PortKey here, PortKey there, const ib::IbLinkSpeed& speed,
                      const std::string& where) {
    std::pair<PortKey, PortKey> key = here < there ? std::pair{here, there} : std::pair{there, here};
    auto [it, inserted] = link_index.try_emplace(key, links.size());
    if (inserted) {
      links.push_back({here, there, speed, where});
    } else if (!links[it->second].speed.known() && speed.known()) {
      links[it->second].speed = speed;
    }
  };

  std::vector<Visit> frontier = {Visit{{}, *local, true, 0, 0}};
  if (local->type == ib::IbNodeType::kCa) visited_ca_ports.insert({local->node_guid, local->local_port});
  while (!frontier.empty()) {
    std::vector<VisitAnswer> answers(frontier.size());
    ParallelFor(frontier.size(), Window(), [&](size_t i) {
      const Visit& v = frontier[i];
      VisitAnswer& a = answers[i];
      const bool is_switch = v.info.type == ib::IbNodeType::kSwitch;
      if (v.first) {
        a.description = Ask([&](IbMadTransport& t) { return t.QueryNodeDescription(v.path); });
      }
      std::vector<int> ports;
      if (is_switch) {
        a.port0 = Ask([&](IbMadTransport& t) { return t.QueryPortInfo(v.path, 0); });
        for (int p = 1; p <= v.info.num_ports; ++p) ports.push_back(p);
      } else {
        ports.push_back(v.info.local_port);
      }
      for (int p : ports) {
        PortAnswer& pa = a.ports.emplace_back();
        pa.port = p;
        pa.info = Ask([&](IbMadTransport& t) { return t.QueryPortInfo(v.path, p); });
        if (!pa.info.ok() || !pa.info->link_up()) continue;
        if (v.info.vendor_id == kMellanoxVendorId && pa.info->link_speed_active == 4 &&
            pa.info->link_speed_ext_active == 0) {
          absl::StatusOr<bool> fdr10 =
              Ask([&](IbMadTransport& t) { return t.QueryFdr10Active(v.path, p); });
          pa.fdr10 = fdr10.ok() && *fdr10;
        }
        if (!v.path.ports.empty() && p == v.info.local_port) {
          pa.back = true;  // the port the visit came in by
        } else if (!v.path.ports.empty() && !is_switch) {
          continue;  // an HCA forwards no SMP
        } else if (v.path.hops() >= max_hops) {
          pa.hop_limited = true;
        } else {
          pa.peer = Ask([&](IbMadTransport& t) { return t.QueryNodeInfo(v.path.Then(p)); });
        }
      }
    });

    std::vector<Visit> next;
    for (size_t i = 0; i < frontier.size(); ++i) {
      const Visit& v = frontier[i];
      VisitAnswer& a = answers[i];
      const uint64_t guid = v.info.node_guid;
      const bool is_switch = v.info.type == ib::IbNodeType::kSwitch;
      const std::string where = absl::StrCat("mad:DR ", v.path.ToString());
      if (v.first) {
        NodeState& n = nodes[guid];
        node_order.push_back(guid);
        n.info = v.info;
        n.where = where;
        if (a.description.ok()) {
          n.description = *a.description;
        } else {
          discovery_problems_.Add(
              absl::StrCat("desc:", guid), {where, absl::StrCat(
                  "NodeDescription of ", Guid(guid).text, ": ", StatusText(a.description.status()))},
              problems);
        }
        if (a.port0 && a.port0->ok()) {
          n.lid = (*a.port0)->lid;
          n.ext_speeds = ((*a.port0)->capability_mask & kPortCapExtendedSpeeds) != 0;
        } else if (a.port0) {
          discovery_problems_.Add(
              absl::StrCat("port0:", guid),
              {where, absl::StrCat("PortInfo of switch ", node_name(guid), " (", Guid(guid).text,
                                   ") port 0: ", StatusText(a.port0->status()),
                                   "; its counters cannot be read without its LID")},
              problems);
        }
      }
      const NodeState& node = nodes[guid];
      if (!is_switch) {
        CaPort& cp = ca_ports[{guid, v.info.local_port}];
        cp.port_guid = v.info.port_guid;
      }
      for (PortAnswer& pa : a.ports) {
        const PortKey here{guid, pa.port};
        if (!pa.info.ok()) {
          discovery_problems_.Add(
              absl::StrCat("portinfo:", guid, ":", pa.port),
              {where, absl::StrCat("PortInfo of ", node_name(guid), " port ", pa.port, ": ",
                                   StatusText(pa.info.status()))},
              problems);
          continue;
        }
        if (is_switch) switch_ports[guid].emplace_back(pa.port, pa.info->link_up());
        if (!is_switch) {
          ca_ports[here].lid = pa.info->lid;
          if (!pa.info->link_up()) continue;
        }
        if (!pa.info->link_up()) continue;
        const bool ext = is_switch ? node.ext_speeds
                                   : (pa.info->capability_mask & kPortCapExtendedSpeeds) != 0;
        const ib::IbLinkSpeed speed = MadLinkSpeed(*pa.info, ext, pa.fdr10);
        const std::string port_where = absl::StrCat("mad:DR ", v.path.Then(pa.port).ToString());
        if (pa.back) {
          add_link(here, {v.from_guid, v.from_port}, speed, port_where);
        } else if (pa.hop_limited) {
          discovery_problems_.Add(
              absl::StrCat("hops:", guid, ":", pa.port),
              {port_where, absl::StrCat("not followed past ", node_name(guid), " port ", pa.port,
                                        ": a directed route carries at most ", max_hops,
                                        " hops")},
              problems);
        } else if (pa.peer && !pa.peer->ok()) {
          // A node that does not answer: the rest of the fabric is still discovered (a fat
          // tree reaches its spines through every leaf).
          discovery_problems_.Add(
              absl::StrCat("node:", guid, ":", pa.port),
              {port_where, absl::StrCat("the node behind ", node_name(guid), " port ", pa.port,
                                        " does not answer NodeInfo: ",
                                        StatusText(pa.peer->status()))},
              problems);
        } else if (pa.peer) {
          const MadNodeInfo& peer = **pa.peer;
          const PortKey there{peer.node_guid, peer.local_port};
          add_link(here, there, speed, port_where);
          Visit visit{v.path.Then(pa.port), peer, !nodes.contains(peer.node_guid), guid, pa.port};
          if (peer.type == ib::IbNodeType::kSwitch) {
            if (visit.first) {
              nodes[peer.node_guid];  // claimed: reached once
              next.push_back(std::move(visit));
            }
          } else if (visited_ca_ports.insert(there).second) {
            if (visit.first) nodes[peer.node_guid];
            next.push_back(std::move(visit));
          }
        }
      }
    }
    frontier = std::move(next);
  }
  // A node claimed when it was found is filled by its visit's answer; one whose visit came
  // later in the same level than another path's is the same node, so `first` held once.

  Topology topology;
  for (uint64_t guid : node_order) {
    const NodeState& n = nodes[guid];
    ib::IbNode node;
    node.type = n.info.type;
    node.guid = Guid(guid);
    node.system_image_guid = Guid(n.info.system_image_guid);
    node.description = n.description;
    node.num_ports = n.info.num_ports;
    node.lid = n.lid;
    node.vendor_id = n.info.vendor_id;
    node.device_id = n.info.device_id;
    node.where = n.where;
    topology.nodes.push_back(std::move(node));
  }
  auto end_of = [&](const PortKey& key) {
    ib::IbLinkEnd end;
    end.node_guid = Guid(key.first);
    end.port = key.second;
    if (auto it = nodes.find(key.first); it != nodes.end()) {
      end.type = it->second.info.type;
      end.description = it->second.description;
      if (end.type == ib::IbNodeType::kSwitch) end.lid = it->second.lid;
    }
    if (auto it = ca_ports.find(key); it != ca_ports.end()) {
      end.port_guid = Guid(it->second.port_guid);
      end.lid = it->second.lid;
    }
    return end;
  };
  for (const LinkState& l : links) {
    // Every cable from both ends, as ibnetdiscover prints it in both nodes' blocks.
    for (const auto& [here, there] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      ib::IbLink link;
      link.local = end_of(here);
      link.peer = end_of(there);
      link.speed = l.speed;
      link.where = l.where;
      topology.links.push_back(std::move(link));
    }
  }
  std::map<uint64_t, bool> no_extended;
  for (const SwitchPorts& s : topology_.switches) no_extended[s.guid] = s.no_extended;
  for (uint64_t guid : node_order) {
    const NodeState& n = nodes[guid];
    if (n.info.type != ib::IbNodeType::kSwitch || !n.lid) continue;
    if (ib::IsUnassignedLid(*n.lid)) {
      // PMA queries go by LID: a switch the subnet manager has not given one cannot be read.
      discovery_problems_.Add(
          absl::StrCat("nolid:", guid),
          {n.where, absl::StrCat("switch ", node_name(guid), " (", Guid(guid).text,
                                 ") has no LID (is a subnet manager running?): its counters "
                                 "are not read")},
          problems);
      continue;
    }
    SwitchPorts s;
    s.guid = guid;
    s.lid = *n.lid;
    s.name = node_name(guid);
    s.no_extended = no_extended[guid];
    for (const auto& [port, up] : switch_ports[guid]) {
      if (up) ever_linked_.insert({guid, port});
      if (up || ever_linked_.contains({guid, port})) s.ports.push_back(port);
    }
    if (!s.ports.empty()) topology.switches.push_back(std::move(s));
  }
  discovery_problems_.Finish();
  topology_ = std::move(topology);
  discovered_ = true;
  ++discoveries_;
  return absl::OkStatus();
}

void IbMadSource::ReadCounters(IbFabricScan& scan, bool& link_went_down) {
  using namespace ib_mad_source_internal;  // NOLINT
  struct Read {
    std::vector<IbFabricScan::Counters> counters;
    std::optional<absl::Status> failure;
    int failed_port = 0;
    bool no_extended = false;
  };
  std::vector<Read> reads(topology_.switches.size());
  ParallelFor(reads.size(), Window(), [&](size_t i) {
    const SwitchPorts& sw = topology_.switches[i];
    Read& r = reads[i];
    r.no_extended = sw.no_extended;
    // A port's two attributes carry one time: the collector then keeps, of a counter both
    // have, the one with the larger count (ib::MoreOfTheCount), not merely the later reading
    // (PortCounters' 32-bit PortXmitData stuck at all ones over the extended one).
    auto record = [&](ib::PmaAttribute attribute, const MadPortCounters& values, int port,
                      int64_t read_at) {
      IbFabricScan::Counters c;
      c.time_unix_nano = read_at;
      c.port.attribute = attribute;
      c.port.lid = sw.lid;
      c.port.node_guid = Guid(sw.guid);
      c.port.port = port;
      c.port.cap_mask = values.cap_mask;
      c.port.cap_mask2 = values.cap_mask2;
      c.port.where = absl::StrCat("mad:lid ", sw.lid, " port ", port);
      for (const MadPortCounters::Value& v : values.values) {
        c.port.counters.emplace(std::string(v.name), ib::MakeCounter(attribute, v.name, v.value));
      }
      r.counters.push_back(std::move(c));
    };
    for (int port : sw.ports) {
      const int64_t read_at = clock_.NowNanos();
      bool complete = false;
      if (!r.no_extended) {
        absl::StatusOr<MadPortCounters> ext = Ask(
            [&](IbMadTransport& t) { return t.QueryPortCountersExtended(sw.lid, port); });
        if (ext.ok()) {
          record(ib::PmaAttribute::kPortCountersExtended, *ext, port, read_at);
          complete = (ext->cap_mask2 & kPmaCap2AllExtended) != 0;
        } else if (ext.status().code() == absl::StatusCode::kUnimplemented) {
          r.no_extended = true;
        } else {
          r.failure = ext.status();
          r.failed_port = port;
          break;  // a switch that does not answer is not asked 64 times
        }
      }
      if (complete) continue;
      absl::StatusOr<MadPortCounters> basic =
          Ask([&](IbMadTransport& t) { return t.QueryPortCounters(sw.lid, port); });
      if (!basic.ok()) {
        r.failure = basic.status();
        r.failed_port = port;
        break;
      }
      record(ib::PmaAttribute::kPortCounters, *basic, port, read_at);
    }
  });
  for (size_t i = 0; i < reads.size(); ++i) {
    SwitchPorts& sw = topology_.switches[i];
    Read& r = reads[i];
    sw.no_extended = r.no_extended;
    if (r.failure) {
      counter_problems_.Add(
          absl::StrCat("pma:", sw.guid),
          {absl::StrCat("mad:lid ", sw.lid, " port ", r.failed_port),
           absl::StrCat("switch ", sw.name, " (", Guid(sw.guid).text, ", LID ", sw.lid,
                        ") port ", r.failed_port, " counters: ", StatusText(*r.failure),
                        "; its other ports are not asked this scan")},
          scan.problems);
    }
    for (IbFabricScan::Counters& c : r.counters) {
      if (auto it = c.port.counters.find("LinkDownedCounter"); it != c.port.counters.end()) {
        const PortKey key{sw.guid, *c.port.port};
        auto [last, inserted] = link_downed_.try_emplace(key, it->second.value);
        if (!inserted && it->second.value > last->second) link_went_down = true;
        last->second = it->second.value;
      }
      scan.counters.push_back(std::move(c));
    }
  }
  counter_problems_.Finish();
}

absl::StatusOr<IbFabricScan> IbMadSource::Scan() {
  IbFabricScan scan;
  const absl::Time now = clock_.Now();
  if (!discovered_ || rediscover_ || now - discovered_at_ >= options_.discover_interval) {
    if (absl::Status s = Discover(scan.problems); !s.ok()) return s;
    discovered_at_ = now;
    rediscover_ = false;
  }
  bool link_went_down = false;
  ReadCounters(scan, link_went_down);
  if (link_went_down) {
    // A port's state changed: the cabling is asked again now, so that this scan's links are
    // the fabric's (a moved cable's new far end is read from the next scan on).
    if (absl::Status s = Discover(scan.problems); !s.ok()) return s;
    discovered_at_ = now;
  }
  scan.nodes = topology_.nodes;
  scan.links = topology_.links;
  scan.inputs_read = static_cast<int>(topology_.nodes.size());
  return scan;
}

}  // namespace railwatch
