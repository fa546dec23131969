#include "triage/optics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

// What the optics.* events (triage/optics_events.cc) say, per port: findings, the likely part,
// the commands that confirm it, and a summary of every reading.
namespace railwatch {
// Named, not anonymous: the unity build puts this file beside the other triage inputs.
namespace triage_optics {

using logs::LogEvent;
using Level = TriageFinding::Level;

constexpr size_t kListed = 12;  // ports in the summary; the rest are counted

std::string Number(double v) { return absl::StrFormat("%.6g", v); }
std::string Fixed(double v, int decimals = 2) { return absl::StrFormat("%.*f", decimals, v); }
std::string BerText(double v) { return v == 0 ? "0" : absl::StrFormat("%.2g", v); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// "1-4", "1, 3, 4".
std::string Lanes(const std::vector<int>& lanes) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < lanes.size();) {
    size_t j = i;
    while (j + 1 < lanes.size() && lanes[j + 1] == lanes[j] + 1) ++j;
    parts.push_back(j >= i + 2 ? absl::StrCat(lanes[i], "-", lanes[j]) : absl::StrCat(lanes[i]));
    if (j == i + 1) parts.push_back(absl::StrCat(lanes[j]));
    i = j + 1;
  }
  return absl::StrJoin(parts, ", ");
}

std::string Name(const LogEvent& e) {
  const std::string device = e.Value("device");
  if (device.empty()) return "";
  return e.Value("port").empty() ? device : absl::StrCat(device, " port ", e.Value("port"));
}

// What one port's events say, merged: the later reading's value wins, flags add up.
struct Merged {
  std::map<std::string, std::string> fields;
  std::vector<std::string> flags;
  std::vector<const LogEvent*> events;

