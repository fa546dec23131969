#include "ib/ibdiagnet_cables.h"

#include <cstdint>
#include <utility>

#include "ib/ib_text.h"
#include "ib/ibdiagnet_blocks.h"

namespace railwatch::ib {
namespace {

// The module's "not supported" for a lane's power or bias.
constexpr double kSentinel = -999.999;
bool IsSentinel(double v) { return v > kSentinel - 0.0005 && v < kSentinel + 0.0005; }

// "Latched  TX / RX LOL Indicator" -> "Latched TX / RX LOL Indicator".
std::string CollapseBlanks(std::string_view key) {
  std::string out;
  bool blank = false;
  for (char c : key) {
    if (c == ' ' || c == '\t') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out.push_back(' ');
    blank = false;
    out.push_back(c);
  }
  return out;
}

// "<number><blanks?><unit>": "58C", "3303400uV", "7.242 mA".
std::optional<double> NumberWithUnit(std::string_view value, std::string_view unit) {
  value = StripBlanks(value);
  if (!value.ends_with(unit)) return std::nullopt;
  value.remove_suffix(unit.size());
  return ParseDouble(value);
}

std::optional<int64_t> SignedInteger(std::string_view value) {
  value = StripBlanks(value);
  const bool negative = ConsumePrefix(value, "-");
  if (value.starts_with("0x") || value.starts_with("0X")) return std::nullopt;
  const std::optional<uint64_t> n = ParseUnsigned(value);
  if (!n || *n > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return negative ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n);
}

// "RX1 Power" -> lane 1 of kind "RX" and what "Power"; nullopt for other keys.
struct LaneKey {
  bool tx = false;
  int lane = 0;
  bool bias = false;  // "TX<n> Bias", else "<RX|TX><n> Power"
};
std::optional<LaneKey> ReadLaneKey(std::string_view key) {
  LaneKey k;
  if (ConsumePrefix(key, "TX")) {
    k.tx = true;
  } else if (!ConsumePrefix(key, "RX")) {
    return std::nullopt;
  }
  LineScanner s(key);
  const std::optional<uint64_t> lane = s.Decimal();
  if (!lane || *lane == 0 || *lane > 16) return std::nullopt;
  k.lane = static_cast<int>(*lane);
  if (s.rest() == " Power") return k;
  if (k.tx && s.rest() == " Bias") {
    k.bias = true;
    return k;
  }
  return std::nullopt;
}

class CablesReader {
 public:
  CablesReader(std::string_view source, IbdiagnetCables* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    switch (cursor_.Next(line, text, problems_)) {
      case IbdiagnetBlockCursor::Step::kHeader:
        return StartBlock(line, text);
      case IbdiagnetBlockCursor::Step::kValue:
        return ReadValue(line, text);
      case IbdiagnetBlockCursor::Step::kSkip:
        return;
    }
  }

  void Finish() {
    if (cable_) cursor_.Finish(problems_);
    Close();
  }

 private:
  void StartBlock(const TextLine& line, std::string_view text) {
    Close();
    std::optional<IbdiagnetPortHeader> header = ReadIbdiagnetPortHeader(line, text, problems_);
    cursor_.Opened(header.has_value(), line.number);
    if (!header) return;
    cable_.emplace();
    cable_->port = header->port;
    cable_->lid = header->lid;
    cable_->guid = std::move(header->guid);
    cable_->port_name = std::move(header->port_name);
    cable_->where = problems_.Where(line);
  }

  void Close() {
    if (cable_) out_->cables.push_back(std::move(*cable_));
    cable_.reset();
    cursor_.Closed();
  }

  // Key: value
  void ReadValue(const TextLine& line, std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      problems_.Add(line, text, "not a 'Key: value' line; skipped");
      return;
    }
    const std::string key = CollapseBlanks(text.substr(0, colon));
    const std::string_view raw = text.substr(colon + 1);
    const std::string_view value = StripBlanks(raw);
    // Where the value starts, for problems: past the blanks after the colon.
    const std::string_view at = value.empty() ? raw : value;
    IbCableRecord& c = *cable_;
    if (std::optional<LaneKey> lane = ReadLaneKey(key)) return ReadLane(line, *lane, value, at);

