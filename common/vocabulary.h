#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace railwatch {

enum class MetricKind { kCounter, kGauge };

// How far one step of a counter may go (the store rejects and counts a step above it:
// store/line_rate.h, docs/STORE.md "Counter semantics"). Each canonical counter declares its
// own (MetricSpec::bound), from its unit.
enum class CounterBound : uint8_t {
  kNone,            // events, errors, requests, ticks, non-canonical counters
  kBytes,           // line rate
  kBits,            // 8 x line rate
  kEthernetFrames,  // line rate / 84 bytes
  kRdmaPackets,     // line rate / 26 bytes (an RDMA port may be InfiniBand)
  kMicroseconds,    // 1e6 per second: a pause duration cannot outrun the clock
};

// The gauge that tells a port's negotiated rate (bytes per second); counters with the same
// label set are bounded by the fastest rate it has reported.
inline constexpr std::string_view kPortRateSeries = "fabric_rdma_port_rate_bytes_per_second";

// Where a canonical series comes from in one RDMA sysfs port directory.
struct SysfsSource {
  // Relative to <root>/class/infiniband/<dev>/ports/<port>/, e.g. "counters/port_xmit_data".
  std::string_view path;
  // Raw value times this (IB data counters count 4-byte words).
  uint32_t scale = 1;
  // Width of the IB PMA counter behind the file: PMA counters stop at 2^bits - 1 instead of
  // wrapping, so a reading of exactly that value means "saturated", not "no change". 0: a
  // 64-bit counter that never saturates in practice.
  uint8_t pma_bits = 0;
};

// Where a canonical series comes from in one netdev's `ethtool -S` statistics (ETH_SS_STATS).
// Only statistics named here are collected: this table is the ethtool include list.
struct EthtoolSource {
  // The driver as ETHTOOL_GDRVINFO (`ethtool -i`) names it: "mlx5_core", "bnxt_en", "ice".
  std::string_view driver;
  // The statistic's name. "{priority}" or "{queue}" stands for a decimal number of one or two
  // digits that becomes that label: "rx_prio{priority}_pause" matches rx_prio3_pause.
  std::string_view stat;
  // Value of the "direction" label ("rx" or "tx"); empty: the series has no direction label.
  std::string_view direction = {};
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
  // ethtool statistics per driver (collectors/ethtool_collector.h); sources that give the same
  // labels are alternatives, the first present wins.
  std::vector<EthtoolSource> ethtool = {};
  // Files under <root>/class/net/<netdev>/ (collectors/link_collector.h), e.g. "carrier_changes".
  std::vector<std::string_view> netdev_sysfs = {};
  // Counters: how far one step may go; set from the unit when the table is built.
  CounterBound bound = CounterBound::kNone;
  // A detail series: read from sysfs every --detail_interval (10 s) rather than every cycle,
  // because no shipped playbook or dashboard reads it (kDetailSeries in vocabulary.cc; a test
  // keeps it so). Set when the table is built.
  bool detail = false;
};

// Every canonical fabric series.
std::span<const MetricSpec> CanonicalMetrics();

// nullptr when `name` is not canonical.
const MetricSpec* FindMetric(std::string_view name);

// What the series store must know of a series when it is first seen (store/series_store.h,
// Intern): its kind and width and, for a canonical series, what the vocabulary declares.
struct SeriesTraits {
  MetricKind kind = MetricKind::kGauge;
  uint32_t width_bits = 0;
  CounterBound bound = CounterBound::kNone;  // counters only
  bool sets_line_rate = false;  // kPortRateSeries: its samples bound its label set's counters
};
SeriesTraits TraitsOf(std::string_view name, MetricKind kind, uint32_t width_bits = 0);

// The bound a canonical counter declares; kNone for a gauge or a name that is not canonical.
CounterBound CounterBoundOf(std::string_view name);

// What agents report about themselves (railwatch_collector_*, railwatch_gnmi_target_*): the
// daemon stores these like fabric series and exposes them with this help text.
struct SelfMetricSpec {
  std::string_view name;
  MetricKind kind;
  std::string_view help;
};
std::span<const SelfMetricSpec> AgentSelfMetrics();

// How railwatchd's /metrics exposes a series: as itself, or, for a series in a unit that is not
// the base unit Prometheus wants, in that unit: a counter of microseconds (agents send integer
// counters) as <stem>_seconds_total with its value / 1e6
// (fabric_nccl_collective_microseconds_total -> fabric_nccl_collective_seconds_total), the
// optics' bias in milliamperes as fabric_optics_tx_bias_amperes / 1e3. Playbooks read the series
// by its own name; dashboards query the exposed one.
struct ExposedSeries {
  std::string_view name;
  double scale = 1;
};
ExposedSeries ExposedAs(std::string_view name);

// The HELP text of a canonical or agent self-metric; empty when `name` is neither.
std::string_view MetricHelp(std::string_view name);

// Every name an agent can send, canonical series and agent self-metrics, sorted: the names a
// playbook condition may read (engine/playbook.h checks them when it loads).
std::span<const std::string_view> SeriesNames();

}  // namespace railwatch