  void Add(const LogEvent& e) {
    events.push_back(&e);
    for (const auto& [key, value] : e.fields) {
      if (key == "flags") {
        for (absl::string_view f : absl::StrSplit(value, ',', absl::SkipEmpty())) {
          if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.emplace_back(f);
        }
      } else if (!value.empty()) {
        fields[key] = value;
      }
    }
  }
  bool empty() const { return events.empty(); }
  std::string Get(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? "" : it->second;
  }
  std::optional<double> Num(const std::string& key) const {
    double v = 0;
    const std::string s = Get(key);
    if (s.empty() || !absl::SimpleAtod(s, &v) || std::isnan(v)) return std::nullopt;
    return v;
  }
  std::vector<std::optional<double>> List(const std::string& key) const {
    std::vector<std::optional<double>> out;
    const std::string s = Get(key);
    if (s.empty()) return out;
    for (absl::string_view item : absl::StrSplit(s, ',')) {
      double v = 0;
      out.push_back(absl::SimpleAtod(item, &v) ? std::optional<double>(v) : std::nullopt);
    }
    return out;
  }
};

struct Port {
  std::string name;  // "eth0", "/dev/mst/mt41692_pciconf0 port 1", "module at FILE:LINE"
  std::string device, port;
  std::set<std::string> tools;
  Merged module, fec, phy;
  const LogEvent* first = nullptr;
  int lanes = 0;
};

std::string Where(const LogEvent& e) { return absl::StrCat(e.source, ":", e.line); }

bool Uses(const Port& p, std::string_view prefix) {
  return std::any_of(p.tools.begin(), p.tools.end(),
                     [&](const std::string& t) { return t.rfind(prefix, 0) == 0; });
}

// The commands that read the port again, with its device filled in; `counters_first` for a
// BER or FEC finding.
std::vector<std::string> Commands(const Port& p, bool counters_first) {
  std::vector<std::string> dom, counters, far;
  const std::string dev = p.device.empty() ? "<dev>" : p.device;
  if (Uses(p, "ethtool")) {
    dom.push_back(
        absl::StrCat("ethtool -m ", dev, "   # the module's DOM, thresholds and flags now"));
    counters.push_back(absl::StrCat("ethtool -I --show-fec ", dev,
                                    "   # FEC corrected/uncorrectable: twice, a minute apart"));
    counters.push_back(absl::StrCat(
        "ethtool -S ", dev, " | grep -iE 'fec|phy|symbol|lane'   # the driver's PHY counters"));
    far.push_back(absl::StrCat("lldpcli show neighbors ports ", dev,
                               "   # the far end: read its Tx power and flags there"));
  }
  if (Uses(p, "mlxlink")) {
    const std::string target = absl::StrCat("mlxlink -d ", p.device.empty() ? "<dev>" : p.device,
                                            p.port.empty() ? "" : absl::StrCat(" -p ", p.port));
    dom.push_back(absl::StrCat(target, " -m -c   # module DOM, BER and link counters now"));
    counters.push_back(absl::StrCat(target, " -c --rx_fec_histogram --show_histogram",
                                    "   # codewords by symbol errors: how close to the limit"));
    counters.push_back(absl::StrCat(target,
                                    " --pc   # clear the counters; read again in 10 min "
                                    "for a rate"));
  }
  if (Uses(p, "sonic")) {
    const std::string port = p.device.empty() ? "<port>" : p.device;
    dom.push_back(absl::StrCat("show interfaces transceiver eeprom ", port,
                               " --dom   # DOM and thresholds now"));
    dom.push_back(absl::StrCat("show interfaces transceiver status ", port,
                               "   # per-lane flags (LOS, LOL, Tx fault)"));
    counters.push_back("show interfaces counters fec-stats   # twice, a minute apart: the rate");
    far.push_back(
        absl::StrCat("show lldp neighbors ", port, "   # the far end: read its Tx power there"));
  }
  std::vector<std::string> out;
  for (auto* group :
       counters_first ? std::vector{&counters, &dom, &far} : std::vector{&dom, &far, &counters}) {
    out.insert(out.end(), group->begin(), group->end());
  }
  return out;
}

// "FS SFP-10GSR-85 SN F2020533679 (SFP, SFF-8472, 10G Base-SR, 850 nm)".
std::string Identity(const Port& p) {
  const Merged& m = p.module;
  std::vector<std::string> what;
  for (const char* k : {"form_factor", "spec", "media"}) {
    if (!m.Get(k).empty()) what.push_back(m.Get(k));
  }
  if (!m.Get("wavelength_nm").empty()) what.push_back(m.Get("wavelength_nm") + " nm");
  if (!m.Get("cable").empty()) what.push_back(m.Get("cable"));
  std::vector<std::string> names;
  if (!m.Get("vendor").empty()) names.push_back(m.Get("vendor"));
  if (!m.Get("pn").empty()) names.push_back(m.Get("pn"));
  if (!m.Get("sn").empty()) names.push_back("SN " + m.Get("sn"));
  std::string collapsed = absl::StrJoin(names, " ");
  if (!what.empty()) {
    absl::StrAppend(&collapsed, collapsed.empty() ? "" : " ", "(", absl::StrJoin(what, ", "), ")");
  }
  return collapsed.empty() ? "identity not in the paste" : collapsed;
}

std::string JoinLanes(const std::vector<std::optional<double>>& lanes, int decimals) {
  std::vector<std::string> out;
  for (const auto& v : lanes) out.push_back(v ? Fixed(*v, decimals) : "-");
  return absl::StrJoin(out, ", ");
}

// One line of what the module reads.
std::string Readings(const Port& p) {
  const Merged& m = p.module;
  std::vector<std::string> parts;
  if (auto t = m.Num("temperature_c")) {
    std::string s = absl::StrCat(Fixed(*t, 1), " °C");
    if (auto a = m.Num("temperature_c_alarm_high"))
      absl::StrAppend(&s, " (alarm ", Number(*a), ")");
    parts.push_back(s);
  }
  if (auto v = m.Num("voltage_v")) parts.push_back(absl::StrCat(Fixed(*v, 3), " V"));
  if (auto b = m.List("tx_bias_ma"); !b.empty()) {
    parts.push_back(absl::StrCat("Tx bias ", JoinLanes(b, 2), " mA"));
  }
  if (auto t = m.List("tx_power_dbm"); !t.empty()) {
    parts.push_back(absl::StrCat("Tx ", JoinLanes(t, 2), " dBm"));
  }
  if (auto r = m.List("rx_power_dbm"); !r.empty()) {
    std::string s = absl::StrCat("Rx ", JoinLanes(r, 2), " dBm");
    std::vector<std::string> limits;
    if (auto w = m.Num("rx_power_dbm_warning_low")) limits.push_back("warning low " + Number(*w));
    if (auto a = m.Num("rx_power_dbm_alarm_low")) limits.push_back("alarm low " + Number(*a));
    if (!limits.empty()) absl::StrAppend(&s, " (", absl::StrJoin(limits, ", "), ")");
    parts.push_back(s);
  }
  if (!m.flags.empty()) parts.push_back("flags " + absl::StrJoin(m.flags, ", "));
  if (!m.Get("module_state").empty()) parts.push_back("state " + m.Get("module_state"));
  return parts.empty() ? "no DOM readings in the paste" : absl::StrJoin(parts, "; ");
}

std::string PhyLine(const Port& p) {
  const Merged& h = p.phy;
  std::vector<std::string> parts;
  std::string link =
      absl::StrJoin(std::vector<std::string>{h.Get("speed"), h.Get("width"), h.Get("fec")}, " ");
  if (!Trim(link).empty()) parts.push_back(std::string(Trim(link)));
  if (!h.Get("state").empty()) {
    parts.push_back(absl::StrCat(
        "state ", h.Get("state"),
        h.Get("physical_state").empty() ? "" : absl::StrCat(" / ", h.Get("physical_state"))));
  }
  if (auto r = h.Num("raw_ber")) parts.push_back("raw BER " + BerText(*r));
  if (auto e = h.Num("effective_ber")) parts.push_back("effective BER " + BerText(*e));
  if (auto m = h.Num("minutes_since_clear")) {
    parts.push_back(
        absl::StrCat("over ", Fixed(*m / 1440, 1), " days since the counters were cleared"));
  }
  if (auto d = h.Num("link_down")) parts.push_back(absl::StrCat("link down ", Number(*d)));
  if (auto r = h.Num("link_error_recovery"))
    parts.push_back(absl::StrCat("recoveries ", Number(*r)));
  if (auto s = h.Num("symbol_errors")) parts.push_back(absl::StrCat("symbol errors ", Number(*s)));
  return absl::StrJoin(parts, "; ");
}

std::string FecLine(const Port& p) {
  const Merged& f = p.fec;
  std::vector<std::string> parts;
  if (!f.Get("active").empty()) parts.push_back("active " + f.Get("active"));
  if (!f.Get("configured").empty()) parts.push_back("configured " + f.Get("configured"));
  if (!f.Get("mode").empty()) parts.push_back(f.Get("mode"));
  if (!f.Get("state").empty()) parts.push_back("port state " + f.Get("state"));
  for (const char* k :
       {"corrected_blocks", "uncorrectable_blocks", "corrected_bits", "symbol_errors"}) {
    if (!f.Get(k).empty()) parts.push_back(absl::StrCat(k, " ", f.Get(k)));
  }
  if (auto b = f.Num("pre_fec_ber")) parts.push_back("pre-FEC BER " + BerText(*b));
  if (auto b = f.Num("post_fec_ber")) parts.push_back("post-FEC BER " + BerText(*b));
  if (!f.Get("histogram").empty()) parts.push_back("histogram " + f.Get("histogram"));
  return absl::StrJoin(parts, "; ");
}

// "rx_los:lane3" -> ("rx_los", 3); "rx_los" -> lane 0.
std::pair<std::string, int> SplitFlag(const std::string& flag) {
  const size_t at = flag.find(":lane");
  int lane = 0;
  if (at == std::string::npos || !absl::SimpleAtoi(flag.substr(at + 5), &lane)) return {flag, 0};
  return {flag.substr(0, at), lane};
}

// What is wrong with a port, as far as its readings say: what the "likely" line is made of.
struct Facts {
  std::vector<int> los_lanes;
  bool los_module = false;  // a flag without a lane
  std::vector<int> rx_low, tx_low, bias_bad;
  bool hot = false, ber_high = false, post_fec = false, passive = false, dom = false;
};

std::string Likely(const Port& p, const Facts& f) {
  std::vector<std::string> out;
  const bool tx_bad = !f.tx_low.empty() || !f.bias_bad.empty();
  if (f.passive) {
    out.push_back(
        "a passive copper cable: no laser or receiver of its own, so its flags are not "
        "measurements; errors on it are the cable or a port: reseat both ends, then swap the "
        "cable");
  } else {
    if (f.los_module ||
        (!f.los_lanes.empty() && p.lanes > 0 && static_cast<int>(f.los_lanes.size()) >= p.lanes)) {
      out.push_back(
          "no light reaches this end on any lane: the fibre (unplugged, broken, Tx and Rx "
          "swapped) or the far end (down, its laser off or Tx disabled)");
    } else if (!f.los_lanes.empty()) {
      out.push_back(absl::StrCat(
          "lanes ", Lanes(f.los_lanes),
          " only: on a parallel optic (DR4, SR4, one fibre per lane in the MPO trunk) one "
          "fibre or the far end's lanes; on a WDM optic (FR4, LR4) the far end's lasers on "
          "those lanes"));
    }
    if (!f.rx_low.empty() && !tx_bad) {
      out.push_back(
          "this end's own Tx power and bias are in range, so the light is lost before it "
          "arrives: the fibre (a dirty or damaged connector, a tight bend, a bad patch) or the "
          "far end's transmitter; read the far end's Tx power, clean both ends");
    } else if (!f.rx_low.empty() && tx_bad) {
      out.push_back("this optic: its own Tx is out of range too; reseat it, then replace it");
    } else if (tx_bad) {
      out.push_back(
          "this optic's laser (ageing or failing): replace the module; the far end sees low "
          "Rx power from it");
    }
    if (f.hot) out.push_back("this module, or the airflow at this port (fans, a missing blank)");
  }
  if ((f.ber_high || f.post_fec) && !f.passive) {
    if (!f.rx_low.empty() || !f.los_lanes.empty()) {
      out.push_back("the low receive power explains the bit errors");
    } else if (f.dom && !tx_bad && !f.hot) {
      out.push_back(
          "the module's own readings are in range: a dirty connector, the cable, or either "
          "end's SerDes or module; clean and reseat both ends, then swap the cable, then the "
          "optics");
    } else if (!f.dom) {
      out.push_back(
          "the paste has no DOM for this port: read the module (both ends) to tell the optic "
          "from the fibre");
    }
  }
  return absl::StrJoin(out, "; ");
}

class PortAnalysis {
 public:
  PortAnalysis(const Port& p, std::vector<TriageFinding>& findings) : p_(p), findings_(findings) {}

