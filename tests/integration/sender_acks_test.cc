// The agent's Sender and the daemon's acks (proto Hello/Welcome.acks_on_request): against
// railwatchd the Sender asks for an ack every Options::ack_every batches and reads it on its
// writing thread, and Stop still has every batch acknowledged; against a daemon that acks
// every batch (an older railwatchd), it takes those acks as before and asks for none.
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/sender.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "liveness_util.h"
#include "loopback_daemon.h"
#include "railwatch/v1/ingest.grpc.pb.h"

namespace railwatch::testing {
namespace sender_acks_test {

constexpr int64_t kT0 = 1'800'000'000'000'000'000;

std::shared_ptr<v1::Batch> MakeBatch(uint32_t series, uint64_t sequence) {
  auto batch = std::make_shared<v1::Batch>();
  batch->set_sequence(sequence);
  v1::Point* p = batch->add_points();
  p->set_series_id(series);
  p->set_time_unix_nano(kT0 + static_cast<int64_t>(sequence) * 1'000'000'000);
  p->set_counter(sequence * 10);
  return batch;
}

TEST(SenderAcksTest, ARailwatchdAcksOnRequestAndStopStillHasEveryBatchAcknowledged) {
  std::unique_ptr<Daemon> daemon = StartLoopbackDaemon();
  ASSERT_NE(daemon, nullptr);
  auto query = QueryStub(*daemon);
  SeriesRegistry registry(Labels{{"host", "acks-node"}});
  const uint32_t id = registry.Define("fabric_rdma_port_transmit_bytes_total",
                                      MetricKind::kCounter, {{"device", "mlx5_0"}, {"port", "1"}},
                                      64);
  Sender::Options so = HostSenderOptions("acks-node", daemon->grpc_address(), 7);
  so.ack_every = 10;
  so.ack_after = absl::Hours(1);
  Sender sender(so, registry);
  sender.Start();
  constexpr uint64_t kBatches = 23;
  for (uint64_t s = 1; s <= kBatches; ++s) sender.Enqueue(MakeBatch(id, s));
  ASSERT_TRUE(WaitUntil([&] { return sender.stats().batches_sent >= kBatches; }, absl::Seconds(10)));
  ASSERT_TRUE(WaitUntil([&] { return AgentLastSequence(*query, "acks-node") >= kBatches; },
                        absl::Seconds(10)));
  // Asked at batches 10 and 20 only: the daemon has all 23, the agent knows of 20.
  const Sender::Stats before = sender.stats();
  EXPECT_LE(before.acked_sequence, 20u);
  EXPECT_LE(before.acks, 2u);

  sender.Stop(absl::Seconds(5));
  const Sender::Stats after = sender.stats();
  EXPECT_EQ(after.acked_sequence, kBatches) << "Stop ended with batches unacknowledged";
  EXPECT_EQ(after.acks, 3u) << "batches 10 and 20, and the last one when the stream closed";
  EXPECT_EQ(after.connects, 1u) << "closing its side for the last ack is not an outage";
  daemon->Stop();
}

// An Ingest service as railwatchd was before acks on request: Welcome without it, an ack after
// every batch. It records what the agent said.
class OldDaemon final : public v1::Ingest::Service {
 public:
  grpc::Status Stream(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::DaemonMessage, v1::AgentMessage>* stream) override {
    v1::AgentMessage in;
    v1::DaemonMessage out;
    while (stream->Read(&in)) {
      absl::MutexLock lock(&mu_);
      if (in.has_hello()) {
        offered_ = in.hello().acks_on_request();
        out.mutable_welcome()->set_last_sequence(0);
      } else {
        ++batches_;
        if (in.batch().ack_requested()) ++asked_;
        out.mutable_ack()->set_sequence(in.batch().sequence());
      }
      if (!stream->Write(out)) break;
      out.Clear();
    }
    return grpc::Status::OK;
  }
  absl::Mutex mu_;
  bool offered_ ABSL_GUARDED_BY(mu_) = false;
  int batches_ ABSL_GUARDED_BY(mu_) = 0;
  int asked_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(SenderAcksTest, ADaemonThatAcksEveryBatchIsReadAsBefore) {
  OldDaemon service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  SeriesRegistry registry(Labels{{"host", "old-node"}});
  const uint32_t id = registry.Define("fabric_rdma_port_transmit_bytes_total",
                                      MetricKind::kCounter, {{"device", "mlx5_0"}, {"port", "1"}},
                                      64);
  Sender::Options so = HostSenderOptions("old-node", "127.0.0.1:" + std::to_string(port), 8);
  so.ack_every = 2;
  Sender sender(so, registry);
  sender.Start();
  constexpr uint64_t kBatches = 5;
  for (uint64_t s = 1; s <= kBatches; ++s) sender.Enqueue(MakeBatch(id, s));
  // Each ack is taken as it comes, with no request and no Stop needed.
  EXPECT_TRUE(WaitUntil([&] { return sender.stats().acked_sequence >= kBatches; },
                        absl::Seconds(10)));
  sender.Stop(absl::Seconds(5));
  EXPECT_EQ(sender.stats().acked_sequence, kBatches);
  EXPECT_EQ(sender.stats().connects, 1u);
  {
    absl::MutexLock lock(&service.mu_);
    EXPECT_TRUE(service.offered_);
    EXPECT_EQ(service.batches_, static_cast<int>(kBatches));
    EXPECT_EQ(service.asked_, 0) << "asked an ack of a daemon that acks every batch";
  }
  server->Shutdown();
}

}  // namespace sender_acks_test
}  // namespace railwatch::testing
