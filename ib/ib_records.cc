#include "ib/ib_records.h"

#include <array>
#include <cmath>
#include <cstdio>

#include "absl/strings/ascii.h"

namespace railwatch::ib {
namespace {

// Nominal lane rates are what the aggregate "Rate" of ibstat is made of (4x -> 40/56/100/200/
// 400); signalling rates are what libibmad prints for LinkSpeedActive/LinkSpeedExtActive.
constexpr std::array<IbGeneration, 9> kGenerations = {{
    {"SDR", 2.5, 2.5},
    {"DDR", 5, 5.0},
    {"QDR", 10, 10.0},
    {"FDR10", 10, 10.3125},
    {"FDR", 14, 14.0625},
    {"EDR", 25, 25.78125},
    {"HDR", 50, 53.125},
    {"NDR", 100, 106.25},
    {"XDR", 200, 212.5},
}};

struct CounterWidths {
  std::string_view name;
  int port_counters_bits;  // 0: not in PortCounters
  int details_bits;        // 0: not in the Rcv/Xmit details attributes
  bool in_extended;        // 64-bit in PortCountersExtended
};

// From libibmad's fields.c (rdma-core), checked against IBA vol. 1 16.1.3.5 and 16.1.4.
constexpr std::array<CounterWidths, 32> kCounters = {{
    {"SymbolErrorCounter", 16, 0, true},
    {"LinkErrorRecoveryCounter", 8, 0, true},
    {"LinkDownedCounter", 8, 0, true},
    {"PortRcvErrors", 16, 0, true},
    {"PortRcvRemotePhysicalErrors", 16, 0, true},
    {"PortRcvSwitchRelayErrors", 16, 0, true},
    {"PortXmitDiscards", 16, 0, true},
    {"PortXmitConstraintErrors", 8, 0, true},
    {"PortRcvConstraintErrors", 8, 0, true},
    {"LocalLinkIntegrityErrors", 4, 0, true},
    {"ExcessiveBufferOverrunErrors", 4, 0, true},
    {"VL15Dropped", 16, 0, true},
    {"PortXmitData", 32, 0, true},
    {"PortRcvData", 32, 0, true},
    {"PortXmitPkts", 32, 0, true},
    {"PortRcvPkts", 32, 0, true},
    {"PortXmitWait", 32, 0, true},
    {"QP1Dropped", 16, 0, true},
    {"PortUnicastXmitPkts", 0, 0, true},
    {"PortUnicastRcvPkts", 0, 0, true},
    {"PortMulticastXmitPkts", 0, 0, true},
    {"PortMulticastRcvPkts", 0, 0, true},
    {"PortLocalPhysicalErrors", 0, 16, false},
    {"PortMalformedPktErrors", 0, 16, false},
    {"PortBufferOverrunErrors", 0, 16, false},
    {"PortDLIDMappingErrors", 0, 16, false},
    {"PortVLMappingErrors", 0, 16, false},
    {"PortLoopingErrors", 0, 16, false},
    {"PortInactiveDiscards", 0, 16, false},
    {"PortNeighborMTUDiscards", 0, 16, false},
    {"PortSwLifetimeLimitDiscards", 0, 16, false},
    {"PortSwHOQLifetimeLimitDiscards", 0, 16, false},
}};

const CounterWidths* FindCounter(std::string_view name) {
  for (const CounterWidths& c : kCounters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace

IbGuid ParseGuid(std::string_view text) {
  IbGuid guid{std::string(text), std::nullopt};
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) digits.remove_prefix(2);
  if (digits.empty() || digits.size() > 16) return guid;
  uint64_t value = 0;
  for (char c : digits) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return guid;
    const int nibble = absl::ascii_isdigit(static_cast<unsigned char>(c))
                           ? c - '0'
                           : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
    value = (value << 4) | static_cast<uint64_t>(nibble);
  }
  guid.value = value;
  return guid;
}

std::string GuidString(const IbGuid& guid) {
  if (!guid.value) return "";
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(*guid.value));
  return buf;
}

std::string_view NodeTypeName(IbNodeType type) {
  switch (type) {
    case IbNodeType::kCa:
      return "CA";
    case IbNodeType::kSwitch:
      return "SW";
    case IbNodeType::kRouter:
      return "RT";
    case IbNodeType::kUnknown:
      break;
  }
  return "?";
}

const IbGeneration* FindGeneration(std::string_view name) {
  for (const IbGeneration& g : kGenerations) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

const IbGeneration* GenerationOfSignalRate(double gbps) {
  // QDR and FDR10 differ only in encoding; 10.0 is what libibmad prints for QDR.
  for (const IbGeneration& g : kGenerations) {
    if (std::fabs(g.lane_signal_gbps - gbps) < 1e-6) return &g;
  }
  return nullptr;
}

IbLinkSpeed MakeLinkSpeed(int width_lanes, std::string_view generation) {
  IbLinkSpeed speed;
  speed.width_lanes = width_lanes;
  speed.generation = std::string(generation);
  if (const IbGeneration* g = FindGeneration(generation)) {
    speed.lane_gbps = g->lane_gbps;
    speed.lane_signal_gbps = g->lane_signal_gbps;
  }
  return speed;
}

std::string_view PmaAttributeName(PmaAttribute attribute) {
  switch (attribute) {
    case PmaAttribute::kPortCounters:
      return "PortCounters";
    case PmaAttribute::kPortCountersExtended:
      return "PortCountersExtended";
    case PmaAttribute::kPortRcvErrorDetails:
      return "PortRcvErrorDetails";
    case PmaAttribute::kPortXmitDiscardDetails:
      return "PortXmitDiscardDetails";
  }
  return "";
}

int PmaCounterWidth(PmaAttribute attribute, std::string_view name) {
  const CounterWidths* c = FindCounter(name);
  if (c == nullptr) return 0;
  switch (attribute) {
    case PmaAttribute::kPortCounters:
      return c->port_counters_bits;
    case PmaAttribute::kPortCountersExtended:
      return c->in_extended ? 64 : 0;
    case PmaAttribute::kPortRcvErrorDetails:
    case PmaAttribute::kPortXmitDiscardDetails:
      return c->details_bits;
  }
  return 0;
}

bool IsPmaDataCounter(std::string_view name) {
  return name == "PortXmitData" || name == "PortRcvData";
}

bool MoreOfTheCount(const IbCounter& a, const IbCounter& b) {
  if (a.value != b.value) return a.value > b.value;
  return a.width_bits > b.width_bits;
}

IbCounter MakeCounter(PmaAttribute attribute, std::string_view name, uint64_t value) {
  IbCounter counter;
  counter.value = value;
  counter.width_bits = PmaCounterWidth(attribute, name);
  counter.data_4_octets = IsPmaDataCounter(name);
  if (counter.width_bits > 0) {
    const uint64_t all_ones =
        counter.width_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << counter.width_bits) - 1;
    counter.saturated = value == all_ones;
  }
  return counter;
}

}  // namespace railwatch::ib