  void Run() {
    CollectFacts();
    const std::string likely = Likely(p_, facts_);
    const size_t first = findings_.size();
    LossOfSignal();
    PowerBelow("rx_power_dbm", "receive", facts_.rx_low);
    PowerBelow("tx_power_dbm", "transmit", facts_.tx_low);
    Bias();
    Temperature();
    Voltage();
    OtherFlags();
    BitErrorRate();
    LinkEvents();
    Fec();
    Recommendation();
    for (size_t i = first; i < findings_.size(); ++i) {
      if (!likely.empty()) findings_[i].details.emplace_back("likely", likely);
    }
  }

 private:
  TriageFinding& Add(Level level, std::string kind, const Merged& from, std::string title,
                     bool counters_first) {
    TriageFinding f;
    f.level = level;
    f.kind = std::move(kind);
    const LogEvent& e = from.empty() ? *p_.first : *from.events.front();
    f.first_seen = Where(e);
    f.count = static_cast<int>(from.events.size());
    f.title = std::move(title);
    if (!p_.module.empty()) f.details.emplace_back("module", Identity(p_));
    f.next = Commands(p_, counters_first);
    findings_.push_back(std::move(f));
    return findings_.back();
  }

  std::string Title(std::string_view what) const {
    return absl::StrCat("Optics ", p_.name, ": ", std::string(what));
  }

