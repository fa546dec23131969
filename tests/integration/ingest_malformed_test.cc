// Bad input on the daemon's gRPC port: each kind gets its documented status code and message
// (docs/OPERATIONS.md, "Bad input"), is counted on /metrics, and the daemon goes on serving a
// healthy agent whose stream stays open through all of it.
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <memory>

#include "daemon/daemon.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "liveness_util.h"
#include "loopback_daemon.h"
#include "railwatch/v1/ingest.grpc.pb.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch::testing {
namespace ingest_malformed_test {

constexpr int64_t kT0 = 1'800'000'000'000'000'000;
// Bytes that cannot parse as any message: field 1 with wire type 7, which does not exist.
const std::string kGarbage("\x0f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 11);

// A bidi call that writes raw bytes (grpc::GenericStub: no serialisation of ours in the way).
class RawStream {
 public:
  RawStream(grpc::GenericStub& stub, const std::string& method) {
    ctx_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    call_ = stub.PrepareCall(&ctx_, method, &cq_);
    call_->StartCall(this);
    Wait();
  }
  ~RawStream() {
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }
  bool Write(const std::string& bytes) {
    grpc::Slice slice(bytes);
    grpc::ByteBuffer buffer(&slice, 1);
    call_->Write(buffer, this);
    return Wait();
  }
  bool Write(const v1::AgentMessage& m) { return Write(m.SerializeAsString()); }
  bool Read(v1::DaemonMessage* m) {
    grpc::ByteBuffer buffer;
    call_->Read(&buffer, this);
    if (!Wait()) return false;
    return grpc::SerializationTraits<v1::DaemonMessage>::Deserialize(&buffer, m).ok();
  }
  // Ends our side (the daemon then finishes the call with OK).
  void WritesDone() {
    call_->WritesDone(this);
    Wait();
  }
  // The status the daemon ended the call with.
  grpc::Status Finish() {
    grpc::Status status;
    call_->Finish(&status, this);
    Wait();
    return status;
  }

 private:
  bool Wait() {
    void* tag;
    bool ok = false;
    cq_.Next(&tag, &ok);
    return ok;
  }
  grpc::ClientContext ctx_;
  grpc::CompletionQueue cq_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
};

v1::AgentMessage Hello(const std::string& agent) {
  v1::AgentMessage m;
  m.mutable_hello()->set_agent_id(agent);
  m.mutable_hello()->set_instance_id(std::hash<std::string>{}(agent));
  return m;
}

v1::AgentMessage Batch(uint64_t sequence, int definitions, int64_t time, double gauge) {
  v1::AgentMessage m;
  v1::Batch* b = m.mutable_batch();
  b->set_sequence(sequence);
  for (int i = 0; i < definitions; ++i) {
    v1::SeriesDefinition* d = b->add_definitions();
    d->set_id(static_cast<uint32_t>(i));
    d->set_name("fabric_rdma_port_rcv_errors_total");
    d->set_kind(v1::SERIES_KIND_GAUGE);
    v1::Label* l = d->add_labels();
    l->set_name("port");
    l->set_value(std::to_string(i));
  }
  v1::Point* p = b->add_points();
  p->set_series_id(0);
  p->set_time_unix_nano(time);
  p->set_gauge(gauge);
  return m;
}

class IngestMalformedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DaemonOptions o;
    o.max_receive_message_bytes = 1 << 20;  // small, so that the test need not send 64 MB
    o.max_series_per_agent = 1000;
    daemon_ = StartLoopbackDaemon(o);
    ASSERT_NE(daemon_, nullptr);
    channel_ = grpc::CreateChannel(daemon_->grpc_address(), grpc::InsecureChannelCredentials());
    generic_ = std::make_unique<grpc::GenericStub>(channel_);
    query_ = v1::Query::NewStub(channel_);
    // The healthy agent, open for the whole test.
    healthy_ = std::make_unique<RawStream>(*generic_, kIngest);
    v1::DaemonMessage reply;
    ASSERT_TRUE(healthy_->Write(Hello("healthy")) && healthy_->Read(&reply));
    ASSERT_TRUE(reply.has_welcome());
  }
  void TearDown() override {
    // Still served after everything the test threw at the daemon.
    v1::DaemonMessage reply;
    ASSERT_TRUE(healthy_->Write(Batch(++healthy_sequence_, 1, kT0 + 1'000'000'000, 1)));
    ASSERT_TRUE(healthy_->Read(&reply));
    EXPECT_EQ(reply.ack().sequence(), healthy_sequence_);
    EXPECT_TRUE(AgentConnected(*query_, "healthy"));
    healthy_->WritesDone();
    EXPECT_TRUE(healthy_->Finish().ok());
    healthy_.reset();
    daemon_->Stop();
  }

  double Errors(const std::string& reason) {
    return ScrapeValue(*daemon_, "railwatch_ingest_errors_total{reason=\"" + reason + "\"}");
  }
  // A new agent stream: hello (welcomed), then `message`; returns the call's status.
  grpc::Status AfterHello(const std::string& agent, const std::string& message) {
    RawStream s(*generic_, kIngest);
    v1::DaemonMessage reply;
    EXPECT_TRUE(s.Write(Hello(agent)) && s.Read(&reply) && reply.has_welcome());
    s.Write(message);
    while (s.Read(&reply)) {
    }
    return s.Finish();
  }

  static constexpr const char* kIngest = "/railwatch.v1.Ingest/Stream";
  std::unique_ptr<Daemon> daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<grpc::GenericStub> generic_;
  std::unique_ptr<v1::Query::Stub> query_;
  std::unique_ptr<RawStream> healthy_;
  uint64_t healthy_sequence_ = 0;
};

TEST_F(IngestMalformedTest, BytesThatAreNotAnAgentMessageEndTheStreamWithInvalidArgument) {
  // Before a hello, and after one.
  {
    RawStream s(*generic_, kIngest);
    s.Write(kGarbage);
    v1::DaemonMessage reply;
    EXPECT_FALSE(s.Read(&reply));
    const grpc::Status status = s.Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(),
              "the message is not a valid railwatch.v1.AgentMessage (protobuf parse failed)");
  }
  const grpc::Status status = AfterHello("garbler", kGarbage);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_EQ(Errors("unparsable"), 2);
  EXPECT_TRUE(WaitUntil([&] { return !AgentConnected(*query_, "garbler"); }, absl::Seconds(5)));
}

TEST_F(IngestMalformedTest, BytesThatAreNotAQueryRequestGetInvalidArgumentNotUnimplemented) {
  grpc::ClientContext ctx;
  grpc::Slice slice(kGarbage);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  generic_->UnaryCall(&ctx, "/railwatch.v1.Query/ListAgents", grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status status = done.get_future().get();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(),
            "the request is not a valid /railwatch.v1.Query/ListAgents request (protobuf parse "
            "failed)");
  EXPECT_EQ(ScrapeValue(*daemon_, "railwatch_grpc_malformed_requests_total{method=\"/"
                                  "railwatch.v1.Query/ListAgents\"}"),
            1);
  // A well-formed request on the same method is answered.
  grpc::ClientContext ok_ctx;
  v1::ListAgentsResponse agents;
  EXPECT_TRUE(query_->ListAgents(&ok_ctx, {}, &agents).ok());
}

TEST_F(IngestMalformedTest, AMessageOverTheReceiveLimitIsRefusedByGrpcAndCounted) {
  const double aborted = ScrapeValue(*daemon_, "railwatch_ingest_streams_aborted_total");
  v1::AgentMessage big = Batch(1, 1, kT0, 1);
  big.mutable_batch()->mutable_definitions(0)->set_help(std::string(2 << 20, 'x'));
  const grpc::Status status = AfterHello("oversized", big.SerializeAsString());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(status.error_message().find("larger than max"), std::string::npos)
      << status.error_message();
  EXPECT_TRUE(WaitUntil(
      [&] {
        return ScrapeValue(*daemon_, "railwatch_ingest_streams_aborted_total") == aborted + 1;
      },
      absl::Seconds(5)));
}

TEST_F(IngestMalformedTest, ABatchBeforeHelloIsAFailedPrecondition) {
  RawStream s(*generic_, kIngest);
  s.Write(Batch(1, 1, kT0, 1));
  v1::DaemonMessage reply;
  EXPECT_FALSE(s.Read(&reply));
  const grpc::Status status = s.Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status.error_message(), "batch before hello");
  EXPECT_EQ(Errors("protocol"), 1);
}

TEST_F(IngestMalformedTest, TooManySeriesEndTheStreamWithResourceExhausted) {
  const grpc::Status status =
      AfterHello("definer", Batch(1, 1001, kT0, 1).SerializeAsString());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "agent definer would define 1001 series, over the daemon's limit of 1000 per agent "
            "(railwatchd --max_series_per_agent)");
  EXPECT_EQ(Errors("too_many_series"), 1);
  EXPECT_EQ(ScrapeValue(*daemon_, "railwatch_series"), 0);  // none of them interned
}

