#include <algorithm>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "triage/optics.h"

// optics::ToolOutput -> optics.* events (triage/optics.h); what they mean is triage/optics.cc.
namespace railwatch {
// Named, not anonymous: the unity build puts this file beside the other triage inputs.
namespace triage_optics_events {

using logs::LogEvent;

constexpr size_t kMaxRawBytes = 512;

// The DOM quantities as event fields, and their thresholds' suffixes.
constexpr std::string_view kQuantities[] = {"temperature_c", "voltage_v", "tx_bias_ma",
                                            "tx_power_dbm", "rx_power_dbm"};
constexpr std::string_view kLevels[] = {"alarm_high", "warning_high", "warning_low", "alarm_low"};
constexpr optics::Quantity kQuantityOf[] = {
    optics::Quantity::kTemperature, optics::Quantity::kSupplyVoltage, optics::Quantity::kTxBias,
    optics::Quantity::kTxPower, optics::Quantity::kRxPower};

std::string Number(double v) { return absl::StrFormat("%.6g", v); }

template <typename T>
std::string LaneList(const std::vector<std::optional<T>>& lanes) {
  std::vector<std::string> out;
  for (const auto& v : lanes) {
    if constexpr (std::is_floating_point_v<T>) {
      out.push_back(v ? Number(*v) : "");
    } else {
      out.push_back(v ? absl::StrCat(*v) : "");
    }
  }
  return absl::StrJoin(out, ",");
}

std::string CountList(const std::vector<uint64_t>& v) { return absl::StrJoin(v, ","); }

// The highest lane number in a reading's keys ("... on media lane 8", "(Channel 4)") or in a
// per-lane list ("Rx LOS [per lane]: 1,0,1,1").
int LanesIn(const optics::ToolReading& r) {
  int most = 0;
  if (r.module) {
    most = std::max({most, static_cast<int>(r.module->tx_bias_ma.size()),
                     static_cast<int>(r.module->tx_power_dbm.size()),
                     static_cast<int>(r.module->rx_power_dbm.size())});
  }
  for (const optics::ToolField& f : r.fields) {
    if (f.key.find("[per lane]") != std::string::npos && f.value.find(',') != std::string::npos) {
      most = std::max(most, static_cast<int>(std::count(f.value.begin(), f.value.end(), ',')) + 1);
    }
    if (r.format == optics::ToolFormat::kSonicStatus) {
      const size_t at = f.key.rfind(" lane ");
      int n = 0;
      if (at != std::string::npos && absl::SimpleAtoi(f.key.substr(at + 6), &n) && n <= 64) {
        most = std::max(most, n);
      }
    }
  }
  return most;
}

LogEvent BaseEvent(std::string kind, const optics::ToolReading& r, const std::string& source) {
  LogEvent e;
  e.kind = std::move(kind);
  e.source = source;
  e.line = r.line;
  e.Set("device", r.device);
  if (!r.port.empty()) e.Set("port", r.port);
  e.Set("tool", std::string(optics::ToolFormatName(r.format)));
  if (!r.command.empty()) e.Set("command", r.command);
  e.Set("reading", absl::StrCat(source, ":", r.line));
  return e;
}

void SetIf(LogEvent& e, std::string_view key, const std::string& value) {
  if (!value.empty()) e.Set(key, value);
}
template <typename T>
void SetIf(LogEvent& e, std::string_view key, const std::optional<T>& v) {
  if (!v) return;
  if constexpr (std::is_floating_point_v<T>) {
    e.Set(key, Number(*v));
  } else {
    e.Set(key, absl::StrCat(*v));
  }
}

std::vector<LogEvent> Events(const optics::ToolOutput& output, const std::string& source) {
  std::vector<LogEvent> events;
  for (const optics::ToolReading& r : output.readings) {
    const std::string name = r.Name().empty() ? "" : r.Name() + ": ";
    const int lanes = LanesIn(r);
    if (r.module) {
      const optics::ModuleReading& m = *r.module;
      LogEvent e = BaseEvent("optics.module", r, source);
      if (m.spec != optics::ModuleSpec::kUnknown) {
        e.Set("spec", std::string(optics::ModuleSpecName(m.spec)));
      }
      SetIf(e, "form_factor", m.form_factor);
      SetIf(e, "vendor", m.vendor);
      SetIf(e, "pn", m.part_number);
      SetIf(e, "sn", m.serial);
      SetIf(e, "rev", m.revision);
      SetIf(e, "media", m.media);
      SetIf(e, "wavelength_nm", m.wavelength_nm);
      SetIf(e, "cable", r.cable);
      SetIf(e, "module_state", r.module_state);
      if (lanes > 0) e.Set("lanes", absl::StrCat(lanes));
      SetIf(e, "temperature_c", m.temperature_c);
      SetIf(e, "voltage_v", m.supply_voltage_v);
      SetIf(e, "tx_bias_ma", LaneList(m.tx_bias_ma));
      SetIf(e, "tx_power_dbm", LaneList(m.tx_power_dbm));
      SetIf(e, "rx_power_dbm", LaneList(m.rx_power_dbm));
      for (size_t q = 0; q < std::size(kQuantities); ++q) {
        const optics::Thresholds& t = m.threshold(kQuantityOf[q]);
        const std::optional<double>* levels[] = {&t.alarm_high, &t.warning_high, &t.warning_low,
                                                 &t.alarm_low};
        for (size_t l = 0; l < std::size(kLevels); ++l) {
          SetIf(e, absl::StrCat(std::string(kQuantities[q]), "_", std::string(kLevels[l])),
                *levels[l]);
        }
      }
      SetIf(e, "flags", absl::StrJoin(m.flags, ","));
      e.raw = absl::StrCat(name, std::string(optics::ToolFormatName(r.format)), ": ", m.vendor, " ",
                           m.part_number, " ", m.serial, " ", m.form_factor, " ", m.media);
      if (m.temperature_c) absl::StrAppend(&e.raw, " ", Number(*m.temperature_c), "C");
      if (!m.rx_power_dbm.empty())
        absl::StrAppend(&e.raw, " rx ", LaneList(m.rx_power_dbm), " dBm");
      if (!m.flags.empty()) absl::StrAppend(&e.raw, " flags ", absl::StrJoin(m.flags, ","));
      if (e.raw.size() > kMaxRawBytes) e.raw.resize(kMaxRawBytes);
      events.push_back(std::move(e));
    }
    if (r.fec) {
      const optics::FecReading& f = *r.fec;
      LogEvent e = BaseEvent("optics.fec", r, source);
      SetIf(e, "configured", absl::StrJoin(f.configured, " "));
      SetIf(e, "active", absl::StrJoin(f.active, " "));
      SetIf(e, "mode", f.mode);
      SetIf(e, "state", f.state);
      SetIf(e, "corrected_blocks", f.corrected_blocks);
      SetIf(e, "uncorrectable_blocks", f.uncorrectable_blocks);
      SetIf(e, "corrected_bits", f.corrected_bits);
      SetIf(e, "symbol_errors", f.symbol_errors);
      SetIf(e, "corrected_blocks_lanes", CountList(f.corrected_blocks_lanes));
      SetIf(e, "uncorrectable_blocks_lanes", CountList(f.uncorrectable_blocks_lanes));
      SetIf(e, "corrected_bits_lanes", CountList(f.corrected_bits_lanes));
      SetIf(e, "pre_fec_ber", f.pre_fec_ber);
      SetIf(e, "post_fec_ber", f.post_fec_ber);
      std::vector<std::string> bins;
      for (const optics::FecReading::Bin& b : f.histogram) {
        bins.push_back(absl::StrCat(b.bin, ":", b.count));
      }
      SetIf(e, "histogram", absl::StrJoin(bins, ","));
      e.raw = absl::StrCat(name, std::string(optics::ToolFormatName(r.format)), ":");
      for (const auto& [key, value] : e.fields) {
        if (key == "device" || key == "tool" || key == "command" || key == "reading") continue;
        if (e.raw.size() < kMaxRawBytes) absl::StrAppend(&e.raw, " ", key, " ", value);
      }
      if (e.raw.size() > kMaxRawBytes) e.raw.resize(kMaxRawBytes);
      events.push_back(std::move(e));
    }
    if (r.phy) {
      const optics::PhyCounters& p = *r.phy;
      LogEvent e = BaseEvent("optics.phy", r, source);
      SetIf(e, "state", p.state);
      SetIf(e, "physical_state", p.physical_state);
      SetIf(e, "speed", p.speed);
      SetIf(e, "width", p.width);
      SetIf(e, "fec", p.fec);
      SetIf(e, "minutes_since_clear", p.minutes_since_clear);
      SetIf(e, "effective_errors", p.effective_errors);
      SetIf(e, "effective_ber", p.effective_ber);
      SetIf(e, "raw_ber", p.raw_ber);
      SetIf(e, "symbol_ber", p.symbol_ber);
      SetIf(e, "raw_ber_lanes", LaneList(p.raw_ber_lanes));
      SetIf(e, "raw_errors_lanes", LaneList(p.raw_errors_lanes));
      SetIf(e, "link_down", p.link_down);
      SetIf(e, "link_error_recovery", p.link_error_recovery);
      SetIf(e, "symbol_errors", p.symbol_errors);
      SetIf(e, "status_opcode", p.status_opcode);
      SetIf(e, "recommendation", p.recommendation);
      SetIf(e, "firmware", p.firmware);
      SetIf(e, "mft_version", p.mft_version);
      SetIf(e, "enabled_speeds", p.enabled_speeds);
      SetIf(e, "supported_speeds", p.supported_speeds);
      e.raw = absl::StrCat(name, std::string(optics::ToolFormatName(r.format)), ":");
      for (const auto& [key, value] : e.fields) {
        if (key == "device" || key == "tool" || key == "command" || key == "reading") continue;
        if (e.raw.size() < kMaxRawBytes) absl::StrAppend(&e.raw, " ", key, " ", value);
      }
      if (e.raw.size() > kMaxRawBytes) e.raw.resize(kMaxRawBytes);
      events.push_back(std::move(e));
    }
  }
  return events;
}

}  // namespace triage_optics_events

OpticsFieldType OpticsFieldTypeOf(std::string_view key) {
  using triage_optics_events::kLevels;
  using triage_optics_events::kQuantities;
  static constexpr std::string_view kNumbers[] = {"temperature_c",
                                                  "voltage_v",
                                                  "wavelength_nm",
                                                  "corrected_blocks",
                                                  "uncorrectable_blocks",
                                                  "corrected_bits",
                                                  "symbol_errors",
                                                  "pre_fec_ber",
                                                  "post_fec_ber",
                                                  "minutes_since_clear",
                                                  "effective_errors",
                                                  "effective_ber",
                                                  "raw_ber",
                                                  "symbol_ber",
                                                  "link_down",
                                                  "link_error_recovery",
                                                  "status_opcode",
                                                  "lanes"};
  static constexpr std::string_view kLists[] = {"tx_bias_ma",
                                                "tx_power_dbm",
                                                "rx_power_dbm",
                                                "corrected_blocks_lanes",
                                                "uncorrectable_blocks_lanes",
                                                "corrected_bits_lanes",
                                                "raw_ber_lanes",
                                                "raw_errors_lanes"};
  if (std::find(std::begin(kLists), std::end(kLists), key) != std::end(kLists)) {
    return OpticsFieldType::kNumberList;
  }
  if (std::find(std::begin(kNumbers), std::end(kNumbers), key) != std::end(kNumbers)) {
    return OpticsFieldType::kNumber;
  }
  for (std::string_view q : kQuantities) {
    for (std::string_view l : kLevels) {
      if (key.size() == q.size() + 1 + l.size() && key.substr(0, q.size()) == q &&
          key.substr(q.size() + 1) == l) {
        return OpticsFieldType::kNumber;
      }
    }
  }
  return OpticsFieldType::kText;
}

std::vector<logs::LogEvent> OpticsToolEvents(const optics::ToolOutput& output,
                                             const std::string& source) {
  return triage_optics_events::Events(output, source);
}

}  // namespace railwatch
