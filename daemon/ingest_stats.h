#pragma once

// What the ingest service counts. Ingest owns these counters; the exporter reads them
// (exporters/daemon_metrics.h, Refresh, at scrape time) as it reads the store's and the
// engine's, so ingest links no exporter.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace railwatch {

// Why ingest refused a message or a point: the `reason` of railwatch_ingest_errors_total.
enum class IngestError : uint8_t {
  kEmptyMessage,    // neither hello nor batch
  kProtocol,        // a second hello, a hello without agent_id, a batch before hello
  kDuplicateBatch,  // a batch at or below the last stored sequence (stored once, acked again)
  kBadSeriesName,   // a definition whose name is not a Prometheus metric name
  kUnknownSeries,   // a point for a series id the stream never defined
  kUnparsable,      // bytes that do not read as an AgentMessage
  kBadTimestamp,    // a point at or before 1970
  kBadValue,        // a gauge that is not a finite number
  kTooManySeries,   // a stream that would define more series than it may
};
inline constexpr size_t kIngestErrorCount = 9;

inline constexpr std::string_view IngestErrorName(IngestError e) {
  constexpr std::string_view kNames[kIngestErrorCount] = {
      "empty_message", "protocol",      "duplicate_batch", "bad_series_name", "unknown_series",
      "unparsable",    "bad_timestamp", "bad_value",       "too_many_series"};
  return kNames[static_cast<size_t>(e)];
}

struct IngestStats {
  std::atomic<uint64_t> samples{0};          // received and stored
  std::atomic<uint64_t> batches{0};          // received
  std::atomic<uint64_t> events{0};           // received
  std::atomic<uint64_t> streams_opened{0};   // connects and reconnects
  std::atomic<uint64_t> streams_aborted{0};  // ended without their status reaching the agent
  std::array<std::atomic<uint64_t>, kIngestErrorCount> errors{};

  void Add(std::atomic<uint64_t>& counter, uint64_t n = 1) {
    counter.fetch_add(n, std::memory_order_relaxed);
  }
  void Count(IngestError e, uint64_t n = 1) { Add(errors[static_cast<size_t>(e)], n); }
  uint64_t errors_total() const {
    uint64_t sum = 0;
    for (const auto& e : errors) sum += e.load(std::memory_order_relaxed);
    return sum;
  }
};

}  // namespace railwatch
