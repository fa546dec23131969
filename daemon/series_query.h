#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/text.h"
#include "absl/time/time.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

inline constexpr uint32_t kDefaultSeriesLimit = 1000;
inline constexpr uint32_t kMaxSeriesLimit = 100'000;
inline constexpr absl::Duration kDefaultSeriesRange = absl::Minutes(5);

// What QuerySeries reads.
struct SeriesQuerySources {
  const SeriesStore& store;
  const EventStore* events = nullptr;  // for count_over_time(events...) in expressions
  const FabricMap* fabric = nullptr;   // for topology() and peer() in expressions
};

// QuerySeries. A query that is only a selector (name{...}, or {label matchers} without a
// name) gives the stored samples of each matching series in [start, end] (default end: now,
// start: end - 5m): series with no sample in the range are left out. Anything else is read as
// an expression of the condition language and evaluated once, at end: one point per element.
// At most `limit` series (default 1000, at most 100000); `matched` counts them all. When
// truncated, a selector keeps the series the daemon saw first, an expression the first by
// labels; the series returned are sorted by name, then labels.
//
// Errors are INVALID_ARGUMENT statuses: a parse error as "line:column: message", a negative
// time, start after end, a limit above the maximum.
absl::StatusOr<v1::QuerySeriesResponse> RunSeriesQuery(const v1::QuerySeriesRequest& request,
                                                       const SeriesQuerySources& sources,
                                                       int64_t now);

}  // namespace railwatch
