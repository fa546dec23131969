#include "logs/kernel_line.h"

#include <array>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "logs/line_prefix.h"
#include "logs/text_scan.h"

namespace railwatch::logs {
namespace {

using scan::IsDigit;

constexpr std::array<absl::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
constexpr std::array<absl::string_view, 7> kWeekdays = {"Mon", "Tue", "Wed", "Thu",
                                                        "Fri", "Sat", "Sun"};

int MonthOf(absl::string_view s) {
  for (size_t i = 0; i < kMonths.size(); ++i) {
    if (s == kMonths[i]) return static_cast<int>(i) + 1;
  }
  return 0;
}

bool IsWeekday(absl::string_view s) {
  for (absl::string_view d : kWeekdays) {
    if (s == d) return true;
  }
  return false;
}

bool Consume(absl::string_view& s, absl::string_view prefix) {
  if (!absl::StartsWith(s, prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// "hh:mm:ss" at the start of `s`.
bool ClockTime(absl::string_view s, int* h, int* m, int* sec) {
  if (s.size() < 8 || s[2] != ':' || s[5] != ':') return false;
  return absl::SimpleAtoi(s.substr(0, 2), h) && absl::SimpleAtoi(s.substr(3, 2), m) &&
         absl::SimpleAtoi(s.substr(6, 2), sec) && IsDigit(s[0]) && IsDigit(s[3]) && IsDigit(s[6]);
}

// "Mon DD hh:mm:ss" (journal, syslog: the day padded with a blank); returns its length.
size_t SyslogTime(absl::string_view s, absl::Time now, int64_t* ns) {
  if (s.size() < 15 || s[3] != ' ') return 0;
  const int month = MonthOf(s.substr(0, 3));
  if (month == 0) return 0;
  absl::string_view day_text = scan::TrimLeft(s.substr(4, 2));
  int day, h, m, sec;
  if (!absl::SimpleAtoi(day_text, &day) || s[6] != ' ' || !ClockTime(s.substr(7), &h, &m, &sec)) {
    return 0;
  }
  size_t n = 15;
  int64_t frac = 0;
  if (n < s.size() && s[n] == '.') {  // journalctl -o short-precise
    size_t start = ++n;
    while (n < s.size() && IsDigit(s[n])) ++n;
    frac = internal::FractionNanos(s.substr(start, n - start));
  }
  *ns = internal::TimeWithoutYear(month, day, h, m, sec, frac, now);
  return *ns == 0 ? 0 : n;
}

// "[Sun Dec  1 14:54:40 2024]" (dmesg -T); returns its length.
size_t DmesgCtime(absl::string_view s, int64_t* ns) {
  if (s.size() < 26 || s[0] != '[' || !IsWeekday(s.substr(1, 3)) || s[4] != ' ') return 0;
  const size_t close = s.find(']');
  if (close == absl::string_view::npos || close > 32) return 0;
  std::vector<absl::string_view> w = scan::Words(s.substr(5, close - 5));
  int day, h, m, sec, year;
  if (w.size() != 4 || MonthOf(w[0]) == 0 || !absl::SimpleAtoi(w[1], &day) ||
      !ClockTime(w[2], &h, &m, &sec) || w[2].size() != 8 || !absl::SimpleAtoi(w[3], &year)) {
    return 0;
  }
  const absl::CivilSecond civil(year, MonthOf(w[0]), day, h, m, sec);
  *ns = absl::ToUnixNanos(absl::FromCivil(civil, absl::UTCTimeZone()));
  return close + 1;
}

// "[  445.937186]" (dmesg); returns its length and the number inside.
size_t DmesgUptime(absl::string_view s, absl::string_view* uptime) {
  if (s.size() < 3 || s[0] != '[') return 0;
  const size_t close = s.find(']');
  if (close == absl::string_view::npos || close > 24) return 0;
  absl::string_view inner = scan::Trim(s.substr(1, close - 1));
  const size_t dot = inner.find('.');
  if (dot == absl::string_view::npos || !scan::IsDigits(inner.substr(0, dot)) ||
      !scan::IsDigits(inner.substr(dot + 1))) {
    return 0;
  }
  *uptime = inner;
  return close + 1;
}

// "host kernel: " after a time; returns its length.
size_t HostKernel(absl::string_view s, std::string* host) {
  absl::string_view w = scan::LeadingWord(s);
  if (w.empty() || w.size() + 1 >= s.size() || s[w.size()] != ' ') return 0;
  absl::string_view rest = s.substr(w.size() + 1);
  if (absl::StartsWith(rest, "kernel: ")) {
    *host = std::string(w);
    return w.size() + 1 + 8;
  }
  if (absl::StartsWith(rest, "kernel:")) {
    *host = std::string(w);
    return w.size() + 1 + 7;
  }
  return 0;
}

bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

std::string KmsgRecord::Dictionary(absl::string_view key) const {
  for (const auto& [k, v] : dictionary) {
    if (k == key) return v;
  }
  return "";
}

std::optional<KmsgRecord> ParseKmsgRecord(absl::string_view text, std::string* why) {
  auto fail = [&](absl::string_view reason) -> std::optional<KmsgRecord> {
    if (why != nullptr) *why = std::string(reason);
    return std::nullopt;
  };
  const size_t nl = text.find('\n');
  absl::string_view head = text.substr(0, nl);
  const size_t semi = head.find(';');
  if (semi == absl::string_view::npos) return fail("no ';' after the record's header");
  std::vector<absl::string_view> f = absl::StrSplit(head.substr(0, semi), ',');
  KmsgRecord r;
  int priority;
  if (f.size() < 4 || !absl::SimpleAtoi(f[0], &priority) || priority < 0 ||
      !absl::SimpleAtoi(f[1], &r.seq) || !absl::SimpleAtoi(f[2], &r.timestamp_usec) ||
      r.timestamp_usec < 0 || !scan::IsDigits(f[0]) || !scan::IsDigits(f[1]) ||
      !scan::IsDigits(f[2])) {
    return fail("the header is not PRIORITY,SEQUENCE,TIMESTAMP,FLAGS");
  }
  r.facility = priority >> 3;
  r.level = priority & 7;
  r.continuation = absl::StrContains(f[3], 'c');
  r.message = std::string(head.substr(semi + 1));
  if (nl != absl::string_view::npos) {
    for (absl::string_view d : absl::StrSplit(text.substr(nl + 1), '\n', absl::SkipEmpty())) {
      if (d.empty() || d[0] != ' ') continue;
      d.remove_prefix(1);
      const size_t eq = d.find('=');
      if (eq == absl::string_view::npos || eq == 0) continue;
      r.dictionary.emplace_back(std::string(d.substr(0, eq)), std::string(d.substr(eq + 1)));
    }
  }
  return r;
}

absl::string_view LevelName(int level) {
  static constexpr absl::string_view kNames[] = {"emerg",   "alert",  "crit", "err",
                                                 "warning", "notice", "info", "debug"};
  return level >= 0 && level < 8 ? kNames[level] : absl::string_view();
}

namespace kernel {

TextLine StripKernelPrefixes(absl::string_view raw, absl::Time now) {
  TextLine out;
  absl::string_view s = raw;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  // Mail quoting, possibly nested ("> > ", ">> ").
  for (;;) {
    absl::string_view t = scan::TrimLeft(s);
    if (t.empty() || t[0] != '>') break;
    t.remove_prefix(1);
    if (!t.empty() && t[0] == ' ') t.remove_prefix(1);
    s = t;
    out.quoted = true;
  }
  s = scan::TrimLeft(s);
  // A record as `cat /dev/kmsg` shows it.
  if (!s.empty() && IsDigit(s[0])) {
    const size_t semi = s.find(';');
    if (semi != absl::string_view::npos && semi < 64) {
      std::optional<KmsgRecord> r = ParseKmsgRecord(s.substr(0, semi + 1));
      if (r.has_value()) {
        out.kmsg_record = out.kernel_prefix = true;
        out.level = r->level;
        out.seq = static_cast<int64_t>(r->seq);
        s.remove_prefix(semi + 1);
        out.message = s;
        return out;
      }
    }
  }
  // dmesg -r: "<6>".
  if (s.size() > 3 && s[0] == '<' && IsDigit(s[1])) {
    const size_t close = s.find('>');
    int priority;
    if (close != absl::string_view::npos && close < 5 &&
        absl::SimpleAtoi(s.substr(1, close - 1), &priority)) {
      out.level = priority & 7;
      s.remove_prefix(close + 1);
    }
  }
  // Journal and syslog times.
  int64_t ns = 0;
  size_t n = SyslogTime(s, now, &ns);
  if (n == 0 && !s.empty() && IsDigit(s[0])) {
    n = internal::ParseIsoTimestamp(s, &ns);
    if (n > 0 && (n >= s.size() || s[n] != ' ')) n = 0;
  }
  if (n > 0) {
    absl::string_view rest = scan::TrimLeft(s.substr(n));
    std::string host;
    const size_t hk = HostKernel(rest, &host);
    if (hk > 0) {
      out.time_unix_nano = ns;
      out.host = std::move(host);
      out.kernel_prefix = true;
      s = rest.substr(hk);
    }
  }
  // dmesg -T, possibly with syslog's "host kernel:" after it.
  n = DmesgCtime(s, &ns);
  if (n > 0) {
    out.time_unix_nano = ns;
    out.kernel_prefix = true;
    s = scan::TrimLeft(s.substr(n));
    std::string host;
    const size_t hk = HostKernel(s, &host);
    if (hk > 0) {
      out.host = std::move(host);
      s = s.substr(hk);
    }
  }
  // dmesg's uptime (also inside a syslog line: "host kernel: [ 12.3] ..."), the caller id
  // after it, and journalctl -o short-monotonic's "host kernel:".
  s = scan::TrimLeft(s);
  absl::string_view uptime;
  n = DmesgUptime(s, &uptime);
  if (n > 0) {
    out.uptime = uptime;
    out.kernel_prefix = true;
    s = s.substr(n);
    absl::string_view t = scan::TrimLeft(s);
    if (t.size() > 3 && t[0] == '[') {
      const size_t close = t.find(']');
      absl::string_view id = close == absl::string_view::npos ? absl::string_view()
                                                              : scan::Trim(t.substr(1, close - 1));
      if (!id.empty() && (id[0] == 'T' || id[0] == 'C') && close < 12 &&
          scan::IsDigits(id.substr(1))) {
        s = t.substr(close + 1);
      }
    }
    s = scan::TrimLeft(s);
    std::string host;
    const size_t hk = HostKernel(s, &host);
    if (hk > 0) {
      out.host = std::move(host);
      s = s.substr(hk);
    }
  }
  out.message = scan::TrimLeft(s);
  return out;
}

bool IsKernelLogCommand(absl::string_view line) {
  // A prompt ends in "$ " or "# " and the command names dmesg or journalctl.
  for (absl::string_view mark : {"$ ", "# "}) {
    const size_t p = line.find(mark);
    if (p == absl::string_view::npos || p == 0) continue;
    absl::string_view cmd = line.substr(p + 2);
    if (absl::StartsWith(cmd, "dmesg") || absl::StartsWith(cmd, "sudo dmesg") ||
        absl::StartsWith(cmd, "journalctl") || absl::StartsWith(cmd, "sudo journalctl") ||
        absl::StartsWith(cmd, "cat /dev/kmsg")) {
      return true;
    }
  }
  return false;
}

bool IsPciAddress(absl::string_view s) {
  // DOMAIN:BB:DD.F with a domain of 4+ hex digits.
  const size_t colon = s.find(':');
  if (colon == absl::string_view::npos || colon < 4 || s.size() != colon + 8) return false;
  for (size_t i = 0; i < colon; ++i) {
    if (!IsHex(s[i])) return false;
  }
  absl::string_view r = s.substr(colon + 1);  // "BB:DD.F"
  return IsHex(r[0]) && IsHex(r[1]) && r[2] == ':' && IsHex(r[3]) && IsHex(r[4]) && r[5] == '.' &&
         r[6] >= '0' && r[6] <= '7';
}

absl::string_view PciAdapter(absl::string_view pci) {
  const size_t dot = pci.rfind('.');
  return dot == absl::string_view::npos ? pci : pci.substr(0, dot);
}

bool IsRdmaDeviceName(absl::string_view name) {
  static constexpr absl::string_view kPrefixes[] = {
      "mlx5_", "mlx4_", "rocep", "roceo", "rocex", "ibp", "ibo",   "ibs",     "bnxt_re",
      "irdma", "efa_",  "hfi1_", "qedr",  "rxe",   "siw", "erdma", "mana_ib", "hns_"};
  for (absl::string_view p : kPrefixes) {
    if (absl::StartsWith(name, p)) return true;
  }
  return false;
}

bool ParseOrigin(absl::string_view message, Origin* o) {
  *o = Origin();
  absl::string_view s = message;
  const size_t sp = s.find(' ');
  const size_t colon = s.find(':');
  // "mlx5_0, 1: ipoib_intf_alloc failed -11".
  if (sp != absl::string_view::npos && sp > 1 && s[sp - 1] == ',') {
    absl::string_view dev = s.substr(0, sp - 1);
    absl::string_view rest = s.substr(sp + 1);
    absl::string_view port = scan::LeadingInteger(rest);
    if (IsRdmaDeviceName(dev) && !port.empty() && rest.size() > port.size() + 1 &&
        rest[port.size()] == ':') {
      o->name = dev;
      o->rdma_name = true;
      o->port = port;
      o->text = scan::TrimLeft(rest.substr(port.size() + 1));
      return true;
    }
  }
  // "<driver>: probe of <BDF> failed with error -22" and other driver-level lines.
  if (colon != absl::string_view::npos && (sp == absl::string_view::npos || colon < sp) &&
      colon > 0 && colon + 1 < s.size() && s[colon + 1] == ' ') {
    absl::string_view driver = s.substr(0, colon);
    absl::string_view rest = s.substr(colon + 2);
    if (absl::StartsWith(rest, "probe of ")) {
      absl::string_view w = scan::LeadingWord(rest.substr(9));
      if (IsPciAddress(w)) {
        o->driver = driver;
        o->pci = w;
        o->text = rest;
        return true;
      }
    }
    if (driver == "AER" || driver == "DPC") {
      o->aer = driver == "AER";
      o->text = driver == "AER" ? rest : message;
      return true;
    }
  }
  if (sp == absl::string_view::npos) return false;
  absl::string_view driver = s.substr(0, sp);
  absl::string_view rest = s.substr(sp + 1);
  if (driver == "infiniband") {
    const size_t c = rest.find(": ");
    if (c == absl::string_view::npos || c == 0 ||
        rest.substr(0, c).find(' ') != absl::string_view::npos) {
      return false;
    }
    o->driver = driver;
    o->name = rest.substr(0, c);
    o->rdma_name = true;
    o->text = rest.substr(c + 2);
  } else {
    // "<driver> <BDF>: " or "<driver> <BDF> <name>: ".
    const size_t end = rest.find(' ');
    absl::string_view token = rest.substr(0, end);
    const bool colon_after = absl::EndsWith(token, ":");
    if (colon_after) token.remove_suffix(1);
    if (!IsPciAddress(token)) return false;
    o->driver = driver;
    o->pci = token;
    if (colon_after) {
      rest = end == absl::string_view::npos ? absl::string_view() : rest.substr(end + 1);
    } else {
      if (end == absl::string_view::npos) return false;
      rest = rest.substr(end + 1);
      const size_t c = rest.find(": ");
      absl::string_view name = rest.substr(0, c);
      if (c == absl::string_view::npos || name.empty() ||
          name.find(' ') != absl::string_view::npos) {
        return false;
      }
      o->name = name;
      o->rdma_name = IsRdmaDeviceName(name);
      rest = rest.substr(c + 2);
    }
    o->text = rest;
  }
  // Older mlx5 kernels repeat the address: "0000:03:00.0:handle_hca_cap:438:(pid 6016): ".
  absl::string_view t = o->text;
  if (!o->pci.empty() && absl::StartsWith(t, o->pci) && t.size() > o->pci.size() &&
      t[o->pci.size()] == ':') {
    t.remove_prefix(o->pci.size() + 1);
  }
  // "<func>:<line>:(pid <n>): ".
  const size_t pid = t.find(":(pid ");
  if (pid != absl::string_view::npos && pid > 0) {
    absl::string_view head = t.substr(0, pid);
    const size_t c = head.rfind(':');
    if (c != absl::string_view::npos && c > 0 && scan::IsDigits(head.substr(c + 1)) &&
        head.substr(0, c).find(' ') == absl::string_view::npos) {
      const size_t end = t.find("): ", pid);
      if (end != absl::string_view::npos) {
        o->func = head.substr(0, c);
        t = t.substr(end + 3);
      }
    }
  }
  if (Consume(t, "AER: ")) {
    o->aer = true;
  } else if (t == "AER:") {
    o->aer = true;
    t = {};
  }
  o->text = t;
  return true;
}

}  // namespace kernel
}  // namespace railwatch::logs
