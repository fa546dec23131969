#include "exporters/metrics_server.h"

#include <zlib.h>

#include <chrono>
#include <cstring>
#include <exception>

#include "CivetServer.h"
#include "absl/strings/str_cat.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace railwatch {

namespace {

// Level 1: on a 100k-series exposition the default level (6) costs several times the render
// for a few per cent smaller output; exposition text compresses about tenfold either way.
constexpr int kGzipLevel = Z_BEST_SPEED;

bool AcceptsGzip(mg_connection* conn) {
  const char* accept = mg_get_header(conn, "Accept-Encoding");
  return accept != nullptr && std::strstr(accept, "gzip") != nullptr;
}

}  // namespace

// One scrape's text and its gzip form, reused by later scrapes.
struct MetricsServer::Buffers {
  std::string text;
  std::unique_ptr<unsigned char[]> gzip;
  size_t gzip_capacity = 0;
  size_t gzip_size = 0;
  z_stream zs{};
  bool zs_ready = false;

  ~Buffers() {
    if (zs_ready) deflateEnd(&zs);
  }

  // Compresses `text` into `gzip`; false when zlib fails (the text is then sent as is).
  bool Compress() {
    if (!zs_ready) {
      if (deflateInit2(&zs, kGzipLevel, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_DEFAULT_STRATEGY) !=
          Z_OK) {
        return false;
      }
      zs_ready = true;
    } else if (deflateReset(&zs) != Z_OK) {
      return false;
    }
    const size_t bound = deflateBound(&zs, text.size());
    if (bound > gzip_capacity) {
      gzip_capacity = bound + bound / 4;  // room to grow without a new buffer each scrape
      gzip.reset(new unsigned char[gzip_capacity]);
    }
    zs.next_in = reinterpret_cast<Bytef*>(text.data());
    zs.avail_in = static_cast<uInt>(text.size());
    zs.next_out = gzip.get();
    zs.avail_out = static_cast<uInt>(gzip_capacity);
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END) return false;
    gzip_size = zs.total_out;
    return true;
  }
};

class MetricsServer::Handler final : public CivetHandler {
 public:
  explicit Handler(MetricsServer& server) : server_(server) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Buffers> buffers = server_.TakeBuffers();
    buffers->text.clear();
    server_.Render(buffers->text);
    const bool gzip = AcceptsGzip(conn) && buffers->Compress();
    const void* body = gzip ? static_cast<const void*>(buffers->gzip.get())
                            : static_cast<const void*>(buffers->text.data());
    const size_t size = gzip ? buffers->gzip_size : buffers->text.size();
    mg_printf(conn,
              "HTTP/1.1 200 OK\r\n"
              "Content-Type: text/plain; charset=utf-8\r\n"
              "%s"
              "Content-Length: %lu\r\n\r\n",
              gzip ? "Content-Encoding: gzip\r\n" : "", static_cast<unsigned long>(size));
    mg_write(conn, body, size);
    server_.ReturnBuffers(std::move(buffers));
    const auto elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    server_.request_latencies_->Observe(static_cast<double>(elapsed.count()));
    server_.bytes_transferred_->Increment(static_cast<double>(size));
    server_.scrapes_->Increment();
    return true;
  }

 private:
  MetricsServer& server_;
};

MetricsServer::MetricsServer() : registry_(std::make_shared<prometheus::Registry>()) {
  // The families and help texts of prometheus-cpp's Exposer, which served /metrics before.
  bytes_transferred_ = &prometheus::BuildCounter()
                            .Name("exposer_transferred_bytes_total")
                            .Help("Transferred bytes to metrics services")
                            .Register(*registry_)
                            .Add({});
  scrapes_ = &prometheus::BuildCounter()
                  .Name("exposer_scrapes_total")
                  .Help("Number of times metrics were scraped")
                  .Register(*registry_)
                  .Add({});
  request_latencies_ =
      &prometheus::BuildSummary()
           .Name("exposer_request_latencies")
           .Help("Latencies of serving scrape requests, in microseconds")
           .Register(*registry_)
           .Add({}, prometheus::Summary::Quantiles{{0.5, 0.05}, {0.9, 0.01}, {0.99, 0.001}});
  parts_.push_back({registry_, nullptr});
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen,
                                                                    int threads) {
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->handler_ = std::make_unique<Handler>(*server);
  try {
    server->server_ = std::make_unique<CivetServer>(
        std::vector<std::string>{"listening_ports", listen, "num_threads", absl::StrCat(threads)});
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve /metrics on ", listen, ": ", e.what()));
  }
  server->server_->addHandler("/metrics", server->handler_.get());
  return server;
}

MetricsServer::~MetricsServer() {
  server_.reset();  // joins the workers before the handler and buffers go
}

void MetricsServer::Add(std::shared_ptr<prometheus::Collectable> collectable) {
  absl::MutexLock lock(&parts_mu_);
  parts_.push_back({std::move(collectable), nullptr});
}

void MetricsServer::Add(std::shared_ptr<ExpositionSource> source) {
  absl::MutexLock lock(&parts_mu_);
  parts_.push_back({nullptr, std::move(source)});
}

int MetricsServer::port() const {
  if (!server_) return 0;
  std::vector<int> ports = server_->getListeningPorts();
  return ports.empty() ? 0 : ports[0];
}

void MetricsServer::Render(std::string& out) {
  absl::ReaderMutexLock lock(&parts_mu_);
  const prometheus::TextSerializer serializer;
  for (const Part& part : parts_) {
    if (part.source) {
      part.source->AppendExposition(out);
    } else {
      out += serializer.Serialize(part.collectable->Collect());
    }
  }
}

std::unique_ptr<MetricsServer::Buffers> MetricsServer::TakeBuffers() {
  {
    absl::MutexLock lock(&pool_mu_);
    if (!pool_.empty()) {
      std::unique_ptr<Buffers> buffers = std::move(pool_.back());
      pool_.pop_back();
      return buffers;
    }
  }
  return std::make_unique<Buffers>();
}

void MetricsServer::ReturnBuffers(std::unique_ptr<Buffers> buffers) {
  absl::MutexLock lock(&pool_mu_);
  pool_.push_back(std::move(buffers));
}

}  // namespace railwatch
