#include "agent/sender.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/grpc_keepalive.h"
#include "common/text.h"
#include "grpcpp/grpcpp.h"
#include "common/logging.h"

namespace railwatch {

Sender::Sender(Options options, SeriesRegistry& registry, std::unique_ptr<Spool> spool)
    : options_(std::move(options)),
      registry_(registry),
      spool_(std::move(spool)),
      backoff_(options_.backoff) {
  if (spool_) last_enqueued_ = spool_->last_recovered_sequence();
  Connect();
}

void Sender::Connect() {
  grpc::ChannelArguments args;
  // Notice a dead daemon within 20 s even when idle.
  SetClientKeepalive(args);
  // A channel of our own (its own connection): a new one is a fresh connection attempt.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  // No bandwidth-delay probing: a batch a second needs no flow-control window tuning, and
  // with SetClientKeepalive's unlimited pings without data the probe pinged on every read,
  // which cost the agent about a quarter of its CPU per cycle (issue 19 item 9,
  // docs/BENCHMARKS.md).
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
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
    // The stream sends what is left and, with a daemon that acks on request, closes its side
    // to have the last ack.
    draining_ = true;
    auto drained = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      return acked_ >= last_enqueued_ || !stats_.connected;
    };
    mu_.AwaitWithTimeout(absl::Condition(&drained), grace);
    stopping_ = true;
    if (active_ctx_) active_ctx_->TryCancel();
  }
  thread_.join();
}

void Sender::Enqueue(std::shared_ptr<v1::Batch> batch) {
  bool spooled = false;
  if (spool_) {
    absl::Status s = spool_->Append(*batch, registry_);
    spooled = s.ok();
    // A full or broken disk: the batch still has its place in memory. Logged once in a while.
    if (!s.ok() && spool_->stats().append_errors % 100 == 1) {
      spdlog::error("{} ({} appends failed so far)", s.message(), spool_->stats().append_errors);
    }
  }
  absl::MutexLock lock(&mu_);
  const uint64_t sequence = batch->sequence();
  queue_.push_back({sequence, std::move(batch), spooled});
  last_enqueued_ = std::max(last_enqueued_, sequence);
  while (queue_.size() > options_.max_queued_batches) {
    if (!queue_.front().spooled) ++stats_.batches_dropped;
    PopFront();
  }
}

void Sender::PopFront() {
  // Spares cover the batches between two acks at a steady state; beyond that, free memory.
  const size_t kMaxSpares = options_.ack_every + 2;
  std::shared_ptr<v1::Batch> batch = std::move(queue_.front().batch);
  queue_.pop_front();
  if (batch.use_count() == 1 && spares_.size() < kMaxSpares) spares_.push_back(std::move(batch));
}

std::shared_ptr<v1::Batch> Sender::SpareLocked() {
  if (spares_.empty()) return nullptr;
  std::shared_ptr<v1::Batch> batch = std::move(spares_.back());
  spares_.pop_back();
  return batch;
}

std::shared_ptr<v1::Batch> Sender::SpareBatch() {
  absl::MutexLock lock(&mu_);
  return SpareLocked();
}

void Sender::AckedLocked(uint64_t sequence) {
  acked_ = std::max(acked_, sequence);
  stats_.acked_sequence = acked_;
  while (!queue_.empty() && queue_.front().sequence <= acked_) PopFront();
  if (spool_) spool_->Ack(acked_);
}

std::shared_ptr<v1::Batch> Sender::NextBatch() {
  uint64_t from_disk = 0;
  std::shared_ptr<v1::Batch> batch;
  {
    absl::MutexLock lock(&mu_);
    auto it = std::upper_bound(queue_.begin(), queue_.end(), last_sent_,
                               [](uint64_t s, const Queued& q) { return s < q.sequence; });
    const uint64_t in_memory = it != queue_.end() ? it->sequence : 0;
    const uint64_t on_disk = spool_ ? spool_->NextAfter(last_sent_) : 0;
    if (in_memory == 0 && on_disk == 0) {  // dropped
      last_sent_ = last_enqueued_;
      return nullptr;
    }
    if (in_memory != 0 && (on_disk == 0 || in_memory <= on_disk)) {
      last_sent_ = in_memory;
      ++stats_.batches_sent;
      return it->batch;
    }
    from_disk = on_disk;
    batch = SpareLocked();
  }
  if (!batch) batch = std::make_shared<v1::Batch>();
  absl::Status s = spool_->Read(from_disk, registry_, *batch);
  absl::MutexLock lock(&mu_);
  last_sent_ = std::max(last_sent_, from_disk);
  if (!s.ok()) {
    spdlog::warn("spool: {}; skipped", s.message());
    return nullptr;
  }
  ++stats_.batches_sent;
  ++stats_.batches_from_spool;
  return batch;
}

