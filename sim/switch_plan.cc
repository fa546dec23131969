// The simulated switches' cabling plan: names, dialects, ports and peers, LLDP miswires.
#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/labels.h"
#include "sim/switch_model.h"

namespace railwatch::sim {
namespace {

constexpr std::pair<Dialect, std::string_view> kDialects[] = {
    {Dialect::kOpenConfig, "openconfig"},
    {Dialect::kSonic, "sonic"},
    {Dialect::kAristaEos, "arista-eos"},
    {Dialect::kCumulus, "cumulus"}};

std::string HostChassis(int host, int nic) {
  return absl::StrFormat("b8:3f:d2:00:%02x:%02x", host % 256, nic);
}

std::string SwitchChassis(int index) {
  return absl::StrFormat("02:00:00:00:%02x:%02x", index % 256, index / 256);
}

// A port's own MAC: the switch's base MAC (its chassis id) with the port index in the fourth
// octet, one MAC per port as switches that give each port its own do.
std::string SwitchPortMac(int index, size_t port) {
  return absl::StrFormat("02:00:%02x:00:%02x:%02x", (port + 1) % 256, index % 256, index / 256);
}

}  // namespace

absl::StatusOr<Dialect> ParseDialect(absl::string_view name) {
  for (const auto& [d, n] : kDialects) {
    if (AsAbsl(n) == name) return d;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown switch dialect \"", name, "\": expected sonic, arista-eos, openconfig or cumulus"));
}

std::string_view DialectName(Dialect d) {
  for (const auto& [dd, n] : kDialects) {
    if (dd == d) return n;
  }
  return "openconfig";
}

std::string SwitchPortName(Dialect d, int index) {
  switch (d) {
    case Dialect::kSonic:
      // SONiC names ports by their first SerDes lane: 4 lanes per port.
      return absl::StrCat("Ethernet", index * 4);
    case Dialect::kCumulus:
      return absl::StrCat("swp", index + 1);
    case Dialect::kAristaEos:
    case Dialect::kOpenConfig:
      return absl::StrCat("Ethernet", index + 1);
  }
  return absl::StrCat("Ethernet", index + 1);
}

absl::StatusOr<LldpMiswire> ParseLldpMiswire(absl::string_view spec) {
  std::vector<absl::string_view> parts = absl::StrSplit(spec, '/');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad LLDP miswire \"", spec, "\": expected SWITCH/PORT, e.g. leaf-r2/Ethernet8"));
  }
  return LldpMiswire{std::string(parts[0]), std::string(parts[1])};
}

absl::Status SwitchFabric::Build() {
  if (options_.hosts < 1 || options_.nics_per_host < 1 || options_.spines < 0 ||
      options_.hosts_per_leaf < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a switch fabric needs hosts >= 1, nics >= 1, spines >= 0 and hosts_per_leaf >= 0 (got ",
        options_.hosts, ", ", options_.nics_per_host, ", ", options_.spines, ", ",
        options_.hosts_per_leaf, ")"));
  }
  const bool grouped = options_.hosts_per_leaf > 0;
  hosts_per_leaf_ = grouped ? options_.hosts_per_leaf : options_.hosts;
  const int groups = (options_.hosts + hosts_per_leaf_ - 1) / hosts_per_leaf_;
  leaves_ = groups * options_.nics_per_host;
  std::vector<std::string> names;
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < options_.nics_per_host; ++k) {
      names.push_back(grouped ? absl::StrCat("leaf-g", g, "-r", k) : absl::StrCat("leaf-r", k));
    }
  }
  for (int s = 0; s < options_.spines; ++s) names.push_back(absl::StrCat("spine-", s));
  switches_.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    SimSwitch& sw = switches_[i];
    sw.name = names[i];
    const bool leaf = static_cast<int>(i) < leaves_;
    sw.role = leaf ? "leaf" : "spine";
    sw.rail = leaf ? static_cast<int>(i) % options_.nics_per_host : -1;
    sw.group = leaf ? static_cast<int>(i) / options_.nics_per_host : -1;
  }
  if (absl::Status s = AssignDialects(names); !s.ok()) return s;
  if (absl::Status s = BuildPorts(names); !s.ok()) return s;
  if (absl::Status s = ApplyMiswires(); !s.ok()) return s;

  for (const PfcStorm& s : options_.storms) {
    if (LeafPortOf(s.host, s.device).first < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("PFC storm source ", s.host, "/", s.device, " is not a simulated NIC"));
    }
  }
  for (const PfcDeadlock& d : options_.deadlocks) {
    if (LeafPortOf(d.host, d.device).first < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("PFC deadlock NIC ", d.host, "/", d.device, " is not a simulated NIC"));
    }
  }
  for (const EcnMisconfig& m : options_.ecn_misconfigs) {
    auto it = std::find(names.begin(), names.begin() + leaves_, m.switch_name);
    if (it == names.begin() + leaves_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ECN misconfiguration target ", m.switch_name, " is not a simulated leaf (",
          names.front(), " .. ", names[leaves_ - 1], ")"));
    }
    misconfig_leaf_.push_back(static_cast<int>(it - names.begin()));
  }
  return absl::OkStatus();
}

