// CPU of one host-agent collection cycle, the way the agent runs it: 8 simulated ConnectX NICs
// (every counter and hw_counter, port state and rate, device info) plus the ethtool statistics
// of their 8 netdevs, into a reused batch that is then serialised as the sender would.
//
// The RDMA tree is railwatch-sim's, in /dev/shm (memory, like sysfs), and the simulator moves
// every counter between cycles (outside the timed region) so reads are not served from a
// cache line the previous cycle left warm. The ethtool statistics come from the recorded
// ConnectX-4 `ethtool -S` dump in tests/fixtures/ethtool (the kernel's own cost of
// ETHTOOL_GSTATS on a real mlx5 is not measurable on a machine without one).
//
//   build/release/bench/agent_cycle_bench
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "agent/batch_builder.h"
#include "benchmark/benchmark.h"
#include "collectors/ethtool_collector.h"
#include "collectors/ethtool_dump.h"
#include "collectors/rdma_attributes.h"
#include "collectors/rdma_sysfs_collector.h"
#include "common/clock.h"
#include "common/logging.h"
#include "sim/sysfs_fabric.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;

constexpr int kNics = 8;

struct Host {
  Host() {
    char tmpl[] = "/dev/shm/railwatch-bench-XXXXXX";
    root = mkdtemp(tmpl);
    sim::SysfsFabric::Options o;
    o.root = root;
    o.hosts = 1;
    o.nics_per_host = kNics;
    fabric = std::make_unique<sim::SysfsFabric>(o);
    now = absl::Now();
    if (absl::Status s = fabric->Create(now); !s.ok()) {
      spdlog::critical("simulator: {}", s.message());
      abort();
    }
    host_root = fabric->HostRoot("gpu-node-001");
    // The simulator writes class/net/<netdev> as the kernel has it (a link to the PCI
    // function's net/<netdev>, with a `device` link back), so the default netdev selection
    // finds them.
    for (int n = 0; n < kNics; ++n) {
      const fs::path rdma = fs::path(host_root) / "class/infiniband" / ("mlx5_" + std::to_string(n));
      for (const std::string& netdev : ReadRdmaDeviceInfo(rdma.string()).netdevs) {
        netdevs.push_back(netdev);
      }
    }
    if (netdevs.size() != kNics) {
      spdlog::critical("simulator: {} netdevs behind {} NICs", netdevs.size(), kNics);
      abort();
    }
  }
  ~Host() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  void Tick() {
    now += absl::Seconds(1);
    (void)fabric->Tick(now);
  }

  std::string root, host_root;
  std::unique_ptr<sim::SysfsFabric> fabric;
  std::vector<std::string> netdevs;
  absl::Time now;
};

void BM_CollectionCycle(benchmark::State& state) {
  const bool with_rdma = state.range(0) & 1;
  const bool with_ethtool = state.range(0) & 2;
  Host host;
  FakeClock clock;
  RdmaSysfsCollector rdma({host.host_root}, clock);
  auto backend = std::make_unique<DumpEthtoolBackend>();
  for (const std::string& netdev : host.netdevs) {
    if (absl::Status s = backend->SetFromFile(
            netdev, "mlx5_core",
            std::string(RAILWATCH_SOURCE_DIR) +
                "/tests/fixtures/ethtool/ethtool_S_mlx5_core_cx4_ethq_testfile_noindent.txt");
        !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({host.host_root, ""});
  if (!selector.ok()) {
    state.SkipWithError(std::string(selector.status().message()).c_str());
    return;
  }
  EthtoolCollector ethtool({}, std::move(*selector), std::move(backend), clock);
  SeriesRegistry registry(Labels{{"host", "gpu-node-001"}});
  BatchBuilder builder(registry);
  std::shared_ptr<v1::Batch> spare;
  std::string wire;
  size_t points = 0;
  for (auto _ : state) {
    state.PauseTiming();
    host.Tick();
    clock.Advance(absl::Seconds(1));
    state.ResumeTiming();
    if (with_rdma) (void)rdma.Collect(builder);
    if (with_ethtool) (void)ethtool.Collect(builder);
    std::shared_ptr<v1::Batch> batch = builder.Take(std::move(spare));
    points = batch->points_size();
    batch->SerializeToString(&wire);
    spare = std::move(batch);
  }
  state.counters["points"] = static_cast<double>(points);
  state.counters["series"] = static_cast<double>(registry.size());
  state.counters["netdevs"] = static_cast<double>(ethtool.netdevs());
}
BENCHMARK(BM_CollectionCycle)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->ArgName("rdma1_ethtool2")
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace railwatch

int main(int argc, char** argv) {
  (void)railwatch::InitLogging("agent_cycle_bench", "warn");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
