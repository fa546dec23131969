#include "topology/discovery.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace railwatch {
namespace {

// mlx5_2 before mlx5_10, gpu-node-9 before gpu-node-10.
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;
}

struct Natural {
  bool operator()(const std::string& a, const std::string& b) const { return NaturalLess(a, b); }
};

std::string Join2(std::string_view a, std::string_view b) {
  std::string out(a);
  out.push_back('/');
  out.append(b);
  return out;
}

// "0C:42:A1:00:00:01", "0c-42-a1-00-00-01" -> "0c:42:a1:00:00:01"; other text unchanged.
std::string NormalMac(std::string_view text) {
  std::string out;
  int hex = 0;
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      ++hex;
    } else if (c == ':' || c == '-' || c == '.') {
      continue;
    } else {
      return std::string(text);
    }
  }
  if (hex != 12) return std::string(text);
  std::string mac;
  for (size_t i = 0; i < out.size(); i += 2) {
    if (!mac.empty()) mac.push_back(':');
    mac.append(out, i, 2);
  }
  return mac;
}

// Two spellings of one GUID: sysfs's "7cfe:9003:003b:4bde" (a GID's low half), the IB tools'
// "0x7cfe9003003b4bde", ibnetdiscover's "7cfe9003003b4bde" without leading zeros.
// Its hex digits, lower case, without leading zeros; "" for what is no GUID.
std::string GuidDigits(std::string_view g) {
  if (g.starts_with("0x") || g.starts_with("0X")) g.remove_prefix(2);
  std::string out;
  for (char c : g) {
    if (c == ':') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::string();
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  const size_t first = out.find_first_not_of('0');
  if (out.empty() || first == std::string::npos) return "";  // empty, or all zeros: no GUID
  return out.substr(first);
}

bool SameGuid(std::string_view a, std::string_view b) {
  const std::string x = GuidDigits(a);
  return !x.empty() && x == GuidDigits(b);
}

// What NormalMac gives for a MAC (and never for anything else): aa:bb:cc:dd:ee:ff.
bool IsNormalMac(std::string_view mac) {
  if (mac.size() != 17) return false;
  for (size_t i = 0; i < mac.size(); ++i) {
    const bool colon = i % 3 == 2;
    if (colon != (mac[i] == ':')) return false;
    if (!colon && !std::isxdigit(static_cast<unsigned char>(mac[i]))) return false;
  }
  return true;
}

// Names as agents report them: a host's own label is its short name; LLDP may carry its FQDN.
class Names {
 public:
  void Add(const std::string& name) { names_.insert(name); }
  bool Has(const std::string& name) const { return names_.contains(name); }
  // The known name `announced` stands for, or "" when none.
  std::string Resolve(std::string_view announced) const {
    if (announced.empty()) return "";
    if (names_.contains(std::string(announced))) return std::string(announced);
    const size_t dot = announced.find('.');
    std::string short_name(announced.substr(0, dot));
    if (dot != std::string_view::npos && names_.contains(short_name)) return short_name;
    return "";
  }

 private:
  absl::flat_hash_set<std::string> names_;
};

// The newest fact per (system, port).
std::vector<NeighbourFact> Newest(const std::vector<NeighbourFact>& facts) {
  std::map<std::pair<std::string, std::string>, const NeighbourFact*> newest;
  for (const NeighbourFact& f : facts) {
    if (f.system.empty() || f.port.empty() || f.neighbor_system.empty()) continue;
    auto [it, inserted] = newest.try_emplace({f.system, f.port}, &f);
    if (!inserted && std::tie(f.seen_unix_nano, f.neighbor_system, f.neighbor_port) >
                         std::tie(it->second->seen_unix_nano, it->second->neighbor_system,
                                  it->second->neighbor_port)) {
      it->second = &f;
    }
  }
  std::vector<NeighbourFact> out;
  out.reserve(newest.size());
  for (const auto& [key, f] : newest) out.push_back(*f);
  return out;
}

struct PortRef {
  std::string sw, port;
  bool operator==(const PortRef& o) const { return sw == o.sw && port == o.port; }
  bool operator<(const PortRef& o) const { return std::tie(sw, port) < std::tie(o.sw, o.port); }
  std::string Text() const { return Join2(sw, port); }
};

}  // namespace