// Round-robin over the plain entries (leaves, then spines), then per-name overrides.
absl::Status SwitchFabric::AssignDialects(const std::vector<std::string>& names) {
  std::vector<Dialect> round_robin;
  std::map<std::string, Dialect> by_name;
  std::vector<std::string> specs = options_.dialects;
  if (specs.empty()) specs = {"sonic", "arista-eos", "openconfig", "cumulus"};
  for (const std::string& spec : specs) {
    std::vector<std::string> kv = absl::StrSplit(spec, absl::MaxSplits('=', 1));
    absl::StatusOr<Dialect> d = ParseDialect(kv.back());
    if (!d.ok()) return d.status();
    if (kv.size() == 2) {
      if (std::find(names.begin(), names.end(), kv[0]) == names.end()) {
        return absl::InvalidArgumentError(absl::StrCat("switch dialect \"", spec,
                                                       "\" names no simulated switch (",
                                                       absl::StrJoin(names, ", "), ")"));
      }
      by_name[kv[0]] = *d;
    } else {
      round_robin.push_back(*d);
    }
  }
  if (round_robin.empty()) round_robin.push_back(Dialect::kOpenConfig);
  for (size_t i = 0; i < switches_.size(); ++i) {
    auto it = by_name.find(switches_[i].name);
    switches_[i].dialect = it != by_name.end() ? it->second : round_robin[i % round_robin.size()];
  }
  return absl::OkStatus();
}

absl::Status SwitchFabric::BuildPorts(const std::vector<std::string>& names) {
  const int nics = options_.nics_per_host;
  // InfiniBand ports are numbered from 1, as ibportstate and iblinkinfo take them.
  auto port_name = [this](const SimSwitch& sw, int index) {
    return options_.infiniband ? absl::StrCat(index + 1) : SwitchPortName(sw.dialect, index);
  };
  nic_port_.assign(static_cast<size_t>(options_.hosts) * nics, {-1, -1});
  for (int l = 0; l < leaves_; ++l) {
    SimSwitch& leaf = switches_[l];
    const int first = leaf.group * hosts_per_leaf_ + 1;
    const int last = std::min(options_.hosts, first + hosts_per_leaf_ - 1);
    for (int h = first; h <= last; ++h) {
      SwitchPort& p = leaf.ports.emplace_back();
      p.name = port_name(leaf, h - first);
      p.peer = SysfsFabric::HostName(h);
      p.peer_port = SysfsFabric::NetdevName(leaf.rail);
      p.peer_device = absl::StrCat("mlx5_", leaf.rail);
      p.lldp_system_name = p.peer;
      p.lldp_port_id = p.peer_port;
      p.lldp_chassis_id = HostChassis(h, leaf.rail);
      nic_port_[static_cast<size_t>(h - 1) * nics + leaf.rail] = {l, static_cast<int>(leaf.ports.size()) - 1};
    }
    for (int s = 0; s < options_.spines; ++s) {
      const int spine = leaves_ + s;
      SwitchPort& p = leaf.ports.emplace_back();
      p.name = port_name(leaf, hosts_per_leaf_ + s);
      p.peer = names[spine];
      p.peer_port = port_name(switches_[spine], l);
      p.uplink = true;
      p.peer_switch = spine;
      p.peer_port_index = l;
      p.lldp_system_name = p.peer;
      p.lldp_port_id = p.peer_port;
      p.lldp_chassis_id = SwitchChassis(spine);
    }
  }
  for (int s = 0; s < options_.spines; ++s) {
    SimSwitch& spine = switches_[leaves_ + s];
    for (int l = 0; l < leaves_; ++l) {
      SwitchPort& p = spine.ports.emplace_back();
      p.name = port_name(spine, l);
      p.peer = names[l];
      // The leaf's uplink to spine s follows its host ports.
      p.peer_port_index = static_cast<int>(switches_[l].ports.size()) - options_.spines + s;
      p.peer_port = switches_[l].ports[p.peer_port_index].name;
      p.peer_switch = l;
      p.lldp_system_name = p.peer;
      p.lldp_port_id = p.peer_port;
      p.lldp_chassis_id = SwitchChassis(l);
    }
  }
  for (size_t i = 0; i < switches_.size(); ++i) {
    for (size_t p = 0; p < switches_[i].ports.size(); ++p) {
      switches_[i].ports[p].mac = SwitchPortMac(static_cast<int>(i), p);
      switches_[i].ports[p].speed_gbps = options_.link_gbps;
    }
  }
  return absl::OkStatus();
}

