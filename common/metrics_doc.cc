#include "common/metrics_doc.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/labels.h"
#include "common/vocabulary.h"

namespace railwatch {
namespace {

std::string KindName(MetricKind kind) { return kind == MetricKind::kCounter ? "counter" : "gauge"; }

std::vector<std::string> Sources(const MetricSpec& m) {
  std::vector<std::string> out;
  for (const SysfsSource& s : m.sysfs) {
    std::string text = absl::StrCat("sysfs `", AsAbsl(s.path), "`");
    if (s.scale != 1) absl::StrAppend(&text, " ×", s.scale);
    if (s.pma_bits != 0) absl::StrAppend(&text, " (", s.pma_bits, "-bit PMA, saturates)");
    out.push_back(std::move(text));
  }
  for (const EthtoolSource& s : m.ethtool) {
    std::string text = absl::StrCat("ethtool ", AsAbsl(s.driver), " `", AsAbsl(s.stat), "`");
    if (!s.direction.empty()) absl::StrAppend(&text, " direction=", AsAbsl(s.direction));
    out.push_back(std::move(text));
  }
  for (std::string_view f : m.netdev_sysfs) {
    out.push_back(absl::StrCat("sysfs `class/net/<netdev>/", AsAbsl(f), "`"));
  }
  if (m.detail) out.push_back("detail: read every `--detail_interval` (10 s)");
  return out;
}

}  // namespace

std::string RenderMetricsMarkdown() {
  std::string out =
      "# Canonical metrics\n\n"
      "Generated from `common/vocabulary.cc` by `railwatch metrics --markdown`; do not edit by\n"
      "hand (a unit test compares the two). Every series also carries `host` (or `switch`).\n"
      "Sources are listed in order of preference: for one device, the first present wins. A\n"
      "counter whose source the device does not have is absent, never zero.\n\n"
      "A counter as railwatchd stores, evaluates and exports it starts at its first reading and\n"
      "then only rises: resets and wraps are corrected, and a step above what the port can\n"
      "carry (a bytes, bits, packets or frames counter above line rate; a microseconds counter\n"
      "faster than the clock) is rejected and counted in\n"
      "`railwatch_store_traps_total{reason}` (docs/STORE.md, \"Counter semantics\").\n\n"
      "A *detail* series is read by the host agent every `--detail_interval` (10 s) instead of\n"
      "every cycle: no shipped playbook or dashboard reads it (docs/COLLECTORS.md, \"Cadence\").\n\n"
      "| metric | kind | unit | sources | help |\n"
      "|---|---|---|---|---|\n";
  for (const MetricSpec& m : CanonicalMetrics()) {
    std::vector<std::string> sources = Sources(m);
    absl::StrAppend(&out, "| `", AsAbsl(m.name), "` | ", KindName(m.kind), " | ",
                    m.unit.empty() ? "" : AsAbsl(m.unit), " | ",
                    sources.empty() ? "derived by its collector" : absl::StrJoin(sources, "<br>"),
                    " | ", AsAbsl(m.help), " |\n");
  }
  return out;
}

std::string RenderMetricsTable() {
  std::string out;
  for (const MetricSpec& m : CanonicalMetrics()) {
    absl::StrAppend(&out, AsAbsl(m.name), "  ", KindName(m.kind), "  ", AsAbsl(m.unit), "\n");
    for (const std::string& s : Sources(m)) absl::StrAppend(&out, "    ", s, "\n");
  }
  return out;
}

}  // namespace railwatch
