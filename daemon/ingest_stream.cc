#include "daemon/ingest_stream.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "topology/job_ranks.h"

namespace railwatch {
namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

}  // namespace

grpc::Status IngestStream::Handle(const v1::AgentMessage& message, Reply& reply) {
  switch (message.message_case()) {
    case v1::AgentMessage::kHello: return HandleHello(message.hello(), reply);
    case v1::AgentMessage::kBatch: return HandleBatch(message.batch(), reply);
    default:
      deps_.stats.Count(IngestError::kEmptyMessage);
      return {grpc::StatusCode::INVALID_ARGUMENT, "message carries neither hello nor batch"};
  }
}

void IngestStream::Close() {
  if (!hello_seen_) return;
  deps_.agents.Disconnected(agent_id_, instance_id_, deps_.clock.NowNanos());
  spdlog::info("agent {} disconnected ({})", agent_id_, peer_);
}

grpc::Status IngestStream::HandleHello(const v1::Hello& hello, Reply& reply) {
  if (hello_seen_) {
    deps_.stats.Count(IngestError::kProtocol);
    return {grpc::StatusCode::FAILED_PRECONDITION, "second hello on one stream"};
  }
  if (hello.agent_id().empty()) {
    deps_.stats.Count(IngestError::kProtocol);
    return {grpc::StatusCode::INVALID_ARGUMENT, "hello without agent_id"};
  }
  hello_seen_ = true;
  agent_id_ = hello.agent_id();
  instance_id_ = hello.instance_id();
  acks_on_request_ = hello.acks_on_request();
  last_sequence_ = deps_.agents.Connected(hello, peer_, deps_.clock.NowNanos());
  spdlog::info("agent {} connected from {} (host {}, version {})", agent_id_, peer_,
               hello.hostname(), hello.version());
  reply.welcome = last_sequence_;
  return grpc::Status::OK;
}