// Point-level problems drop the point, count it, and keep the stream: the rest of the batch
// is stored and acknowledged.
TEST_F(IngestMalformedTest, BadPointsAreDroppedAndCountedWhileTheStreamGoesOn) {
  v1::DaemonMessage reply;
  auto send = [&](const v1::AgentMessage& m) {
    ++healthy_sequence_;
    EXPECT_TRUE(healthy_->Write(m) && healthy_->Read(&reply));
    return reply.ack().sequence();
  };
  EXPECT_EQ(send(Batch(1, 1, kT0, 1)), 1u);
  v1::AgentMessage undefined = Batch(2, 0, kT0 + 1, 1);
  undefined.mutable_batch()->mutable_points(0)->set_series_id(77);
  EXPECT_EQ(send(undefined), 2u);
  EXPECT_EQ(send(Batch(3, 0, -5, 1)), 3u);
  EXPECT_EQ(send(Batch(4, 0, 0, 1)), 4u);
  EXPECT_EQ(send(Batch(5, 0, kT0 + 2, std::nan(""))), 5u);
  EXPECT_EQ(send(Batch(6, 0, kT0 + 3, std::numeric_limits<double>::infinity())), 6u);
  EXPECT_EQ(Errors("unknown_series"), 1);
  EXPECT_EQ(Errors("bad_timestamp"), 2);
  EXPECT_EQ(Errors("bad_value"), 2);
  EXPECT_EQ(ScrapeValue(*daemon_, "railwatch_ingest_samples_total"), 1);

  // A sequence that does not increase is a replay: acknowledged with the last stored, stored
  // nothing.
  ASSERT_TRUE(healthy_->Write(Batch(3, 0, kT0 + 4, 2)) && healthy_->Read(&reply));
  EXPECT_EQ(reply.ack().sequence(), 6u);
  EXPECT_EQ(Errors("duplicate_batch"), 1);
  EXPECT_EQ(ScrapeValue(*daemon_, "railwatch_ingest_samples_total"), 1);
}

}  // namespace
}  // namespace railwatch::testing
