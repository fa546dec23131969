#include "collectors/log_collector.h"

#include <algorithm>
#include <climits>

#include "collectors/log_event_record.h"

namespace railwatch {

LogCollector::LogCollector(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), tailer_(options_.tailer, clock) {}

LogCollector::~LogCollector() { tailer_.Stop(); }

absl::Status LogCollector::Collect(Emitter& emitter) {
  if (!started_) {
    if (absl::Status s = tailer_.Start(); !s.ok()) return s;
    started_ = true;
    DefineSeries(emitter);
  }
  lines_.clear();
  tailer_.Drain(lines_, options_.max_lines_per_collect);
  const absl::Time now = clock_.Now();
  for (const TailedLine& line : lines_) {
    if (line.end_of_stream) {
      auto it = streams_.find(line.stream);
      if (it == streams_.end()) continue;  // a stream without a single line
      it->second.parser->Finish(events_);
      EmitEvents(it->second, line.read_unix_nano, emitter);
      streams_.erase(it);
      continue;
    }
    Stream& s = StreamOf(line, emitter);
    // Keeps the parser's numbering true to the file across resumes, dropped lines and the
    // pieces of a split line (which share their line's number).
    if (line.line_number > 0 && line.line_number != s.next_line) {
      s.parser->SetNextLineNumber(static_cast<int>(std::min<int64_t>(line.line_number, INT_MAX)));
    }
    s.next_line = line.line_number > 0 ? line.line_number + 1 : 0;
    s.parser->Feed(line.text, events_);
    ++s.series->lines;
    s.last_line = now;
    s.fed_since_flush = true;
    EmitEvents(s, line.read_unix_nano, emitter);
  }
  FlushIdle(emitter);
  EmitSelfMetrics(emitter);
  return absl::OkStatus();
}

LogCollector::Stream& LogCollector::StreamOf(const TailedLine& line, Emitter& emitter) {
  auto [it, inserted] = streams_.try_emplace(line.stream);
  Stream& s = it->second;
  if (!inserted) return s;
  s.path = line.path;
  s.pattern = line.pattern;
  s.series = &SeriesFor(line.pattern, emitter);
  NewParser(s);
  return s;
}

void LogCollector::NewParser(Stream& s) {
  s.parser = std::make_unique<logs::LogParser>(s.path, clock_);
  if (s.next_line > 0) {
    s.parser->SetNextLineNumber(static_cast<int>(std::min<int64_t>(s.next_line, INT_MAX)));
  }
  s.seen_malformed = 0;
  s.seen_unparsed = 0;
  s.fed_since_flush = false;
}

void LogCollector::EmitEvents(Stream& s, int64_t fallback_time, Emitter& emitter) {
  for (logs::LogEvent& ev : events_) {
    // The line number is the file's only when the tailer knew where in the file it started.
    emitter.Event(LogEventRecord(std::move(ev), s.pattern, s.path, fallback_time, s.next_line > 0));
    ++s.series->events;
  }
  events_.clear();
  const logs::LogParser::Stats& stats = s.parser->stats();
  s.series->malformed += stats.malformed - s.seen_malformed;
  s.series->unparsed += stats.skipped() - s.seen_unparsed;
  s.seen_malformed = stats.malformed;
  s.seen_unparsed = stats.skipped();
}

void LogCollector::FlushIdle(Emitter& emitter) {
  const absl::Time now = clock_.Now();
  for (auto& [id, s] : streams_) {
    if (!s.fed_since_flush || now - s.last_line < options_.idle_flush_after) continue;
    // Finish() means end of input: a fresh parser takes the file's next lines.
    s.parser->Finish(events_);
    EmitEvents(s, absl::ToUnixNanos(now), emitter);
    NewParser(s);
  }
}

LogCollector::PatternSeries& LogCollector::SeriesFor(const std::string& pattern, Emitter& emitter) {
  auto it = patterns_.find(pattern);
  if (it != patterns_.end()) return it->second;
  const Labels labels = {{"log", pattern}};
  PatternSeries p;
  p.lines_id = emitter.DefineSeries("railwatch_log_lines_total", MetricKind::kCounter, labels);
  p.events_id = emitter.DefineSeries("railwatch_log_events_total", MetricKind::kCounter, labels);
  p.malformed_id =
      emitter.DefineSeries("railwatch_log_lines_malformed_total", MetricKind::kCounter, labels);
  p.unparsed_id =
      emitter.DefineSeries("railwatch_log_lines_unparsed_total", MetricKind::kCounter, labels);
  return patterns_.emplace(pattern, p).first->second;
}

void LogCollector::DefineSeries(Emitter& emitter) {
  for (const std::string& pattern : tailer_.patterns()) SeriesFor(pattern, emitter);
  tailer_series_.bytes =
      emitter.DefineSeries("railwatch_log_tailer_bytes_total", MetricKind::kCounter, {});
  tailer_series_.rotations =
      emitter.DefineSeries("railwatch_log_tailer_rotations_total", MetricKind::kCounter, {});
  tailer_series_.truncations =
      emitter.DefineSeries("railwatch_log_tailer_truncations_total", MetricKind::kCounter, {});
  tailer_series_.dropped =
      emitter.DefineSeries("railwatch_log_tailer_dropped_lines_total", MetricKind::kCounter, {});
  tailer_series_.splits =
      emitter.DefineSeries("railwatch_log_tailer_long_line_splits_total", MetricKind::kCounter, {});
  tailer_series_.errors =
      emitter.DefineSeries("railwatch_log_tailer_errors_total", MetricKind::kCounter, {});
  tailer_series_.open_files =
      emitter.DefineSeries("railwatch_log_tailer_open_files", MetricKind::kGauge, {});
}

void LogCollector::EmitSelfMetrics(Emitter& emitter) {
  const int64_t t = clock_.NowNanos();
  for (const auto& [pattern, p] : patterns_) {
    emitter.Counter(p.lines_id, p.lines, t);
    emitter.Counter(p.events_id, p.events, t);
    emitter.Counter(p.malformed_id, p.malformed, t);
    emitter.Counter(p.unparsed_id, p.unparsed, t);
  }
  const LogTailer::Stats stats = tailer_.stats();
  emitter.Counter(tailer_series_.bytes, stats.bytes, t);
  emitter.Counter(tailer_series_.rotations, stats.rotations, t);
  emitter.Counter(tailer_series_.truncations, stats.truncations, t);
  emitter.Counter(tailer_series_.dropped, stats.dropped_lines, t);
  emitter.Counter(tailer_series_.splits, stats.long_line_splits, t);
  emitter.Counter(tailer_series_.errors, stats.errors, t);
  emitter.Gauge(tailer_series_.open_files, static_cast<double>(stats.open_files), t);
}

}  // namespace railwatch