  void CollectFacts() {
    const Merged& m = p_.module;
    facts_.passive = m.Get("cable").find("assive copper") != std::string::npos ||
                     m.Get("cable").find("Passive") != std::string::npos;
    facts_.dom = !m.Get("temperature_c").empty() || !m.Get("rx_power_dbm").empty() ||
                 !m.Get("tx_power_dbm").empty();
    for (const std::string& flag : m.flags) {
      auto [name, lane] = SplitFlag(flag);
      if (name != "rx_los") continue;
      if (lane == 0) {
        facts_.los_module = true;
      } else {
        facts_.los_lanes.push_back(lane);
      }
    }
    std::sort(facts_.los_lanes.begin(), facts_.los_lanes.end());
    facts_.rx_low = LanesBelow("rx_power_dbm", true);
    facts_.tx_low = LanesBelow("tx_power_dbm", false);
    const auto bias = m.List("tx_bias_ma");
    for (size_t i = 0; i < bias.size(); ++i) {
      if (!bias[i]) continue;
      const auto hi = m.Num("tx_bias_ma_warning_high"), lo = m.Num("tx_bias_ma_warning_low");
      const auto ahi = m.Num("tx_bias_ma_alarm_high"), alo = m.Num("tx_bias_ma_alarm_low");
      if ((hi && *bias[i] > *hi) || (lo && *bias[i] < *lo) || (ahi && *bias[i] > *ahi) ||
          (alo && *bias[i] < *alo)) {
        facts_.bias_bad.push_back(static_cast<int>(i) + 1);
      }
    }
    if (auto t = m.Num("temperature_c")) {
      const auto alarm = m.Num("temperature_c_alarm_high");
      const auto warning = m.Num("temperature_c_warning_high");
      facts_.hot = (alarm && *t >= *alarm - kOpticsHotMarginC) || (warning && *t >= *warning);
    }
    const Merged& h = p_.phy;
    double worst = h.Num("raw_ber").value_or(0);
    for (const auto& v : h.List("raw_ber_lanes")) worst = std::max(worst, v.value_or(0));
    if (auto b = p_.fec.Num("pre_fec_ber")) worst = std::max(worst, *b);
    facts_.ber_high = worst > kOpticsRawBerWarning;
    facts_.post_fec = h.Num("effective_ber").value_or(0) > 0 ||
                      h.Num("effective_errors").value_or(0) > 0 ||
                      p_.fec.Num("uncorrectable_blocks").value_or(0) > 0 ||
                      p_.fec.Num("post_fec_ber").value_or(0) > 0;
  }

  // Lanes of a power below its warning (or alarm) low; Rx LOS lanes are reported as such.
  std::vector<int> LanesBelow(const std::string& q, bool skip_los) const {
    std::vector<int> out;
    const auto lanes = p_.module.List(q);
    const auto warning = p_.module.Num(q + "_warning_low");
    const auto alarm = p_.module.Num(q + "_alarm_low");
    for (size_t i = 0; i < lanes.size(); ++i) {
      const int lane = static_cast<int>(i) + 1;
      if (!lanes[i]) continue;
      if (skip_los && std::find(facts_.los_lanes.begin(), facts_.los_lanes.end(), lane) !=
                          facts_.los_lanes.end()) {
        continue;
      }
      if ((warning && *lanes[i] < *warning) || (alarm && *lanes[i] < *alarm)) out.push_back(lane);
    }
    return out;
  }

