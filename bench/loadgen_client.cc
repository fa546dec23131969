#include "bench/loadgen_client.h"

#include <random>

#include "absl/strings/str_format.h"
#include "grpcpp/alarm.h"
#include "common/backoff.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch::loadgen {

enum class Op { kStart, kWrite, kRead, kAlarm, kFinish };

struct Tag {
  Agent* agent;
  Op op;
};

// One simulated host agent: its stream's state machine, run on its worker's thread only.
class Agent {
 public:
  Agent(Worker& worker, int index, absl::Duration phase)
      : worker_(worker),
        host_(absl::StrFormat("%s%05d", worker.options_.host_prefix, index)),
        phase_(phase),
        values_(worker.plan_, 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(index + 1)),
        backoff_(Backoff::Options{absl::Milliseconds(200), absl::Seconds(10), 1.6, 0.2},
                 static_cast<uint64_t>(index)) {
    grpc::ChannelArguments args;
    // A channel of its own and a connection of its own, as each real agent has.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetString("railwatch.loadgen.agent", host_);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20'000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 10'000);
    channel_ = grpc::CreateCustomChannel(worker.options_.server,
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Ingest::NewStub(channel_);
    v1::Hello* h = hello_.mutable_hello();
    h->set_agent_id(host_);
    h->set_hostname(host_);
    h->set_role(v1::AGENT_ROLE_HOST);
    h->set_version("railwatch-loadgen");
    h->set_instance_id(std::random_device{}() ^ (static_cast<uint64_t>(index) << 32));
    for (const char* c : {"rdma_sysfs", "ethtool", "link"}) h->add_collectors(c);
  }

  // Starts a stream at the agent's phase in the first interval.
  void Begin() { SetAlarm(worker_.start_ + phase_); }

  // Ends the stream (or the wait before the next one); Handle goes on until Done().
  void Stop() {
    if (state_ == State::kBackoff && alarm_set_) alarm_.Cancel();
    Break(grpc::Status::CANCELLED);
  }
  bool Done() const { return state_ == State::kDone; }

  void Handle(Op op, bool ok) {
    switch (op) {
      case Op::kStart: return OnStart(ok);
      case Op::kWrite: return OnWrite(ok);
      case Op::kRead: return OnRead(ok);
      case Op::kAlarm: return OnAlarm(ok);
      case Op::kFinish: return OnFinish();
    }
  }

 private:
  enum class State { kBackoff, kStreaming, kBroken, kDone };

  bool stopping() const { return worker_.stopping_.load(std::memory_order_relaxed); }

  void SetAlarm(absl::Time when) {
    alarm_set_ = true;
    alarm_.Set(&worker_.cq_, absl::ToChronoTime(when), &alarm_tag_);
  }

  void Connect() {
    state_ = State::kStreaming;
    welcomed_ = false;
    definitions_sent_ = false;
    ctx_ = std::make_unique<grpc::ClientContext>();
    stream_ = stub_->PrepareAsyncStream(ctx_.get(), &worker_.cq_);
    ++pending_;
    stream_->StartCall(&start_tag_);
    worker_.counters_.streams_started.fetch_add(1, std::memory_order_relaxed);
  }

  void OnStart(bool ok) {
    --pending_;
    if (!ok) return Break({grpc::StatusCode::UNAVAILABLE, "cannot start the stream"});
    if (state_ != State::kStreaming) return MaybeFinish();
    writing_ = true;
    ++pending_;
    stream_->Write(hello_, &write_tag_);
    reading_ = true;
    ++pending_;
    stream_->Read(&reply_, &read_tag_);
  }

  void OnWrite(bool ok) {
    --pending_;
    writing_ = false;
    if (!ok) return Break({grpc::StatusCode::UNAVAILABLE, "write failed"});
    MaybeFinish();
  }

  void OnRead(bool ok) {
    --pending_;
    reading_ = false;
    if (!ok) return Break({grpc::StatusCode::UNAVAILABLE, "stream closed by the daemon"});
    if (state_ != State::kStreaming) return MaybeFinish();
    if (reply_.has_welcome()) {
      if (!welcomed_) {
        welcomed_ = true;
        backoff_.Reset();
        worker_.counters_.connected.fetch_add(1, std::memory_order_relaxed);
        if (complained_) spdlog::info("agent {} connected again", host_);
        complained_ = false;
        // The next slot of this agent's phase.
        const absl::Duration interval = worker_.options_.interval;
        absl::Duration rest;
        const int64_t slots =
            absl::IDivDuration(absl::Now() - worker_.start_ - phase_, interval, &rest) + 1;
        next_due_ = worker_.start_ + phase_ + interval * std::max<int64_t>(slots, 0);
        SetAlarm(next_due_);
      }
    } else if (reply_.has_ack() && reply_.ack().sequence() > acked_) {
      worker_.counters_.batches_acked.fetch_add(reply_.ack().sequence() - acked_,
                                                std::memory_order_relaxed);
      acked_ = reply_.ack().sequence();
    }
    reading_ = true;
    ++pending_;
    stream_->Read(&reply_, &read_tag_);
  }

  void OnAlarm(bool ok) {
    alarm_set_ = false;
    if (state_ == State::kBackoff) {
      if (!ok || stopping()) {
        state_ = State::kDone;
        return;
      }
      return Connect();
    }
    if (state_ != State::kStreaming) return MaybeFinish();
    next_due_ += worker_.options_.interval;
    SetAlarm(next_due_);
    if (writing_) {
      worker_.counters_.batches_skipped.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    SendBatch();
  }

  void SendBatch() {
    v1::Batch& batch = *worker_.scratch_.mutable_batch();
    if (!definitions_sent_) {
      worker_.plan_.FillDefinitions(host_, batch);
      definitions_sent_ = true;
    }
    batch.set_sequence(++sequence_);
    values_.Advance(absl::GetCurrentTimeNanos(), batch);
    writing_ = true;
    ++pending_;
    stream_->Write(worker_.scratch_, &write_tag_);  // serialises before it returns
    // Definitions go on a stream's first batch only; cleared, they stay allocated for reuse.
    batch.mutable_definitions()->Clear();
    worker_.counters_.batches_sent.fetch_add(1, std::memory_order_relaxed);
    worker_.counters_.samples_sent.fetch_add(static_cast<uint64_t>(batch.points_size()),
                                             std::memory_order_relaxed);
  }

  // The stream is over: cancel what is outstanding, then Finish once nothing is.
  void Break(grpc::Status why) {
    if (state_ == State::kStreaming) {
      state_ = State::kBroken;
      why_ = std::move(why);
      if (welcomed_) worker_.counters_.connected.fetch_sub(1, std::memory_order_relaxed);
      welcomed_ = false;
      if (ctx_) ctx_->TryCancel();
      if (alarm_set_) alarm_.Cancel();
    }
    MaybeFinish();
  }

  void MaybeFinish() {
    if (state_ != State::kBroken || finishing_ || reading_ || writing_ || alarm_set_ ||
        pending_ > 0) {
      return;
    }
    finishing_ = true;
    stream_->Finish(&status_, &finish_tag_);
  }

  void OnFinish() {
    finishing_ = false;
    stream_.reset();
    ctx_.reset();
    if (stopping()) {
      state_ = State::kDone;
      return;
    }
    worker_.counters_.streams_failed.fetch_add(1, std::memory_order_relaxed);
    const grpc::Status& s = status_.ok() ? why_ : status_;
    const absl::Duration delay = backoff_.Next();
    // Once per outage per agent at warn; the retries of one outage at debug.
    if (!complained_) {
      spdlog::warn("agent {}: {} (code {}); retrying in {}", host_, s.error_message(),
                   static_cast<int>(s.error_code()), HumanDuration(delay));
      complained_ = true;
    } else {
      spdlog::debug("agent {}: {}; retrying in {}", host_, s.error_message(), HumanDuration(delay));
    }
    state_ = State::kBackoff;
    SetAlarm(absl::Now() + delay);
  }

  Worker& worker_;
  const std::string host_;
  const absl::Duration phase_;
  HostValues values_;
  Backoff backoff_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  v1::AgentMessage hello_;

  State state_ = State::kBackoff;
  std::unique_ptr<grpc::ClientContext> ctx_;
  std::unique_ptr<grpc::ClientAsyncReaderWriter<v1::AgentMessage, v1::DaemonMessage>> stream_;
  v1::DaemonMessage reply_;
  grpc::Status status_;
  grpc::Status why_;
  grpc::Alarm alarm_;
  bool welcomed_ = false;
  bool definitions_sent_ = false;
  bool reading_ = false;
  bool writing_ = false;
  bool alarm_set_ = false;
  bool finishing_ = false;
  bool complained_ = false;
  int pending_ = 0;  // start, read and write operations in flight
  uint64_t sequence_ = 0;
  uint64_t acked_ = 0;
  absl::Time next_due_;

  Tag start_tag_{this, Op::kStart};
  Tag write_tag_{this, Op::kWrite};
  Tag read_tag_{this, Op::kRead};
  Tag alarm_tag_{this, Op::kAlarm};
  Tag finish_tag_{this, Op::kFinish};
};

Worker::Worker(WorkerOptions options, const HostPlan& plan,
               std::vector<std::pair<int, absl::Duration>> agents, absl::Time start)
    : options_(std::move(options)), plan_(plan), start_(start) {
  agents_.reserve(agents.size());
  for (const auto& [index, phase] : agents) {
    agents_.push_back(std::make_unique<Agent>(*this, index, phase));
  }
}

Worker::~Worker() { StopAndJoin(); }

void Worker::Start() {
  for (auto& a : agents_) a->Begin();
  thread_ = std::thread([this] { Run(); });
}

void Worker::StopAndJoin() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Worker::Run() {
  bool stop_sent = false;
  while (true) {
    void* tag = nullptr;
    bool ok = false;
    const auto deadline = std::chrono::system_clock::now() + std::chrono::milliseconds(100);
    const grpc::CompletionQueue::NextStatus status = cq_.AsyncNext(&tag, &ok, deadline);
    if (status == grpc::CompletionQueue::SHUTDOWN) return;
    if (status == grpc::CompletionQueue::GOT_EVENT) {
      auto* t = static_cast<Tag*>(tag);
      t->agent->Handle(t->op, ok);
    }
    if (!stopping_.load(std::memory_order_relaxed)) continue;
    if (!stop_sent) {
      for (auto& a : agents_) a->Stop();
      stop_sent = true;
    }
    const bool all_done =
        std::all_of(agents_.begin(), agents_.end(), [](const auto& a) { return a->Done(); });
    if (all_done) {
      cq_.Shutdown();
      while (cq_.Next(&tag, &ok)) {
      }
      return;
    }
  }
}

}  // namespace railwatch::loadgen
