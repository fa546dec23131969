// The Ingest protocol against a real Daemon on a free loopback port, driven by a raw client so
// that each rule of the protocol can be exercised on its own.
#include <chrono>

#include "daemon/daemon.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "railwatch/v1/ingest.grpc.pb.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {
namespace ingest_test {

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DaemonOptions o;
    o.grpc_listen = "127.0.0.1:0";
    o.metrics_listen = "127.0.0.1:0";
    o.rules = {RAILWATCH_RULES_SOURCE_DIR};
    daemon_ = std::make_unique<Daemon>(o);
    ASSERT_TRUE(daemon_->Start().ok());
    channel_ = grpc::CreateChannel(daemon_->grpc_address(), grpc::InsecureChannelCredentials());
    ingest_ = v1::Ingest::NewStub(channel_);
    query_ = v1::Query::NewStub(channel_);
  }
  void TearDown() override { daemon_->Stop(); }

  static v1::AgentMessage Hello(uint64_t instance) {
    v1::AgentMessage m;
    v1::Hello* h = m.mutable_hello();
    h->set_agent_id("gpu-node-117");
    h->set_hostname("gpu-node-117");
    h->set_role(v1::AGENT_ROLE_HOST);
    h->set_instance_id(instance);
    return m;
  }

  static v1::AgentMessage Batch(uint64_t seq, bool define, uint64_t value) {
    v1::AgentMessage m;
    v1::Batch* b = m.mutable_batch();
    b->set_sequence(seq);
    if (define) {
      v1::SeriesDefinition* d = b->add_definitions();
      d->set_id(0);
      d->set_name("fabric_rdma_link_downed_total");
      d->set_kind(v1::SERIES_KIND_COUNTER);
      for (auto [n, v] : {std::pair{"host", "gpu-node-117"}, {"device", "mlx5_3"}, {"port", "1"}}) {
        v1::Label* l = d->add_labels();
        l->set_name(n);
        l->set_value(v);
      }
    }
    v1::Point* p = b->add_points();
    p->set_series_id(0);
    p->set_time_unix_nano(1'800'000'000'000'000'000 + static_cast<int64_t>(seq) * 1'000'000'000);
    p->set_counter(value);
    return m;
  }

  v1::AgentInfo Agent() {
    grpc::ClientContext ctx;
    v1::ListAgentsResponse resp;
    EXPECT_TRUE(query_->ListAgents(&ctx, {}, &resp).ok());
    EXPECT_EQ(resp.agents_size(), 1);
    return resp.agents_size() ? resp.agents(0) : v1::AgentInfo();
  }

  std::unique_ptr<Daemon> daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
  std::unique_ptr<v1::Query::Stub> query_;
};

TEST_F(IngestTest, WelcomeAcksAndDuplicateBatchesStoredOnce) {
  grpc::ClientContext ctx;
  auto stream = ingest_->Stream(&ctx);
  v1::DaemonMessage reply;
  ASSERT_TRUE(stream->Write(Hello(7)));
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_welcome());
  EXPECT_EQ(reply.welcome().last_sequence(), 0u);

  ASSERT_TRUE(stream->Write(Batch(1, true, 5)));
  ASSERT_TRUE(stream->Read(&reply));
  EXPECT_EQ(reply.ack().sequence(), 1u);
  ASSERT_TRUE(stream->Write(Batch(2, false, 6)));
  ASSERT_TRUE(stream->Read(&reply));
  EXPECT_EQ(reply.ack().sequence(), 2u);
  // A replay of a stored batch (its ack was lost) is acknowledged again but not stored twice.
  ASSERT_TRUE(stream->Write(Batch(2, false, 6)));
  ASSERT_TRUE(stream->Read(&reply));
  EXPECT_EQ(reply.ack().sequence(), 2u);

  v1::AgentInfo a = Agent();
  EXPECT_TRUE(a.connected());
  EXPECT_EQ(a.points_received(), 2u);
  EXPECT_EQ(a.last_sequence(), 2u);
  EXPECT_EQ(a.series(), 1u);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());

  // The same agent instance reconnects: the welcome says what the daemon already has.
  grpc::ClientContext ctx2;
  auto again = ingest_->Stream(&ctx2);
  ASSERT_TRUE(again->Write(Hello(7)));
  ASSERT_TRUE(again->Read(&reply));
  EXPECT_EQ(reply.welcome().last_sequence(), 2u);
  again->WritesDone();
  again->Finish();

  // A restarted agent (new instance) starts its sequence anew.
  grpc::ClientContext ctx3;
  auto restarted = ingest_->Stream(&ctx3);
  ASSERT_TRUE(restarted->Write(Hello(8)));
  ASSERT_TRUE(restarted->Read(&reply));
  EXPECT_EQ(reply.welcome().last_sequence(), 0u);
  restarted->WritesDone();
  restarted->Finish();
}