Sender::Stats Sender::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Sender::Run() {
  while (true) {
    grpc::Status status = RunStream();
    // Our backoff alone decides when the next attempt is, and that attempt is a new
    // connection: a channel whose connection failed stays in TRANSIENT_FAILURE under gRPC's
    // own reconnect timer (attempts 5 s apart here, whatever the backoff arguments), and
    // every call on it fails at once on the cached refusal, so an agent on the old channel
    // was back 4-9 s after the daemon (tests/integration/agent_reconnect_test.cc).
    Connect();
    absl::Duration delay = backoff_.Next();
    {
      absl::MutexLock lock(&mu_);
      stats_.connected = false;
      // A drained stream that closed its side for the last ack is the end, not an outage.
      if (stopping_ || (draining_ && acked_ >= last_enqueued_)) return;
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
  hello.mutable_hello()->set_acks_on_request(true);
  v1::DaemonMessage reply;
  const bool answered = stream->Write(hello) && stream->Read(&reply);
  if (!answered || !reply.has_welcome()) {
    // Cancel before Finish: a daemon that answered something other than Welcome is still
    // waiting for our next message, and Finish would block on it. One that did not answer
    // has ended the stream, and Finish says why (UNAUTHENTICATED: no client certificate).
    if (answered) ctx.TryCancel();
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
    AckedLocked(reply.welcome().last_sequence());
    last_sent_ = acked_;
  }
  spdlog::info("connected to daemon {} (version {})", options_.server,
               reply.welcome().daemon_version());

  // Acks arrive on their own thread; each releases every batch up to its sequence. A daemon
  // that acks on request (Welcome.acks_on_request) is asked every options_.ack_every batches
  // or options_.ack_after: that thread then wakes for one ack in ack_every, not for each
  // batch, and the daemon writes one. It also notices the stream ending while no batch is
  // being written (the keepalive found the daemon gone).
  const bool on_request = reply.welcome().acks_on_request();
  std::thread reader([&] {
    v1::DaemonMessage msg;
    while (stream->Read(&msg)) {
      if (!msg.has_ack()) continue;
      absl::MutexLock lock(&mu_);
      ++stats_.acks;
      AckedLocked(msg.ack().sequence());
    }
    absl::MutexLock lock(&mu_);
    stream_broken_ = true;
  });
  size_t since_request = 0;
  absl::Time last_request = absl::Now();

  size_t definitions_sent = 0;
  bool write_failed = false;
  bool half_closed = false;
  v1::AgentMessage msg;
  while (true) {
    bool draining;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || draining_ || stream_broken_ || last_sent_ < last_enqueued_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_ || stream_broken_) break;
      draining = draining_ && last_sent_ >= last_enqueued_;
    }
    if (draining) {
      // Stop is waiting for the last acks. A daemon that acks on request sends them when we
      // close our side, then ends the stream; an older one has acked every batch already.
      if (on_request && !half_closed) {
        half_closed = true;
        stream->WritesDone();
      }
      absl::MutexLock lock(&mu_);
      auto changed = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || stream_broken_ || last_sent_ < last_enqueued_;
      };
      mu_.Await(absl::Condition(&changed));
      if (half_closed && !stopping_ && !stream_broken_) break;  // nothing more may be written
      continue;
    }
    std::shared_ptr<v1::Batch> batch = NextBatch();
    if (!batch) continue;
    // Series this stream has not been told about yet (ids are dense). They ride on this write
    // only: a later stream that resends the batch sends its own definitions.
    definitions_sent = registry_.AppendDefinitions(definitions_sent, *batch);
    bool request = false;
    if (on_request) {
      absl::MutexLock lock(&mu_);
      const absl::Time now = absl::Now();
      request = ++since_request >= options_.ack_every || now - last_request >= options_.ack_after ||
                draining_;
      if (request) {
        since_request = 0;
        last_request = now;
      }
    }
    batch->set_ack_requested(request);
    // Lend the queued batch to the message instead of copying it: Write serialises it before
    // returning.
    msg.set_allocated_batch(batch.get());
    const bool written = stream->Write(msg);
    (void)msg.release_batch();
    batch->clear_definitions();
    batch->clear_ack_requested();
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
  if (!write_failed && !half_closed) stream->WritesDone();
  if (stopping) ctx.TryCancel();
  if (reader.joinable()) reader.join();
  clear_ctx();
  grpc::Status status = stream->Finish();
  if (status.ok()) return {grpc::StatusCode::UNAVAILABLE, "daemon closed the stream"};
  return status;
}

}  // namespace railwatch