absl::Status SwitchFabric::ApplyMiswires() {
  for (const LldpMiswire& m : options_.miswires) {
    SwitchPort* port = nullptr;
    int leaf = -1;
    for (size_t i = 0; i < switches_.size(); ++i) {
      for (SwitchPort& p : switches_[i].ports) {
        if (switches_[i].name == m.switch_name && p.name == m.port) {
          port = &p;
          leaf = static_cast<int>(i);
        }
      }
    }
    if (port == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("LLDP miswire target ", m.switch_name, "/",
                                                     m.port, " is not a simulated switch port"));
    }
    // Another host's NIC on the same leaf answers: the cables of two hosts were swapped.
    int h = 1;
    (void)absl::SimpleAtoi(absl::StripPrefix(AsAbsl(port->peer), "gpu-node-"), &h);
    int other = h + 1;
    if (leaf < leaves_) {
      const int first = switches_[leaf].group * hosts_per_leaf_ + 1;
      const int count = std::min(options_.hosts, first + hosts_per_leaf_ - 1) - first + 1;
      if (count > 1) other = first + (h - first + 1) % count;
    }
    port->lldp_system_name = SysfsFabric::HostName(other);
    port->lldp_chassis_id = HostChassis(other, 0);
    if (absl::Status s = AppendGroundTruth(
            options_.ground_truth_file,
            absl::StrFormat("{\"fault\": \"lldp_miswire\", \"switch\": \"%s\", \"port\": \"%s\", "
                            "\"expected\": \"%s\", \"reported\": \"%s\", \"injected_at_unix_nano\": %d}",
                            m.switch_name, m.port, port->peer, port->lldp_system_name,
                            absl::ToUnixNanos(start_)));
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

std::pair<int, int> SwitchFabric::LeafPortOf(std::string_view host, std::string_view device) const {
  int h = 0, k = -1;
  absl::string_view hs = AsAbsl(host), ds = AsAbsl(device);
  if (!absl::ConsumePrefix(&hs, "gpu-node-") || !absl::SimpleAtoi(hs, &h) || h < 1 ||
      h > options_.hosts || SysfsFabric::HostName(h) != host || !absl::ConsumePrefix(&ds, "mlx5_") ||
      !absl::SimpleAtoi(ds, &k) || k < 0 || k >= options_.nics_per_host ||
      absl::StrCat("mlx5_", k) != device) {
    return {-1, -1};
  }
  return nic_port_[static_cast<size_t>(h - 1) * options_.nics_per_host + k];
}

}  // namespace railwatch::sim
