// exporters/metrics_server.h over real HTTP on loopback: what a scrape returns, gzip when asked,
// the exposer_* families prometheus-cpp's Exposer served, and a listen address it cannot use.

#include "exporters/metrics_server.h"

#include <zlib.h>

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "support/http_get.h"

namespace railwatch {
namespace metrics_server_test {

using ::testing::HasSubstr;
using testing::HttpGet;
using ::testing::Not;
using ::testing::StartsWith;

class FixedText final : public ExpositionSource {
 public:
  explicit FixedText(std::string text) : text_(std::move(text)) {}
  void AppendExposition(std::string& out) override { out += text_; }

 private:
  std::string text_;
};

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) return "<inflateInit2 failed>";
  std::string out(in.size() * 50 + 1024, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int ret = inflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return ret == Z_STREAM_END ? out : "<not a complete gzip stream>";
}

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<MetricsServer>> started = MetricsServer::Start("127.0.0.1:0");
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = std::move(*started);
    ASSERT_GT(server_->port(), 0);
    auto registry = std::make_shared<prometheus::Registry>();
    prometheus::BuildGauge().Name("railwatch_up").Help("Up.").Register(*registry).Add({}).Set(1);
    server_->Add(registry);
    server_->Add(std::make_shared<FixedText>(
        "# TYPE fabric_x_total counter\nfabric_x_total{host=\"h1\"} 12\n"));
  }

  std::unique_ptr<MetricsServer> server_;
};

TEST_F(MetricsServerTest, ServesEveryPartInOrderAfterTheExposerFamilies) {
  const testing::HttpResponse r = HttpGet(server_->port(), "/metrics");
  ASSERT_EQ(r.status, 200) << r.headers;
  EXPECT_THAT(r.headers, HasSubstr("Content-Type: text/plain; charset=utf-8"));
  EXPECT_THAT(r.headers, HasSubstr("Content-Length: " + std::to_string(r.body.size())));
  EXPECT_THAT(r.headers, Not(HasSubstr("Content-Encoding")));
  EXPECT_THAT(r.body, StartsWith("# HELP exposer_transferred_bytes_total"));
  EXPECT_THAT(r.body, HasSubstr("# TYPE exposer_request_latencies summary\n"));
  EXPECT_THAT(r.body, HasSubstr("exposer_scrapes_total 0\n"));
  const size_t up = r.body.find("railwatch_up 1\n");
  ASSERT_NE(up, std::string::npos) << r.body;
  EXPECT_LT(up, r.body.find("fabric_x_total{host=\"h1\"} 12\n"));

  // The second scrape counts the first.
  EXPECT_THAT(HttpGet(server_->port(), "/metrics").body, HasSubstr("exposer_scrapes_total 1\n"));
}

TEST_F(MetricsServerTest, GzipWhenTheScraperAcceptsIt) {
  const testing::HttpResponse r =
      HttpGet(server_->port(), "/metrics", "Accept-Encoding: gzip, deflate\r\n");
  ASSERT_EQ(r.status, 200) << r.headers;
  EXPECT_THAT(r.headers, HasSubstr("Content-Encoding: gzip"));
  EXPECT_THAT(r.headers, HasSubstr("Content-Length: " + std::to_string(r.body.size())));
  const std::string text = Gunzip(r.body);
  EXPECT_THAT(text, StartsWith("# HELP exposer_transferred_bytes_total"));
  EXPECT_THAT(text, HasSubstr("fabric_x_total{host=\"h1\"} 12\n"));
  // Pooled buffers: a plain scrape after a gzip one is plain and whole.
  const testing::HttpResponse plain = HttpGet(server_->port(), "/metrics");
  EXPECT_THAT(plain.body, HasSubstr("fabric_x_total{host=\"h1\"} 12\n"));
}

TEST_F(MetricsServerTest, OtherPathsAreNotFound) {
  EXPECT_EQ(HttpGet(server_->port(), "/").status, 404);
}

TEST(MetricsServerStart, AnAddressItCannotUseIsAnError) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> first = MetricsServer::Start("127.0.0.1:0");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string taken = "127.0.0.1:" + std::to_string((*first)->port());
  absl::StatusOr<std::unique_ptr<MetricsServer>> second = MetricsServer::Start(taken);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("cannot serve /metrics on"));
  EXPECT_THAT(std::string(second.status().message()), HasSubstr(taken));
}

}  // namespace
}  // namespace railwatch
