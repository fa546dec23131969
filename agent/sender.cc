#include "agent/sender.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/grpc_keepalive.h"
#include "common/text.h"
#include "grpcpp/grpcpp.h"
#include "common/logging.h"

namespace railwatch {

Sender::Sender(Options options, const SeriesRegistry& registry)
    : options_(std::move(options)), registry_(registry), backoff_(options_.backoff) {
  grpc::ChannelArguments args;
  // Notice a dead daemon within 20 s even when idle.
  SetClientKeepalive(args);
  // Our own backoff decides when to retry; keep gRPC's reconnect quick underneath it.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(options_.backoff.max)));
  channel_ = grpc::CreateCustomChannel(
      options_.server,
      options_.credentials ? options_.credentials : grpc::InsecureChannelCredentials(), args);
  stub_ = v1::Ingest::NewStub(channel_);
}

Sender::~Sender() { Stop(absl::ZeroDuration()); }

void Sender::Start() { thread_ = std::thread([this] { Run(); }); }

void Sender::Stop(absl::Duration grace) {
  if (!thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return queue_.empty() || !stats_.connected;
    };
    mu_.AwaitWithTimeout(absl::Condition(&drained), grace);
    stopping_ = true;
    if (active_ctx_) active_ctx_->TryCancel();
  }
  thread_.join();
}

void Sender::Enqueue(std::shared_ptr<v1::Batch> batch) {
  absl::MutexLock lock(&mu_);
  const uint64_t sequence = batch->sequence();
  queue_.push_back({sequence, std::move(batch)});
  while (queue_.size() > options_.max_queued_batches) {
    PopFront();
    if (unsent_index_ > 0) --unsent_index_;
    ++stats_.batches_dropped;
  }
}

void Sender::PopFront() {
  // A few spares cover the batches in flight at a steady state; beyond that, free memory.
  constexpr size_t kMaxSpares = 4;
  std::shared_ptr<v1::Batch> batch = std::move(queue_.front().batch);
  queue_.pop_front();
  if (batch.use_count() == 1 && spares_.size() < kMaxSpares) spares_.push_back(std::move(batch));
}

std::shared_ptr<v1::Batch> Sender::SpareBatch() {
  absl::MutexLock lock(&mu_);
  if (spares_.empty()) return nullptr;
  std::shared_ptr<v1::Batch> batch = std::move(spares_.back());
  spares_.pop_back();
  return batch;
}

Sender::Stats Sender::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Sender::Run() {
  while (true) {
    grpc::Status status = RunStream();
    absl::Duration delay = backoff_.Next();
    {
      absl::MutexLock lock(&mu_);
      stats_.connected = false;
      if (stopping_) return;
    }
    spdlog::warn("daemon {}: {} (code {}); retrying in {}", options_.server,
                 status.error_message().empty() ? "stream ended" : status.error_message(),
                 static_cast<int>(status.error_code()), HumanDuration(delay));
    absl::MutexLock lock(&mu_);
    auto stop = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), delay)) return;
  }
}

grpc::Status Sender::RunStream() {
  grpc::ClientContext ctx;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return grpc::Status::CANCELLED;
    active_ctx_ = &ctx;
    stream_broken_ = false;
  }
  auto clear_ctx = [this] {
    absl::MutexLock lock(&mu_);
    active_ctx_ = nullptr;
  };
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::DaemonMessage>> stream =
      stub_->Stream(&ctx);

  v1::AgentMessage hello;
  *hello.mutable_hello() = options_.hello;
  v1::DaemonMessage reply;
  if (!stream->Write(hello) || !stream->Read(&reply) || !reply.has_welcome()) {
    // Cancel before Finish: a daemon that answered something other than Welcome is still
    // waiting for our next message, and Finish would block on it.
    ctx.TryCancel();
    clear_ctx();
    grpc::Status s = stream->Finish();
    return s.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "no welcome from daemon") : s;
  }
  backoff_.Reset();
  {
    absl::MutexLock lock(&mu_);
    stats_.connected = true;
    ++stats_.connects;
    // The daemon already has everything up to last_sequence from this instance.
    const uint64_t have = reply.welcome().last_sequence();
    while (!queue_.empty() && queue_.front().sequence <= have) PopFront();
    unsent_index_ = 0;
  }
  spdlog::info("connected to daemon {} (version {})", options_.server,
               reply.welcome().daemon_version());

  // Acks arrive on their own thread; each releases every batch up to its sequence.
  std::thread reader([&] {
    v1::DaemonMessage msg;
    while (stream->Read(&msg)) {
      if (!msg.has_ack()) continue;
      absl::MutexLock lock(&mu_);
      const uint64_t acked = msg.ack().sequence();
      while (!queue_.empty() && queue_.front().sequence <= acked) {
        PopFront();
        if (unsent_index_ > 0) --unsent_index_;
        ++stats_.batches_acked;
      }
    }
    absl::MutexLock lock(&mu_);
    stream_broken_ = true;
  });

  size_t definitions_sent = 0;
  bool write_failed = false;
  v1::AgentMessage msg;
  while (true) {
    std::shared_ptr<v1::Batch> batch;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || stream_broken_ || unsent_index_ < queue_.size();
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_ || stream_broken_) break;
      batch = queue_[unsent_index_].batch;
      ++unsent_index_;
      ++stats_.batches_sent;
    }
    // Series this stream has not been told about yet (ids are dense). They ride on this write
    // only: a later stream that resends the batch sends its own definitions.
    definitions_sent = registry_.AppendDefinitions(definitions_sent, *batch);
    // Lend the queued batch to the message instead of copying it: Write serialises it before
    // returning.
    msg.set_allocated_batch(batch.get());
    const bool written = stream->Write(msg);
    (void)msg.release_batch();
    batch->clear_definitions();
    if (!written) {
      write_failed = true;
      break;
    }
  }
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
  }
  if (!write_failed) stream->WritesDone();
  if (stopping) ctx.TryCancel();
  reader.join();
  clear_ctx();
  grpc::Status status = stream->Finish();
  if (status.ok()) return {grpc::StatusCode::UNAVAILABLE, "daemon closed the stream"};
  return status;
}

}  // namespace railwatch