grpc::Status IngestStream::HandleBatch(const v1::Batch& batch, Reply& reply) {
  if (!hello_seen_) {
    deps_.stats.Count(IngestError::kProtocol);
    return {grpc::StatusCode::FAILED_PRECONDITION, "batch before hello"};
  }
  deps_.stats.Add(deps_.stats.batches);
  if (batch.definitions_size() > 0 &&
      series_.size() + static_cast<size_t>(batch.definitions_size()) >
          deps_.max_series_per_stream) {
    deps_.stats.Count(IngestError::kTooManySeries);
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            absl::StrCat("agent ", agent_id_, " would define ",
                         series_.size() + batch.definitions_size(), " series, over the daemon's "
                         "limit of ", deps_.max_series_per_stream,
                         " per agent (railwatchd --max_series_per_agent)")};
  }
  for (const v1::SeriesDefinition& def : batch.definitions()) {
    if (!ValidName(def.name())) {
      deps_.stats.Count(IngestError::kBadSeriesName);
      spdlog::warn("agent {}: series {} has an invalid name \"{}\"; its points are dropped",
                   agent_id_, def.id(), def.name());
      continue;
    }
    Labels labels;
    labels.reserve(def.labels_size());
    for (const v1::Label& l : def.labels()) labels.push_back({l.name(), l.value()});
    NormalizeLabels(labels);
    const MetricKind kind =
        def.kind() == v1::SERIES_KIND_COUNTER ? MetricKind::kCounter : MetricKind::kGauge;
    series_.Define(def.id(),
                   deps_.store.Intern(def.name(), labels,
                                      TraitsOf(def.name(), kind, def.width_bits()), def.help()));
  }
  // The definitions above are taken even from a batch that is a duplicate: they ride on a
  // stream's first write only, and a new stream's first batch may be one that its instance's
  // old stream stored.
  if (batch.sequence() <= last_sequence_ ||
      !deps_.agents.ClaimSequence(agent_id_, instance_id_, batch.sequence())) {
    // Already stored (a replay after a lost ack), or being stored by this instance's other
    // stream: acknowledge it, store nothing twice.
    deps_.stats.Count(IngestError::kDuplicateBatch);
    last_sequence_ = std::max(last_sequence_, batch.sequence());
    if (!acks_on_request_ || batch.ack_requested()) reply.ack = last_sequence_;
    return grpc::Status::OK;
  }
  // The batch's samples go to the store under one lock. The buffer is the thread's: it keeps
  // its capacity from batch to batch, so a steady stream allocates nothing per sample.
  thread_local std::vector<SeriesStore::PendingSample> pending;
  pending.clear();
  int64_t newest = 0;
  uint64_t unknown = 0, bad_time = 0, bad_value = 0;
  for (const v1::Point& p : batch.points()) {
    const std::optional<SeriesRef> ref = series_.Find(p.series_id());
    if (!ref) {
      ++unknown;
      continue;
    }
    // Times before 1970 (or none) and gauges that are not numbers would sit in the store as
    // its newest sample and turn every later rate and comparison into nonsense.
    if (p.time_unix_nano() <= 0) {
      ++bad_time;
      continue;
    }
    if (p.value_case() == v1::Point::kGauge && !std::isfinite(p.gauge())) {
      ++bad_value;
      continue;
    }
    const double value =
        p.value_case() == v1::Point::kCounter ? static_cast<double>(p.counter()) : p.gauge();
    pending.push_back({*ref, p.time_unix_nano(), value});
    newest = std::max(newest, p.time_unix_nano());
  }
  bool watched = !pending.empty() && deps_.store.AppendMany(pending);
  const uint64_t stored = pending.size();
  for (auto [reason, n] : {std::pair{IngestError::kUnknownSeries, unknown},
                           {IngestError::kBadTimestamp, bad_time},
                           {IngestError::kBadValue, bad_value}}) {
    if (n > 0) deps_.stats.Count(reason, n);
  }
  deps_.stats.Add(deps_.stats.samples, stored);
  deps_.stats.Add(deps_.stats.events, static_cast<uint64_t>(batch.events_size()));
  StoreEvents(batch, watched);
  last_sequence_ = batch.sequence();
  deps_.agents.BatchStored(agent_id_, last_sequence_, stored, static_cast<uint32_t>(series_.size()),
                           newest, deps_.clock.NowNanos());
  if (watched && deps_.on_watched_update) deps_.on_watched_update();
  if (!acks_on_request_ || batch.ack_requested()) reply.ack = last_sequence_;
  return grpc::Status::OK;
}

void IngestStream::StoreEvents(const v1::Batch& batch, bool& watched) {
  if (deps_.events == nullptr) return;
  for (const v1::Event& e : batch.events()) {
    StoredEvent se;
    se.kind = e.kind();
    se.time_unix_nano = e.time_unix_nano() != 0 ? e.time_unix_nano() : deps_.clock.NowNanos();
    se.labels.reserve(e.labels_size());
    for (const v1::Label& l : e.labels()) se.labels.push_back({l.name(), l.value()});
    // Sorted for a stable order in evidence and messages.
    std::map<std::string, std::string> attrs(e.attributes().begin(), e.attributes().end());
    se.attributes.assign(attrs.begin(), attrs.end());
    se.raw = e.raw();
    if (deps_.jobs != nullptr) {
      NormalizeLabels(se.labels);
      deps_.jobs->Observe(se);
      // NCCL RAS's ranks behind, on their own hosts (topology/job_ranks.h).
      for (StoredEvent& behind : RanksBehind(se, *deps_.jobs, deps_.ranks_behind)) {
        bool behind_watched = false;
        deps_.events->Append(std::move(behind), &behind_watched);
        watched |= behind_watched;
      }
    }
    bool event_watched = false;
    deps_.events->Append(std::move(se), &event_watched);
    watched |= event_watched;
  }
}

}  // namespace railwatch
