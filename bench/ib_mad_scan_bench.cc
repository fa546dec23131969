// The InfiniBand fabric scanner's MAD source (railwatch-agent --role=ib-fabric
// --ib_source=mad:CA, docs/INFINIBAND.md "The MAD source") on a simulated fat tree of 40 leaves
// x 64 ports and 16 spines x 80 ports (3,840 switch ports, 1,280 HCAs), through the real
// IbMadSource and IbFabricCollector, with the simulated transport answering every MAD after a
// set latency. Issue 22 asks for 1,000 switch ports within 3 s.
//
//   BM_MadScan/<latency_us>/<window>       a scan between discoveries: every switch port's
//                                          PMA counters read and sent
//   BM_MadDiscovery/<latency_us>/<window>  a first scan: discovery by directed route + counters
//
// Counters: switch_ports_per_s (wall clock), mads (per scan), mad_us (the mean time one MAD
// took as slept: the latency asked for plus the kernel's timer slack, about 50 us).
//
//   build/release/bench/ib_mad_scan_bench
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "bench/counting_emitter.h"
#include "collectors/ib_fabric_collector.h"
#include "collectors/ib_mad_source.h"
#include "collectors/ib_mad_transport_sim.h"

namespace railwatch::ib_mad_scan_bench {

using bench::CountingEmitter;

std::shared_ptr<SimIbFabric> Fabric() {
  SimFatTreeSpec spec;
  spec.leaves = 40;
  spec.spines = 16;
  spec.hosts_per_leaf = 32;
  spec.uplinks = 2;
  absl::StatusOr<std::unique_ptr<SimIbFabric>> fabric = BuildSimFatTree(spec);
  return fabric.ok() ? std::shared_ptr<SimIbFabric>(*std::move(fabric)) : nullptr;
}

struct Setup {
  explicit Setup(const benchmark::State& state) : fabric(Fabric()) {
    SimIbMadTransport::Options options;
    options.latency = absl::Microseconds(state.range(0));
    options.max_outstanding = static_cast<int>(state.range(1));
    auto t = std::make_unique<SimIbMadTransport>(fabric, options);
    transport = t.get();
    IbMadSource::Options source_options;
    source_options.window = static_cast<int>(state.range(1));
    auto s = std::make_unique<IbMadSource>(source_options, std::move(t));
    source = s.get();
    collector = std::make_unique<IbFabricCollector>(IbFabricCollector::Options{}, std::move(s));
  }
  // Traffic between two scans: every switch port sent and received something.
  void Move() {
    for (const SimIbFabric::Node& n : fabric->nodes()) {
      if (n.type != ib::IbNodeType::kSwitch) continue;
      for (int p = 1; p <= n.num_ports(); ++p) {
        SimIbFabric::PortCounters& c = fabric->Counters(n.guid, p);
        c["PortXmitData"] += 250'000'000;
        c["PortRcvData"] += 250'000'000;
        c["PortXmitPkts"] += 250'000;
        c["PortXmitWait"] += 1000;
      }
    }
  }
  void Report(benchmark::State& state, uint64_t queries_before, absl::Duration time_before) {
    const double ports = static_cast<double>(source->switch_ports());
    const double mads = static_cast<double>(transport->queries() - queries_before);
    state.counters["switch_ports"] = ports;
    state.counters["switch_ports_per_s"] =
        benchmark::Counter(ports, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["mads"] = benchmark::Counter(mads, benchmark::Counter::kAvgIterations);
    state.counters["mad_us"] =
        mads > 0 ? absl::ToDoubleMicroseconds(transport->time_in_queries() - time_before) / mads
                 : 0;
  }
  std::shared_ptr<SimIbFabric> fabric;
  SimIbMadTransport* transport = nullptr;
  IbMadSource* source = nullptr;
  std::unique_ptr<IbFabricCollector> collector;
  CountingEmitter out;
};

void BM_MadScan(benchmark::State& state) {
  Setup setup(state);
  if (setup.fabric == nullptr || !setup.collector->Collect(setup.out).ok()) {
    state.SkipWithError("the first scan failed");
    return;
  }
  const uint64_t queries = setup.transport->queries();
  const absl::Duration time = setup.transport->time_in_queries();
  for (auto _ : state) {
    state.PauseTiming();
    setup.Move();
    state.ResumeTiming();
    if (!setup.collector->Collect(setup.out).ok()) state.SkipWithError("scan failed");
  }
  if (setup.source->discoveries() != 1) state.SkipWithError("discovered again: not a steady scan");
  setup.Report(state, queries, time);
}

void BM_MadDiscovery(benchmark::State& state) {
  uint64_t queries = 0;
  absl::Duration time;
  size_t ports = 0;
  std::unique_ptr<Setup> last;
  for (auto _ : state) {
    state.PauseTiming();
    auto setup = std::make_unique<Setup>(state);
    state.ResumeTiming();
    if (setup->fabric == nullptr || !setup->collector->Collect(setup->out).ok()) {
      state.SkipWithError("scan failed");
    }
    state.PauseTiming();
    queries += setup->transport->queries();
    time += setup->transport->time_in_queries();
    ports = setup->source->switch_ports();
    last = std::move(setup);
    state.ResumeTiming();
  }
  state.counters["switch_ports"] = static_cast<double>(ports);
  state.counters["switch_ports_per_s"] =
      benchmark::Counter(static_cast<double>(ports), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["mads"] =
      benchmark::Counter(static_cast<double>(queries), benchmark::Counter::kAvgIterations);
  state.counters["mad_us"] =
      queries > 0 ? absl::ToDoubleMicroseconds(time) / static_cast<double>(queries) : 0;
}

// Latency 0 (the scanner's own cost), 20 us (a quiet fabric's round trip) and 200 us (a busy
// switch's management CPU); one MAD in flight, and eight.
#define RAILWATCH_MAD_ARGS                                                              \
  ArgNames({"latency_us", "window"})                                                    \
      ->Args({0, 1})                                                                    \
      ->Args({20, 1})                                                                   \
      ->Args({20, 8})                                                                   \
      ->Args({200, 1})                                                                  \
      ->Args({200, 8})                                                                  \
      ->UseRealTime()                                                                   \
      ->MeasureProcessCPUTime()                                                         \
      ->Unit(benchmark::kMillisecond)
BENCHMARK(BM_MadScan)->RAILWATCH_MAD_ARGS;
BENCHMARK(BM_MadDiscovery)->RAILWATCH_MAD_ARGS;

}  // namespace railwatch::ib_mad_scan_bench

BENCHMARK_MAIN();
