#include "optics/reader_util.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"

namespace railwatch::optics::reader {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string StripAnsi(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b') {
      // CSI: ESC [ parameters intermediates final-byte (@ to ~); a lone ESC is dropped.
      if (i + 1 < line.size() && line[i + 1] == '[') {
        size_t j = i + 2;
        while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
        i = j;
      }
      continue;
    }
    out.push_back(line[i]);
  }
  return out;
}

namespace {

// Length of the decimal number at the start of `s` (sign, digits, point, exponent), 0 if none.
size_t NumberLength(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (s.substr(i, 3) == "inf" || s.substr(i, 3) == "Inf") {
    i += 3;
    if (s.substr(i, 5) == "inity") i += 5;
    return i;
  }
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
    size_t exp_digits = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++exp_digits;
    if (exp_digits > 0) i = j;
  }
  return i;
}

bool ToDouble(std::string_view s, double* out) {
  const std::string copy(s);
  const bool negative = !copy.empty() && copy[0] == '-';
  const std::string_view unsigned_part =
      std::string_view(copy).substr(copy[0] == '-' || copy[0] == '+' ? 1 : 0);
  if (unsigned_part.substr(0, 3) == "inf" || unsigned_part.substr(0, 3) == "Inf") {
    *out = negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
    return true;
  }
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || std::isnan(v)) return false;
  // Underflow (15E-255 is fine; 1E-400 reads 0) is a number all the same.
  *out = v;
  return true;
}

}  // namespace

bool ParseNumber(std::string_view text, double* out) {
  text = Trim(text);
  const size_t n = NumberLength(text);
  if (n == 0 || n != text.size()) return false;
  return ToDouble(text, out);
}

bool LeadingNumber(std::string_view text, double* out, std::string_view* rest) {
  text = Trim(text);
  const size_t n = NumberLength(text);
  if (n == 0 || !ToDouble(text.substr(0, n), out)) return false;
  if (rest != nullptr) *rest = Trim(text.substr(n));
  return true;
}