// An agent that offers acks_on_request (agent/sender.cc) is acked only when a batch asks, and
// once more when it closes its side: one ack for many batches, the last one never lost.
TEST_F(IngestTest, AcksOnRequestComeWhenAskedAndWhenTheAgentClosesItsSide) {
  grpc::ClientContext ctx;
  auto stream = ingest_->Stream(&ctx);
  v1::AgentMessage hello = Hello(11);
  hello.mutable_hello()->set_acks_on_request(true);
  v1::DaemonMessage reply;
  ASSERT_TRUE(stream->Write(hello));
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_welcome());
  EXPECT_TRUE(reply.welcome().acks_on_request());

  ASSERT_TRUE(stream->Write(Batch(1, true, 5)));
  ASSERT_TRUE(stream->Write(Batch(2, false, 6)));
  v1::AgentMessage asked = Batch(3, false, 7);
  asked.mutable_batch()->set_ack_requested(true);
  ASSERT_TRUE(stream->Write(asked));
  // The first ack to arrive is the one asked for: batches 1 and 2 had none of their own.
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_ack());
  EXPECT_EQ(reply.ack().sequence(), 3u);
  EXPECT_EQ(Agent().points_received(), 3u);

  ASSERT_TRUE(stream->Write(Batch(4, false, 8)));
  ASSERT_TRUE(stream->WritesDone());
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_ack());
  EXPECT_EQ(reply.ack().sequence(), 4u);
  EXPECT_FALSE(stream->Read(&reply)) << "a message after the last ack: " << reply.DebugString();
  EXPECT_TRUE(stream->Finish().ok());

  // An agent that does not offer it (an older one) is told so and acked after every batch.
  grpc::ClientContext ctx2;
  auto old_agent = ingest_->Stream(&ctx2);
  ASSERT_TRUE(old_agent->Write(Hello(12)));
  ASSERT_TRUE(old_agent->Read(&reply));
  EXPECT_FALSE(reply.welcome().acks_on_request());
  ASSERT_TRUE(old_agent->Write(Batch(1, true, 9)));
  ASSERT_TRUE(old_agent->Read(&reply));
  EXPECT_EQ(reply.ack().sequence(), 1u);
  old_agent->WritesDone();
  EXPECT_TRUE(old_agent->Finish().ok());
}

TEST_F(IngestTest, BatchBeforeHelloIsRefusedWithClearStatus) {
  grpc::ClientContext ctx;
  auto stream = ingest_->Stream(&ctx);
  stream->Write(Batch(1, true, 1));
  v1::DaemonMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(s.error_message(), "batch before hello");
}

TEST_F(IngestTest, PointsForUndefinedSeriesAreDroppedAndTheRestKept) {
  grpc::ClientContext ctx;
  auto stream = ingest_->Stream(&ctx);
  v1::DaemonMessage reply;
  ASSERT_TRUE(stream->Write(Hello(9)));
  ASSERT_TRUE(stream->Read(&reply));
  v1::AgentMessage m = Batch(1, true, 1);
  v1::Point* stray = m.mutable_batch()->add_points();
  stray->set_series_id(42);  // never defined
  stray->set_counter(1);
  ASSERT_TRUE(stream->Write(m));
  ASSERT_TRUE(stream->Read(&reply));
  EXPECT_EQ(reply.ack().sequence(), 1u);
  EXPECT_EQ(Agent().points_received(), 1u);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace railwatch