std::string_view ProvenanceName(Provenance p) {
  switch (p) {
    case Provenance::kBothEnds: return "both ends";
    case Provenance::kSwitchEnd: return "switch end";
    case Provenance::kHostEnd: return "host end";
    case Provenance::kDeclared: return "declared";
    case Provenance::kEndsDisagree: return "ends disagree";
  }
  return "?";
}

DiscoveredTopology DiscoverTopology(const DiscoveryFacts& facts) {
  DiscoveredTopology out;
  std::set<std::string> notes;

  // NICs by host, and the names each is known by.
  struct Nic {
    NicFact fact;
    std::optional<PortRef> switch_end, host_end;
    int64_t switch_seen = 0;  // a moved cable: the old port may still report it, older
  };
  std::map<std::string, std::map<std::string, Nic, Natural>, Natural> hosts;
  Names host_names, switch_names;
  for (const NicFact& n : facts.nics) {
    if (n.host.empty() || n.device.empty()) continue;
    Nic& nic = hosts[n.host][n.device];
    nic.fact = n;
    nic.fact.mac = NormalMac(n.mac);
    host_names.Add(n.host);
  }
  for (const std::string& s : facts.switches) switch_names.Add(s);
  for (const NeighbourFact& f : facts.switch_ports) switch_names.Add(f.system);

  // A neighbour's port-id that is one of its switch's port MACs names that port.
  std::map<std::pair<std::string, std::string>, std::string> port_by_mac;  // (switch, mac)
  for (const SwitchPortFact& p : facts.switch_port_ids) {
    const std::string mac = NormalMac(p.mac);
    if (!p.system.empty() && !p.port.empty() && IsNormalMac(mac)) {
      port_by_mac[{p.system, mac}] = p.port;
    }
  }
  auto switch_port_name = [&](const std::string& sw, const std::string& port_id) {
    auto it = port_by_mac.find({sw, NormalMac(port_id)});
    return it != port_by_mac.end() ? it->second : port_id;
  };

  auto find_nic = [&](const std::string& host, std::string_view port_id) -> Nic* {
    auto h = hosts.find(host);
    if (h == hosts.end()) return nullptr;
    const std::string mac = NormalMac(port_id);
    for (auto& [device, nic] : h->second) {
      if (nic.fact.netdev == port_id || device == port_id || (!nic.fact.mac.empty() && nic.fact.mac == mac) ||
          (!nic.fact.port_guid.empty() && SameGuid(nic.fact.port_guid, port_id))) {
        return &nic;
      }
    }
    return nullptr;
  };

  // A NIC of any host by its port GUID: InfiniBand identity is the GUID, and an HCA's node
  // description need not name its host ("MT25408 ConnectX Mellanox Technologies").
  std::map<std::string, std::string> host_by_guid;  // GuidDigits(port GUID) -> host
  for (auto& [host, nics] : hosts) {
    for (auto& [device, nic] : nics) {
      if (std::string g = GuidDigits(nic.fact.port_guid); !g.empty()) host_by_guid[g] = host;
    }
  }
  auto host_of_guid = [&](std::string_view port_id) -> std::string {
    auto it = host_by_guid.find(GuidDigits(port_id));
    return it != host_by_guid.end() && !GuidDigits(port_id).empty() ? it->second : "";
  };

  // 1. What each switch port hears: a host NIC, or another switch.
  std::map<PortRef, PortRef> switch_views;  // switch port -> the switch port at its far end
  for (const NeighbourFact& f : Newest(facts.switch_ports)) {
    const PortRef here{f.system, f.port};
    std::string host = host_names.Resolve(f.neighbor_system);
    if (host.empty() && switch_names.Resolve(f.neighbor_system).empty()) {
      host = host_of_guid(f.neighbor_port);
    }
    if (!host.empty()) {
      Nic* nic = find_nic(host, f.neighbor_port);
      if (nic == nullptr) {
        notes.insert(absl::StrCat(here.Text(), ": host ", host, " announces port \"",
                                  f.neighbor_port,
                                  "\", which is none of its NICs' netdev, MAC, GUID or device"));
        continue;
      }
      if (nic->switch_end && nic->switch_seen > f.seen_unix_nano) continue;
      nic->switch_end = here;
      nic->switch_seen = f.seen_unix_nano;
    } else if (const std::string sw = switch_names.Resolve(f.neighbor_system); !sw.empty()) {
      switch_views[here] = PortRef{sw, switch_port_name(sw, f.neighbor_port)};
    } else {
      notes.insert(absl::StrCat(here.Text(), ": neighbour \"", f.neighbor_system, "\" port \"",
                                f.neighbor_port,
                                "\" is no host and no switch that an agent reports"));
    }
  }
  // 2. What each host interface hears (lldpd): the switch port its NIC plugs into. A switch no
  //    agent reaches is still named by the hosts that hear it.
  for (const NeighbourFact& f : Newest(facts.host_ports)) {
    auto h = hosts.find(f.system);
    if (h == hosts.end()) continue;
    Nic* nic = nullptr;
    for (auto& [device, n] : h->second) {
      if (n.fact.netdev == f.port) nic = &n;
    }
    if (nic == nullptr) continue;  // a management port or a bond: not an RDMA NIC
    std::string sw = switch_names.Resolve(f.neighbor_system);
    if (sw.empty()) sw = f.neighbor_system;
    nic->host_end = PortRef{sw, switch_port_name(sw, f.neighbor_port)};
  }

  // 3. One cable per NIC; one NIC per switch port.
  std::map<PortRef, std::string> port_owner;  // switch port -> "host/device"
  struct Placed {
    std::string host, device;
    PortRef at;
    int index = 0;
  };
  std::vector<Placed> placed;
  for (auto& [host, nics] : hosts) {
    int index = 0;
    for (auto& [device, nic] : nics) {
      const int my_index = index++;
      const std::string node = Join2(host, device);
      std::optional<PortRef> at;
      if (nic.switch_end && nic.host_end) {
        at = nic.switch_end;
        if (*nic.switch_end == *nic.host_end) {
          out.provenance[node] = Provenance::kBothEnds;
        } else {
          out.provenance[node] = Provenance::kEndsDisagree;
          notes.insert(absl::StrCat(node, ": switch ", nic.switch_end->Text(),
                                    " hears it, but its lldpd hears ", nic.host_end->Text(),
                                    " (the switch end is used)"));
        }
      } else if (nic.switch_end) {
        at = nic.switch_end;
        out.provenance[node] = Provenance::kSwitchEnd;
      } else if (nic.host_end) {
        at = nic.host_end;
        out.provenance[node] = Provenance::kHostEnd;
      }
      if (!at) continue;
      auto [owner, inserted] = port_owner.try_emplace(*at, node);
      if (!inserted) {
        notes.insert(absl::StrCat(at->Text(), ": both ", owner->second, " and ", node,
                                  " claim it (", owner->second, " kept)"));
        out.provenance.erase(node);
        continue;
      }
      placed.push_back({host, device, *at, my_index});
    }
  }

  // 4. Switch links, once per cable, from either end.
  struct Link {
    PortRef a, b;
    Provenance provenance;
  };
  std::map<std::pair<PortRef, PortRef>, Link> links;
  for (const auto& [here, there] : switch_views) {
    const bool forward = here < there;
    const PortRef& a = forward ? here : there;
    const PortRef& b = forward ? there : here;
    auto back = switch_views.find(there);
    Provenance p = Provenance::kSwitchEnd;
    if (back != switch_views.end()) {
      if (back->second == here) {
        p = Provenance::kBothEnds;
      } else {
        notes.insert(absl::StrCat(here.Text(), " hears ", there.Text(), ", which hears ",
                                  back->second.Text()));
        p = Provenance::kEndsDisagree;
      }
    }
    auto [it, inserted] = links.try_emplace({a, b}, Link{a, b, p});
    if (!inserted && p == Provenance::kEndsDisagree) it->second.provenance = p;
  }

  // 5. Roles: a switch with NICs on it is a leaf; one linked to switches only is a spine.
  std::map<std::string, std::string, Natural> roles;
  for (const std::string& s : facts.switches) roles[s];
  for (const NeighbourFact& f : facts.switch_ports) roles[f.system];
  for (const Placed& p : placed) roles[p.at.sw] = "leaf";
  for (const auto& [key, link] : links) {
    for (const PortRef* end : {&link.a, &link.b}) {
      std::string& role = roles[end->sw];
      if (role.empty()) role = "spine";
    }
  }

  // 6. Rails: a leaf's rail is the index (among its host's NICs) most of its NICs have; each
  //    NIC is on its leaf's rail.
  std::map<std::string, std::map<int, int>> leaf_indexes;
  for (const Placed& p : placed) ++leaf_indexes[p.at.sw][p.index];
  std::map<std::string, int> leaf_rail;
  for (const auto& [leaf, counts] : leaf_indexes) {
    int best = -1, best_count = 0;
    for (const auto& [index, count] : counts) {
      if (count > best_count) {
        best = index;
        best_count = count;
      }
    }
    leaf_rail[leaf] = best;
    if (counts.size() > 1) {
      std::vector<std::string> parts;
      for (const auto& [index, count] : counts) {
        parts.push_back(absl::StrCat(count, " of NIC index ", index));
      }
      notes.insert(absl::StrCat(leaf, " holds NICs of several indexes (", absl::StrJoin(parts, ", "),
                                "): rail ", best, " for all of them"));
    }
  }

  // 7. The topology.
  std::map<std::string, std::map<std::string, const Placed*, Natural>, Natural> placed_by_host;
  for (const Placed& p : placed) placed_by_host[p.host][p.device] = &p;
  std::vector<TopologyHost> topo_hosts;
  for (const auto& [host, nics] : hosts) {
    TopologyHost& h = topo_hosts.emplace_back();
    h.name = host;
    for (const auto& [device, nic] : nics) {
      TopologyNic& n = h.nics.emplace_back();
      n.device = device;
      n.netdev = nic.fact.netdev;
      auto ph = placed_by_host.find(host);
      if (ph == placed_by_host.end()) continue;
      auto pn = ph->second.find(device);
      if (pn == ph->second.end()) continue;
      n.switch_name = pn->second->at.sw;
      n.switch_port = pn->second->at.port;
      n.rail = leaf_rail[n.switch_name];
    }
  }
  std::vector<TopologySwitch> topo_switches;
  std::map<std::string, size_t> switch_at;
  for (const auto& [name, role] : roles) {
    switch_at[name] = topo_switches.size();
    TopologySwitch& s = topo_switches.emplace_back();
    s.name = name;
    s.role = role;
  }
  for (const auto& [key, link] : links) {
    // Written on its leaf's side (the lower name between two switches of one role).
    const bool a_leaf = roles[link.a.sw] == "leaf", b_leaf = roles[link.b.sw] == "leaf";
    const bool from_a = a_leaf == b_leaf ? true : a_leaf;
    const PortRef& near = from_a ? link.a : link.b;
    const PortRef& far = from_a ? link.b : link.a;
    topo_switches[switch_at[near.sw]].links.push_back({near.port, far.sw, far.port});
    out.provenance[near.Text()] = link.provenance;
  }
  for (TopologySwitch& s : topo_switches) {
    std::sort(s.links.begin(), s.links.end(), [](const TopologyLink& x, const TopologyLink& y) {
      return NaturalLess(x.port, y.port);
    });
  }
  out.topology = Topology::FromParts(std::move(topo_hosts), std::move(topo_switches), {});
  out.notes.assign(notes.begin(), notes.end());
  return out;
}