    auto text_field = [&](std::string& field) {
      field = IsNotAvailable(value) ? std::string() : std::string(value);
    };
    auto number = [&](std::optional<double>& field, std::string_view unit, double scale) {
      if (IsNotAvailable(value)) return;
      const std::optional<double> v = NumberWithUnit(value, unit);
      if (!v) {
        problems_.Add(line, at, Cat(key, ": '", value, "' is not a number in ", unit,
                                    "; left absent"));
        return;
      }
      field = *v * scale;
    };
    auto hex = [&](std::optional<uint32_t>& field) {
      if (IsNotAvailable(value)) return;
      field = ParseUint32(value);
      if (!field) problems_.Add(line, at, Cat(key, ": '", value, "' is not hex; left absent"));
    };
    auto raw_value = [&](std::optional<int64_t>& field) {
      if (IsNotAvailable(value)) return;
      field = SignedInteger(value);
      if (!field) {
        problems_.Add(line, at, Cat(key, ": '", value, "' is not an integer; left absent"));
      }
    };
    IbCableFlags& f = c.flags;
    IbCableThresholds& t = c.thresholds;
    if (key == "Source") return text_field(c.source);
    if (key == "Identifier") return ReadIdentifier(line, value, at);
    if (key == "Vendor") return text_field(c.vendor);
    if (key == "OUI") return hex(c.oui);
    if (key == "PN") return text_field(c.pn);
    if (key == "SN") return text_field(c.sn);
    if (key == "Rev") return text_field(c.rev);
    if (key == "Length") return text_field(c.length);
    if (key == "Type") return text_field(c.type);
    if (key == "Temperature") return number(c.temperature_c, "C", 1);
    if (key == "FW Version") return text_field(c.fw_version);
    if (key == "Supply Voltage Reporting") return number(c.supply_voltage_v, "uV", 1e-6);
    if (key == "DateCode") return text_field(c.date_code);
    if (key == "CDR Latched TX/RX Loss Indicator") return hex(f.cdr_latched_tx_rx_loss);
    if (key == "Latched Adaptive Equalization Fault") return hex(f.latched_adaptive_eq_fault);
    if (key == "Latched TX / RX LOL Indicator") return hex(f.latched_tx_rx_lol);
    if (key == "Latched Temperature Alarm and Warning") return hex(f.latched_temperature_alarm);
    if (key == "Latched Voltage Alarm and Warning") return hex(f.latched_voltage_alarm);
    if (key == "RX Power Alarm and Warning") return hex(f.rx_power_alarm);
    if (key == "TX Bias Alarm and Warning") return hex(f.tx_bias_alarm);
    if (key == "TX Power Alarm and Warning") return hex(f.tx_power_alarm);
    if (key == "AlarmTemperatureHighThresh") return number(t.alarm_temperature_high_c, "C", 1);
    if (key == "AlarmTemperatureLowThresh") return number(t.alarm_temperature_low_c, "C", 1);
    if (key == "WarnTemperatureHighThresh") return number(t.warn_temperature_high_c, "C", 1);
    if (key == "WarnTemperatureLowThresh") return number(t.warn_temperature_low_c, "C", 1);
    if (key == "AlarmVoltageHighThresh") return number(t.alarm_voltage_high_v, "uV", 1e-6);
    if (key == "AlarmVoltageLowThresh") return number(t.alarm_voltage_low_v, "uV", 1e-6);
    if (key == "WarnVoltageHighThresh") return number(t.warn_voltage_high_v, "uV", 1e-6);
    if (key == "WarnVoltageLowThresh") return number(t.warn_voltage_low_v, "uV", 1e-6);
    if (key == "RXPowerHighThresh") return raw_value(t.rx_power_high_raw);
    if (key == "RXPowerLowThresh") return raw_value(t.rx_power_low_raw);
    if (key == "TXPowerHighThresh") return raw_value(t.tx_power_high_raw);
    if (key == "TXPowerLowThresh") return raw_value(t.tx_power_low_raw);
    if (key == "TXBiasHighThresh") return raw_value(t.tx_bias_high_raw);
    if (key == "TXBiasLowThresh") return raw_value(t.tx_bias_low_raw);
    c.other[key] = std::string(value);
  }