  void LossOfSignal() {
    if (facts_.los_lanes.empty() && !facts_.los_module) return;
    const std::string where =
        facts_.los_module ? ""
                          : absl::StrCat(" on lane", facts_.los_lanes.size() > 1 ? "s " : " ",
                                         Lanes(facts_.los_lanes),
                                         p_.lanes > 0 ? absl::StrCat(" of ", p_.lanes) : "");
    TriageFinding& f =
        Add(facts_.passive ? Level::kInfo : Level::kFailure, "optics.module", p_.module,
            Title(absl::StrCat("receive loss of signal (Rx LOS)", where,
                               facts_.passive ? " on a passive copper cable" : "")),
            false);
    if (!p_.module.Get("module_state").empty()) {
      f.details.emplace_back("state", p_.module.Get("module_state"));
    }
    const auto rx = p_.module.List("rx_power_dbm");
    if (!rx.empty()) f.details.emplace_back("rx power", JoinLanes(rx, 2) + " dBm");
    f.meaning =
        facts_.passive
            ? "A passive copper cable has no optics: the LOS and CDR lock flags in its memory "
              "map are not measurements, and the link state (not these flags) says whether it "
              "works."
            : "The module's receiver detects no signal on those lanes: no light, or too little "
              "to recover a clock. A lane without signal carries nothing; the link is down or "
              "runs without those lanes. A CMIS module whose data path is not activated "
              "(DP_PRE_INIT_CHECK, DPDeactivated) also reports LOS until it is.";
  }

  void PowerBelow(const std::string& q, std::string_view what, const std::vector<int>& lanes) {
    if (lanes.empty()) return;
    const auto values = p_.module.List(q);
    const auto warning = p_.module.Num(q + "_warning_low");
    const auto alarm = p_.module.Num(q + "_alarm_low");
    bool below_alarm = false;
    int worst = lanes.front();
    for (int lane : lanes) {
      if (alarm && *values[lane - 1] < *alarm) below_alarm = true;
      if (*values[lane - 1] < *values[worst - 1]) worst = lane;
    }
    const double v = *values[worst - 1];
    const double limit = below_alarm ? *alarm : *warning;
    TriageFinding& f =
        Add(below_alarm ? Level::kFailure : Level::kWarning, "optics.module", p_.module,
            Title(absl::StrCat(std::string(what), " power below its ",
                               below_alarm ? "alarm" : "warning", " threshold on lane",
                               lanes.size() > 1 ? "s " : " ", Lanes(lanes), " (", Fixed(v),
                               " dBm, ", Fixed(limit - v), " dB under ", Fixed(limit), " dBm)")),
            false);
    for (int lane : lanes) {
      const double x = *values[lane - 1];
      std::vector<std::string> margins;
      if (warning) {
        margins.push_back(absl::StrCat(Fixed(std::fabs(*warning - x)), " dB ",
                                       x < *warning ? "under" : "over", " its warning low ",
                                       Fixed(*warning), " dBm"));
      }
      if (alarm) {
        margins.push_back(absl::StrCat(Fixed(std::fabs(*alarm - x)), " dB ",
                                       x < *alarm ? "under" : "over", " its alarm low ",
                                       Fixed(*alarm), " dBm"));
      }
      f.details.emplace_back(absl::StrCat("lane ", lane),
                             absl::StrCat(Fixed(x), " dBm: ", absl::StrJoin(margins, ", ")));
    }
    f.meaning =
        what == "receive"
            ? "The light arriving at this module is weaker than the module itself says it "
              "needs. Below the warning the margin is going; below the alarm bit errors rise "
              "and FEC stops keeping up. Every dB lost is in the fibre path (connectors, "
              "patches, bends) or at the far end's transmitter."
            : "This module's laser sends less light than its own limits allow: the far end "
              "receives less, and lanes fail as the laser ages further.";
  }

  void Bias() {
    if (facts_.bias_bad.empty()) return;
    const Merged& m = p_.module;
    const auto bias = m.List("tx_bias_ma");
    const auto ahi = m.Num("tx_bias_ma_alarm_high"), alo = m.Num("tx_bias_ma_alarm_low");
    bool alarm = false;
    for (int lane : facts_.bias_bad) {
      const double b = *bias[lane - 1];
      if ((ahi && b > *ahi) || (alo && b < *alo)) alarm = true;
    }
    TriageFinding& f = Add(
        alarm ? Level::kFailure : Level::kWarning, "optics.module", m,
        Title(absl::StrCat("laser bias out of its ", alarm ? "alarm" : "warning", " range on lane",
                           facts_.bias_bad.size() > 1 ? "s " : " ", Lanes(facts_.bias_bad))),
        false);
    std::vector<std::string> range;
    for (const char* level : {"warning_low", "warning_high", "alarm_low", "alarm_high"}) {
      if (auto v = m.Num(absl::StrCat("tx_bias_ma_", level))) {
        range.push_back(absl::StrCat(level, " ", Number(*v)));
      }
    }
    for (int lane : facts_.bias_bad) {
      f.details.emplace_back(
          absl::StrCat("lane ", lane),
          absl::StrCat(Fixed(*bias[lane - 1]), " mA (", absl::StrJoin(range, ", "), " mA)"));
    }
    f.meaning =
        "The laser's drive current is outside the module's own range. A laser drives more "
        "current to hold its power as it ages (bias high), and one that fails draws too little "
        "(bias low): either way this module's transmitter, not the fibre.";
  }

