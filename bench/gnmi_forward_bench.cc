// Updates per second that one switch agent decodes and forwards on one core: serialized
// SubscribeResponse bytes as they come off the wire -> parse -> decode -> map (cached path ->
// series) -> per-target buffer -> Collect into a reused Batch -> serialized Batch, as the
// sender would write it.
//
// The notifications are what an OpenConfig leaf streams in SAMPLE mode: per port and
// second, the interface counters (in/out octets, packets, errors, discards) as uint_val
// leaves under a prefix, `ports` ports per notification. Values and timestamps move every
// sample, so nothing is served from a previous identical message.
//
//   build/release/bench/gnmi_forward_bench
#include <string>
#include <vector>

#include "agent/batch_builder.h"
#include "benchmark/benchmark.h"
#include "common/logging.h"
#include "gnmi/switch_collector.h"

#ifndef RAILWATCH_SOURCE_DIR
#error RAILWATCH_SOURCE_DIR must be defined
#endif

namespace railwatch {
namespace {

constexpr const char* kLeaves[] = {"in-octets",  "out-octets", "in-pkts",     "out-pkts",
                                   "in-errors",  "out-errors", "in-discards", "out-discards"};

// One second of one switch: a notification per port with every counter of kLeaves.
std::vector<std::string> WireSecond(int ports, int second) {
  std::vector<std::string> wire;
  const int64_t t = 1700000000000000000 + int64_t{second} * 1'000'000'000;
  for (int port = 1; port <= ports; ++port) {
    ::gnmi::SubscribeResponse r;
    ::gnmi::Notification& n = *r.mutable_update();
    n.set_timestamp(t + port);
    *n.mutable_prefix() = *ParseGnmiPath("/interfaces/interface[name=Ethernet" +
                                         std::to_string(port) + "]/state/counters");
    uint64_t v = uint64_t{1} << 40;
    for (const char* leaf : kLeaves) {
      ::gnmi::Update& u = *n.add_update();
      u.mutable_path()->add_elem()->set_name(leaf);
      u.mutable_val()->set_uint_val(v + uint64_t(second) * 1'000'003 + port);
      v >>= 2;
    }
    wire.push_back(r.SerializeAsString());
  }
  return wire;
}

void BM_GnmiForward(benchmark::State& state) {
  const int ports = static_cast<int>(state.range(0));
  constexpr int kSeconds = 16;  // distinct samples cycled through
  std::vector<std::vector<std::string>> seconds;
  for (int s = 0; s < kSeconds; ++s) seconds.push_back(WireSecond(ports, s));

  auto profiles = LoadGnmiProfiles(RAILWATCH_SOURCE_DIR "/profiles/gnmi");
  if (!profiles.ok()) {
    state.SkipWithError(std::string(profiles.status().message()).c_str());
    return;
  }
  GnmiSwitchCollector::Options options;
  GnmiTargetConfig target;
  target.name = "leaf-r0";
  target.address = "127.0.0.1:1";  // never dialled: the responses are handed in directly
  target.profile = "openconfig";
  options.targets = {target};
  options.self_labels = {{"agent", "bench"}};
  auto collector = GnmiSwitchCollector::Create(std::move(options), *std::move(profiles));
  if (!collector.ok()) {
    state.SkipWithError(std::string(collector.status().message()).c_str());
    return;
  }
  SeriesRegistry registry({});
  BatchBuilder builder(registry);
  std::shared_ptr<v1::Batch> spare;
  std::string out;
  ::gnmi::SubscribeResponse response;
  uint64_t updates = 0;
  size_t bytes_out = 0;
  int s = 0;
  for (auto _ : state) {
    for (const std::string& wire : seconds[s]) {
      response.ParseFromString(wire);
      (*collector)->HandleResponse(0, response);
    }
    (*collector)->Collect(builder).IgnoreError();
    std::shared_ptr<v1::Batch> batch = builder.Take(std::move(spare));
    batch->SerializeToString(&out);
    bytes_out += out.size();
    spare = std::move(batch);  // the sender hands acked batches back for reuse
    updates += static_cast<uint64_t>(ports) * std::size(kLeaves);
    s = (s + 1) % kSeconds;
  }
  state.SetItemsProcessed(static_cast<int64_t>(updates));
  state.counters["batch_bytes_per_update"] =
      updates ? static_cast<double>(bytes_out) / static_cast<double>(updates) : 0;
  const auto stats = (*collector)->target_stats(0);
  state.counters["unmapped"] = static_cast<double>(stats.unmapped);
  state.counters["errors"] = static_cast<double>(stats.errors);
}
BENCHMARK(BM_GnmiForward)->Arg(32)->Arg(64)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace railwatch

int main(int argc, char** argv) {
  railwatch::InitLogging("gnmi_forward_bench", "warn").IgnoreError();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
