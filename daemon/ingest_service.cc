#include "daemon/ingest_service.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/version.h"
#include "daemon/stream_series_map.h"
#include "google/protobuf/arena.h"

namespace railwatch {
namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ':') return false;
  }
  return true;
}

class IngestReactor final : public grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage> {
 public:
  IngestReactor(grpc::CallbackServerContext* ctx, IngestService::Deps& deps)
      : deps_(deps), peer_(ctx->peer()) {
    deps_.metrics.streams_opened.Increment();
    NewInput();
    StartRead(in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the agent closed its side or the stream broke
      FinishOnce(grpc::Status::OK);
      return;
    }
    grpc::Status status = Handle();
    if (!status.ok()) {
      spdlog::warn("ingest from {} ({}): {}", agent_id_.empty() ? "?" : agent_id_, peer_,
                   status.error_message());
      FinishOnce(status);
      return;
    }
    NewInput();
    StartRead(in_);
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      // The stream is broken: write nothing more. Finish may already have been requested by
      // the read side while this write was in flight, so MaybeWriteLocked must still run, or
      // the call would never finish and OnDone never come.
      write_broken_ = true;
    }
    MaybeWriteLocked();
  }

  void OnDone() override {
    if (hello_seen_) {
      deps_.agents.Disconnected(agent_id_, instance_id_, deps_.clock.NowNanos());
      spdlog::info("agent {} disconnected ({})", agent_id_, peer_);
    }
    delete this;
  }

 private:
  // Points at an empty message for the next read, on an arena of its own. Parsing into a
  // reused heap message would still free and allocate the batch and each of its points on
  // every read (Clear of a oneof deletes the sub-message); on an arena a batch costs a block or
  // two, sized after the stream's last batch, handed back at once. A new arena for every
  // message rather than Reset: the read is parsed on whichever gRPC thread completes it, and an
  // arena's first block would only serve the thread that reset it.
  void NewInput() {
    constexpr size_t kMinBlock = 4 << 10, kMaxBlock = 1 << 20;
    if (arena_) {
      // A stream's first batch also carries every series definition: not the size to expect.
      const bool definitions = in_->has_batch() && in_->batch().definitions_size() > 0;
      if (!definitions) {
        const size_t used = arena_->SpaceUsed();
        block_size_ = std::clamp<size_t>(std::bit_ceil(used + used / 8), kMinBlock, kMaxBlock);
      }
      arena_.reset();
    }
    google::protobuf::ArenaOptions options;
    options.start_block_size = block_size_;
    options.max_block_size = kMaxBlock;
    arena_.emplace(options);
    in_ = google::protobuf::Arena::CreateMessage<v1::AgentMessage>(&*arena_);
  }

  grpc::Status Handle() {
    switch (in_->message_case()) {
      case v1::AgentMessage::kHello: return HandleHello(in_->hello());
      case v1::AgentMessage::kBatch: return HandleBatch(in_->batch());
      default:
        deps_.metrics.ingest_errors.Add({{"reason", "empty_message"}}).Increment();
        return {grpc::StatusCode::INVALID_ARGUMENT, "message carries neither hello nor batch"};
    }
  }

  grpc::Status HandleHello(const v1::Hello& hello) {
    if (hello_seen_) {
      deps_.metrics.ingest_errors.Add({{"reason", "protocol"}}).Increment();
      return {grpc::StatusCode::FAILED_PRECONDITION, "second hello on one stream"};
    }
    if (hello.agent_id().empty()) {
      deps_.metrics.ingest_errors.Add({{"reason", "protocol"}}).Increment();
      return {grpc::StatusCode::INVALID_ARGUMENT, "hello without agent_id"};
    }
    hello_seen_ = true;
    agent_id_ = hello.agent_id();
    instance_id_ = hello.instance_id();
    last_sequence_ = deps_.agents.Connected(hello, peer_, deps_.clock.NowNanos());
    spdlog::info("agent {} connected from {} (host {}, version {})", agent_id_, peer_,
                 hello.hostname(), hello.version());
    absl::MutexLock lock(&mu_);
    welcome_pending_ = true;
    welcome_sequence_ = last_sequence_;
    MaybeWriteLocked();
    return grpc::Status::OK;
  }

  grpc::Status HandleBatch(const v1::Batch& batch) {
    if (!hello_seen_) {
      deps_.metrics.ingest_errors.Add({{"reason", "protocol"}}).Increment();
      return {grpc::StatusCode::FAILED_PRECONDITION, "batch before hello"};
    }
    deps_.metrics.batches_ingested.Increment();
    if (batch.sequence() <= last_sequence_) {
      // Already stored (a replay after a lost ack): acknowledge again, store nothing twice.
      deps_.metrics.ingest_errors.Add({{"reason", "duplicate_batch"}}).Increment();
      QueueAck(last_sequence_);
      return grpc::Status::OK;
    }
    for (const v1::SeriesDefinition& def : batch.definitions()) {
      if (!ValidName(def.name())) {
        deps_.metrics.ingest_errors.Add({{"reason", "bad_series_name"}}).Increment();
        spdlog::warn("agent {}: series {} has an invalid name \"{}\"; its points are dropped",
                     agent_id_, def.id(), def.name());
        continue;
      }
      Labels labels;
      labels.reserve(def.labels_size());
      for (const v1::Label& l : def.labels()) labels.push_back({l.name(), l.value()});
      NormalizeLabels(labels);
      const MetricKind kind = def.kind() == v1::SERIES_KIND_COUNTER ? MetricKind::kCounter
                                                                     : MetricKind::kGauge;
      series_.Define(def.id(),
                     deps_.store.Intern(def.name(), labels, kind, def.width_bits(), def.help()));
    }
    // The batch's samples go to the store under one lock. The buffer is the thread's: it keeps
    // its capacity from batch to batch, so a steady stream allocates nothing per sample.
    thread_local std::vector<SeriesStore::PendingSample> pending;
    pending.clear();
    int64_t newest = 0;
    uint64_t unknown = 0;
    for (const v1::Point& p : batch.points()) {
      const std::optional<SeriesRef> ref = series_.Find(p.series_id());
      if (!ref) {
        ++unknown;
        continue;
      }
      const double value = p.value_case() == v1::Point::kCounter
                               ? static_cast<double>(p.counter())
                               : p.gauge();
      pending.push_back({*ref, p.time_unix_nano(), value});
      newest = std::max(newest, p.time_unix_nano());
    }
    bool watched = !pending.empty() && deps_.store.AppendMany(pending);
    const uint64_t stored = pending.size();
    if (unknown > 0) {
      deps_.metrics.ingest_errors.Add({{"reason", "unknown_series"}})
          .Increment(static_cast<double>(unknown));
    }
    deps_.metrics.samples_ingested.Increment(static_cast<double>(stored));
    deps_.metrics.events_ingested.Increment(batch.events_size());
    if (deps_.events != nullptr) {
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
        }
        bool event_watched = false;
        deps_.events->Append(std::move(se), &event_watched);
        watched |= event_watched;
      }
    }
    last_sequence_ = batch.sequence();
    deps_.agents.BatchStored(agent_id_, last_sequence_, stored,
                             static_cast<uint32_t>(series_.size()), newest,
                             deps_.clock.NowNanos());
    if (watched && deps_.on_watched_update) deps_.on_watched_update();
    QueueAck(last_sequence_);
    return grpc::Status::OK;
  }

  void QueueAck(uint64_t sequence) {
    absl::MutexLock lock(&mu_);
    ack_pending_ = sequence;
    MaybeWriteLocked();
  }

  // One write in flight at a time; acks are cumulative, so only the newest waiting one is sent.
  void MaybeWriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || finished_) return;
    if (write_broken_) {
      welcome_pending_ = false;
      ack_pending_ = 0;
    }
    if (welcome_pending_) {
      out_.Clear();
      v1::Welcome* w = out_.mutable_welcome();
      w->set_daemon_version(kVersion);
      w->set_last_sequence(welcome_sequence_);
      welcome_pending_ = false;
    } else if (ack_pending_ > 0) {
      out_.Clear();
      out_.mutable_ack()->set_sequence(ack_pending_);
      ack_pending_ = 0;
    } else {
      if (finish_requested_) {
        finished_ = true;
        Finish(finish_status_);
      }
      return;
    }
    writing_ = true;
    StartWrite(&out_);
  }

  void FinishOnce(grpc::Status status) {
    absl::MutexLock lock(&mu_);
    if (finish_requested_) return;
    finish_requested_ = true;
    finish_status_ = std::move(status);
    // Do not send acks that nobody will read once the stream is over.
    if (!finish_status_.ok()) ack_pending_ = 0;
    MaybeWriteLocked();
  }

  IngestService::Deps& deps_;
  const std::string peer_;
  size_t block_size_ = 4 << 10;  // of in_'s arena
  std::optional<google::protobuf::Arena> arena_;
  v1::AgentMessage* in_ = nullptr;  // on arena_
  // Reads are sequential (one outstanding), so the state below is touched by one thread at a
  // time; mu_ guards what the write path shares.
  bool hello_seen_ = false;
  std::string agent_id_;
  uint64_t instance_id_ = 0;
  uint64_t last_sequence_ = 0;
  StreamSeriesMap series_;

  absl::Mutex mu_;
  v1::DaemonMessage out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_broken_ ABSL_GUARDED_BY(mu_) = false;
  bool welcome_pending_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t welcome_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t ack_pending_ ABSL_GUARDED_BY(mu_) = 0;
  bool finish_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status finish_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* IngestService::Stream(
    grpc::CallbackServerContext* context) {
  return new IngestReactor(context, deps_);
}

}  // namespace railwatch
