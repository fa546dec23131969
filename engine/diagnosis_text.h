#pragma once

// The words of a diagnosis: summaries and runbooks with a culprit's labels filled in, the
// commands of a runbook, and where a culprit is.

#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// The numbers a summary or runbook may use besides the culprit's labels.
struct TemplateValues {
  double value = 0;  // {{value}}: the condition's value now
  double peak = 0;   // {{peak}}: its largest value (in magnitude) since the diagnosis began
  // {{quiet_since}}: when the condition last held (a diagnosis kept firing after it stopped
  // holding: keep_firing_for); 0: it holds now.
  int64_t quiet_since_unix_nano = 0;
};

// "Link flap on {{host}}" with labels and numbers filled in; a label the set lacks becomes
// "<name?>". {{host or switch}} reads the first of those labels the set has. A [[section]] is
// left out, text and all, when a label in it is absent ("PFC storm: {{host or switch}}[[
// ({{netdev}})]]"); sections do not nest. A number may name how it reads: {{value}} (3 significant digits, thousands
// separated: "6,240", "0.474", "1.2M"), {{value | percent}} (a ratio: "47.4%"),
// {{value | bytes}} ("52.1 MB"), {{value | count}} (a whole number: "3"), {{value | seconds}}
// ("2m30s"); the same for {{peak}}. {{quiet_since}} is a UTC time ("03:12:09 UTC").
std::string ExpandTemplate(const std::string& tmpl, const Labels& labels,
                           const TemplateValues& values);
inline std::string ExpandTemplate(const std::string& tmpl, const Labels& labels, double value) {
  return ExpandTemplate(tmpl, labels, TemplateValues{.value = value, .peak = value});
}

// A number as ExpandTemplate writes it with `format` ("", "percent", "bytes", "count",
// "seconds"); an unknown format reads as "".
std::string FormatTemplateNumber(double v, std::string_view format);

// The shell commands of a runbook: the non-empty, non-comment lines of its ```sh / ```bash /
// ```shell / ```console fenced blocks (a leading "$ " prompt is dropped), in order.
std::vector<std::string> RunbookCommands(std::string_view markdown);

// "gpu-node-117 mlx5_3 (rail 3, leaf-r3 Ethernet12)" / "leaf-r3 Ethernet12 (to gpu-node-117
// mlx5_3)": where a culprit is, in words, from its (enriched) labels.
std::string DescribeLocation(const Labels& labels);

// What a culprit stalls, in words: "job train stalls (80 GPUs on 10 hosts: gpu-node-001,
// gpu-node-002, gpu-node-003 and 7 more); the fault is on 1 host (host scope): gpu-node-003".
// A fault on one host of a job stalls the whole job, so the job and its hosts come first, then
// the hosts the fault reaches directly. "" without a scope.
std::string DescribeBlastRadius(const v1::BlastRadius& b);

// The value of a label, or "" when the set lacks it.
std::string LabelValue(const Labels& labels, std::string_view name);

// Lower-case severity name (v1::Severity) as labels, alerts and the CLI print it: "critical",
// "warning", "info", else "unspecified".
std::string SeverityName(int severity);

}  // namespace railwatch
