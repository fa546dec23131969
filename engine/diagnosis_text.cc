#include "engine/diagnosis_text.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/text.h"

namespace railwatch {

std::string LabelValue(const Labels& labels, std::string_view name) {
  const std::string* v = FindLabel(labels, name);
  return v == nullptr ? std::string() : *v;
}

namespace {

// Up to 3 significant digits, without a trailing ".0": 0.474, 12.3, 608; under 0.001 in
// scientific notation, which a bit error rate needs (1.39e-14, not 0).
std::string Significant(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) < 1e-3) return absl::StrFormat("%.3g", v);
  const int digits = static_cast<int>(std::floor(std::log10(std::fabs(v)))) + 1;
  const int decimals = std::clamp(3 - digits, 0, 6);
  std::string s = absl::StrFormat("%.*f", decimals, v);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// 6240 -> "6,240".
std::string Thousands(double v) {
  std::string digits = absl::StrFormat("%.0f", std::fabs(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

// 1.2M, 3.4G: one unit letter past a million.
std::string Scaled(double v, const char* const* units, double step) {
  int u = 0;
  while (std::fabs(v) >= step && units[u + 1] != nullptr) {
    v /= step;
    ++u;
  }
  return absl::StrCat(Significant(v), units[u]);
}

}  // namespace

std::string FormatTemplateNumber(double v, std::string_view format) {
  if (!std::isfinite(v)) return absl::StrFormat("%g", v);
  if (format == "percent") return absl::StrCat(Significant(v * 100), "%");
  if (format == "count") return Thousands(std::round(v));
  if (format == "bytes") {
    static constexpr const char* kUnits[] = {" B", " kB", " MB", " GB", " TB", nullptr};
    return Scaled(v, kUnits, 1000);
  }
  if (format == "seconds") return HumanDuration(absl::Seconds(std::round(v * 1000) / 1000));
  if (std::fabs(v) >= 1e6) {
    static constexpr const char* kUnits[] = {"", "k", "M", "G", "T", nullptr};
    return Scaled(v, kUnits, 1000);
  }
  if (std::fabs(v) >= 1000) return Thousands(v);
  return Significant(v);
}

namespace {

// Expands the {{...}} of `tmpl` (no [[ ]] sections); sets *missing when a label is absent.
std::string ExpandPlaceholders(std::string_view tmpl_view, const Labels& labels,
                               const TemplateValues& values, bool* missing) {
  const std::string tmpl(tmpl_view);
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    size_t close = open == std::string::npos ? open : tmpl.find("}}", open + 2);
    if (close == std::string::npos) {
      out.append(tmpl, pos, std::string::npos);
      break;
    }
    out.append(tmpl, pos, open - pos);
    absl::string_view inner =
        absl::string_view(tmpl).substr(open + 2, close - open - 2);
    absl::string_view format;
    if (size_t bar = inner.find('|'); bar != absl::string_view::npos) {
      format = absl::StripAsciiWhitespace(inner.substr(bar + 1));
      inner = inner.substr(0, bar);
    }
    const std::string key(absl::StripAsciiWhitespace(inner));
    if (key == "value" || key == "peak") {
      const double v = key == "value" ? values.value : values.peak;
      absl::StrAppend(&out, FormatTemplateNumber(v, std::string_view(format.data(), format.size())));
    } else if (key == "quiet_since") {
      absl::StrAppend(&out, values.quiet_since_unix_nano == 0
                                ? "now"
                                : absl::FormatTime("%H:%M:%S UTC",
                                                   absl::FromUnixNanos(values.quiet_since_unix_nano),
                                                   absl::UTCTimeZone()));
    } else {
      // {{host or switch}}: the first of the labels the culprit has.
      const std::string* v = nullptr;
      for (absl::string_view alt : absl::StrSplit(key, " or ", absl::SkipWhitespace())) {
        v = FindLabel(labels, std::string(absl::StripAsciiWhitespace(alt)));
        if (v != nullptr) break;
      }
      if (v != nullptr) {
        out += *v;
      } else {
        absl::StrAppend(&out, "<", key, "?>");
        *missing = true;
      }
    }
    pos = close + 2;
  }
  return out;
}

}  // namespace

std::string ExpandTemplate(const std::string& tmpl, const Labels& labels,
                           const TemplateValues& values) {
  // [[ ... ]]: a section that is left out, text and all, when a label in it is absent.
  std::string out;
  size_t pos = 0;
  bool missing = false;
  while (pos < tmpl.size()) {
    const size_t open = tmpl.find("[[", pos);
    const size_t close = open == std::string::npos ? open : tmpl.find("]]", open + 2);
    if (close == std::string::npos) {
      out += ExpandPlaceholders(std::string_view(tmpl).substr(pos), labels, values, &missing);
      break;
    }
    out += ExpandPlaceholders(std::string_view(tmpl).substr(pos, open - pos), labels, values,
                              &missing);
    bool section_missing = false;
    const std::string section = ExpandPlaceholders(
        std::string_view(tmpl).substr(open + 2, close - open - 2), labels, values,
        &section_missing);
    if (!section_missing) out += section;
    pos = close + 2;
  }
  return out;
}

std::vector<std::string> RunbookCommands(std::string_view markdown) {
  std::vector<std::string> out;
  bool in_shell = false, in_other = false;
  for (absl::string_view line : absl::StrSplit(AsAbsl(markdown), '\n')) {
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(t, "```")) {
      if (in_shell || in_other) {
        in_shell = in_other = false;
      } else {
        absl::string_view lang = absl::StripAsciiWhitespace(t.substr(3));
        in_shell = lang == "sh" || lang == "bash" || lang == "shell" || lang == "console";
        in_other = !in_shell;
      }
      continue;
    }
    if (!in_shell || t.empty() || absl::StartsWith(t, "#")) continue;
    absl::ConsumePrefix(&t, "$ ");
    out.emplace_back(t);
  }
  return out;
}

namespace {

// "a, b, c and 7 more".
template <typename Names>
std::string SomeNames(const Names& names, int shown) {
  const int n = static_cast<int>(names.size());
  std::vector<std::string> head(names.begin(), names.begin() + std::min(n, shown));
  std::string out = absl::StrJoin(head, ", ");
  if (n > shown) absl::StrAppend(&out, " and ", n - shown, " more");
  return out;
}

}  // namespace

std::string DescribeBlastRadius(const v1::BlastRadius& b) {
  if (b.scope().empty()) return "";
  constexpr int kJobsShown = 3;
  std::vector<std::string> parts;
  for (int i = 0; i < b.jobs_size() && i < kJobsShown; ++i) {
    const v1::JobImpact& j = b.jobs(i);
    const int hosts = j.job_hosts_size() > 0 ? j.job_hosts_size() : j.hosts_size();
    std::vector<std::string> size;
    if (j.gpus() > 0) size.push_back(absl::StrCat(j.gpus(), " GPUs"));
    if (hosts > 0) {
      std::string on = absl::StrCat(hosts, hosts == 1 ? " host" : " hosts");
      if (j.job_hosts_size() > 0) absl::StrAppend(&on, ": ", SomeNames(j.job_hosts(), 3));
      size.push_back(on);
    }
    std::string part = absl::StrCat("job ", j.job(), " stalls");
    if (!size.empty()) absl::StrAppend(&part, " (", absl::StrJoin(size, " on "), ")");
    parts.push_back(part);
  }
  if (b.jobs_size() > kJobsShown) {
    parts.push_back(absl::StrCat(b.jobs_size() - kJobsShown, " more job(s) stall"));
  }
  std::string reach = absl::StrCat(parts.empty() ? "" : "the fault is on ", b.hosts_size(),
                                   b.hosts_size() == 1 ? " host" : " hosts", " (", b.scope(),
                                   " scope)");
  if (b.hosts_size() > 0) absl::StrAppend(&reach, ": ", SomeNames(b.hosts(), 3));
  parts.push_back(reach);
  return absl::StrJoin(parts, "; ");
}

std::string DescribeLocation(const Labels& labels) {
  const std::string host = LabelValue(labels, "host"), sw = LabelValue(labels, "switch");
  std::vector<std::string> where;
  std::string head;
  if (!host.empty()) {
    head = host;
    std::string dev = LabelValue(labels, "device");
    if (dev.empty()) dev = LabelValue(labels, "interface");
    if (!dev.empty()) absl::StrAppend(&head, " ", dev);
    if (std::string r = LabelValue(labels, "rail"); !r.empty()) where.push_back("rail " + r);
    if (std::string leaf = LabelValue(labels, "leaf"); !leaf.empty()) {
      std::string lp = LabelValue(labels, "leaf_port");
      where.push_back(lp.empty() ? leaf : absl::StrCat(leaf, " ", lp));
    }
  } else if (!sw.empty()) {
    head = sw;
    if (std::string i = LabelValue(labels, "interface"); !i.empty()) absl::StrAppend(&head, " ", i);
    if (std::string ph = LabelValue(labels, "peer_host"); !ph.empty()) {
      std::string pd = LabelValue(labels, "peer_device");
      where.push_back(absl::StrCat("to ", ph, pd.empty() ? "" : " ", pd));
    } else if (std::string ps = LabelValue(labels, "peer_switch"); !ps.empty()) {
      std::string pp = LabelValue(labels, "peer_port");
      where.push_back(absl::StrCat("to ", ps, pp.empty() ? "" : " ", pp));
    }
    if (std::string r = LabelValue(labels, "rail"); !r.empty()) where.push_back("rail " + r);
  } else if (std::string link = LabelValue(labels, "link"); !link.empty()) {
    head = link;
  } else {
    head = FormatLabels(labels);
  }
  if (std::string job = LabelValue(labels, "job"); !job.empty()) where.push_back("job " + job);
  if (where.empty()) return head;
  return absl::StrCat(head, " (", absl::StrJoin(where, ", "), ")");
}

std::string SeverityName(int severity) {
  switch (severity) {
    case v1::SEVERITY_CRITICAL: return "critical";
    case v1::SEVERITY_WARNING: return "warning";
    case v1::SEVERITY_INFO: return "info";
    default: return "unspecified";
  }
}

}  // namespace railwatch