  void Temperature() {
    const Merged& m = p_.module;
    const auto t = m.Num("temperature_c");
    if (!t || !facts_.hot) return;
    const auto alarm = m.Num("temperature_c_alarm_high");
    const auto warning = m.Num("temperature_c_warning_high");
    const bool over = alarm && *t >= *alarm;
    std::string what;
    if (over) {
      what = absl::StrCat("module at ", Fixed(*t, 1), " °C, at or above its alarm at ",
                          Number(*alarm), " °C");
    } else if (alarm && *t >= *alarm - kOpticsHotMarginC) {
      what = absl::StrCat("module at ", Fixed(*t, 1), " °C, within ", Number(kOpticsHotMarginC),
                          " °C of its alarm at ", Number(*alarm), " °C");
    } else {
      what = absl::StrCat("module at ", Fixed(*t, 1), " °C, above its warning at ",
                          Number(*warning), " °C");
    }
    TriageFinding& f =
        Add(over ? Level::kFailure : Level::kWarning, "optics.module", m, Title(what), false);
    std::vector<std::string> limits;
    if (warning) limits.push_back(absl::StrCat("warning ", Number(*warning), " °C"));
    if (alarm) limits.push_back(absl::StrCat("alarm ", Number(*alarm), " °C"));
    f.details.emplace_back("thresholds", absl::StrJoin(limits, ", "));
    f.meaning =
        "The module declares the temperature at which it raises its alarm; this one is close "
        "or past it. Hot optics lose transmit power and receiver sensitivity, then the link "
        "errors and goes down. Check the airflow at this port first (fans, blanking panels, a "
        "hotter neighbour), then the module.";
  }

  void Voltage() {
    const Merged& m = p_.module;
    const auto v = m.Num("voltage_v");
    if (!v) return;
    const auto lo = m.Num("voltage_v_warning_low"), hi = m.Num("voltage_v_warning_high");
    if (!((lo && *v < *lo) || (hi && *v > *hi))) return;
    TriageFinding& f =
        Add(Level::kWarning, "optics.module", m,
            Title(absl::StrCat("supply voltage ", Fixed(*v, 3), " V outside its warning range")),
            false);
    f.details.emplace_back("thresholds", absl::StrCat(lo ? Fixed(*lo, 3) : "?", " to ",
                                                      hi ? Fixed(*hi, 3) : "?", " V"));
    f.meaning =
        "The module's 3.3 V supply is outside its own warning range: the port's power (the "
        "switch or NIC side) or the module's regulator.";
  }

  void OtherFlags() {
    std::vector<std::string> flags;
    bool alarm = false;
    for (const std::string& flag : p_.module.flags) {
      auto [name, lane] = SplitFlag(flag);
      if (name == "rx_los") continue;
      flags.push_back(flag);
      if (name.find("alarm") != std::string::npos || name == "tx_fault" ||
          name.find("fw_fault") != std::string::npos) {
        alarm = true;
      }
    }
    if (flags.empty()) return;
    TriageFinding& f =
        Add(facts_.passive ? Level::kInfo : (alarm ? Level::kFailure : Level::kWarning),
            "optics.module", p_.module,
            Title(absl::StrCat("the module set ", flags.size(), " flag",
                               flags.size() > 1 ? "s" : "", ": ", absl::StrJoin(flags, ", "))),
            false);
    f.details.emplace_back("flags", absl::StrJoin(flags, ", "));
    f.meaning =
        "The module's own latched flags: receive power low (the fibre or the far end), "
        "transmit power or bias out of range (its laser), temperature or voltage, loss of "
        "lock (rx_lol, tx_lol: no clock recovered), a transmitter fault (tx_fault), a disabled "
        "transmitter (tx_disabled: the far end sees no light). Latched flags stay set until "
        "read: read them twice to see whether the condition persists.";
  }

