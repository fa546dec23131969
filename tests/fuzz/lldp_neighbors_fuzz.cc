// libFuzzer target for lldpd's neighbour output (collectors/lldp_neighbors.h): any bytes as
// `lldpcli -f json0|json|keyvalue show neighbors` must parse without a crash or a sanitizer
// report, and what comes back must hold together: every neighbour has a local interface, a
// format is named whenever a neighbour is, every problem says where (file:line[:column]) within
// the input. Seeds: tests/fixtures/lldp (the real-world samples).
//
//   scripts/fuzz lldp_neighbors_fuzz     (docs/FUZZING.md)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "collectors/lldp_neighbors.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const long lines = 1 + std::count(input.begin(), input.end(), '\n');
  const railwatch::LldpParseResult r = railwatch::ParseLldpNeighbors(input, "in");
  Check(r.neighbors.empty() || !r.format.empty());
  for (const railwatch::LldpNeighbor& n : r.neighbors) {
    Check(!n.local_interface.empty());
    Check(n.ttl_seconds >= 0);
    Check(n.PortName() == n.port_id || n.PortName() == n.port_description);
  }
  for (const railwatch::LldpProblem& p : r.problems) {
    Check(!p.message.empty());
    if (p.where == "in") continue;
    Check(p.where.rfind("in:", 0) == 0);
    const long line = std::strtol(p.where.c_str() + 3, nullptr, 10);
    Check(line >= 1 && line <= lines);
  }
  return 0;
}
