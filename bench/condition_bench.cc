// The condition language on a million series: 20 metric names x 50,000 series (6,250 hosts x
// 8 NICs, labels host, device, port, rail), 12 samples each at 1 s. Each benchmark evaluates
// one condition (warm: selections cached, as every tick after the first) and reports the time
// per evaluation; BM_Tick evaluates 50 conditions, a tick of 50 playbooks.
//
//   build/release/bench/condition_bench [--benchmark_filter=...]
//
// No topology: topology()/peer() cost is fabric_map_bench's.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "engine/condition.h"
#include "store/event_store.h"
#include "store/series_store.h"

namespace railwatch {
namespace {

constexpr int kHosts = 6250;
constexpr int kNics = 8;
constexpr int kNames = 20;
constexpr int kSamples = 12;
constexpr int64_t kSec = 1'000'000'000;
constexpr int64_t kNow = kSamples * kSec;

std::string Name(int m) { return absl::StrCat("fabric_bench_", m, "_total"); }

// Built once for every benchmark: about 1 GB.
SeriesStore& Store() {
  static SeriesStore* store = [] {
    auto* s = new SeriesStore(SeriesStore::Options{.capacity = 16});
    std::vector<SeriesRef> refs;
    refs.reserve(kNames * kHosts * kNics);
    for (int m = 0; m < kNames; ++m) {
      for (int h = 0; h < kHosts; ++h) {
        char host[32];
        std::snprintf(host, sizeof host, "gpu-node-%05d", h + 1);
        for (int n = 0; n < kNics; ++n) {
          Labels labels = {{"device", absl::StrCat("mlx5_", n)},
                           {"host", host},
                           {"port", "1"},
                           {"rail", absl::StrCat(n)}};
          refs.push_back(s->Intern(Name(m), labels, TraitsOf(Name(m), MetricKind::kCounter)));
        }
      }
    }
    // Each NIC moves at its own steady rate (1-1000 MB/s); one NIC in 997 at a tenth of it.
    for (int t = 1; t <= kSamples; ++t) {
      for (size_t i = 0; i < refs.size(); ++i) {
        double rate = 1e6 * static_cast<double>(1 + (i * 7919) % 1000);
        if (i % 997 == 0) rate /= 10;
        s->Append(refs[i], t * kSec, rate * t);
      }
    }
    return s;
  }();
  return *store;
}

void Evaluate(benchmark::State& state, const std::string& text) {
  SeriesStore& store = Store();
  ParseEnv env;
  env.lists["lossless_priorities"] = {"3", "4"};
  auto cond = ParseCondition(text, env);
  if (!cond.ok()) {
    state.SkipWithError(std::string(cond.status().message()).c_str());
    return;
  }
  const EvalContext ctx{store, nullptr, nullptr, kNow};
  size_t elements = (*cond)->Evaluate(ctx).size();  // warms the selection cache
  for (auto _ : state) {
    std::vector<VectorElement> out = (*cond)->Evaluate(ctx);
    elements = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["elements"] = static_cast<double>(elements);
  state.counters["series_read"] = kHosts * kNics;
}

// 50,000 rates, nothing passes: the cost of reading.
void BM_RateFilterNone(benchmark::State& state) {
  Evaluate(state, "rate(fabric_bench_0_total[5s]) > 1e12");
}
// 50,000 rates, all pass: reading plus building every element.
void BM_RateFilterAll(benchmark::State& state) {
  Evaluate(state, "rate(fabric_bench_1_total[5s]) > 0");
}
void BM_IncreaseLongWindow(benchmark::State& state) {
  Evaluate(state, "increase(fabric_bench_2_total[5m]) > 1e12");
}
void BM_PlainSelector(benchmark::State& state) {
  Evaluate(state, "fabric_bench_3_total > 1e15");
}
void BM_RegexSelector(benchmark::State& state) {
  Evaluate(state, "rate(fabric_bench_4_total{device=~\"mlx5_[0-3]\", host!~\".*9\"}[5s]) > 1e12");
}
// 6,250 groups of 8.
void BM_SumByHost(benchmark::State& state) {
  Evaluate(state, "sum by (host) (rate(fabric_bench_5_total[5s])) > 1e12");
}
// 8 groups of 6,250: the outliers (one NIC in 997 runs at a tenth of its rate).
void BM_PeerRatioByRail(benchmark::State& state) {
  Evaluate(state, "peer_ratio(rate(fabric_bench_6_total[5s]), by (rail)) < 0.01");
}
void BM_Unless(benchmark::State& state) {
  Evaluate(state,
           "rate(fabric_bench_7_total[5s]) > 9.9e8 unless on(host, device) "
           "rate(fabric_bench_8_total[5s]) > 9.99e8");
}
void BM_VectorArithmetic(benchmark::State& state) {
  Evaluate(state, "rate(fabric_bench_9_total[5s]) / rate(fabric_bench_10_total[5s]) > 2");
}

BENCHMARK(BM_RateFilterNone)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RateFilterAll)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IncreaseLongWindow)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlainSelector)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RegexSelector)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumByHost)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PeerRatioByRail)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Unless)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_VectorArithmetic)->Unit(benchmark::kMillisecond);

// 50 conditions over the 20 names, the shapes above in rotation: each name is read by 2-3
// conditions, as playbooks share signals.
void BM_Tick50(benchmark::State& state) {
  SeriesStore& store = Store();
  std::vector<std::unique_ptr<Condition>> conds;
  for (int p = 0; p < 50; ++p) {
    const std::string a = Name(p % kNames), b = Name((p + 7) % kNames);
    std::string text;
    switch (p % 5) {
      case 0: text = absl::StrCat("rate(", a, "[5s]) > 1e12"); break;
      case 1: text = absl::StrCat("increase(", a, "[1m]) > 1e12"); break;
      case 2: text = absl::StrCat("sum by (host) (rate(", a, "[5s])) > 1e12"); break;
      case 3: text = absl::StrCat("peer_ratio(rate(", a, "[5s]), by (rail)) < 0.01"); break;
      case 4:
        text = absl::StrCat("rate(", a, "[5s]) > 9.9e8 unless on(host, device) rate(", b,
                            "[5s]) > 9.99e8");
        break;
    }
    auto cond = ParseCondition(text);
    if (!cond.ok()) {
      state.SkipWithError(std::string(cond.status().message()).c_str());
      return;
    }
    conds.push_back(std::move(*cond));
  }
  const EvalContext ctx{store, nullptr, nullptr, kNow};
  for (const auto& c : conds) c->Evaluate(ctx);
  for (auto _ : state) {
    size_t elements = 0;
    for (const auto& c : conds) elements += c->Evaluate(ctx).size();
    benchmark::DoNotOptimize(elements);
  }
  state.counters["conditions"] = 50;
}
BENCHMARK(BM_Tick50)->Unit(benchmark::kMillisecond);

// The first evaluation of a fresh condition: matchers (a regex) run over every series of the
// name once; later ticks reuse the selection.
void BM_FirstEvaluation(benchmark::State& state) {
  SeriesStore& store = Store();
  const EvalContext ctx{store, nullptr, nullptr, kNow};
  for (auto _ : state) {
    auto cond = ParseCondition(
        "rate(fabric_bench_11_total{device=~\"mlx5_[0-3]\"}[5s]) > 1e12");
    benchmark::DoNotOptimize((*cond)->Evaluate(ctx));
  }
}
BENCHMARK(BM_FirstEvaluation)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railwatch

BENCHMARK_MAIN();
