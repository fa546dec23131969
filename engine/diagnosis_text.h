#pragma once

// The words of a diagnosis: summaries and runbooks with a culprit's labels filled in, the
// commands of a runbook, and where a culprit is.

#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"

namespace railwatch {

// "Link flap on {{host}}" with labels and value filled in; a label the set lacks becomes
// "<name?>".
std::string ExpandTemplate(const std::string& tmpl, const Labels& labels, double value);

// The shell commands of a runbook: the non-empty, non-comment lines of its ```sh / ```bash /
// ```shell / ```console fenced blocks (a leading "$ " prompt is dropped), in order.
std::vector<std::string> RunbookCommands(std::string_view markdown);

// "gpu-node-117 mlx5_3 (rail 3, leaf-r3 Ethernet12)" / "leaf-r3 Ethernet12 (to gpu-node-117
// mlx5_3)": where a culprit is, in words, from its (enriched) labels.
std::string DescribeLocation(const Labels& labels);

// The value of a label, or "" when the set lacks it.
std::string LabelValue(const Labels& labels, std::string_view name);

}  // namespace railwatch
