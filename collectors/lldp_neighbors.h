#pragma once

// lldpd's view of a host's neighbours: what `lldpcli show neighbors` prints in its machine
// formats, parsed into one record per local interface. The host agent reads it to learn which
// switch port each NIC is cabled to (docs/TOPOLOGY.md, issue 21).
//
// Three formats, as real lldpd releases print them:
//   -f json0     every level an array of objects, every leaf {"value": ...}: the stable shape,
//                the one the agent asks for
//   -f json      single-element lists collapsed into objects; chassis keyed by system name;
//                `mgmt-ip` a string or a list; `ttl` in the chassis (older) or the port (newer)
//   -f keyvalue  lldp.<ifname>.<path>=<value>, repeated keys for lists, a value that goes on
//                over lines without the lldp. prefix
// A prompt line or other text before the JSON is skipped. Problems come back with
// file:line:column; what parsed is kept.

#include <string>
#include <string_view>
#include <vector>

namespace railwatch {

struct LldpNeighbor {
  std::string local_interface;  // our port: ens108np0
  std::string via;              // LLDP, CDPv2, ...
  std::string age;              // as lldpd prints it: "0 day, 01:25:24"
  // The neighbour (chassis): its id and the id's type (mac, local, ip, ifname), its system
  // name and description, its management addresses.
  std::string chassis_id;
  std::string chassis_id_type;
  std::string system_name;
  std::string system_description;
  std::vector<std::string> management_addresses;
  // Its port facing us: id and the id's type (ifname, local, mac), description.
  std::string port_id;
  std::string port_id_type;
  std::string port_description;
  int ttl_seconds = 0;  // 0: not given

  // The name of the neighbour's port, as its operator would write it: the id when it is a
  // name (ifname, local), else the description when there is one (a host's lldpd sends its
  // MAC as the id and its ifname as the description), else the id.
  std::string PortName() const;
};

struct LldpProblem {
  std::string where;  // file:line:column (or file:line)
  std::string message;
  std::string ToString() const { return where + ": " + message; }
};

struct LldpParseResult {
  std::vector<LldpNeighbor> neighbors;  // in the order lldpd listed them
  std::vector<LldpProblem> problems;
  std::string format;  // json0, json, keyvalue; "" when none was recognised
};

// Any of the three formats, told apart by their first non-prompt text. `source` names the input
// in problems (a file name, "lldpcli").
LldpParseResult ParseLldpNeighbors(std::string_view text, std::string_view source);

}  // namespace railwatch