bool ParseCount(std::string_view text, uint64_t* out) {
  text = Trim(text);
  if (text.empty()) return false;
  uint64_t v = 0;
  bool digit_seen = false;
  size_t since_comma = 0;
  bool comma_seen = false;
  for (char c : text) {
    if (c == ',') {
      // Thousands separators: groups of three after the first.
      if (!digit_seen || (comma_seen && since_comma != 3)) return false;
      comma_seen = true;
      since_comma = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
    digit_seen = true;
    ++since_comma;
  }
  if (comma_seen && since_comma != 3) return false;
  *out = v;
  return true;
}

bool IsNotAvailable(std::string_view text) {
  text = Trim(text);
  return text.empty() || text == "N/A" || text == "n/a" || text == "NA" || text == "-" ||
         text == "None" || text == "Unknown";
}

double BerValue(double ber) { return ber < 1e-200 ? 0.0 : ber; }

std::string Normalize(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : Trim(s)) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

bool SplitLaneSuffix(std::string_view key, std::string* base, int* lane) {
  key = Trim(key);
  *base = Normalize(key);
  if (key.empty() || key.back() != ')') return false;
  const size_t open = key.rfind('(');
  if (open == std::string_view::npos) return false;
  std::string_view inside = key.substr(open + 1, key.size() - open - 2);
  for (std::string_view word : {"Channel", "Chan", "Lane", "channel", "lane"}) {
    if (inside.substr(0, word.size()) != word) continue;
    std::string_view number = Trim(inside.substr(word.size()));
    uint64_t n = 0;
    if (!ParseCount(number, &n) || n == 0 || n > 64 || number.find(',') != std::string_view::npos) {
      return false;
    }
    *lane = static_cast<int>(n);
    *base = Normalize(key.substr(0, open));
    return true;
  }
  return false;
}

std::vector<std::string> SplitList(std::string_view s, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(separator, start);
    out.emplace_back(Trim(s.substr(start, at == std::string_view::npos ? at : at - start)));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return out;
}

std::string FormFactorOf(std::string_view identifier) {
  // ethtool: "0x11 (QSFP28)": the description in parentheses.
  std::string_view text = Trim(identifier);
  if (text.substr(0, 2) == "0x") {
    const size_t open = text.find('(');
    text = open == std::string_view::npos ? std::string_view() : text.substr(open + 1);
  }
  struct Name {
    std::string_view contains, form_factor;
  };
  static constexpr Name kNames[] = {
      {"QSFP-DD", "QSFP-DD"}, {"QSFP112", "QSFP112"}, {"OSFP", "OSFP"}, {"SFP-DD", "SFP-DD"},
      {"QSFP28", "QSFP28"},   {"QSFP+", "QSFP+"},     {"QSFP", "QSFP"}, {"SFP28", "SFP28"},
      {"SFP+", "SFP+"},       {"SFP", "SFP"},         {"CXP", "CXP"},   {"XFP", "XFP"},
      {"GBIC", "GBIC"}};
  for (const Name& n : kNames) {
    if (text.find(n.contains) != std::string_view::npos) return std::string(n.form_factor);
  }
  return "";
}

ModuleSpec SpecOf(std::string_view form_factor, std::string_view identifier) {
  if (identifier.find("CMIS") != std::string_view::npos) return ModuleSpec::kCmis;
  if (form_factor == "QSFP-DD" || form_factor == "OSFP" || form_factor == "QSFP112" ||
      form_factor == "SFP-DD") {
    return ModuleSpec::kCmis;
  }
  if (form_factor == "QSFP28" || form_factor == "QSFP+" || form_factor == "QSFP") {
    return ModuleSpec::kSff8636;
  }
  if (form_factor == "SFP" || form_factor == "SFP+" || form_factor == "SFP28") {
    return ModuleSpec::kSff8472;
  }
  return ModuleSpec::kUnknown;
}

std::string FlagName(std::string_view quantity, bool high, bool alarm, int lane) {
  return LaneFlag(
      absl::StrCat(std::string(quantity), high ? "_high_" : "_low_", alarm ? "alarm" : "warning"),
      lane);
}

std::string LaneFlag(std::string_view flag, int lane) {
  return lane > 0 ? absl::StrCat(std::string(flag), ":lane", lane) : std::string(flag);
}

void AddFlag(ModuleReading& m, std::string flag) {
  for (const std::string& f : m.flags) {
    if (f == flag) return;
  }
  m.flags.push_back(std::move(flag));
}

Thresholds* ThresholdsFor(ModuleReading& m, std::string_view quantity) {
  if (quantity == "temperature") return &m.threshold(Quantity::kTemperature);
  if (quantity == "voltage") return &m.threshold(Quantity::kSupplyVoltage);
  if (quantity == "tx_bias") return &m.threshold(Quantity::kTxBias);
  if (quantity == "tx_power") return &m.threshold(Quantity::kTxPower);
  if (quantity == "rx_power") return &m.threshold(Quantity::kRxPower);
  return nullptr;
}

void SetThreshold(Thresholds& t, bool high, bool alarm, double v) {
  (high ? (alarm ? t.alarm_high : t.warning_high) : (alarm ? t.alarm_low : t.warning_low)) = v;
}

void AddProblem(std::vector<ToolProblem>& problems, int line, int column, std::string message) {
  problems.push_back({line, column, std::move(message)});
}

void AddProblem(std::vector<ToolProblem>& problems, const ToolField& f, std::string message) {
  AddProblem(problems, f.line, f.column, std::move(message));
}

std::string NotANumber(const ToolField& f, std::string_view what) {
  return absl::StrCat("\"", f.key, "\": value \"", f.value.substr(0, 80), "\" is not ",
                      std::string(what));
}

}  // namespace railwatch::optics::reader
