#pragma once

#include <string>

namespace railwatch {

// docs/METRICS.md, rendered from the canonical table (common/vocabulary.cc): one section per
// series with its kind, unit, help and every source per driver. A unit test keeps the
// checked-in file equal to this; regenerate with `railwatch metrics --markdown > docs/METRICS.md`.
std::string RenderMetricsMarkdown();

// The same table for a terminal: NAME KIND UNIT SOURCES.
std::string RenderMetricsTable();

}  // namespace railwatch
