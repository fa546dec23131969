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
#include "agent/spool.h"
#include "common/backoff.h"
#include "grpcpp/security/credentials.h"
#include "railwatch/v1/ingest.grpc.pb.h"

namespace railwatch {

// Streams batches to railwatchd and keeps every batch until the daemon acknowledges it.
//
// On a new stream it sends Hello, waits for Welcome, then sends the unacknowledged batches
// oldest first; each stream starts with the definitions of every series known so far. When
// the stream breaks it reconnects with capped, jittered backoff.
//
// With a Spool, every batch is appended to it before it can be sent, and the spool is what is
// owed to the daemon: the newest max_queued_batches stay in memory as well, older ones (and an
// earlier process's, recovered by the spool) are read back from disk to be sent. Without one,
// the memory queue is all there is: past max_queued_batches the oldest are dropped and counted.
class Sender {
 public:
  struct Options {
    std::string server = "127.0.0.1:9740";
    // How to reach it: null is plain text; TLS or mutual TLS credentials otherwise.
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    v1::Hello hello;
    // Batches kept in memory (with a spool, a cache of its newest batches).
    size_t max_queued_batches = 600;
    Backoff::Options backoff;
    // With a daemon that acks on request (Welcome.acks_on_request): ask for an ack every
    // ack_every batches, or with the first batch after ack_after, and when stopping. Batches
    // wait in memory (and the spool) until then: a few more than with an ack for each.
    size_t ack_every = 10;
    absl::Duration ack_after = absl::Seconds(5);
  };

  struct Stats {
    uint64_t batches_sent = 0;
    uint64_t acked_sequence = 0;  // the daemon has stored every batch up to this one
    uint64_t acks = 0;             // acks read (a Welcome is not one)
    uint64_t batches_dropped = 0;  // from memory, not spooled
    uint64_t batches_from_spool = 0;  // read back from disk to be sent
    uint64_t connects = 0;
    bool connected = false;
  };

  // `spool` may be null (memory only); its recovered batches are sent first.
  Sender(Options options, SeriesRegistry& registry, std::unique_ptr<Spool> spool = nullptr);
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
  const Spool* spool() const { return spool_.get(); }

 private:
  void Run();
  // Runs one stream until it breaks or Stop; returns why it ended.
  grpc::Status RunStream();
  // The next batch to send on this stream (null when it is gone), from memory or the spool.
  std::shared_ptr<v1::Batch> NextBatch();

  const Options options_;
  SeriesRegistry& registry_;
  const std::unique_ptr<Spool> spool_;
  // A new channel (a new connection) for the next stream; sender thread only.
  void Connect();

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  Backoff backoff_;

  mutable absl::Mutex mu_;
  struct Queued {
    uint64_t sequence;
    // Shared with the stream writer while it serialises the batch, so that an ack arriving
    // meanwhile cannot free it.
    std::shared_ptr<v1::Batch> batch;
    bool spooled;  // also on disk: leaving memory does not lose it
  };
  // Drops the oldest queued batch, keeping it as a spare when nobody else holds it.
  void PopFront() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Everything up to `sequence` is stored by the daemon.
  void AckedLocked(uint64_t sequence) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::shared_ptr<v1::Batch> SpareLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);  // in memory, unacknowledged, oldest first
  std::vector<std::shared_ptr<v1::Batch>> spares_ ABSL_GUARDED_BY(mu_);
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;         // the daemon has everything up to here
  uint64_t last_enqueued_ ABSL_GUARDED_BY(mu_) = 0;  // or recovered by the spool
  uint64_t last_sent_ ABSL_GUARDED_BY(mu_) = 0;      // on this stream
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool draining_ ABSL_GUARDED_BY(mu_) = false;  // Stop is waiting for the last acks
  bool stream_broken_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* active_ctx_ ABSL_GUARDED_BY(mu_) = nullptr;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace railwatch
