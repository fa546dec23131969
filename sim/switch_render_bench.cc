// What one sample costs a simulated switch: rendering every leaf it serves (the whole tree of a
// leaf switch with 32 hosts and 4 uplinks) and serialising it as gRPC will. Prints figures; the
// thread-count and functional checks live in railwatch_sim_gnmi_tests.
#include <benchmark/benchmark.h>

#include "absl/time/clock.h"
#include "sim/switch_dialects.h"
#include "sim/switch_model.h"

namespace railwatch::sim {
namespace {

void BM_RenderWholeSwitch(benchmark::State& state) {
  const auto dialect = static_cast<Dialect>(state.range(0));
  SwitchFabric::Options o;
  o.hosts = 32;
  o.nics_per_host = 1;
  o.spines = 4;
  o.dialects = {std::string(DialectName(dialect))};
  auto fabric = SwitchFabric::Create(o, absl::Now());
  if (!fabric.ok()) {
    state.SkipWithError("fabric");
    return;
  }
  const SimSwitch& sw = (*fabric)->switches()[0];
  ::gnmi::Path prefix, path;
  if (dialect == Dialect::kSonic) {
    prefix.set_target("COUNTERS_DB");
    path.add_elem()->set_name("COUNTERS");
    path.add_elem()->set_name("Ethernet*");
  } else {
    path.add_elem()->set_name("...");
  }
  auto query = ResolvePath(sw, prefix, path);
  if (!query.ok()) {
    state.SkipWithError("resolve");
    return;
  }
  ::gnmi::Notification n;
  std::string wire;
  int64_t leaves = 0;
  for (auto _ : state) {
    (*fabric)->WithSwitch(0, [&](const SimSwitch& s) { (*query)->Render(s, n); });
    n.SerializeToString(&wire);
    benchmark::DoNotOptimize(wire.data());
    leaves += n.update_size();
  }
  state.counters["updates"] = n.update_size();
  state.counters["updates_per_second"] =
      benchmark::Counter(static_cast<double>(leaves), benchmark::Counter::kIsRate);
  state.counters["bytes"] = static_cast<double>(wire.size());
  state.SetLabel(std::string(DialectName(dialect)));
}
BENCHMARK(BM_RenderWholeSwitch)
    ->Arg(static_cast<int>(Dialect::kOpenConfig))
    ->Arg(static_cast<int>(Dialect::kSonic))
    ->Arg(static_cast<int>(Dialect::kAristaEos))
    ->Arg(static_cast<int>(Dialect::kCumulus))
    ->Unit(benchmark::kMicrosecond);

// One 100 ms tick of the whole switch fabric of a 256-host x 8-NIC cluster in rail groups of
// 32 (64 leaves, 8 spines): every NIC's traffic mirrored, uplinks, ECN marks, benign pauses.
void BM_UpdateFabric256x8(benchmark::State& state) {
  SwitchFabric::Options o;
  o.hosts = 256;
  o.nics_per_host = 8;
  o.hosts_per_leaf = 32;
  o.spines = 8;
  const absl::Time start = absl::FromUnixSeconds(1'800'000'000);
  auto fabric = SwitchFabric::Create(o, start);
  if (!fabric.ok()) {
    state.SkipWithError("fabric");
    return;
  }
  std::vector<NicTraffic> nics;
  for (int h = 1; h <= o.hosts; ++h) {
    for (int k = 0; k < o.nics_per_host; ++k) nics.push_back({h, k});
  }
  absl::Time now = start;
  for (auto _ : state) {
    now += absl::Milliseconds(100);
    for (NicTraffic& n : nics) {
      n.tx_bytes += 4'000'000'000;
      n.rx_bytes += 4'000'000'000;
      n.tx_packets += 1'000'000;
      n.rx_packets += 1'000'000;
      n.ecn_marked += 80;
    }
    benchmark::DoNotOptimize((*fabric)->Update(now, nics));
  }
  state.counters["ports"] = static_cast<double>(64 * 40 + 8 * 64);
}
BENCHMARK(BM_UpdateFabric256x8)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace railwatch::sim

BENCHMARK_MAIN();
