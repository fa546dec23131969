#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace railwatch {

enum class MetricKind { kCounter, kGauge };

// Where a canonical series comes from in one RDMA sysfs port directory.
struct SysfsSource {
  // Relative to <root>/class/infiniband/<dev>/ports/<port>/, e.g. "counters/port_xmit_data".
  std::string_view path;
  // Raw value times this (IB data counters count 4-byte words).
  uint32_t scale = 1;
};

// One canonical series: the single table from which collectors, the exporter's HELP text and
// docs/METRICS.md follow. Sources are listed in order of preference: the first present wins
// (mlx4's 64-bit counters_ext over the 32-bit counters).
struct MetricSpec {
  std::string_view name;
  MetricKind kind;
  std::string_view unit;
  std::string_view help;
  std::vector<SysfsSource> sysfs;
};

// Every canonical fabric series.
std::span<const MetricSpec> CanonicalMetrics();

// nullptr when `name` is not canonical.
const MetricSpec* FindMetric(std::string_view name);

}  // namespace railwatch
