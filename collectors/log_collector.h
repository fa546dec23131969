#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "collectors/log_tailer.h"
#include "common/clock.h"
#include "logs/log_parser.h"

namespace railwatch {

// NCCL / PyTorch / nccl-tests logs as events: lines from a LogTailer, parsed by one
// logs::LogParser per file stream (so that multi-line constructs of two files never mix), each
// LogEvent emitted as an EventRecord. See docs/LOG_TAILING.md.
//
// Events carry one label, `log` = the configured pattern that matched the file (bounded by the
// configuration, unlike file names that embed host names and pids); the file and line are
// attributes, next to the event's own fields.
//
// The tailer starts on the first Collect(); if it cannot (no inotify), every Collect() returns
// that error and tries again.
class LogCollector final : public Collector {
 public:
  struct Options {
    LogTailer::Options tailer;
    // Most queued lines handled in one Collect(); the rest wait in the tailer's bounded queue.
    size_t max_lines_per_collect = 100000;
    // A file that has written nothing for this long has its parser flushed, so that a
    // multi-line construct at the end of a crashed job's log (an NCCL error chain) is emitted
    // without waiting for a next line that may never come.
    absl::Duration idle_flush_after = absl::Seconds(10);
  };

  LogCollector(Options options, const Clock& clock);
  ~LogCollector() override;

  std::string_view name() const override { return "logs"; }
  absl::Status Collect(Emitter& emitter) override;

  const LogTailer& tailer() const { return tailer_; }

 private:
  // Self-metrics of one configured pattern.
  struct PatternSeries {
    uint32_t lines_id = 0, events_id = 0, malformed_id = 0, unparsed_id = 0;
    uint64_t lines = 0, events = 0, malformed = 0, unparsed = 0;
  };
  struct Stream {
    std::unique_ptr<logs::LogParser> parser;
    std::string path;
    std::string pattern;
    PatternSeries* series = nullptr;
    int64_t next_line = 0;  // the number the parser gives the next line; 0 = unknown
    absl::Time last_line;
    bool fed_since_flush = false;
    // What of the parser's stats has been added to `series` already.
    uint64_t seen_malformed = 0;
    uint64_t seen_unparsed = 0;
  };

  void DefineSeries(Emitter& emitter);
  // Defined at the first Collect for every configured pattern (so that they start at 0).
  PatternSeries& SeriesFor(const std::string& pattern, Emitter& emitter);
  Stream& StreamOf(const TailedLine& line, Emitter& emitter);
  void NewParser(Stream& stream);
  // Emits `events_` (from `stream`'s parser), then accounts the parser's new stats.
  void EmitEvents(Stream& stream, int64_t fallback_time, Emitter& emitter);
  void FlushIdle(Emitter& emitter);
  void EmitSelfMetrics(Emitter& emitter);

  Options options_;
  const Clock& clock_;
  LogTailer tailer_;
  bool started_ = false;
  std::vector<TailedLine> lines_;
  std::vector<logs::LogEvent> events_;
  absl::flat_hash_map<uint64_t, Stream> streams_;
  std::map<std::string, PatternSeries> patterns_;  // node-stable: streams point into it
  struct {
    uint32_t bytes, rotations, truncations, dropped, splits, errors, open_files;
  } tailer_series_{};
};

}  // namespace railwatch
