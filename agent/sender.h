#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/batch_builder.h"
#include "common/backoff.h"
#include "grpcpp/security/credentials.h"
#include "railwatch/v1/ingest.grpc.pb.h"

namespace railwatch {

// Streams batches to railwatchd and keeps every batch until the daemon acknowledges it.
//
// On a new stream it sends Hello, waits for Welcome, then sends the unacknowledged batches
// oldest first; each stream starts with the definitions of every series known so far. When
// the stream breaks it reconnects with capped, jittered backoff. The queue is bounded: when
// the daemon is away for longer than the queue holds, the oldest batches are dropped and
// counted (the on-disk spool will take over here).
class Sender {
 public:
  struct Options {
    std::string server = "127.0.0.1:9740";
    // How to reach it: null is plain text; TLS or mutual TLS credentials otherwise.
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    v1::Hello hello;
    size_t max_queued_batches = 600;
    Backoff::Options backoff;
  };

  struct Stats {
    uint64_t batches_sent = 0;
    uint64_t batches_acked = 0;
    uint64_t batches_dropped = 0;
    uint64_t connects = 0;
    bool connected = false;
  };

  Sender(Options options, const SeriesRegistry& registry);
  ~Sender();

  void Start();
  // Flushes what it can within `grace`, then stops.
  void Stop(absl::Duration grace = absl::Seconds(1));

  // Queues a batch; never blocks on the network. The sender owns it from here on.
  void Enqueue(std::shared_ptr<v1::Batch> batch);
  // A batch the daemon has acknowledged, for the builder to fill again (its repeated fields
  // keep their allocations); null when there is none.
  std::shared_ptr<v1::Batch> SpareBatch();
  Stats stats() const;

 private:
  void Run();
  // Runs one stream until it breaks or Stop; returns why it ended.
  grpc::Status RunStream();

  const Options options_;
  const SeriesRegistry& registry_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  Backoff backoff_;

  mutable absl::Mutex mu_;
  struct Queued {
    uint64_t sequence;
    // Shared with the stream writer while it serialises the batch, so that an ack arriving
    // meanwhile cannot free it.
    std::shared_ptr<v1::Batch> batch;
  };
  // Drops the oldest queued batch, keeping it as a spare when nobody else holds it.
  void PopFront() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);  // unacknowledged, oldest first
  std::vector<std::shared_ptr<v1::Batch>> spares_ ABSL_GUARDED_BY(mu_);
  size_t unsent_index_ ABSL_GUARDED_BY(mu_) = 0;     // first batch not yet sent on this stream
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool stream_broken_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace railwatch
