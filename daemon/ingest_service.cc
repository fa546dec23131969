#include "daemon/ingest_service.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <optional>

#include "absl/synchronization/mutex.h"
#include "common/logging.h"
#include "common/version.h"
#include "google/protobuf/arena.h"

namespace railwatch {
namespace {

class IngestReactor final : public grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage> {
 public:
  IngestReactor(grpc::CallbackServerContext* ctx, IngestService::Deps& deps)
      : deps_(deps), ctx_(ctx), stream_(deps, ctx->peer()) {
    deps_.stats.Add(deps_.stats.streams_opened);
    NewInput();
    StartRead(in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      if (ReadFailedToParse()) {
        deps_.stats.Count(IngestError::kUnparsable);
        spdlog::warn("ingest from {}: a message that is not a railwatch.v1.AgentMessage",
                     stream_.peer());
        FinishOnce({grpc::StatusCode::INVALID_ARGUMENT,
                    "the message is not a valid railwatch.v1.AgentMessage (protobuf parse "
                    "failed)"});
        return;
      }
      // The agent closed its side, or the stream broke (then OnDone counts it). An agent that
      // asks for its acks closes its side to have the last of them before it stops.
      if (stream_.acks_on_request() && stream_.last_sequence() > 0) {
        IngestStream::Reply last;
        last.ack = stream_.last_sequence();
        Send(last);
      }
      FinishOnce(grpc::Status::OK);
      return;
    }
    IngestStream::Reply reply;
    grpc::Status status = stream_.Handle(*in_, reply);
    if (!status.ok()) {
      const std::string& agent = stream_.agent_id();
      spdlog::warn("ingest from {} ({}): {}", agent.empty() ? "?" : agent, stream_.peer(),
                   status.error_message());
      FinishOnce(status);
      return;
    }
    Send(reply);
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
    // Cancelled: the stream ended without its status reaching the agent (the agent vanished or
    // cancelled, the keepalive found the connection dead, or gRPC refused a message over the
    // receive limit with RESOURCE_EXHAUSTED before it reached us).
    if (ctx_->IsCancelled()) deps_.stats.Add(deps_.stats.streams_aborted);
    stream_.Close();
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
    // gRPC reports a message that does not parse as a failed read, like the end of the
    // stream; but it has cleared the message before parsing, which the end of a stream never
    // does: a mark that is gone tells the two apart.
    in_->mutable_batch()->set_sequence(kUnreadMark);
  }

  void Send(const IngestStream::Reply& reply) {
    if (!reply.welcome && !reply.ack) return;
    absl::MutexLock lock(&mu_);
    if (reply.welcome) {
      welcome_pending_ = true;
      welcome_sequence_ = *reply.welcome;
      welcome_acks_on_request_ = stream_.acks_on_request();
    }
    if (reply.ack) ack_pending_ = *reply.ack;
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
      w->set_acks_on_request(welcome_acks_on_request_);
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

  bool ReadFailedToParse() const {
    return !in_->has_batch() || in_->batch().sequence() != kUnreadMark;
  }

  static constexpr uint64_t kUnreadMark = ~uint64_t{0};
  IngestService::Deps& deps_;
  grpc::CallbackServerContext* const ctx_;
  IngestStream stream_;
  size_t block_size_ = 4 << 10;  // of in_'s arena
  std::optional<google::protobuf::Arena> arena_;
  v1::AgentMessage* in_ = nullptr;  // on arena_
  // Reads are sequential (one outstanding), so stream_ is touched by one thread at a time; mu_
  // guards what the write path shares.
  absl::Mutex mu_;
  v1::DaemonMessage out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool write_broken_ ABSL_GUARDED_BY(mu_) = false;
  bool welcome_pending_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t welcome_sequence_ ABSL_GUARDED_BY(mu_) = 0;
  bool welcome_acks_on_request_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t ack_pending_ ABSL_GUARDED_BY(mu_) = 0;
  bool finish_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status finish_status_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

namespace {

// A stream refused before its first message (no client certificate): finishes at once.
class RefusedStream final : public grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage> {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* IngestService::Stream(
    grpc::CallbackServerContext* context) {
  if (auth_ != nullptr) {
    if (grpc::Status s = auth_->AuthorizeIngest(*context); !s.ok()) return new RefusedStream(s);
  }
  return new IngestReactor(context, deps_);
}

}  // namespace railwatch
