// libFuzzer target for `ethtool -S` output: ParseEthtoolStats on any text, then the canonical
// table's mapping of the names it found, for each driver the table knows. Must not crash, and
// what comes out must hold together (a value per name, problems that name their line, mapped
// statistics that exist, in order). Seeds: tests/fixtures/ethtool, /work/shared/realworld's
// dumps as committed there.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "collectors/ethtool_dump.h"
#include "collectors/ethtool_mapping.h"
#include "tests/fuzz/fuzz_support.h"

using railwatch::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  const railwatch::EthtoolStatsText stats = railwatch::ParseEthtoolStats(text, "fuzz");
  Check(stats.names.size() == stats.values.size());
  for (const std::string& problem : stats.problems) Check(absl::StartsWith(problem, "fuzz:"));
  for (std::string_view driver : {"mlx5_core", "bnxt_en", "ice", "unknown"}) {
    const auto targets = railwatch::EthtoolMapping::Canonical().Map(driver, stats.names);
    for (size_t i = 0; i < targets.size(); ++i) {
      Check(targets[i].stat_index < stats.names.size());
      Check(targets[i].spec != nullptr);
      if (i > 0) Check(targets[i - 1].stat_index <= targets[i].stat_index);
    }
  }
  return 0;
}
