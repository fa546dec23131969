// /metrics at scale (issue 8): a SeriesStore with --series series of a synthetic pod (hosts x 8
// NICs with every canonical series an mlx5 NIC reports: host, device, port, priority,
// direction ... labels, as agents send them), exposed as railwatchd exposes it.
//
//   metrics_bench [--series=100000] [--renders=50] [--scrapes=10000] [--path=text|families]
//
// --path=text (default): the daemon's /metrics today, MetricsServer with StoreExposition.
// --path=families: before issue 8, prometheus-cpp's Exposer with StoreCollectable (a
// MetricFamily per name, a ClientMetric per series, then TextSerializer).
//
// Prints FIGURE lines: the in-process render (median, p99, allocations), a scrape of the
// in-process server over HTTP on loopback (time to last byte, plain and gzip), and the
// process' RSS growth over --scrapes scrapes after a warm-up. bench/metrics_scrape.sh runs it
// and scrapes the real railwatchd.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/program.h"
#include "common/clock.h"
#include "common/vocabulary.h"
#include "exporters/daemon_metrics.h"
#include "exporters/fabric_collectable.h"
#include "exporters/metrics_server.h"
#include "exporters/store_exposition.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

ABSL_FLAG(int, series, 100000, "series in the store (hosts x 8 NICs x series per NIC)");
ABSL_FLAG(int, renders, 50, "in-process renders to time");
ABSL_FLAG(int, scrapes, 10000, "HTTP scrapes for the RSS figure (0: none)");
ABSL_FLAG(std::string, path, "text", "text (MetricsServer) or families (prometheus-cpp Exposer)");

// Every allocation of the process, counted: a steady-state render should make next to none.
std::atomic<long> g_allocations{0};

void* operator new(size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace railwatch::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

long RssKb() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

constexpr int kNics = 8;

struct PodSeries {
  SeriesRef ref;
  bool counter;
};

// hosts x 8 NICs x per_nic series: each canonical metric with {device,host,port} (per priority
// and direction where the metric is per priority), then driver counters
// (fabric_rdma_driver_stat_total{counter}) up to per_nic.
std::vector<PodSeries> BuildPod(SeriesStore& store, int hosts, int per_nic) {
  std::vector<PodSeries> out;
  for (int h = 0; h < hosts; ++h) {
    char host[32];
    std::snprintf(host, sizeof host, "gpu-node-%05d", h + 1);
    for (int n = 0; n < kNics; ++n) {
      int count = 0;
      auto add = [&](std::string_view name, MetricKind kind, Labels labels) {
        if (count++ >= per_nic) return;
        labels.push_back({"device", absl::StrCat("mlx5_", n)});
        labels.push_back({"host", host});
        labels.push_back({"port", "1"});
        NormalizeLabels(labels);
        out.push_back({store.Intern(name, labels, kind), kind == MetricKind::kCounter});
      };
      for (const MetricSpec& m : CanonicalMetrics()) {
        if (m.name.find("pfc") != std::string_view::npos ||
            m.name.find("priority") != std::string_view::npos) {
          for (int p = 0; p < 8; ++p) {
            for (const char* dir : {"rx", "tx"}) {
              add(m.name, m.kind, {{"direction", dir}, {"priority", absl::StrCat(p)}});
            }
          }
        } else {
          add(m.name, m.kind, {});
        }
      }
      // Driver statistics fill the NIC up to per_nic (add() counts in `count`).
      for (int k = 0;; ++k) {
        if (count >= per_nic) break;
        add("fabric_rdma_driver_stat_total", MetricKind::kCounter,
            {{"counter", absl::StrCat("hw_stat_", k)}});
      }
    }
  }
  return out;
}

// One sample per series at `now`: counters of 7 to 13 digits grow by a few a tick (so that the
// exposition keeps its size over a run, as a daemon's does over minutes), gauges hold.
void AppendTick(SeriesStore& store, const std::vector<PodSeries>& pod, int64_t now, int tick) {
  std::vector<SeriesStore::PendingSample> batch;
  batch.reserve(pod.size());
  for (size_t i = 0; i < pod.size(); ++i) {
    const double value =
        pod[i].counter ? static_cast<double>((i % 977 + 1) * 1'234'567'891 % 9'999'999'999'999 +
                                             1'000'000 + tick * (i % 7))
                       : static_cast<double>(i % 5) * 0.25;
    batch.push_back({pod[i].ref, now, value});
  }
  store.AppendMany(batch);
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

// GET /metrics on 127.0.0.1:port; returns the bytes of the response (headers included), or
// -1 on a failure.
long Scrape(int port, bool gzip, std::vector<char>& buf) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  const std::string request =
      std::string("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n") +
      (gzip ? "Accept-Encoding: gzip\r\n" : "") + "\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return -1;
  }
  long total = 0;
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) total += n;
  close(fd);
  return total;
}

struct Exposition {
  // One render of the whole exposition into `out`.
  std::function<void(std::string&)> render;
  int port = 0;
};

