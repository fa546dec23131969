// IngestStream alone (no network): two streams of one agent instance, as when an agent
// reconnects on a new connection while the daemon is still reading the old one's last batches.
// Each stream's Welcome said 0 was stored, yet a batch the old stream stores must not be stored
// again when the new stream replays it.
#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "daemon/ingest_stream.h"
#include "gtest/gtest.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {
namespace ingest_stream_test {

v1::AgentMessage Hello() {
  v1::AgentMessage m;
  m.mutable_hello()->set_agent_id("node-1");
  m.mutable_hello()->set_instance_id(9);
  return m;
}

v1::AgentMessage Batch(uint64_t sequence, bool with_definition) {
  v1::AgentMessage m;
  v1::Batch& b = *m.mutable_batch();
  b.set_sequence(sequence);
  if (with_definition) {
    v1::SeriesDefinition& d = *b.add_definitions();
    d.set_id(0);
    d.set_name("fabric_rdma_port_transmit_bytes_total");
    d.set_kind(v1::SERIES_KIND_COUNTER);
  }
  v1::Point& p = *b.add_points();
  p.set_series_id(0);
  p.set_time_unix_nano(1'800'000'000'000'000'000 + static_cast<int64_t>(sequence) * 1'000'000'000);
  p.set_counter(sequence * 100);
  return m;
}

TEST(IngestStreamTest, TwoStreamsOfOneInstanceNeverStoreABatchTwice) {
  IngestStats stats;
  SeriesStore store({.capacity = 32});
  AgentRegistry agents;
  EventStore events({.capacity = 64});
  JobRegistry jobs;
  FakeClock clock;
  IngestDeps deps{store, agents, stats, clock, [] {}, &events, &jobs};
  IngestStream old_stream(deps, "ipv4:127.0.0.1:1");
  IngestStream new_stream(deps, "ipv4:127.0.0.1:2");

  IngestStream::Reply r;
  ASSERT_TRUE(old_stream.Handle(Hello(), r).ok());
  // The reconnect's Hello is read before the old connection's last batch.
  IngestStream::Reply welcome;
  ASSERT_TRUE(new_stream.Handle(Hello(), welcome).ok());
  ASSERT_EQ(welcome.welcome, 0u);

  IngestStream::Reply old_ack;
  ASSERT_TRUE(old_stream.Handle(Batch(1, true), old_ack).ok());
  EXPECT_EQ(old_ack.ack, 1u);
  EXPECT_EQ(store.stats().samples_appended, 1u);

  // The agent never saw that ack: it replays batch 1 on the new stream, then goes on.
  IngestStream::Reply replay_ack;
  ASSERT_TRUE(new_stream.Handle(Batch(1, true), replay_ack).ok());
  EXPECT_EQ(replay_ack.ack, 1u);
  EXPECT_EQ(store.stats().samples_appended, 1u) << "batch 1 stored twice";
  EXPECT_EQ(store.stats().samples_out_of_order, 0u);

  IngestStream::Reply next_ack;
  ASSERT_TRUE(new_stream.Handle(Batch(2, false), next_ack).ok());
  EXPECT_EQ(next_ack.ack, 2u);
  EXPECT_EQ(store.stats().samples_appended, 2u);
  // The old stream's late duplicate of batch 2 is not stored either.
  IngestStream::Reply late;
  ASSERT_TRUE(old_stream.Handle(Batch(2, false), late).ok());
  EXPECT_EQ(store.stats().samples_appended, 2u);
}

}  // namespace ingest_stream_test
}  // namespace railwatch
