#include "engine/replay.h"

#include <utility>

#include "absl/strings/match.h"
#include "common/vocabulary.h"
#include "topology/job_ranks.h"

namespace railwatch {
namespace {

MetricKind ReplayKindOf(const std::string& name) {
  if (const MetricSpec* spec = FindMetric(name)) return spec->kind;
  return absl::EndsWith(name, "_total") ? MetricKind::kCounter : MetricKind::kGauge;
}

}  // namespace

EngineReplay::EngineReplay(Options options, std::vector<Playbook> playbooks)
    : clock_(options.start),
      store_(SeriesStore::Options{options.retention}),
      events_(EventStore::Options{}),
      fabric_(options.topology, &jobs_),
      engine_(options.engine, std::move(playbooks), store_, clock_,
              Engine::Sources{&events_, &fabric_}) {
  if (options.topology) jobs_.SetStatic(options.topology->jobs());
}

SeriesRef EngineReplay::Intern(const std::string& name, const Labels& labels) {
  return store_.Intern(name, labels, TraitsOf(name, ReplayKindOf(name)));
}

void EngineReplay::Append(SeriesRef series, int64_t time_unix_nano, double value) {
  store_.Append(series, time_unix_nano, value);
}

void EngineReplay::AddEvent(StoredEvent event) {
  jobs_.Observe(event);
  // As railwatchd's ingest does (daemon/ingest_stream.cc): RAS's ranks behind on their hosts.
  for (StoredEvent& behind : RanksBehind(event, jobs_)) events_.Append(std::move(behind));
  events_.Append(std::move(event));
}

void EngineReplay::EvaluateAt(int64_t now_unix_nano) {
  clock_.Set(absl::FromUnixNanos(now_unix_nano));
  engine_.EvaluateOnce();
}

}  // namespace railwatch
