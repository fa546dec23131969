// JobRegistry and the host agents' kubernetes.pods events (topology/fabric_map.h): each host's
// report replaces that host's pods, jobs merge by name across hosts, an empty report takes the
// host out, the generation moves only when something changed. ctest -R '^KubeJobRegistry'

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/event_store.h"
#include "topology/fabric_map.h"

namespace railwatch::job_registry_kubernetes_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kSecond = 1'000'000'000;

StoredEvent PodsEvent(const std::string& host, int64_t t, const std::string& jobs) {
  StoredEvent e;
  e.kind = "kubernetes.pods";
  e.time_unix_nano = t;
  e.labels = {{"host", host}};
  e.attributes = {{"gpus", "8"}, {"jobs", jobs}, {"pods", "1"}};
  return e;
}

std::string Worker(int i) {
  return "ml/llama:pods=1:gpus=8:rdma=4:names=llama-worker-" + std::to_string(i);
}

const JobInfo* Find(const std::vector<JobInfo>& jobs, const std::string& name) {
  for (const JobInfo& j : jobs) {
    if (j.name == name) return &j;
  }
  return nullptr;
}

TEST(KubeJobRegistry, PodsOfOneJobOnFourHostsAreOneJob) {
  JobRegistry r;
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(r.Observe(PodsEvent("gpu-node-00" + std::to_string(i), 100 * kSecond, Worker(i))));
  }
  std::vector<JobInfo> all = r.All();
  ASSERT_THAT(all, SizeIs(1));
  EXPECT_EQ(all[0].name, "ml/llama");
  EXPECT_EQ(all[0].source, "kubernetes");
  EXPECT_THAT(all[0].hosts,
              ElementsAre("gpu-node-000", "gpu-node-001", "gpu-node-002", "gpu-node-003"));
  EXPECT_EQ(all[0].gpus, 32u);
  EXPECT_EQ(all[0].detail, "pods llama-worker-0..3 in ns ml, 16 RDMA devices");
  EXPECT_THAT(r.JobsOfHost("gpu-node-002"), ElementsAre("ml/llama"));

  // The same reports again (the agents' 5-minute refresh): no change, the generation stays.
  const uint64_t generation = r.generation();
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(r.Observe(PodsEvent("gpu-node-00" + std::to_string(i), 400 * kSecond, Worker(i))));
  }
  EXPECT_EQ(r.generation(), generation);

  // A host whose pods left reports an empty set: it drops out of the job.
  EXPECT_TRUE(r.Observe(PodsEvent("gpu-node-003", 410 * kSecond, "")));
  all = r.All();
  ASSERT_THAT(all, SizeIs(1));
  EXPECT_THAT(all[0].hosts, ElementsAre("gpu-node-000", "gpu-node-001", "gpu-node-002"));
  EXPECT_EQ(all[0].gpus, 24u);
  EXPECT_THAT(r.JobsOfHost("gpu-node-003"), IsEmpty());
  EXPECT_GT(r.generation(), generation);
  // Empty again from a host that has nothing: no change.
  EXPECT_FALSE(r.Observe(PodsEvent("gpu-node-003", 420 * kSecond, "")));

  // An older report (a spool replayed late) does not undo a newer one.
  EXPECT_FALSE(r.Observe(PodsEvent("gpu-node-003", 300 * kSecond, Worker(3))));
  EXPECT_THAT(r.JobsOfHost("gpu-node-003"), IsEmpty());

  // Everything leaves.
  for (int i = 0; i < 3; ++i)
    r.Observe(PodsEvent("gpu-node-00" + std::to_string(i), 500 * kSecond, ""));
  EXPECT_THAT(r.All(), IsEmpty());
}

TEST(KubeJobRegistry, AHostsReportReplacesItsPodsAndJobsStayApart) {
  JobRegistry r;
  ASSERT_TRUE(r.Observe(
      PodsEvent("n1", kSecond,
                "ml/a:pods=2:gpus=4:rdma=0:names=a-worker-0,a-worker-1;ml/b:pods=1:gpus=4:rdma=2:"
                "names=b-0")));
  ASSERT_TRUE(r.Observe(PodsEvent("n2", kSecond, "ml/b:pods=1:gpus=8:rdma=2:names=b-1")));
  std::vector<JobInfo> all = r.All();
  ASSERT_THAT(all, SizeIs(2));
  EXPECT_EQ(Find(all, "ml/a")->gpus, 4u);
  EXPECT_THAT(Find(all, "ml/a")->hosts, ElementsAre("n1"));
  EXPECT_EQ(Find(all, "ml/a")->detail, "pods a-worker-0, a-worker-1 in ns ml");
  EXPECT_EQ(Find(all, "ml/b")->gpus, 12u);
  EXPECT_THAT(Find(all, "ml/b")->hosts, ElementsAre("n1", "n2"));
  EXPECT_THAT(r.JobsOfHost("n1"), ElementsAre("ml/a", "ml/b"));
  // n1 now runs only a's pods: b is on n2 alone.
  ASSERT_TRUE(r.Observe(
      PodsEvent("n1", 2 * kSecond, "ml/a:pods=2:gpus=4:rdma=0:names=a-worker-0,a-worker-1")));
  all = r.All();
  EXPECT_THAT(Find(all, "ml/b")->hosts, ElementsAre("n2"));
  EXPECT_EQ(Find(all, "ml/b")->gpus, 8u);
  // Not the collector's event (no jobs attribute), a report without a host: ignored.
  StoredEvent no_jobs = PodsEvent("n1", 3 * kSecond, "");
  no_jobs.attributes.clear();
  EXPECT_FALSE(r.Observe(no_jobs));
  StoredEvent no_host = PodsEvent("", 3 * kSecond, "");
  no_host.labels.clear();
  EXPECT_FALSE(r.Observe(no_host));
  EXPECT_THAT(r.All(), SizeIs(2));
}

TEST(KubeJobRegistry, KubernetesJobsLiveBesideOtherSources) {
  JobRegistry r;
  // A Slurm job elsewhere and a static one; Kubernetes reports leave them alone.
  JobInfo slurm;
  slurm.name = "slurm-42";
  slurm.hosts = {"s1"};
  slurm.gpus = 8;
  r.SetScheduled("slurm", {slurm});
  ASSERT_TRUE(r.Observe(PodsEvent("k1", kSecond, Worker(0))));
  EXPECT_THAT(r.All(), SizeIs(2));
  r.SetScheduled("slurm", {});
  std::vector<JobInfo> all = r.All();
  ASSERT_THAT(all, SizeIs(1));
  EXPECT_EQ(all[0].source, "kubernetes");
  // The blast radius sees it.
  const std::vector<JobInfo> on = r.JobsOnHosts({"k1", "x"});
  ASSERT_THAT(on, SizeIs(1));
  EXPECT_EQ(on[0].gpus, 8u);
}

}  // namespace railwatch::job_registry_kubernetes_test
