#pragma once

// ibdiagnet's `ibdiagnet2.cables` (`ibdiagnet --get_cable_info`): one block per port with a
// module, `Key: value` lines:
//
//   -------------------------------------------------------
//   Port=1 Lid=0x0018 GUID=0xb0cf0e0300e5b940 Port Name=Sb0cf0e0300e5b940/Nb0cf0e0300e5b940/P1/1/1
//   -------------------------------------------------------
//   Source: PHY_DD
//   Identifier: OSFP (0x08)
//   SN: G2430283435
//   Temperature: 58C
//   RX1 Power: -999.999 mW, 0.000 dBm
//   TX1 Bias: 7.242 mA
//   Supply Voltage Reporting: 3303400uV
//   AlarmTemperatureHighThresh: 80C
//   RXPowerLowThresh: 65530
//   ...
//   <blank line>
//
// Units are read off the text (C, uV, mW, dBm, mA); `-999.999 mW` (and mA) is the module's "not
// supported" and leaves that lane's value absent, its dBm too. `N/A` and `NA` are absent. The
// power and bias thresholds print without a unit: they are kept as the raw register values printed
// (`RXPowerLowThresh: 65530` is a 16-bit register's content, not milliwatts). One twin-port OSFP
// feeds two ports: both blocks are kept, with one serial number.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

// One lane's optical readings; absent when not printed or printed as -999.999.
struct IbCableLane {
  std::optional<double> rx_power_mw;
  std::optional<double> rx_power_dbm;
  std::optional<double> tx_power_mw;
  std::optional<double> tx_power_dbm;
  std::optional<double> tx_bias_ma;
};

// The latched alarm and warning flag registers, as the hex the module reported.
struct IbCableFlags {
  std::optional<uint32_t> cdr_latched_tx_rx_loss;        // CDR Latched TX/RX Loss Indicator
  std::optional<uint32_t> latched_adaptive_eq_fault;     // Latched Adaptive Equalization Fault
  std::optional<uint32_t> latched_tx_rx_lol;             // Latched TX / RX LOL Indicator
  std::optional<uint32_t> latched_temperature_alarm;     // Latched Temperature Alarm and Warning
  std::optional<uint32_t> latched_voltage_alarm;         // Latched Voltage Alarm and Warning
  std::optional<uint32_t> rx_power_alarm;                // RX Power Alarm and Warning
  std::optional<uint32_t> tx_bias_alarm;                 // TX Bias Alarm and Warning
  std::optional<uint32_t> tx_power_alarm;                // TX Power Alarm and Warning
};

// The flag registers by the names railwatch gives them (fabric_ib_cable_alarm_flags{flags},
// triage): temperature, voltage, rx_power, tx_bias, tx_power, tx_rx_loss, tx_rx_lol,
// adaptive_eq_fault; absent where the module did not print the register.
std::vector<std::pair<std::string_view, std::optional<uint32_t>>> NamedFlags(const IbCableFlags& f);

// The module's own alarm and warning thresholds.
struct IbCableThresholds {
  std::optional<double> alarm_temperature_high_c;
  std::optional<double> alarm_temperature_low_c;
  std::optional<double> warn_temperature_high_c;
  std::optional<double> warn_temperature_low_c;
  std::optional<double> alarm_voltage_high_v;  // printed in uV
  std::optional<double> alarm_voltage_low_v;
  std::optional<double> warn_voltage_high_v;
  std::optional<double> warn_voltage_low_v;
  // Raw register values as printed, no unit given: RXPowerLowThresh 65530 is not milliwatts.
  std::optional<int64_t> rx_power_high_raw;
  std::optional<int64_t> rx_power_low_raw;
  std::optional<int64_t> tx_power_high_raw;
  std::optional<int64_t> tx_power_low_raw;
  std::optional<int64_t> tx_bias_high_raw;
  std::optional<int64_t> tx_bias_low_raw;
};

struct IbCableRecord {
  int port = 0;
  std::optional<uint32_t> lid;
  IbGuid guid;
  std::string port_name;  // verbatim
  // The strings are "" when absent (not printed, N/A, NA).
  std::string source;                     // the register ibdiagnet read: PHY_DD, PHY_ACC_REG
  std::string identifier;                 // "OSFP (0x08)"
  std::optional<uint32_t> identifier_code;  // 0x08, from the parentheses
  std::string vendor;
  std::optional<uint32_t> oui;  // 0x649d99
  std::string pn;
  std::string sn;
  std::string rev;
  std::string length;  // as printed ("3 m"); "" for NA
  std::string type;    // "850 nm VCSEL"
  std::optional<double> temperature_c;
  std::string fw_version;
  std::map<int, IbCableLane> lanes;  // by lane number from 1, each lane that printed a line
  std::optional<double> supply_voltage_v;  // printed in uV
  IbCableFlags flags;
  IbCableThresholds thresholds;
  std::string date_code;  // "24-01-18", as printed
  // Every other `Key: value` line, the key's blank runs made one blank, the value as printed.
  std::map<std::string, std::string, std::less<>> other;
  std::string where;  // source:line of the Port= line
};

struct IbdiagnetCables {
  std::vector<IbCableRecord> cables;  // one per block, in file order
  std::vector<IbProblem> problems;
};

IbdiagnetCables ParseIbdiagnetCables(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
