#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "daemon/stream_series_map.h"
#include "daemon/ingest_stats.h"
#include "grpcpp/support/status.h"
#include "railwatch/v1/ingest.pb.h"
#include "topology/job_ranks.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

// What an Ingest stream stores into and reports to.
struct IngestDeps {
  SeriesStore& store;
  AgentRegistry& agents;
  IngestStats& stats;
  const Clock& clock;
  std::function<void()> on_watched_update;
  // Where events go (null: counted and dropped), and who learns jobs from them.
  EventStore* events = nullptr;
  JobRegistry* jobs = nullptr;
  // Series one stream may define; a batch that would pass it ends the stream with
  // RESOURCE_EXHAUSTED (a runaway or hostile agent must not fill the store).
  size_t max_series_per_stream = 1'000'000;
  // NCCL RAS's ranks behind, placed on their hosts (topology/job_ranks.h; --job_hang_after).
  RanksBehindOptions ranks_behind = {};
};

// One Ingest stream's protocol and storage, without the network: a Hello first, then batches,
// each stored once (by sequence), their series definitions interned into the store. The
// reactor (ingest_service.cc) hands it each message it reads and writes what it asks for;
// tests/fuzz/ingest_fuzz.cc hands it arbitrary bytes. Not thread-safe: one message at a time.
class IngestStream {
 public:
  // What to send the agent after a message.
  struct Reply {
    std::optional<uint64_t> welcome;  // the last sequence stored for this agent instance
    std::optional<uint64_t> ack;      // cumulative: every batch up to this one is stored
  };

  IngestStream(IngestDeps& deps, std::string peer) : deps_(deps), peer_(std::move(peer)) {}

  // A status that is not OK ends the stream (the reason is counted in IngestStats::errors).
  grpc::Status Handle(const v1::AgentMessage& message, Reply& reply);
  // The stream is over: the agent is marked disconnected if it said hello.
  void Close();

  bool hello_seen() const { return hello_seen_; }
  // The agent asks for its acks (Hello.acks_on_request, answered in Welcome): a batch without
  // Batch.ack_requested is stored and acked later.
  bool acks_on_request() const { return acks_on_request_; }
  // Every batch up to this one is stored: what a last ack says when the agent closes its side.
  uint64_t last_sequence() const { return last_sequence_; }
  const std::string& agent_id() const { return agent_id_; }
  const std::string& peer() const { return peer_; }

 private:
  grpc::Status HandleHello(const v1::Hello& hello, Reply& reply);
  grpc::Status HandleBatch(const v1::Batch& batch, Reply& reply);
  void StoreEvents(const v1::Batch& batch, bool& watched);

  IngestDeps& deps_;
  const std::string peer_;
  bool hello_seen_ = false;
  std::string agent_id_;
  uint64_t instance_id_ = 0;
  uint64_t last_sequence_ = 0;
  bool acks_on_request_ = false;
  StreamSeriesMap series_;
};

}  // namespace railwatch