int Main() {
  const int series = absl::GetFlag(FLAGS_series);
  const bool families = absl::GetFlag(FLAGS_path) == "families";
  const int hosts = std::max(1, series / (kNics * 100));
  const int per_nic = std::max(1, series / (hosts * kNics));
  SeriesStore store(SeriesStore::Options{.capacity = 60});
  const std::vector<PodSeries> pod = BuildPod(store, hosts, per_nic);
  int64_t now = RealClock::Get().NowNanos();
  int tick = 0;
  AppendTick(store, pod, now, tick++);
  AppendTick(store, pod, now + 1'000'000'000, tick++);
  std::printf("store: %zu series (%d hosts x %d NICs x %d), path %s\n", store.size(), hosts, kNics,
              per_nic, families ? "families (prometheus-cpp Exposer)" : "text");

  // The daemon's own registry beside the store, as railwatchd registers them.
  auto registry = std::make_shared<prometheus::Registry>();
  DaemonMetrics daemon_metrics(*registry);
  const absl::Duration stale_after = absl::Minutes(5);
  Exposition exposition;
  std::unique_ptr<prometheus::Exposer> exposer;
  std::unique_ptr<MetricsServer> server;
  std::shared_ptr<prometheus::Collectable> store_collectable;
  if (families) {
    store_collectable = std::make_shared<StoreCollectable>(store, RealClock::Get(), stale_after);
    exposer = std::make_unique<prometheus::Exposer>("127.0.0.1:0");
    exposer->RegisterCollectable(registry);
    exposer->RegisterCollectable(store_collectable);
    exposition.port = exposer->GetListeningPorts().at(0);
    exposition.render = [&](std::string& out) {
      std::vector<prometheus::MetricFamily> all = registry->Collect();
      for (auto& f : store_collectable->Collect()) all.push_back(std::move(f));
      out = prometheus::TextSerializer().Serialize(all);
    };
  } else {
    absl::StatusOr<std::unique_ptr<MetricsServer>> started = MetricsServer::Start("127.0.0.1:0");
    if (!started.ok()) {
      std::fprintf(stderr, "%s\n", started.status().ToString().c_str());
      return 1;
    }
    server = std::move(*started);
    server->Add(registry);
    server->Add(std::make_shared<StoreExposition>(store, RealClock::Get(), stale_after));
    exposition.port = server->port();
    exposition.render = [&](std::string& out) {
      out.clear();
      server->Render(out);
    };
  }

  std::string text;
  for (int i = 0; i < 3; ++i) exposition.render(text);
  std::vector<double> render_ms;
  for (int i = 0; i < absl::GetFlag(FLAGS_renders); ++i) {
    const auto start = Clock::now();
    exposition.render(text);
    render_ms.push_back(Ms(Clock::now() - start));
  }
  std::printf("exposition: %zu bytes\n", text.size());
  const long allocations_before = g_allocations.load();
  exposition.render(text);
  std::printf("FIGURE metrics_render_100k_allocations %ld (one steady-state render)\n",
              g_allocations.load() - allocations_before);
  std::printf("FIGURE metrics_render_100k_ms %.2f ms (median of %zu renders of %zu series)\n",
              Percentile(render_ms, 0.5), render_ms.size(), store.size());
  std::printf("FIGURE metrics_render_100k_p99_ms %.2f ms\n", Percentile(render_ms, 0.99));

  std::vector<char> buf(1 << 20);
  for (bool gzip : {false, true}) {
    std::vector<double> scrape_ms;
    long bytes = 0;
    for (int i = 0; i < 21; ++i) {
      const auto start = Clock::now();
      bytes = Scrape(exposition.port, gzip, buf);
      scrape_ms.push_back(Ms(Clock::now() - start));
      if (bytes <= 0) {
        std::fprintf(stderr, "scrape of 127.0.0.1:%d failed\n", exposition.port);
        return 1;
      }
    }
    std::printf(
        "FIGURE metrics_server_scrape_100k%s_ms %.2f ms (median of %zu, %ld bytes, "
        "p99 %.2f)\n",
        gzip ? "_gzip" : "", Percentile(scrape_ms, 0.5), scrape_ms.size(), bytes,
        Percentile(scrape_ms, 0.99));
  }

  const int scrapes = absl::GetFlag(FLAGS_scrapes);
  if (scrapes > 0) {
    // Warm-up: the first scrapes grow the buffers to their steady size.
    for (int i = 0; i < 20; ++i) Scrape(exposition.port, i % 2 == 1, buf);
    const long rss_before = RssKb();
    const auto start = Clock::now();
    for (int i = 0; i < scrapes; ++i) {
      // New values every 100 scrapes, as ingest would bring them.
      if (i % 100 == 99) {
        AppendTick(store, pod, now + tick * 1'000'000'000LL, tick);
        ++tick;
      }
      if (Scrape(exposition.port, i % 2 == 1, buf) <= 0) return 1;
    }
    const long rss_after = RssKb();
    std::printf("RSS %ld kB after warm-up, %ld kB after %d scrapes (%.1f s, half gzip)\n",
                rss_before, rss_after, scrapes, Ms(Clock::now() - start) / 1000);
    std::printf("FIGURE metrics_rss_growth_%dk_scrapes_kb %ld kB\n", scrapes / 1000,
                rss_after - rss_before);
  }
  return 0;
}

}  // namespace
}  // namespace railwatch::bench

int main(int argc, char** argv) {
  railwatch::ParseProgramFlags(
      argc, argv,
      {.name = "metrics_bench",
       .summary = "/metrics at scale: the store rendered as railwatchd exposes it, scraped over HTTP on loopback; prints FIGURE lines.",
       .usage = "Usage: metrics_bench [--series=100000] [--renders=50] [--scrapes=10000] [--path=text|families]",
       .groups = {
          {"Benchmark", {"series", "renders", "scrapes", "path"}},
       }});
  return railwatch::bench::Main();
}
