// The kubelet's pod-resources API over a real Unix socket: an in-process gRPC server that
// implements v1.PodResourcesLister from the published proto (proto/kubelet/podresources/v1),
// ListPodResources against it (an answer, a server that never answers, a missing socket, a
// socket this user may not open), and the host agent's KubeletCollector on top (events when
// the host's job pods change, a refresh every 5 minutes, series). ctest -R '^Kubelet'

#include "jobs/kubelet_client.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "collectors/kubelet_collector.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kubelet/podresources/v1/api.grpc.pb.h"
#include "support/recording_emitter.h"

namespace railwatch::kubelet_client_test {

using ::railwatch::jobs::KubePod;
using ::railwatch::jobs::ListPodResources;
using ::railwatch::testing::Attribute;
using ::railwatch::testing::RecordingEmitter;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A kubelet's pod-resources service with a settable List answer; `hang` makes List wait until
// the client gives up.
class FakeKubelet final : public ::v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext* context, const ::v1::ListPodResourcesRequest*,
                    ::v1::ListPodResourcesResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    if (hang_) {
      const absl::Time give_up = absl::Now() + absl::Seconds(20);
      while (!context->IsCancelled() && absl::Now() < give_up) {
        mu_.AwaitWithTimeout(absl::Condition(
                                 +[](bool* b) { return !*b; }, &hang_),
                             absl::Milliseconds(10));
        if (!hang_) break;
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "gave up");
    }
    *response = answer_;
    return grpc::Status::OK;
  }
  void SetAnswer(::v1::ListPodResourcesResponse answer) {
    absl::MutexLock lock(&mu_);
    answer_ = std::move(answer);
  }
  void SetHang(bool hang) {
    absl::MutexLock lock(&mu_);
    hang_ = hang;
  }
  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  absl::Mutex mu_;
  ::v1::ListPodResourcesResponse answer_ ABSL_GUARDED_BY(mu_);
  bool hang_ ABSL_GUARDED_BY(mu_) = false;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

// Two pods as a GPU node's kubelet lists them: a training worker with 8 GPUs (NUMA 0 and 1,
// node 0 as protojson would omit it) and 4 RDMA VFs, and a pod without devices.
::v1::ListPodResourcesResponse TwoPods() {
  ::v1::ListPodResourcesResponse r;
  ::v1::PodResources* worker = r.add_pod_resources();
  worker->set_name("llama-worker-0");
  worker->set_namespace_("ml");
  ::v1::ContainerResources* c = worker->add_containers();
  c->set_name("pytorch");
  for (int numa = 0; numa < 2; ++numa) {
    ::v1::ContainerDevices* gpus = c->add_devices();
    gpus->set_resource_name("nvidia.com/gpu");
    for (int i = 0; i < 4; ++i) gpus->add_device_ids("GPU-" + std::to_string(numa * 4 + i));
    gpus->mutable_topology()->add_nodes()->set_id(numa);
  }
  ::v1::ContainerDevices* vfs = c->add_devices();
  vfs->set_resource_name("openshift.io/mlx5_vf");
  for (const char* bdf : {"0000:1a:00.2", "0000:1a:00.3", "0000:9c:00.2", "0000:9c:00.3"}) {
    vfs->add_device_ids(bdf);
  }
  c->add_cpu_ids(4);
  ::v1::PodResources* dns = r.add_pod_resources();
  dns->set_name("coredns-5d78c9869d-x7kq2");
  dns->set_namespace_("kube-system");
  dns->add_containers()->set_name("coredns");
  return r;
}

class KubeletServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/railwatch-kubelet-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
    socket_ = dir_ + "/kubelet.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&kubelet_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    kubelet_.SetHang(false);
    if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
    std::filesystem::remove_all(dir_);
  }

  FakeKubelet kubelet_;
  std::unique_ptr<grpc::Server> server_;
  std::string dir_;
  std::string socket_;
};

