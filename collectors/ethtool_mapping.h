#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "common/labels.h"
#include "common/vocabulary.h"

namespace railwatch {

// The `ethtool` sources of a metric table, compiled for matching a netdev's statistic names
// once per discovery. Statistics that no source names are not collected: the table is the
// include list, which bounds cardinality.
class EthtoolMapping {
 public:
  // One statistic of a netdev that feeds a canonical series.
  struct Target {
    size_t stat_index;
    const MetricSpec* spec;
    // priority / queue / direction, as the source says; the collector adds interface.
    Labels labels;
  };

  // `specs` must outlive the mapping. Sources with a malformed pattern are left out (and
  // reported by Validate).
  explicit EthtoolMapping(std::span<const MetricSpec> specs);
  // The mapping of the canonical table (common/vocabulary.cc).
  static const EthtoolMapping& Canonical();

  // Problems in the table's ethtool sources: unknown placeholder, two placeholders, braces
  // that do not close, a direction other than rx/tx.
  static absl::Status Validate(std::span<const MetricSpec> specs);

  // The statistics of a netdev driven by `driver` that the table maps, in stat_index order.
  // When several sources give the same series (same metric and labels), the source listed
  // first in the table wins; a name that appears twice counts once, at its first position.
  std::vector<Target> Map(std::string_view driver, std::span<const std::string> stat_names) const;

 private:
  struct Pattern {
    const MetricSpec* spec;
    size_t order;        // position in the table: lower wins
    std::string prefix;  // the whole name when there is no placeholder
    std::string suffix;
    std::string placeholder;  // "priority", "queue", or empty
    std::string direction;
  };
  struct DriverPatterns {
    absl::flat_hash_map<std::string, std::vector<const Pattern*>> exact;
    std::vector<const Pattern*> with_placeholder;
  };

  std::vector<Pattern> patterns_;
  absl::flat_hash_map<std::string, DriverPatterns> by_driver_;
};

}  // namespace railwatch