namespace {

// Each switch port's far end, from both ends of every link.
std::map<PortRef, PortRef> LinkEnds(const Topology& t) {
  std::map<PortRef, PortRef> ends;
  for (const TopologySwitch& s : t.switches()) {
    for (const TopologyLink& l : s.links) {
      ends[{s.name, l.port}] = {l.peer, l.peer_port};
      ends.try_emplace({l.peer, l.peer_port}, PortRef{s.name, l.port});
    }
  }
  return ends;
}

std::string RoleText(const TopologySwitch& s) { return s.role.empty() ? "switch" : s.role; }

}  // namespace

std::vector<TopologyDifference> DiffTopologies(const Topology& declared,
                                               const Topology& discovered) {
  std::vector<TopologyDifference> out;
  // Switches and their roles.
  std::map<std::string, const TopologySwitch*> ds, vs;
  for (const TopologySwitch& s : declared.switches()) ds[s.name] = &s;
  for (const TopologySwitch& s : discovered.switches()) vs[s.name] = &s;
  for (const auto& [name, s] : ds) {
    auto it = vs.find(name);
    if (it == vs.end()) {
      out.push_back({name, "switch", RoleText(*s), ""});
    } else if (!s->role.empty() && !it->second->role.empty() &&
               !absl::EqualsIgnoreCase(s->role, it->second->role)) {
      out.push_back({name, "role", s->role, it->second->role});
    }
  }
  for (const auto& [name, s] : vs) {
    if (!ds.contains(name)) out.push_back({name, "switch", "", RoleText(*s)});
  }
  // Switch links, per port; a link known to one side only is listed once, at its lower end.
  const std::map<PortRef, PortRef> dl = LinkEnds(declared), vl = LinkEnds(discovered);
  std::set<PortRef> ports;
  for (const auto& [p, far] : dl) ports.insert(p);
  for (const auto& [p, far] : vl) ports.insert(p);
  for (const PortRef& p : ports) {
    auto d = dl.find(p);
    auto v = vl.find(p);
    const std::string dt = d == dl.end() ? "" : d->second.Text();
    const std::string vt = v == vl.end() ? "" : v->second.Text();
    if (dt == vt) continue;
    if (dt.empty() || vt.empty()) {
      // The mirror of a one-sided link at its other end: listed there.
      const PortRef& far = dt.empty() ? v->second : d->second;
      const auto& same_side = dt.empty() ? vl : dl;
      const auto& other_side = dt.empty() ? dl : vl;
      if (far < p && !other_side.contains(far) && same_side.contains(far)) continue;
    }
    out.push_back({p.Text(), "link", dt, vt});
  }
  // NICs: their switch port, rail and netdev.
  std::map<std::string, const TopologyNic*> dn, vn;
  for (const TopologyHost& h : declared.hosts()) {
    for (const TopologyNic& n : h.nics) dn[Join2(h.name, n.device)] = &n;
  }
  for (const TopologyHost& h : discovered.hosts()) {
    for (const TopologyNic& n : h.nics) vn[Join2(h.name, n.device)] = &n;
  }
  auto port_text = [](const TopologyNic& n) {
    return n.switch_name.empty() ? std::string() : Join2(n.switch_name, n.switch_port);
  };
  for (const auto& [node, d] : dn) {
    auto it = vn.find(node);
    if (it == vn.end()) {
      out.push_back({node, "nic", port_text(*d).empty() ? "declared" : port_text(*d), ""});
      continue;
    }
    const TopologyNic& v = *it->second;
    if (port_text(*d) != port_text(v)) out.push_back({node, "switch port", port_text(*d), port_text(v)});
    if (d->rail >= 0 && v.rail >= 0 && d->rail != v.rail) {
      out.push_back({node, "rail", absl::StrCat(d->rail), absl::StrCat(v.rail)});
    } else if ((d->rail >= 0) != (v.rail >= 0)) {
      out.push_back({node, "rail", d->rail >= 0 ? absl::StrCat(d->rail) : "",
                     v.rail >= 0 ? absl::StrCat(v.rail) : ""});
    }
    if (!d->netdev.empty() && !v.netdev.empty() && d->netdev != v.netdev) {
      out.push_back({node, "netdev", d->netdev, v.netdev});
    }
  }
  for (const auto& [node, v] : vn) {
    if (!dn.contains(node)) {
      out.push_back({node, "nic", "", port_text(*v).empty() ? "discovered" : port_text(*v)});
    }
  }
  std::sort(out.begin(), out.end(), [](const TopologyDifference& a, const TopologyDifference& b) {
    if (a.where != b.where) return NaturalLess(a.where, b.where);
    return a.what < b.what;
  });
  return out;
}

