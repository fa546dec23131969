// Series ids on an Ingest stream: the id -> series map alone (dense ids, ids far apart,
// redefinitions), then the same over the wire against a real Daemon, and a long stream of
// large batches through the daemon's reused input message.
#include <cstdint>
#include <string>

#include "daemon/stream_series_map.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "integration/loopback_daemon.h"
#include "railwatch/v1/ingest.grpc.pb.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {
namespace ingest_ids_test {

TEST(StreamSeriesMapTest, DenseIdsAreFoundAndUnknownOnesAreNot) {
  StreamSeriesMap m;
  for (uint32_t id = 0; id < 1000; ++id) m.Define(id, 5000 + id);
  EXPECT_EQ(m.size(), 1000u);
  for (uint32_t id = 0; id < 1000; ++id) ASSERT_EQ(m.Find(id), SeriesRef{5000 + id});
  EXPECT_EQ(m.Find(1000), std::nullopt);
  EXPECT_EQ(m.Find(4'000'000'000u), std::nullopt);
  EXPECT_EQ(m.dense_slots(), 1000u);
}

TEST(StreamSeriesMapTest, IdsFarApartDoNotGrowTheVector) {
  StreamSeriesMap m;
  m.Define(0, 10);
  m.Define(4'000'000'000u, 11);
  m.Define(70'000, 12);
  m.Define(~uint32_t{0}, 13);
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(m.Find(0), SeriesRef{10});
  EXPECT_EQ(m.Find(4'000'000'000u), SeriesRef{11});
  EXPECT_EQ(m.Find(70'000), SeriesRef{12});
  EXPECT_EQ(m.Find(~uint32_t{0}), SeriesRef{13});
  EXPECT_EQ(m.Find(69'999), std::nullopt);
  EXPECT_LE(m.dense_slots(), size_t{StreamSeriesMap::kDenseSlots});
}

TEST(StreamSeriesMapTest, RedefiningAnIdPointsItAtTheNewSeries) {
  StreamSeriesMap m;
  m.Define(7, 1);
  m.Define(7, 2);
  m.Define(3'000'000'000u, 3);
  m.Define(3'000'000'000u, 4);
  EXPECT_EQ(m.Find(7), SeriesRef{2});
  EXPECT_EQ(m.Find(3'000'000'000u), SeriesRef{4});
  EXPECT_EQ(m.size(), 2u);
}

TEST(StreamSeriesMapTest, AnIdDefinedWhileFarIsStillFoundOnceTheVectorReachesIt) {
  StreamSeriesMap m;
  m.Define(10'000, 99);  // beyond the vector's reach for a stream with no series yet
  for (uint32_t id = 0; id < 10'000; ++id) m.Define(id, id);
  m.Define(10'001, 100);  // now within the vector
  EXPECT_GT(m.dense_slots(), 10'000u);
  EXPECT_EQ(m.Find(10'000), SeriesRef{99});
  EXPECT_EQ(m.Find(10'001), SeriesRef{100});
  EXPECT_EQ(m.size(), 10'002u);
  m.Define(10'000, 101);  // redefined: moves into the vector, counted once
  EXPECT_EQ(m.Find(10'000), SeriesRef{101});
  EXPECT_EQ(m.size(), 10'002u);
}

constexpr int64_t kT0 = 1'800'000'000'000'000'000;

class IngestIdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    daemon_ = StartLoopbackDaemon();
    ASSERT_NE(daemon_, nullptr);
    channel_ = grpc::CreateChannel(daemon_->grpc_address(), grpc::InsecureChannelCredentials());
    ingest_ = v1::Ingest::NewStub(channel_);
    query_ = v1::Query::NewStub(channel_);
    stream_ = ingest_->Stream(&ctx_);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_agent_id("gpu-node-042");
    hello.mutable_hello()->set_hostname("gpu-node-042");
    hello.mutable_hello()->set_instance_id(1);
    v1::DaemonMessage reply;
    ASSERT_TRUE(stream_->Write(hello));
    ASSERT_TRUE(stream_->Read(&reply));
    ASSERT_TRUE(reply.has_welcome());
  }
  void TearDown() override {
    if (stream_) {
      stream_->WritesDone();
      EXPECT_TRUE(stream_->Finish().ok());
    }
    if (daemon_) daemon_->Stop();
  }

  static void Define(v1::Batch& b, uint32_t id, const std::string& device) {
    v1::SeriesDefinition* d = b.add_definitions();
    d->set_id(id);
    d->set_name("fabric_rdma_link_downed_total");
    d->set_kind(v1::SERIES_KIND_COUNTER);
    for (auto [n, v] : {std::pair<std::string, std::string>{"device", device},
                        {"host", "gpu-node-042"},
                        {"port", "1"}}) {
      v1::Label* l = d->add_labels();
      l->set_name(n);
      l->set_value(v);
    }
  }
  static void Point(v1::Batch& b, uint32_t id, int64_t t, uint64_t value) {
    v1::Point* p = b.add_points();
    p->set_series_id(id);
    p->set_time_unix_nano(t);
    p->set_counter(value);
  }
  // Sends the batch and waits for its ack.
  void Send(v1::AgentMessage& m) {
    v1::DaemonMessage reply;
    ASSERT_TRUE(stream_->Write(m));
    ASSERT_TRUE(stream_->Read(&reply));
    ASSERT_EQ(reply.ack().sequence(), m.batch().sequence());
  }
  v1::AgentInfo Agent() {
    grpc::ClientContext ctx;
    v1::ListAgentsResponse resp;
    EXPECT_TRUE(query_->ListAgents(&ctx, {}, &resp).ok());
    return resp.agents_size() == 1 ? resp.agents(0) : v1::AgentInfo();
  }
  // Values stored for link_downed on `device`, oldest first.
  std::vector<double> Values(const std::string& device) {
    grpc::ClientContext ctx;
    v1::QuerySeriesRequest req;
    req.set_query("fabric_rdma_link_downed_total{device=\"" + device + "\"}");
    req.set_start_unix_nano(kT0 - 1'000'000'000'000);
    req.set_end_unix_nano(kT0 + 1'000'000'000'000);
    v1::QuerySeriesResponse resp;
    EXPECT_TRUE(query_->QuerySeries(&ctx, req, &resp).ok());
    std::vector<double> out;
    for (const v1::Series& s : resp.series()) {
      for (const v1::EvidencePoint& p : s.points()) out.push_back(p.value());
    }
    return out;
  }

  std::unique_ptr<Daemon> daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
  std::unique_ptr<v1::Query::Stub> query_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::DaemonMessage>> stream_;
};

TEST_F(IngestIdsTest, IdsFarApartAndARedefinedIdOverTheWire) {
  constexpr uint32_t kFar = 3'000'000'000u;
  v1::AgentMessage m;
  v1::Batch* b = m.mutable_batch();
  b->set_sequence(1);
  Define(*b, 0, "mlx5_0");
  Define(*b, kFar, "mlx5_1");
  Point(*b, 0, kT0, 1);
  Point(*b, kFar, kT0, 2);
  Point(*b, 5, kT0, 3);  // never defined: dropped
  Send(m);
  v1::AgentInfo a = Agent();
  EXPECT_EQ(a.points_received(), 2u);
  EXPECT_EQ(a.series(), 2u);

  // Id 0 now names another series; the far id keeps its own.
  b->Clear();
  b->set_sequence(2);
  Define(*b, 0, "mlx5_2");
  Point(*b, 0, kT0 + 1'000'000'000, 9);
  Point(*b, kFar, kT0 + 1'000'000'000, 4);
  Send(m);
  EXPECT_EQ(Values("mlx5_0"), std::vector<double>{1});
  EXPECT_EQ(Values("mlx5_1"), (std::vector<double>{2, 4}));
  EXPECT_EQ(Values("mlx5_2"), std::vector<double>{9});
  EXPECT_EQ(Agent().series(), 2u);
}

TEST_F(IngestIdsTest, ManyLargeBatchesOnOneStreamAreAllStored) {
  // Batches of growing size, with definitions now and then, through the daemon's reused
  // input message: every point of every batch is stored once.
  constexpr int kSeries = 64;
  v1::AgentMessage m;
  v1::Batch* b = m.mutable_batch();
  uint64_t sent = 0;
  for (int seq = 1; seq <= 40; ++seq) {
    b->Clear();
    b->set_sequence(static_cast<uint64_t>(seq));
    if (seq == 1 || seq % 13 == 0) {
      for (int id = 0; id < kSeries; ++id) Define(*b, id, "mlx5_" + std::to_string(id));
    }
    // Several points per series per batch, each at its own time.
    const int per_series = 1 + seq;
    for (int k = 0; k < per_series; ++k) {
      const int64_t t = kT0 + (seq * 100 + k) * int64_t{1'000'000};
      for (int id = 0; id < kSeries; ++id) Point(*b, id, t, static_cast<uint64_t>(seq * 100 + k));
    }
    sent += static_cast<uint64_t>(per_series * kSeries);
    Send(m);
  }
  EXPECT_EQ(Agent().points_received(), sent);
  const std::vector<double> v = Values("mlx5_7");
  ASSERT_FALSE(v.empty());
  EXPECT_EQ(v.back(), 40 * 100 + 40);
}

}  // namespace
}  // namespace railwatch