TEST_F(KubeletServerTest, ListAnswersWithDevicesAndNumaNodes) {
  kubelet_.SetAnswer(TwoPods());
  absl::StatusOr<std::vector<KubePod>> pods = ListPodResources(socket_, absl::Seconds(5));
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_THAT(*pods, SizeIs(2));
  const KubePod& w = (*pods)[0];
  EXPECT_EQ(w.ns, "ml");
  EXPECT_EQ(w.name, "llama-worker-0");
  ASSERT_THAT(w.containers, SizeIs(1));
  ASSERT_THAT(w.containers[0].devices, SizeIs(3));
  EXPECT_EQ(w.containers[0].devices[0].resource_name, "nvidia.com/gpu");
  EXPECT_THAT(w.containers[0].devices[0].device_ids,
              ElementsAre("GPU-0", "GPU-1", "GPU-2", "GPU-3"));
  EXPECT_THAT(w.containers[0].devices[0].numa_nodes, ElementsAre(0));
  EXPECT_THAT(w.containers[0].devices[1].numa_nodes, ElementsAre(1));
  EXPECT_THAT(w.containers[0].devices[2].device_ids, SizeIs(4));
  EXPECT_THAT((*pods)[1].containers[0].devices, IsEmpty());
  // The unix:// form of the same path.
  EXPECT_TRUE(ListPodResources("unix://" + socket_, absl::Seconds(5)).ok());

  const auto jobs = jobs::HostJobsFromPods(*pods);
  EXPECT_EQ(jobs::EncodeHostJobs(jobs), "ml/llama:pods=1:gpus=8:rdma=4:names=llama-worker-0");
}

TEST_F(KubeletServerTest, DeadlineAgainstAKubeletThatNeverAnswers) {
  kubelet_.SetHang(true);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<KubePod>> pods = ListPodResources(socket_, absl::Milliseconds(300));
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(pods.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(pods.status())) << pods.status();
  EXPECT_THAT(pods.status().message(), HasSubstr("did not answer List within 300ms"));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_EQ(kubelet_.calls(), 1);
}

TEST_F(KubeletServerTest, NoSocketAndNotASocket) {
  absl::StatusOr<std::vector<KubePod>> pods =
      ListPodResources(dir_ + "/missing.sock", absl::Seconds(1));
  ASSERT_FALSE(pods.ok());
  EXPECT_TRUE(absl::IsNotFound(pods.status())) << pods.status();
  EXPECT_THAT(pods.status().message(), HasSubstr("no kubelet pod-resources socket at"));
  pods = ListPodResources(dir_, absl::Seconds(1));
  ASSERT_FALSE(pods.ok());
  EXPECT_THAT(pods.status().message(), HasSubstr("is not a socket"));
}

TEST_F(KubeletServerTest, SocketThisUserMayNotOpen) {
  // As the kubelet's socket is (root, 0600), asked by a user that is not root: in a child that
  // drops to nobody when the test runs as root.
  ASSERT_EQ(chmod(socket_.c_str(), 0600), 0);
  ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
  const auto ask = [&](const std::string& path) -> int {
    const pid_t child = fork();
    if (child == 0) {
      if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(100);
      const absl::Status s = ListPodResources(path, absl::Seconds(1)).status();
      _exit(static_cast<int>(s.code()));
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  if (geteuid() != 0 && access(socket_.c_str(), W_OK) == 0) {
    GTEST_SKIP() << "the socket's owner; not root to become another user";
  }
  const int as_nobody = ask(socket_);
  if (as_nobody == 100) GTEST_SKIP() << "cannot become nobody here (no CAP_SETUID/SETGID)";
  EXPECT_EQ(as_nobody, static_cast<int>(absl::StatusCode::kPermissionDenied));
  // The directory closed too (the kubelet's pod-resources directory is 0750 on some nodes).
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  EXPECT_EQ(ask(socket_), static_cast<int>(absl::StatusCode::kPermissionDenied));
}

// ---- the host agent's collector ----

TEST_F(KubeletServerTest, CollectorSendsTheHostsJobsWhenTheyChangeAndEveryFiveMinutes) {
  kubelet_.SetAnswer(TwoPods());
  FakeClock clock;
  KubeletCollector::Options options;
  options.socket = socket_;
  options.background = false;
  options.timeout = absl::Seconds(1);
  KubeletCollector collector(options, clock);
  RecordingEmitter emitter;

  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(emitter).ok());
  auto events = emitter.EventsOfKind("kubernetes.pods");
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(Attribute(events[0], "jobs"), "ml/llama:pods=1:gpus=8:rdma=4:names=llama-worker-0");
  EXPECT_EQ(Attribute(events[0], "pods"), "1");
  EXPECT_EQ(Attribute(events[0], "gpus"), "8");
  EXPECT_EQ(Attribute(events[0], "rdma"), "4");
  EXPECT_EQ(Attribute(events[0], "reason"), "changed");
  EXPECT_EQ(events[0].time_unix_nano, clock.NowNanos());
  EXPECT_EQ(emitter.Get("railwatch_kubelet_queries_total{result=\"ok\"}"), 1u);
  EXPECT_EQ(emitter.GetGauge("railwatch_kubelet_up"), 1.0);

  // The same pods: nothing until five minutes have passed, then a refresh.
  clock.Advance(absl::Seconds(10));
  collector.QueryOnce();
  clock.Advance(absl::Minutes(4));
  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(emitter).ok());
  EXPECT_THAT(emitter.EventsOfKind("kubernetes.pods"), SizeIs(1));
  clock.Advance(absl::Seconds(51));
  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(emitter).ok());
  events = emitter.EventsOfKind("kubernetes.pods");
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_EQ(Attribute(events[1], "reason"), "refresh");
  EXPECT_EQ(Attribute(events[1], "jobs"), Attribute(events[0], "jobs"));

  // A kubelet that stops answering: counted, and the jobs sent are kept (no event).
  kubelet_.SetHang(true);
  collector.QueryOnce();  // gives up after options.timeout
  kubelet_.SetHang(false);
  ASSERT_TRUE(collector.Collect(emitter).ok());
  EXPECT_THAT(emitter.EventsOfKind("kubernetes.pods"), SizeIs(2));
  EXPECT_EQ(emitter.Get("railwatch_kubelet_queries_total{result=\"timeout\"}"), 1u);
  EXPECT_EQ(emitter.GetGauge("railwatch_kubelet_up"), 0.0);

  // The worker leaves: an empty set, at once.
  ::v1::ListPodResourcesResponse only_dns = TwoPods();
  only_dns.mutable_pod_resources()->DeleteSubrange(0, 1);
  kubelet_.SetAnswer(only_dns);
  clock.Advance(absl::Seconds(10));
  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(emitter).ok());
  events = emitter.EventsOfKind("kubernetes.pods");
  ASSERT_THAT(events, SizeIs(3));
  EXPECT_EQ(Attribute(events[2], "jobs"), "");
  EXPECT_EQ(Attribute(events[2], "pods"), "0");
  EXPECT_EQ(Attribute(events[2], "reason"), "changed");
  EXPECT_EQ(emitter.Get("railwatch_kubelet_queries_total{result=\"ok\"}"), 5u);
  EXPECT_EQ(emitter.GetGauge("railwatch_kubelet_up"), 1.0);
}