Topology MergeTopologies(const Topology& declared, const Topology& discovered,
                         absl::flat_hash_map<std::string, Provenance>& provenance) {
  // Hosts: discovered NICs, with what the file says about each laid over them.
  std::map<std::string, std::map<std::string, TopologyNic, Natural>, Natural> hosts;
  for (const TopologyHost& h : discovered.hosts()) {
    for (const TopologyNic& n : h.nics) hosts[h.name][n.device] = n;
  }
  std::set<PortRef> declared_ports;
  for (const TopologyHost& h : declared.hosts()) {
    for (const TopologyNic& n : h.nics) {
      if (!n.switch_name.empty()) declared_ports.insert({n.switch_name, n.switch_port});
    }
  }
  // A discovered NIC on a port the file gives to another NIC loses that port.
  for (auto& [host, nics] : hosts) {
    for (auto& [device, n] : nics) {
      if (n.switch_name.empty() || !declared_ports.contains({n.switch_name, n.switch_port})) {
        continue;
      }
      const TopologyPortPeer* peer = declared.PeerOf(n.switch_name, n.switch_port);
      if (peer != nullptr && peer->system == host && peer->device == device) continue;
      n.switch_name.clear();
      n.switch_port.clear();
      provenance.erase(Join2(host, device));
    }
  }
  for (const TopologyHost& h : declared.hosts()) {
    hosts[h.name];  // a declared host without NICs stays
    for (const TopologyNic& d : h.nics) {
      const std::string node = Join2(h.name, d.device);
      auto [it, inserted] = hosts[h.name].try_emplace(d.device, d);
      TopologyNic& n = it->second;
      if (!inserted) {
        if (!d.netdev.empty()) n.netdev = d.netdev;
        if (d.rail >= 0) n.rail = d.rail;
        if (!d.switch_name.empty() &&
            (d.switch_name != n.switch_name || d.switch_port != n.switch_port)) {
          n.switch_name = d.switch_name;
          n.switch_port = d.switch_port;
          provenance[node] = Provenance::kDeclared;
        }
      } else if (!d.switch_name.empty()) {
        provenance[node] = Provenance::kDeclared;
      }
    }
  }
  std::vector<TopologyHost> out_hosts;
  for (auto& [name, nics] : hosts) {
    TopologyHost& h = out_hosts.emplace_back();
    h.name = name;
    for (auto& [device, n] : nics) h.nics.push_back(std::move(n));
  }

  // Switches: the union; the file's role and dialect win; its links replace any discovered
  // link at either of their ends.
  std::map<std::string, TopologySwitch, Natural> switches;
  for (const TopologySwitch& s : discovered.switches()) switches[s.name] = s;
  std::set<PortRef> declared_link_ports;
  for (const TopologySwitch& s : declared.switches()) {
    for (const TopologyLink& l : s.links) {
      declared_link_ports.insert({s.name, l.port});
      declared_link_ports.insert({l.peer, l.peer_port});
    }
  }
  const std::map<PortRef, PortRef> discovered_ends = LinkEnds(discovered);
  for (auto& [name, s] : switches) {
    std::erase_if(s.links, [&, &sw = s](const TopologyLink& l) {
      const bool replaced = declared_link_ports.contains({sw.name, l.port}) ||
                            declared_link_ports.contains({l.peer, l.peer_port});
      if (replaced) provenance.erase(Join2(sw.name, l.port));
      return replaced;
    });
  }
  for (const TopologySwitch& d : declared.switches()) {
    auto [it, inserted] = switches.try_emplace(d.name);
    TopologySwitch& s = it->second;
    s.name = d.name;
    if (!d.role.empty()) s.role = d.role;
    if (!d.dialect.empty()) s.dialect = d.dialect;
    for (const TopologyLink& l : d.links) {
      s.links.push_back(l);
      auto e = discovered_ends.find({d.name, l.port});
      const bool seen = e != discovered_ends.end() && e->second == PortRef{l.peer, l.peer_port};
      if (!seen) provenance[Join2(d.name, l.port)] = Provenance::kDeclared;
    }
  }
  std::vector<TopologySwitch> out_switches;
  for (auto& [name, s] : switches) out_switches.push_back(std::move(s));
  return Topology::FromParts(std::move(out_hosts), std::move(out_switches), declared.jobs());
}