  // "OSFP (0x08)"
  void ReadIdentifier(const TextLine& line, std::string_view value, std::string_view at) {
    if (IsNotAvailable(value)) return;
    cable_->identifier = std::string(value);
    const size_t open = value.rfind('(');
    if (open == std::string_view::npos || !value.ends_with(")")) return;
    cable_->identifier_code = ParseUint32(value.substr(open + 1, value.size() - open - 2));
    if (!cable_->identifier_code) {
      problems_.Add(line, at, Cat("Identifier: the code in '", value, "' is not hex"));
    }
  }

  // "-999.999 mW, 0.000 dBm" / "7.242 mA"
  void ReadLane(const TextLine& line, const LaneKey& key, std::string_view value,
                std::string_view at) {
    IbCableLane& lane = cable_->lanes[key.lane];
    if (IsNotAvailable(value)) return;
    const std::string_view name = key.bias ? "Bias" : "Power";
    if (key.bias) {
      const std::optional<double> ma = NumberWithUnit(value, "mA");
      if (!ma) {
        problems_.Add(line, at, Cat("TX", key.lane, " Bias: '", value,
                                    "' is not '<number> mA'; left absent"));
      } else if (*ma >= 0) {
        lane.tx_bias_ma = *ma;
      } else if (!IsSentinel(*ma)) {
        problems_.Add(line, at, Cat("TX", key.lane, " Bias: a negative current is not a reading; "
                                    "left absent"));
      }
      return;
    }
    const size_t comma = value.find(',');
    const std::optional<double> mw = NumberWithUnit(value.substr(0, comma), "mW");
    if (!mw) {
      problems_.Add(line, at, Cat(key.tx ? "TX" : "RX", key.lane, " ", name, ": '", value,
                                  "' is not '<number> mW, <number> dBm'; left absent"));
      return;
    }
    if (*mw < 0) {
      // -999.999: not supported, and its dBm (0.000) means nothing either. No other negative
      // power is a reading.
      if (!IsSentinel(*mw)) {
        problems_.Add(line, at, Cat(key.tx ? "TX" : "RX", key.lane, " ", name,
                                    ": a negative power is not a reading; left absent"));
      }
      return;
    }
    std::optional<double> dbm;
    if (comma != std::string_view::npos) dbm = NumberWithUnit(value.substr(comma + 1), "dBm");
    if (!dbm) {
      problems_.Add(line, comma == std::string_view::npos ? at.substr(at.size()) : at.substr(comma),
                    Cat(key.tx ? "TX" : "RX", key.lane, " ", name,
                        ": no '<number> dBm' after the mW (cut short?); mW kept"));
    }
    (key.tx ? lane.tx_power_mw : lane.rx_power_mw) = *mw;
    (key.tx ? lane.tx_power_dbm : lane.rx_power_dbm) = dbm;
  }

  IbdiagnetCables* out_;
  ProblemSink problems_;
  std::optional<IbCableRecord> cable_;
  IbdiagnetBlockCursor cursor_;
};

}  // namespace

std::vector<std::pair<std::string_view, std::optional<uint32_t>>> NamedFlags(const IbCableFlags& f) {
  return {{"temperature", f.latched_temperature_alarm},
          {"voltage", f.latched_voltage_alarm},
          {"rx_power", f.rx_power_alarm},
          {"tx_bias", f.tx_bias_alarm},
          {"tx_power", f.tx_power_alarm},
          {"tx_rx_loss", f.cdr_latched_tx_rx_loss},
          {"tx_rx_lol", f.latched_tx_rx_lol},
          {"adaptive_eq_fault", f.latched_adaptive_eq_fault}};
}

IbdiagnetCables ParseIbdiagnetCables(std::string_view text, std::string_view source) {
  IbdiagnetCables out;
  CablesReader reader(source, &out);
  for (const TextLine& line : SplitLines(text)) reader.Read(line);
  reader.Finish();
  return out;
}

}  // namespace railwatch::ib
