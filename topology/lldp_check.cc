#include "topology/lldp_check.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/labels.h"

namespace railwatch {
namespace {

bool SameSystem(std::string_view announced, std::string_view expected) {
  if (absl::EqualsIgnoreCase(AsAbsl(announced), AsAbsl(expected))) return true;
  // FQDN: "gpu-node-003.pod1.example" is gpu-node-003.
  return announced.size() > expected.size() && announced[expected.size()] == '.' &&
         absl::EqualsIgnoreCase(AsAbsl(announced.substr(0, expected.size())), AsAbsl(expected));
}

// aa:bb:cc:dd:ee:ff or aa-bb-...: a MAC, which says nothing about the port's name.
bool LooksLikeMac(std::string_view s) {
  if (s.size() != 17) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i % 3 == 2) {
      if (s[i] != ':' && s[i] != '-') return false;
    } else if (!absl::ascii_isxdigit(static_cast<unsigned char>(s[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

LldpCheck CheckLldpNeighbor(const Topology& topology, std::string_view switch_name,
                            std::string_view port, std::string_view system_name,
                            std::string_view port_id) {
  const TopologyPortPeer* peer = topology.PeerOf(switch_name, port);
  if (peer == nullptr) return {};
  LldpCheck check;
  check.expected = absl::StrCat(peer->system, "/",
                                peer->port.empty() ? peer->device : peer->port);
  bool port_ok = port_id.empty() || LooksLikeMac(port_id) ||
                 (peer->port.empty() && peer->device.empty());
  port_ok = port_ok || (!peer->port.empty() && port_id == peer->port) ||
            (!peer->device.empty() && port_id == peer->device);
  check.verdict = SameSystem(system_name, peer->system) && port_ok
                      ? LldpCheck::Verdict::kMatch
                      : LldpCheck::Verdict::kMismatch;
  return check;
}

std::string_view LldpVerdictName(LldpCheck::Verdict v) {
  switch (v) {
    case LldpCheck::Verdict::kMatch:
      return "match";
    case LldpCheck::Verdict::kMismatch:
      return "mismatch";
    case LldpCheck::Verdict::kNotInTopology:
      return "not_in_topology";
  }
  return "unknown";
}

}  // namespace railwatch