  void BitErrorRate() {
    const Merged& h = p_.phy;
    std::vector<std::string> high;
    double worst = 0;
    if (auto r = h.Num("raw_ber"); r && *r > kOpticsRawBerWarning) {
      high.push_back("raw BER " + BerText(*r));
      worst = std::max(worst, *r);
    }
    const auto lanes = h.List("raw_ber_lanes");
    std::vector<int> bad_lanes;
    for (size_t i = 0; i < lanes.size(); ++i) {
      if (lanes[i] && *lanes[i] > kOpticsRawBerWarning) {
        bad_lanes.push_back(static_cast<int>(i) + 1);
        worst = std::max(worst, *lanes[i]);
      }
    }
    if (auto b = p_.fec.Num("pre_fec_ber"); b && *b > kOpticsRawBerWarning) {
      high.push_back("pre-FEC BER " + BerText(*b));
      worst = std::max(worst, *b);
    }
    const double effective = h.Num("effective_ber").value_or(0);
    const double effective_errors = h.Num("effective_errors").value_or(0);
    if (effective > 0 || effective_errors > 0) {
      TriageFinding& f =
          Add(Level::kFailure, "optics.phy", h,
              Title(absl::StrCat("errors after FEC: effective BER ", BerText(effective), ", ",
                                 Number(effective_errors), " effective errors")),
              true);
      if (!h.Get("fec").empty()) f.details.emplace_back("fec", h.Get("fec"));
      if (auto m = h.Num("minutes_since_clear")) {
        f.details.emplace_back("counted over", absl::StrCat(Fixed(*m / 1440, 1), " days"));
      }
      f.meaning =
          "Bit errors FEC could not correct reach the host: every one corrupts a packet that "
          "is dropped (RoCE retransmits it after a timeout, a collective stalls). Raw errors "
          "are expected and corrected; effective errors are not.";
    }
    if (worst <= kOpticsRawBerWarning) return;
    TriageFinding& f = Add(
        worst > kOpticsRawBerLimit ? Level::kFailure : Level::kWarning, "optics.phy",
        h.empty() ? p_.fec : h,
        Title(absl::StrCat("pre-FEC BER ", BerText(worst), " above ", BerText(kOpticsRawBerWarning),
                           worst > kOpticsRawBerLimit ? " and past RS(544,514)'s limit" : "")),
        true);
    if (!high.empty()) f.details.emplace_back("ber", absl::StrJoin(high, ", "));
    if (!bad_lanes.empty()) {
      std::vector<std::string> per_lane;
      for (int lane : bad_lanes) {
        per_lane.push_back(absl::StrCat("lane ", lane, " ", BerText(*lanes[lane - 1])));
      }
      f.details.emplace_back("lanes", absl::StrJoin(per_lane, ", "));
    }
    if (!h.Get("fec").empty()) f.details.emplace_back("fec", h.Get("fec"));
    f.meaning = absl::StrCat(
        "The bit error rate before FEC. RS(544,514) (200G/400G/800G Ethernet, InfiniBand NDR) "
        "corrects a raw BER up to about ",
        BerText(kOpticsRawBerLimit), "; railwatch warns a decade under it, at ",
        BerText(kOpticsRawBerWarning),
        ", where a healthy link sits orders of magnitude lower (1e-8 and below). Rising raw "
        "BER is the earliest sign of a link going bad; one lane far above the others is that "
        "lane's fibre or laser.");
  }

  void LinkEvents() {
    const Merged& h = p_.phy;
    const double down = h.Num("link_down").value_or(0);
    const double recovery = h.Num("link_error_recovery").value_or(0);
    const std::string state = h.Get("state");
    const bool not_up = !state.empty() && state != "Active" && state != "Up" && state != "up";
    if (down <= 0 && recovery <= 0 && !not_up) return;
    std::vector<std::string> what;
    if (not_up) what.push_back(absl::StrCat("link not up (state ", state, ")"));
    if (down > 0) what.push_back(absl::StrCat("link went down ", Number(down), " times"));
    if (recovery > 0) what.push_back(absl::StrCat(Number(recovery), " link error recoveries"));
    TriageFinding& f =
        Add(Level::kWarning, "optics.phy", h, Title(absl::StrJoin(what, ", ")), true);
    if (auto m = h.Num("minutes_since_clear")) {
      f.details.emplace_back(
          "since", absl::StrCat("the counters were cleared ", Fixed(*m / 1440, 1), " days ago"));
    }
    if (!h.Get("physical_state").empty()) {
      f.details.emplace_back("physical state", h.Get("physical_state"));
    }
    f.meaning =
        "A link down tears down every queue pair across the link (NCCL fails or hangs); a link "
        "error recovery retrains the link without taking it down, and stalls traffic while it "
        "does. Either, repeated, is a cable, an optic or a port at one of the two ends.";
  }

  void Fec() {
    const Merged& fec = p_.fec;
    if (fec.empty()) return;
    const double uncorrectable = fec.Num("uncorrectable_blocks").value_or(0);
    const double post = fec.Num("post_fec_ber").value_or(0);
    if (uncorrectable <= 0 && post <= 0) return;
    TriageFinding& f = Add(
        Level::kFailure, "optics.fec", fec,
        Title(absl::StrCat(uncorrectable > 0
                               ? absl::StrCat(Number(uncorrectable), " uncorrectable FEC codewords")
                               : absl::StrCat("post-FEC BER ", BerText(post)),
                           fec.Get("corrected_blocks").empty()
                               ? ""
                               : absl::StrCat(" (", fec.Get("corrected_blocks"), " corrected)"))),
        true);
    f.details.emplace_back("fec", FecLine(p_));
    if (!fec.Get("uncorrectable_blocks_lanes").empty()) {
      f.details.emplace_back("per lane", fec.Get("uncorrectable_blocks_lanes"));
    }
    f.meaning =
        "Codewords with more symbol errors than FEC can correct: each is a corrupted frame, "
        "dropped (a RoCE retransmission, a stalled collective). Corrected codewords are normal; "
        "uncorrectable ones are not. The counters are totals since the port came up or was "
        "cleared: read them twice, a minute apart, to see whether they still grow.";
  }