TEST(KubeletCollector, TimeoutAndMissingSocketAreCounted) {
  FakeClock clock;
  KubeletCollector::Options options;
  options.background = false;
  options.socket = "/nonexistent/kubelet.sock";
  {
    // An explicit --kubelet path that is missing: a failure, counted.
    KubeletCollector collector(options, clock);
    RecordingEmitter emitter;
    collector.QueryOnce();
    ASSERT_TRUE(collector.Collect(emitter).ok());
    EXPECT_EQ(emitter.Get("railwatch_kubelet_queries_total{result=\"no_socket\"}"), 1u);
    EXPECT_EQ(emitter.GetGauge("railwatch_kubelet_up"), 0.0);
    EXPECT_THAT(emitter.events, IsEmpty());
  }
  {
    // --kubelet=auto on a host without a kubelet: no series, no event.
    options.optional = true;
    KubeletCollector collector(options, clock);
    RecordingEmitter emitter;
    collector.QueryOnce();
    ASSERT_TRUE(collector.Collect(emitter).ok());
    EXPECT_THAT(emitter.names, IsEmpty());
    EXPECT_THAT(emitter.events, IsEmpty());
  }
  {
    // A lister that times out (the injected query).
    options.optional = false;
    options.lister = [](const std::string&, absl::Duration) {
      return absl::StatusOr<std::vector<KubePod>>(absl::DeadlineExceededError("slow"));
    };
    KubeletCollector collector(options, clock);
    RecordingEmitter emitter;
    collector.QueryOnce();
    ASSERT_TRUE(collector.Collect(emitter).ok());
    EXPECT_EQ(emitter.Get("railwatch_kubelet_queries_total{result=\"timeout\"}"), 1u);
  }
}

TEST_F(KubeletServerTest, CollectorThreadNeverHoldsThePollLoop) {
  // The background thread asks; Collect returns at once even while the kubelet hangs.
  kubelet_.SetHang(true);
  KubeletCollector::Options options;
  options.socket = socket_;
  options.timeout = absl::Seconds(2);
  options.interval = absl::Milliseconds(50);
  KubeletCollector collector(options, RealClock::Get());
  RecordingEmitter emitter;
  const absl::Time start = absl::Now();
  ASSERT_TRUE(collector.Collect(emitter).ok());
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(500));
  kubelet_.SetAnswer(TwoPods());
  kubelet_.SetHang(false);
  // The thread's next round answers.
  for (int i = 0; i < 100 && emitter.EventsOfKind("kubernetes.pods").empty(); ++i) {
    absl::SleepFor(absl::Milliseconds(50));
    ASSERT_TRUE(collector.Collect(emitter).ok());
  }
  EXPECT_THAT(emitter.EventsOfKind("kubernetes.pods"), SizeIs(1));
}

}  // namespace railwatch::kubelet_client_test
