#pragma once

// The records every InfiniBand reader produces (ibnetdiscover, perfquery, ibqueryerrors, ...),
// and that a fabric scanner (libibmad) and the simulator are meant to produce too, so that the
// fabric map and the counter collector need not care where a fact came from.
//
// Rules shared by all readers:
//   * absent is never zero: a value the text did not print is an empty optional or a missing
//     map entry, never 0;
//   * a GUID keeps its text as printed, and its value only when the text is hex (sites redact
//     GUIDs as "9c05<redacted>"): the record stays, a problem says why the value is missing;
//   * readers never throw and never stop at a bad line: what parsed is kept, each line they
//     could not read becomes an IbProblem with source:line:column.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railwatch::ib {

struct IbProblem {
  std::string where;  // source:line:column
  std::string message;
  std::string ToString() const { return where + ": " + message; }
};

// A node or port GUID as printed ("0x0c42a10300255562", "c42a1030025554e", "9c05<redacted>").
struct IbGuid {
  std::string text;               // verbatim, with its 0x if it had one
  std::optional<uint64_t> value;  // empty when the text is not 1..16 hex digits
  bool valid() const { return value.has_value(); }
};

// "0x..." or bare hex; leading zeros may be dropped (ibnetdiscover and ibqueryerrors do).
IbGuid ParseGuid(std::string_view text);

// The canonical form, 0x and 16 hex digits: how records are compared across tools that print
// leading zeros differently. Empty for an invalid GUID.
std::string GuidString(const IbGuid& guid);

enum class IbNodeType { kUnknown, kCa, kSwitch, kRouter };
std::string_view NodeTypeName(IbNodeType type);  // "CA", "SW", "RT", "?"

// 0xFFFF is the permissive LID: a port the subnet manager has not given a LID (yet).
inline constexpr uint32_t kUnassignedLid = 0xFFFF;
inline bool IsUnassignedLid(uint32_t lid) { return lid == 0 || lid == kUnassignedLid; }

// A link's speed as a tool printed it. Tools disagree on what they print: ibnetdiscover the
// generation ("4xHDR"), iblinkinfo the per-lane signalling rate ("4X 53.125 Gbps"), ibstat the
// nominal aggregate ("Rate: 200"). Each reader fills what its text gives and derives the rest
// from the generation table below.
struct IbLinkSpeed {
  int width_lanes = 0;     // 1, 2, 4, 8, 12; 0 = not given
  std::string generation;  // "SDR" ... "XDR", "FDR10"; as printed when unknown ("???"); "" absent
  double lane_gbps = 0;    // nominal data rate per lane (HDR 50, NDR 100); 0 = unknown
  double lane_signal_gbps = 0;  // per-lane signalling rate as iblinkinfo prints it (HDR 53.125)
  // Nominal aggregate, what ibstat calls Rate: 4xHDR 200, 2xNDR 200; 0 when unknown.
  double aggregate_gbps() const { return width_lanes * lane_gbps; }
  bool known() const { return width_lanes > 0 && lane_gbps > 0; }
};

struct IbGeneration {
  std::string_view name;
  double lane_gbps;         // nominal
  double lane_signal_gbps;  // signalling, as iblinkinfo prints it
};
// nullptr for a name not in the table (case-sensitive, as the tools print it).
const IbGeneration* FindGeneration(std::string_view name);
// The generation whose signalling rate iblinkinfo prints as `gbps` (2.5, 10.0, 53.125, ...).
const IbGeneration* GenerationOfSignalRate(double gbps);
// Width and generation ("4", "HDR") into a speed; unknown generations keep their name.
IbLinkSpeed MakeLinkSpeed(int width_lanes, std::string_view generation);