  void Recommendation() {
    const Merged& h = p_.phy;
    const std::string rec = h.Get("recommendation");
    const auto opcode = h.Num("status_opcode");
    if ((rec.empty() || rec == "No issue was observed") && (!opcode || *opcode == 0)) return;
    TriageFinding& f = Add(
        Level::kWarning, "optics.phy", h,
        Title(absl::StrCat("mlxlink: ", rec.empty() ? "status opcode " + Number(*opcode) : rec)),
        true);
    if (opcode) f.details.emplace_back("status opcode", Number(*opcode));
    f.meaning = "mlxlink's own troubleshooting verdict for the port (PDDR troubleshooting page).";
  }

  const Port& p_;
  std::vector<TriageFinding>& findings_;
  Facts facts_;
};

void Analyze(const std::vector<LogEvent>& events, std::vector<TriageFinding>& findings,
             std::vector<std::string>& context) {
  std::map<std::string, size_t> index;
  std::vector<Port> ports;
  std::map<std::string, int> tools;
  size_t modules = 0, fecs = 0, phys = 0;
  std::set<std::string> readings;
  for (const LogEvent& e : events) {
    if (e.kind.rfind("optics.", 0) != 0) continue;
    const std::string name = Name(e);
    const std::string key = name.empty() ? "@" + e.Value("reading") : name;
    auto [it, added] = index.try_emplace(key, ports.size());
    if (added) {
      Port p;
      p.name = name.empty() ? absl::StrCat("(unnamed, line ", e.line, ")") : name;
      p.device = e.Value("device");
      p.port = e.Value("port");
      p.first = &e;
      ports.push_back(std::move(p));
    }
    Port& p = ports[it->second];
    p.tools.insert(e.Value("tool"));
    if (readings.insert(e.Value("reading")).second) ++tools[e.Value("tool")];
    int lanes = 0;
    if (absl::SimpleAtoi(e.Value("lanes"), &lanes)) p.lanes = std::max(p.lanes, lanes);
    if (e.kind == "optics.module") {
      p.module.Add(e);
      ++modules;
    } else if (e.kind == "optics.fec") {
      p.fec.Add(e);
      ++fecs;
    } else if (e.kind == "optics.phy") {
      p.phy.Add(e);
      ++phys;
    }
  }
  if (ports.empty()) return;
  const size_t before = findings.size();
  for (const Port& p : ports) PortAnalysis(p, findings).Run();
  const size_t problems = findings.size() - before;

  // What was read, per port: identity and readings, whatever the verdict.
  TriageFinding summary;
  summary.level = Level::kInfo;
  summary.kind = "optics.module";
  summary.first_seen = Where(*ports.front().first);
  summary.count = static_cast<int>(modules + fecs + phys);
  summary.title = absl::StrCat(
      "Optics, FEC and PHY readings: ", ports.size(), " port", ports.size() > 1 ? "s" : "",
      problems == 0 ? ", nothing out of range"
                    : absl::StrCat(", ", problems, " finding", problems > 1 ? "s" : "", " above"));
  for (size_t i = 0; i < ports.size() && i < kListed; ++i) {
    const Port& p = ports[i];
    std::vector<std::string> parts;
    if (!p.module.empty()) parts.push_back(absl::StrCat(Identity(p), ": ", Readings(p)));
    if (!p.phy.empty() && !PhyLine(p).empty()) parts.push_back(PhyLine(p));
    if (!p.fec.empty() && !FecLine(p).empty()) parts.push_back("FEC " + FecLine(p));
    summary.details.emplace_back(p.name, absl::StrJoin(parts, " | "));
  }
  if (ports.size() > kListed) {
    summary.details.emplace_back("and", absl::StrCat(ports.size() - kListed, " more ports"));
  }
  summary.meaning = absl::StrCat(
      "What the pasted tools say about each port. Thresholds are the module's own (ethtool -m, "
      "SONiC --dom: warning and alarm; mlxlink: the [low..high] alarm range). A snapshot has no "
      "rate: FEC and error counters are totals since the port came up or was cleared, so read "
      "them twice. railwatch flags pre-FEC BER above ",
      BerText(kOpticsRawBerWarning), ", any error after FEC, and a module within ",
      Number(kOpticsHotMarginC), " °C of its temperature alarm.");
  summary.next = Commands(ports.front(), false);
  findings.push_back(std::move(summary));

  std::vector<std::string> parts;
  for (const auto& [tool, n] : tools) parts.push_back(absl::StrCat(tool, " ", n));
  context.push_back(absl::StrCat("Optics tool output: ", ports.size(), " port",
                                 ports.size() > 1 ? "s" : "", " (", absl::StrJoin(parts, ", "),
                                 "): ", modules, " module, ", fecs, " FEC and ", phys,
                                 " PHY readings"));
}

}  // namespace triage_optics

void AnalyzeOptics(const std::vector<logs::LogEvent>& events, std::vector<TriageFinding>& findings,
                   std::vector<std::string>& context) {
  triage_optics::Analyze(events, findings, context);
}

}  // namespace railwatch
