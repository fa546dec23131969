#include "collectors/ib_mad_transport_simdb.h"

#include <sys/stat.h>

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "collectors/ib_fabric_collector.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {

absl::StatusOr<std::unique_ptr<SimIbFabric>> SimIbFabricFromDb(const ib::IbdiagnetDb& db) {
  auto fabric = std::make_unique<SimIbFabric>();
  bool any_hca = false;
  for (const ib::IbNode& n : db.nodes) {
    if (!n.guid.value || n.num_ports < 1) continue;
    if (n.type == ib::IbNodeType::kSwitch) {
      fabric->AddSwitch(IbSwitchName(n.description), *n.guid.value, n.num_ports);
    } else if (n.type == ib::IbNodeType::kCa) {
      // NVIDIA's "<host> <device>".
      const std::string host = IbHostOfDescription(n.description);
      const size_t space = n.description.find(' ');
      const std::string device =
          space == std::string::npos ? "" : n.description.substr(space + 1);
      fabric->AddHca(host, device, *n.guid.value, n.num_ports);
      any_hca = true;
    }
  }
  if (!any_hca) return absl::InvalidArgumentError("no HCA in NODES to scan the subnet from");
  std::map<std::pair<uint64_t, int>, ib::IbLinkSpeed> speeds;
  for (const ib::IbdiagnetPort& p : db.ports) {
    if (p.node_guid.value) speeds[{*p.node_guid.value, p.port}] = p.speed;
  }
  for (const ib::IbLink& l : db.links) {
    if (!l.peer || !l.local.node_guid.value || !l.peer->node_guid.value) continue;
    auto it = speeds.find({*l.local.node_guid.value, l.local.port});
    if (it == speeds.end() || !it->second.known()) continue;
    // A link PortInfo cannot describe stays uncabled (and so unseen), never guessed.
    (void)fabric->Connect(*l.local.node_guid.value, l.local.port, *l.peer->node_guid.value,
                          l.peer->port, it->second.width_lanes, it->second.generation);
  }
  // PortCounters first, PortCountersExtended over them: the wider count wins.
  for (const ib::PmaAttribute attribute :
       {ib::PmaAttribute::kPortCounters, ib::PmaAttribute::kPortCountersExtended}) {
    for (const ib::IbPortCounters& r : db.counters) {
      if (r.attribute != attribute || !r.node_guid.value || !r.port) continue;
      const SimIbFabric::Node* node = fabric->FindNode(*r.node_guid.value);
      if (node == nullptr || *r.port < 1 || *r.port > node->num_ports()) continue;
      SimIbFabric::PortCounters& counters = fabric->Counters(*r.node_guid.value, *r.port);
      for (const auto& [name, c] : r.counters) counters[name] = c.value;
    }
  }
  return fabric;
}

absl::StatusOr<std::unique_ptr<SimDbMadTransport>> SimDbMadTransport::Open(Options options) {
  std::unique_ptr<SimDbMadTransport> t(new SimDbMadTransport(std::move(options)));
  absl::MutexLock lock(&t->mu_);
  if (absl::Status s = t->Load(); !s.ok()) return s;
  t->checked_ = absl::Now();
  return t;
}

absl::Status SimDbMadTransport::Load() {
  struct stat st;
  if (::stat(options_.path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(options_.path, ": no such file"));
  }
  const int64_t mtime = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (current_ != nullptr && mtime == mtime_ns_ && size == size_) return absl::OkStatus();
  absl::StatusOr<std::string> text = ReadFile(options_.path);
  if (!text.ok()) return text.status();
  const ib::IbdiagnetDb db = ib::ParseIbdiagnetDbCsv(*text, options_.path);
  absl::StatusOr<std::unique_ptr<SimIbFabric>> fabric = SimIbFabricFromDb(db);
  if (!fabric.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.path, ": ", fabric.status().message()));
  }
  SimIbMadTransport::Options o;
  o.name = Describe();
  o.max_outstanding = options_.max_outstanding;
  current_ = std::make_shared<SimIbMadTransport>(std::shared_ptr<SimIbFabric>(*std::move(fabric)),
                                                 std::move(o));
  mtime_ns_ = mtime;
  size_ = size;
  ++loads_;
  return absl::OkStatus();
}

std::shared_ptr<SimIbMadTransport> SimDbMadTransport::Current() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (now - checked_ >= options_.recheck) {
    checked_ = now;
    // A file being replaced, or not a subnet for a moment: the last one read serves.
    if (absl::Status s = Load(); !s.ok()) spdlog::debug("simdb: {}", s.message());
  }
  return current_;
}

int SimDbMadTransport::loads() const {
  absl::MutexLock lock(&mu_);
  return loads_;
}

absl::StatusOr<MadNodeInfo> SimDbMadTransport::QueryNodeInfo(const DrPath& path) {
  return Current()->QueryNodeInfo(path);
}
absl::StatusOr<std::string> SimDbMadTransport::QueryNodeDescription(const DrPath& path) {
  return Current()->QueryNodeDescription(path);
}
absl::StatusOr<MadPortInfo> SimDbMadTransport::QueryPortInfo(const DrPath& path, int port) {
  return Current()->QueryPortInfo(path, port);
}
absl::StatusOr<bool> SimDbMadTransport::QueryFdr10Active(const DrPath& path, int port) {
  return Current()->QueryFdr10Active(path, port);
}
absl::StatusOr<MadPortCounters> SimDbMadTransport::QueryPortCounters(uint32_t lid, int port) {
  return Current()->QueryPortCounters(lid, port);
}
absl::StatusOr<MadPortCounters> SimDbMadTransport::QueryPortCountersExtended(uint32_t lid,
                                                                             int port) {
  return Current()->QueryPortCountersExtended(lid, port);
}

}  // namespace railwatch
