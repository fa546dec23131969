#include "daemon/topology_watch.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/vocabulary.h"
#include "exporters/topology_collectable.h"
#include "spdlog/spdlog.h"

namespace railwatch {
namespace {

std::string LabelOr(const Labels& labels, std::string_view name) {
  const std::string* v = FindLabel(labels, name);
  return v != nullptr ? *v : std::string();
}

// Calls fn(labels, sample) for every series named `name` with a sample.
template <typename Fn>
void ForEachLatest(const SeriesStore& store, std::string_view name, Fn&& fn) {
  std::vector<SeriesRef> refs;
  std::vector<const Labels*> labels;
  store.ForEachSeriesNamed(name, 0, [&](SeriesRef ref, const Labels& l) {
    refs.push_back(ref);
    labels.push_back(&l);
  });
  std::vector<std::optional<Sample>> latest;
  store.LatestMany(refs, latest);
  for (size_t i = 0; i < refs.size(); ++i) {
    if (latest[i].has_value()) fn(*labels[i], *latest[i]);
  }
}

}  // namespace

TopologyWatch::TopologyWatch(Options options, std::shared_ptr<const Topology> declared,
                             SeriesStore& store, FabricMap& fabric, const Clock& clock)
    : options_(options), store_(store), fabric_(fabric), clock_(clock) {
  view_.declared = declared;
  view_.effective = std::move(declared);
  if (view_.effective != nullptr) effective_yaml_ = TopologyToYaml(*view_.effective, nullptr);
}

TopologyWatch::~TopologyWatch() { Stop(); }

DiscoveryFacts TopologyWatch::ReadFacts() const {
  DiscoveryFacts facts;
  const int64_t oldest = clock_.NowNanos() - absl::ToInt64Nanoseconds(options_.stale_after);
  absl::flat_hash_map<std::string, std::string> node_guids;  // "host/device"
  ForEachLatest(store_, "fabric_rdma_device_info", [&](const Labels& l, const Sample& s) {
    if (s.time_unix_nano < oldest) return;
    node_guids[absl::StrCat(LabelOr(l, "host"), "/", LabelOr(l, "device"))] =
        LabelOr(l, "node_guid");
  });
  ForEachLatest(store_, "fabric_rdma_port_info", [&](const Labels& l, const Sample& s) {
    if (s.time_unix_nano < oldest) return;
    NicFact n;
    n.host = LabelOr(l, "host");
    n.device = LabelOr(l, "device");
    if (n.host.empty() || n.device.empty()) return;
    // A port with several netdevs (a bond's members) lists them comma-separated: the first.
    const std::string netdevs = LabelOr(l, "netdev");
    n.netdev = std::string(netdevs.substr(0, netdevs.find(',')));
    n.mac = LabelOr(l, "mac");
    n.port_guid = LabelOr(l, "port_guid");
    n.link_layer = LabelOr(l, "link_layer");
    if (auto it = node_guids.find(absl::StrCat(n.host, "/", n.device)); it != node_guids.end()) {
      n.node_guid = it->second;
    }
    facts.nics.push_back(std::move(n));
  });
  // Switch ports' own MACs: an LLDP port-id that is a MAC names its port through them.
  ForEachLatest(store_, "fabric_switch_interface_info", [&](const Labels& l, const Sample&) {
    SwitchPortFact p{LabelOr(l, "switch"), LabelOr(l, "interface"), LabelOr(l, "mac")};
    if (!p.system.empty() && !p.port.empty() && !p.mac.empty()) {
      facts.switch_port_ids.push_back(std::move(p));
    }
  });
  // InfiniBand: the fabric scanner's view of each switch port's link (ibnetdiscover), the
  // same fact as a switch port's LLDP neighbour. Aged like the hosts' facts: the scanner
  // sends it every scan, so a link gone from the topology leaves the map.
  ForEachLatest(store_, "fabric_ib_link_info", [&](const Labels& l, const Sample& s) {
    if (s.time_unix_nano < oldest) return;
    NeighbourFact f;
    f.system = LabelOr(l, "switch");
    f.port = LabelOr(l, "interface");
    f.neighbor_system = LabelOr(l, "neighbor_system");
    f.neighbor_port = LabelOr(l, "neighbor_port");
    f.neighbor_chassis_id = LabelOr(l, "neighbor_guid");
    f.seen_unix_nano = s.time_unix_nano;
    if (f.system.empty() || f.port.empty()) return;
    facts.switches.push_back(f.system);
    facts.switch_ports.push_back(std::move(f));
  });
  ForEachLatest(store_, "fabric_lldp_neighbor_info", [&](const Labels& l, const Sample& s) {
    NeighbourFact f;
    f.port = LabelOr(l, "interface");
    f.neighbor_system = LabelOr(l, "neighbor_system");
    f.neighbor_port = LabelOr(l, "neighbor_port");
    f.neighbor_chassis_id = LabelOr(l, "neighbor_chassis_id");
    f.seen_unix_nano = s.time_unix_nano;
    if (std::string sw = LabelOr(l, "switch"); !sw.empty()) {
      f.system = std::move(sw);
      facts.switch_ports.push_back(std::move(f));
    } else if (std::string host = LabelOr(l, "host"); !host.empty()) {
      if (s.time_unix_nano < oldest) return;
      f.system = std::move(host);
      facts.host_ports.push_back(std::move(f));
    }
  });
  return facts;
}

bool TopologyWatch::RunOnce() {
  const int64_t now = clock_.NowNanos();
  std::shared_ptr<const Topology> declared;
  {
    absl::MutexLock lock(&mu_);
    declared = view_.declared;
  }
  if (!options_.discover) return false;
  const DiscoveryFacts facts = ReadFacts();
  DiscoveredTopology found = DiscoverTopology(facts);
  const bool anything = !found.topology.hosts().empty() || !found.topology.switches().empty();
  auto discovered = std::make_shared<const Topology>(found.topology);

  std::shared_ptr<const Topology> effective;
  absl::flat_hash_map<std::string, Provenance> provenance = found.provenance;
  std::vector<TopologyDifference> differences;
  if (declared != nullptr) {
    effective = std::make_shared<const Topology>(
        MergeTopologies(*declared, found.topology, provenance));
    differences = DiffTopologies(*declared, found.topology);
  } else if (anything) {
    effective = discovered;
  }
  std::string yaml = effective != nullptr ? TopologyToYaml(*effective, nullptr) : "";
  const bool changed = yaml != effective_yaml_;
  std::shared_ptr<const Topology> previous;
  {
    absl::MutexLock lock(&mu_);
    previous = view_.effective;
    view_.discovered = discovered;
    view_.discovered_provenance = found.provenance;
    view_.provenance = std::move(provenance);
    view_.differences = differences;
    view_.notes = found.notes;
    view_.updated_unix_nano = now;
    if (changed) {
      view_.effective = effective;
      ++view_.changes;
    }
  }
  if (declared != nullptr) WriteMismatches(differences, now);
  if (!changed) return false;
  effective_yaml_ = std::move(yaml);
  fabric_.Set(effective);
  if (collectable_ != nullptr) collectable_->SetTopology(effective);
  size_t nics = 0;
  for (const TopologyHost& h : effective->hosts()) nics += h.nics.size();
  spdlog::info("topology: the map now has {} hosts, {} NICs, {} switches ({}; {} notes)",
               effective->hosts().size(), nics, effective->switches().size(),
               declared != nullptr ? "discovered, the file pins" : "discovered",
               found.notes.size());
  if (previous != nullptr) {
    const std::vector<TopologyDifference> moved = DiffTopologies(*previous, *effective);
    for (size_t i = 0; i < moved.size() && i < 20; ++i) {
      spdlog::info("topology: {} {}: was \"{}\", now \"{}\"", moved[i].where, moved[i].what,
                   moved[i].declared, moved[i].discovered);
    }
    if (moved.size() > 20) spdlog::info("topology: ... and {} more changes", moved.size() - 20);
  }
  for (const std::string& note : found.notes) spdlog::info("topology: {}", note);
  return true;
}

void TopologyWatch::WriteMismatches(const std::vector<TopologyDifference>& differences,
                                    int64_t now) {
  static constexpr std::string_view kName = "fabric_topology_mismatch";
  for (auto& [ref, on] : mismatch_series_) on = false;
  absl::flat_hash_map<SeriesRef, bool> seen;
  for (const TopologyDifference& d : differences) {
    if (!d.conflict()) continue;
    Labels labels = {{"what", d.what}, {"declared", d.declared}, {"discovered", d.discovered}};
    const bool nic = d.what == "switch port" || d.what == "rail" || d.what == "netdev";
    std::vector<std::string> parts = absl::StrSplit(d.where, absl::MaxSplits('/', 1));
    if (nic && parts.size() == 2) {
      labels.push_back({"host", parts[0]});
      labels.push_back({"device", parts[1]});
    } else if (parts.size() == 2) {
      labels.push_back({"switch", parts[0]});
      labels.push_back({"interface", parts[1]});
    } else {
      labels.push_back({"switch", d.where});
    }
    NormalizeLabels(labels);
    const SeriesRef ref = store_.Intern(kName, labels, TraitsOf(kName, MetricKind::kGauge));
    mismatch_series_[ref] = true;
  }
  for (const auto& [ref, on] : mismatch_series_) store_.Append(ref, now, on ? 1 : 0);
}

void TopologyWatch::Start() {
  if (!options_.discover || thread_.joinable()) return;
  thread_ = std::thread([this] {
    // Soon after the start (agents connect within seconds), then every interval.
    absl::Duration wait = absl::Seconds(1);
    while (!stop_.WaitForNotificationWithTimeout(wait)) {
      RunOnce();
      wait = std::min(wait * 2, options_.interval);
    }
  });
}

void TopologyWatch::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

TopologyWatch::View TopologyWatch::view() const {
  absl::MutexLock lock(&mu_);
  return view_;
}

}  // namespace railwatch
