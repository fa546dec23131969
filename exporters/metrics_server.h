#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/registry.h"
#include "prometheus/summary.h"

class CivetServer;

namespace railwatch {

// A part of the exposition that writes its text straight into the scrape's buffer, for
// sources too large to go through prometheus-cpp's MetricFamily (the store's series).
class ExpositionSource {
 public:
  virtual ~ExpositionSource() = default;
  // Appends complete families (HELP, TYPE, samples). Called from scrape threads.
  virtual void AppendExposition(std::string& out) = 0;
};

// Serves GET /metrics over HTTP (civetweb, as prometheus-cpp's Exposer does) from
// prometheus-cpp collectables and ExpositionSources, in the order they were added, after the
// server's own exposer_* metrics (the same families the Exposer served). The response is
// gzip-compressed when the scraper accepts gzip. Text and gzip buffers are pooled and reused,
// so a scrape in steady state allocates nothing in proportion to the size of the exposition.
//
// prometheus-cpp's Exposer cannot serve pre-rendered text (it takes collectables only and
// builds a MetricFamily per family and a ClientMetric per series on every scrape): hence this
// small handler of our own on the same civetweb.
class MetricsServer {
 public:
  // Listens on `listen` ("host:port"; port 0 picks a free one) with `threads` workers.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& listen,
                                                              int threads = 2);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  void Add(std::shared_ptr<prometheus::Collectable> collectable);
  void Add(std::shared_ptr<ExpositionSource> source);

  // The port actually bound (0 when unknown).
  int port() const;

  // The whole exposition as a scrape serves it, appended to `out` (tests and benchmarks).
  void Render(std::string& out);

 private:
  class Handler;
  struct Buffers;
  struct Part {  // one of the two is set
    std::shared_ptr<prometheus::Collectable> collectable;
    std::shared_ptr<ExpositionSource> source;
  };

  MetricsServer();
  std::unique_ptr<Buffers> TakeBuffers();
  void ReturnBuffers(std::unique_ptr<Buffers> buffers);

  std::shared_ptr<prometheus::Registry> registry_;  // exposer_* metrics
  prometheus::Counter* bytes_transferred_;
  prometheus::Counter* scrapes_;
  prometheus::Summary* request_latencies_;

  absl::Mutex parts_mu_;
  std::vector<Part> parts_ ABSL_GUARDED_BY(parts_mu_);
  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<Buffers>> pool_ ABSL_GUARDED_BY(pool_mu_);

  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;  // last: stopped first, before what the handler uses
};

}  // namespace railwatch