struct IbNode {
  IbNodeType type = IbNodeType::kUnknown;
  IbGuid guid;               // switchguid= / caguid=, else the "S-<guid>" of the node line
  IbGuid system_image_guid;  // a director's line and spine cards share one
  std::string description;   // verbatim, blanks inside the quotes included
  int num_ports = 0;
  std::optional<uint32_t> lid;         // a switch's (port 0) LID; CAs have one per port, on links
  std::optional<bool> enhanced_port0;  // a switch's "enhanced port 0" (true) / "base port 0"
  std::optional<uint32_t> vendor_id;
  std::optional<uint32_t> device_id;
  std::string where;  // source:line of the node line
};

struct IbLinkEnd {
  IbNodeType type = IbNodeType::kUnknown;
  IbGuid node_guid;
  int port = 0;
  std::string port_label;  // ibdiagnet's "1/1/1" (switch side); "" absent
  IbGuid port_guid;        // a CA port's own GUID; empty text when not printed
  std::optional<uint32_t> lid;
  std::string description;
};

// One port line: a port and, when it is cabled, the port at the other end. A cable between two
// nodes that are both in a topology file appears twice, once from each end.
struct IbLink {
  IbLinkEnd local;
  std::optional<IbLinkEnd> peer;  // empty for an unconnected port (ibnetdiscover -p)
  IbLinkSpeed speed;
  std::string where;  // source:line
};

// Performance Management attributes whose counters the readers know.
enum class PmaAttribute {
  kPortCounters,            // 0x0012: 4- to 32-bit counters that stop at all-ones
  kPortCountersExtended,    // 0x001D: 64-bit
  kPortRcvErrorDetails,     // 0x0015: 16-bit
  kPortXmitDiscardDetails,  // 0x0016: 16-bit
};
std::string_view PmaAttributeName(PmaAttribute attribute);

// Each counter's width in bits in `attribute` (IBA vol. 1 ch. 16.1.3; libibmad's fields.c),
// or 0 for a name the attribute does not carry.
int PmaCounterWidth(PmaAttribute attribute, std::string_view name);
// PortXmitData / PortRcvData count 4-octet words, not bytes (multiply by 4).
bool IsPmaDataCounter(std::string_view name);

struct IbCounter {
  uint64_t value = 0;
  int width_bits = 0;          // 0: a name this library does not know
  bool data_4_octets = false;  // value * 4 = bytes
  // PMA counters stop at all-ones instead of wrapping: at 2^width - 1 the true count is
  // "at least this", and a rate from it would be wrong.
  bool saturated = false;
};

IbCounter MakeCounter(PmaAttribute attribute, std::string_view name, uint64_t value);

// Of two readings of one counter at one time from two attributes (PortCounters' 16-bit
// SymbolErrorCounter and PortCountersExtended's 64-bit one): whether `a` holds more of the count
// than `b`. The larger value, since both count the same events and a narrow one stops at all
// ones; of two alike, the wider. Not simply the wider: on some HCAs the extended error counters
// stay 0 while the narrow ones count (CATALOGUE: ibdiagnet2_pm_02's LinkDownedCounter 55 beside
// a LinkDownedCounterExt of 0).
bool MoreOfTheCount(const IbCounter& a, const IbCounter& b);

// One port's counters from one query.
struct IbPortCounters {
  PmaAttribute attribute = PmaAttribute::kPortCounters;
  std::optional<uint32_t> lid;
  IbGuid guid;                   // ibqueryerrors: the port GUID it printed
  IbGuid node_guid;              // ibqueryerrors: a switch's GUID from "Errors for 0x..."
  std::string node_description;  // ibqueryerrors: the "Errors for" name
  std::optional<int> port;       // empty for an aggregate over all ports
  bool all_ports = false;        // ibqueryerrors "port ALL", perfquery -a (port 255)
  std::optional<uint32_t> cap_mask;
  std::optional<uint32_t> cap_mask2;
  std::map<std::string, IbCounter, std::less<>> counters;  // only what was printed
  std::string where;                                       // source:line of the record's first line
};

}  // namespace railwatch::ib