namespace {

// A YAML scalar: plain when it reads back as the same string, double-quoted otherwise.
std::string Scalar(std::string_view s) {
  bool plain = !s.empty();
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
          c == '/')) {
      plain = false;
    }
  }
  if (plain) {
    const std::string lower = absl::AsciiStrToLower(std::string(s));
    static const char* const kWords[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
    for (const char* w : kWords) {
      if (lower == w) plain = false;
    }
    if (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '.') plain = false;
  }
  if (plain) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, "\\x", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
      continue;
    }
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace

std::string TopologyToYaml(const Topology& topology,
                           const absl::flat_hash_map<std::string, Provenance>* provenance) {
  auto comment = [&](const std::string& key) -> std::string {
    if (provenance == nullptr) return "";
    auto it = provenance->find(key);
    if (it == provenance->end()) return "";
    return "  # " + std::string(ProvenanceName(it->second));
  };
  std::vector<const TopologySwitch*> switches;
  for (const TopologySwitch& s : topology.switches()) switches.push_back(&s);
  std::sort(switches.begin(), switches.end(),
            [](auto* a, auto* b) { return NaturalLess(a->name, b->name); });
  std::vector<const TopologyHost*> hosts;
  for (const TopologyHost& h : topology.hosts()) hosts.push_back(&h);
  std::sort(hosts.begin(), hosts.end(),
            [](auto* a, auto* b) { return NaturalLess(a->name, b->name); });

  std::string out = "switches:\n";
  if (switches.empty()) out = "switches: []\n";
  for (const TopologySwitch* s : switches) {
    absl::StrAppend(&out, "  - name: ", Scalar(s->name), "\n");
    if (!s->role.empty()) absl::StrAppend(&out, "    role: ", Scalar(s->role), "\n");
    if (!s->dialect.empty()) absl::StrAppend(&out, "    dialect: ", Scalar(s->dialect), "\n");
    if (s->links.empty()) continue;
    out += "    links:\n";
    for (const TopologyLink& l : s->links) {
      absl::StrAppend(&out, "      - {port: ", Scalar(l.port), ", peer: ", Scalar(l.peer),
                      ", peer_port: ", Scalar(l.peer_port), "}", comment(Join2(s->name, l.port)),
                      "\n");
    }
  }
  out += hosts.empty() ? "hosts: []\n" : "hosts:\n";
  for (const TopologyHost* h : hosts) {
    absl::StrAppend(&out, "  - name: ", Scalar(h->name), "\n");
    if (h->nics.empty()) {
      out += "    nics: []\n";
      continue;
    }
    out += "    nics:\n";
    std::vector<const TopologyNic*> nics;
    for (const TopologyNic& n : h->nics) nics.push_back(&n);
    std::sort(nics.begin(), nics.end(),
              [](auto* a, auto* b) { return NaturalLess(a->device, b->device); });
    for (const TopologyNic* n : nics) {
      absl::StrAppend(&out, "      - {device: ", Scalar(n->device));
      if (!n->netdev.empty()) absl::StrAppend(&out, ", netdev: ", Scalar(n->netdev));
      if (n->rail >= 0) absl::StrAppend(&out, ", rail: ", n->rail);
      if (!n->switch_name.empty()) {
        absl::StrAppend(&out, ", switch: ", Scalar(n->switch_name), ", port: ",
                        Scalar(n->switch_port));
      }
      absl::StrAppend(&out, "}", comment(Join2(h->name, n->device)), "\n");
    }
  }
  if (!topology.jobs().empty()) {
    out += "jobs:\n";
    for (const TopologyJob& j : topology.jobs()) {
      std::vector<std::string> names;
      for (const std::string& h : j.hosts) names.push_back(Scalar(h));
      absl::StrAppend(&out, "  - name: ", Scalar(j.name), "\n    hosts: [",
                      absl::StrJoin(names, ", "), "]\n    gpus_per_host: ", j.gpus_per_host, "\n");
    }
  }
  return out;
}

}  // namespace railwatch
