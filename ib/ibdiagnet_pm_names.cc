#include "ib/ibdiagnet_pm_names.h"

#include <array>
#include <utility>

#include "absl/strings/ascii.h"

namespace railwatch::ib {
namespace {

// ibdiagnet's names that differ from the PMA field names the records use, after the .pm's
// snake_case is turned into CamelCase (link_down_counter -> LinkDownCounter).
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kPmRenames = {{
    // db_csv's PM_INFO
    {"PortUniCastXmitPkts", "PortUnicastXmitPkts"},
    {"PortUniCastRcvPkts", "PortUnicastRcvPkts"},
    {"PortMultiCastXmitPkts", "PortMulticastXmitPkts"},
    {"PortMultiCastRcvPkts", "PortMulticastRcvPkts"},
    // both (db_csv's PortMalformedPacketErrors, the .pm's port_malformed_packet_errors)
    {"PortMalformedPacketErrors", "PortMalformedPktErrors"},
    // the .pm's
    {"LinkDownCounter", "LinkDownedCounter"},
    {"PortXmitDiscard", "PortXmitDiscards"},
    {"ExcessiveBufferErrors", "ExcessiveBufferOverrunErrors"},
}};

// The words the .pm spells in lower case that the PMA names spell in capitals.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kAcronyms = {{
    {"vl15", "VL15"},
    {"qp1", "QP1"},
    {"dlid", "DLID"},
    {"vl", "VL"},
    {"mtu", "MTU"},
    {"hoq", "HOQ"},
}};

// port_xmit_data_extended -> PortXmitDataExtended; a name without '_' is returned as it is.
std::string CamelCase(std::string_view snake) {
  if (snake.find('_') == std::string_view::npos) return std::string(snake);
  std::string out;
  while (!snake.empty()) {
    const size_t end = snake.find('_');
    const std::string_view word = snake.substr(0, end);
    snake = end == std::string_view::npos ? std::string_view() : snake.substr(end + 1);
    bool acronym = false;
    for (const auto& [lower, upper] : kAcronyms) {
      if (word == lower) {
        out.append(upper);
        acronym = true;
        break;
      }
    }
    if (acronym || word.empty()) continue;
    out.push_back(absl::ascii_toupper(static_cast<unsigned char>(word.front())));
    out.append(word.substr(1));
  }
  return out;
}

}  // namespace

std::optional<IbdiagnetPmName> IbdiagnetPmCounter(std::string_view column) {
  const std::string camel = CamelCase(column);
  std::string_view name = camel;
  bool extended = false;
  for (std::string_view suffix : {"Extended", "Ext"}) {
    if (name.ends_with(suffix)) {
      name.remove_suffix(suffix.size());
      extended = true;
      break;
    }
  }
  for (const auto& [from, to] : kPmRenames) {
    if (name == from) name = to;
  }
  if (name.empty()) return std::nullopt;  // "Ext" alone, "_extended"
  const std::string canonical(name);
  if (extended) return IbdiagnetPmName{PmaAttribute::kPortCountersExtended, canonical};
  if (PmaCounterWidth(PmaAttribute::kPortCounters, name) > 0) {
    return IbdiagnetPmName{PmaAttribute::kPortCounters, canonical};
  }
  if (PmaCounterWidth(PmaAttribute::kPortCountersExtended, name) > 0) {
    return IbdiagnetPmName{PmaAttribute::kPortCountersExtended, canonical};
  }
  if (PmaCounterWidth(PmaAttribute::kPortRcvErrorDetails, name) > 0) {
    return IbdiagnetPmName{name.ends_with("Discards") ? PmaAttribute::kPortXmitDiscardDetails
                                                      : PmaAttribute::kPortRcvErrorDetails,
                           canonical};
  }
  return std::nullopt;
}

}  // namespace railwatch::ib
