// The Alertmanager notifier against a small HTTP server on 127.0.0.1 that records every POST
// and answers with scripted statuses: what is posted, retries after a 500, re-sends with
// endsAt ahead, resolves with the same labels, a full queue, a dead Alertmanager beside a live
// one, and a refused batch.
#include "daemon/alertmanager.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "prometheus/registry.h"

namespace railwatch {
namespace alertmanager_test {

using ::testing::HasSubstr;

// HTTP/1.1 just far enough for libcurl's POSTs: one request per connection (answered with
// Connection: close), the body by Content-Length.
class RecordingHttpServer {
 public:
  struct Request {
    std::string path;
    std::string body;
  };

  RecordingHttpServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RecordingHttpServer() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }

  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_); }
  // Statuses for the next requests, in order; then 200.
  void Script(std::vector<int> statuses) {
    absl::MutexLock lock(&mu_);
    script_.assign(statuses.begin(), statuses.end());
  }
  // Waits (up to 20 s, the test fails otherwise) until the requests so far satisfy `done`.
  std::vector<Request> WaitUntil(std::function<bool(const std::vector<Request>&)> done) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return done(requests_); };
    EXPECT_TRUE(mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(20)))
        << "gave up waiting after " << requests_.size() << " request(s)";
    return requests_;
  }
  std::vector<Request> WaitFor(size_t n) {
    return WaitUntil([n](const std::vector<Request>& r) { return r.size() >= n; });
  }
  std::vector<Request> requests() {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stopping_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      Handle(c);
      close(c);
    }
  }
  void Handle(int c) {
    std::string data;
    char buf[4096];
    size_t header_end = std::string::npos;
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
      ssize_t n = read(c, buf, sizeof(buf));
      if (n <= 0) return;
      data.append(buf, n);
    }
    size_t length = 0;
    const size_t cl = data.find("Content-Length: ");
    if (cl != std::string::npos && cl < header_end) {
      std::string v = data.substr(cl + 16, data.find("\r\n", cl) - cl - 16);
      EXPECT_TRUE(absl::SimpleAtoi(v, &length));
    }
    while (data.size() < header_end + 4 + length) {
      ssize_t n = read(c, buf, sizeof(buf));
      if (n <= 0) return;
      data.append(buf, n);
    }
    Request r;
    const size_t sp = data.find(' ');
    r.path = data.substr(sp + 1, data.find(' ', sp + 1) - sp - 1);
    r.body = data.substr(header_end + 4, length);
    int status = 200;
    {
      absl::MutexLock lock(&mu_);
      if (!script_.empty()) {
        status = script_.front();
        script_.pop_front();
      }
      requests_.push_back(std::move(r));
    }
    const std::string body = status == 200 ? "" : "{\"message\": \"scripted failure\"}";
    const std::string reply =
        absl::StrCat("HTTP/1.1 ", status, " X\r\nContent-Length: ", body.size(),
                     "\r\nConnection: close\r\n\r\n", body);
    (void)!write(c, reply.data(), reply.size());
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  absl::Mutex mu_;
  std::deque<int> script_ ABSL_GUARDED_BY(mu_);
  std::vector<Request> requests_ ABSL_GUARDED_BY(mu_);
};

// A port nothing listens on (bound, then closed).
std::string DeadUrl() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return absl::StrCat("http://127.0.0.1:", ntohs(addr.sin_port));
}

AlertRecord Flap(const std::string& id, const std::string& host, int64_t since) {
  AlertRecord a;
  a.id = id;
  a.playbook = "link_flap";
  a.severity = v1::SEVERITY_CRITICAL;
  a.state = AlertState::kFiring;
  a.summary = "Link flap on " + host + " mlx5_1 port 1";
  a.active_since = since;
  a.fired_at = since;
  a.culprit = Labels{{"host", host}, {"device", "mlx5_1"}};
  return a;
}

// The value of one series of the registry; -1 when absent.
double Metric(prometheus::Registry& registry, const std::string& name,
              const std::map<std::string, std::string>& labels = {}) {
  for (const prometheus::MetricFamily& f : registry.Collect()) {
    if (f.name != name) continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      std::map<std::string, std::string> have;
      for (const auto& l : m.label) have[l.name] = l.value;
      if (have != labels) continue;
      return f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
    }
  }
  return -1;
}

class AlertmanagerNotifierTest : public ::testing::Test {
 protected:
  AlertmanagerNotifier::Options Opts(std::vector<std::string> urls) {
    AlertmanagerNotifier::Options o;
    o.urls = std::move(urls);
    o.resend_interval = absl::Hours(1);  // tests that want re-sends shorten it
    o.timeout = absl::Seconds(5);
    o.backoff = {absl::Milliseconds(20), absl::Milliseconds(100), 2.0, 0.1};
    return o;
  }
  std::unique_ptr<AlertmanagerNotifier> Make(AlertmanagerNotifier::Options o) {
    return std::make_unique<AlertmanagerNotifier>(
        std::move(o), AlertmanagerNotifier::Deps{clock_, registry_, nullptr, nullptr, nullptr});
  }

  FakeClock clock_;
  prometheus::Registry registry_;
  RecordingHttpServer server_;
};

TEST_F(AlertmanagerNotifierTest, PostsAFiringAlertAndRetriesAfterA500) {
  server_.Script({500});
  auto notifier = Make(Opts({server_.url() + "/"}));
  notifier->Start();
  notifier->OnFiring(Flap("id-1", "gpu-node-002", clock_.NowNanos()));

  const auto requests = server_.WaitFor(2);
  ASSERT_GE(requests.size(), 2u);
  EXPECT_EQ(requests[0].path, "/api/v2/alerts");
  EXPECT_EQ(requests[0].body, requests[1].body) << "the retry posts the same alert";
  const nlohmann::json body = nlohmann::json::parse(requests[1].body);
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(body[0]["labels"]["alertname"], "link_flap");
  EXPECT_EQ(body[0]["labels"]["host"], "gpu-node-002");
  EXPECT_EQ(body[0]["annotations"]["diagnosis_id"], "id-1");
  // endsAt: the fake clock's now + 4 x the resend interval (1h).
  EXPECT_EQ(body[0]["endsAt"], "2023-11-15T02:13:20.000Z");
  notifier->Stop();

  const std::string url = server_.url();
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_posts_total",
                   {{"alertmanager", url + "/"}, {"result", "error"}}),
            1);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_posts_total",
                   {{"alertmanager", url + "/"}, {"result", "ok"}}),
            1);
  EXPECT_EQ(
      Metric(registry_, "railwatch_alertmanager_alerts_sent_total", {{"alertmanager", url + "/"}}),
      1);
  EXPECT_GT(Metric(registry_, "railwatch_alertmanager_last_success_timestamp_seconds",
                   {{"alertmanager", url + "/"}}),
            1.6e9);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_dropped_total"), 0);
  EXPECT_EQ(server_.requests().size(), 2u) << "nothing more once it was accepted";
}

TEST_F(AlertmanagerNotifierTest, ResendsWhileFiringThenResolvesWithTheSameLabels) {
  AlertmanagerNotifier::Options o = Opts({server_.url()});
  o.resend_interval = absl::Milliseconds(50);
  auto notifier = Make(o);
  notifier->Start();
  const int64_t since = clock_.NowNanos();
  notifier->OnFiring(Flap("id-1", "gpu-node-002", since));
  const auto sent = server_.WaitFor(3);  // the first post and two re-sends
  for (const auto& r : sent) {
    const nlohmann::json b = nlohmann::json::parse(r.body);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0]["endsAt"], "2023-11-14T22:13:20.200Z") << "now + 4 x 50ms";
    EXPECT_EQ(b[0]["startsAt"], "2023-11-14T22:13:20.000Z");
  }

  // The incident resolves; the diagnosis given now names another host (as if the culprit
  // had changed): the resolve must still match the alert that fired.
  AlertRecord resolved = Flap("id-1", "gpu-node-999", since);
  resolved.state = AlertState::kResolved;
  resolved.resolved_at = since + 90'000'000'000;
  notifier->OnResolved(resolved);
  auto is_resolve = [](const RecordingHttpServer::Request& r) {
    return nlohmann::json::parse(r.body)[0]["endsAt"] == "2023-11-14T22:14:50.000Z";
  };
  server_.WaitUntil([&](const std::vector<RecordingHttpServer::Request>& rs) {
    return std::any_of(rs.begin(), rs.end(), is_resolve);
  });
  // Wait out a few resend intervals: a resolved alert is not re-sent, nor fires again.
  absl::SleepFor(absl::Milliseconds(200));
  notifier->Stop();
  const auto all = server_.requests();
  ASSERT_FALSE(all.empty());
  ASSERT_TRUE(is_resolve(all.back())) << all.back().body;
  EXPECT_EQ(std::count_if(all.begin(), all.end(), is_resolve), 1);
  const nlohmann::json last = nlohmann::json::parse(all.back().body);
  EXPECT_EQ(last[0]["labels"], nlohmann::json::parse(sent[0].body)[0]["labels"]);
  EXPECT_EQ(last[0]["labels"]["host"], "gpu-node-002");
  EXPECT_EQ(last[0]["annotations"]["summary"], "Link flap on gpu-node-002 mlx5_1 port 1");
}

// After a restart the engine hands over what was firing (OnRestored): the alert goes out at
// once, with the startsAt of the first page (Alertmanager sees the same alert, not a new one),
// is re-sent while it fires and resolved like any other.
TEST_F(AlertmanagerNotifierTest, RestoredAlertKeepsItsStartsAtAndIsResentAndResolved) {
  AlertmanagerNotifier::Options o = Opts({server_.url()});
  o.resend_interval = absl::Milliseconds(50);
  auto notifier = Make(o);
  notifier->Start();
  const int64_t since = clock_.NowNanos() - 3'600'000'000'000;  // fired an hour ago
  notifier->OnRestored(Flap("id-1", "gpu-node-002", since));
  const auto sent = server_.WaitFor(3);  // at once, then re-sent
  for (const auto& r : sent) {
    const nlohmann::json b = nlohmann::json::parse(r.body);
    ASSERT_EQ(b.size(), 1u);
    EXPECT_EQ(b[0]["startsAt"], "2023-11-14T21:13:20.000Z") << "the first page's startsAt";
    EXPECT_EQ(b[0]["annotations"]["diagnosis_id"], "id-1");
  }
  AlertRecord resolved = Flap("id-1", "gpu-node-002", since);
  resolved.state = AlertState::kResolved;
  resolved.resolved_at = clock_.NowNanos();
  notifier->OnResolved(resolved);
  server_.WaitUntil([](const std::vector<RecordingHttpServer::Request>& rs) {
    return !rs.empty() &&
           nlohmann::json::parse(rs.back().body)[0]["endsAt"] == "2023-11-14T22:13:20.000Z";
  });
  notifier->Stop();
  const nlohmann::json last = nlohmann::json::parse(server_.requests().back().body);
  EXPECT_EQ(last[0]["labels"], nlohmann::json::parse(sent[0].body)[0]["labels"]);
}

TEST_F(AlertmanagerNotifierTest, FullQueueDropsTheOldestAndCountsIt) {
  AlertmanagerNotifier::Options o = Opts({server_.url()});
  o.queue_capacity = 2;
  auto notifier = Make(o);
  // Not started: the engine's callbacks only queue.
  notifier->OnFiring(Flap("id-1", "gpu-node-001", clock_.NowNanos()));
  notifier->OnFiring(Flap("id-2", "gpu-node-002", clock_.NowNanos()));
  notifier->OnFiring(Flap("id-3", "gpu-node-003", clock_.NowNanos()));
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_dropped_total"), 1);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_queue_length"), 2);
  notifier->Start();
  const auto requests = server_.WaitFor(1);
  std::set<std::string> ids;
  for (const auto& r : requests) {
    for (const auto& a : nlohmann::json::parse(r.body))
      ids.insert(a["annotations"]["diagnosis_id"]);
  }
  EXPECT_EQ(ids, (std::set<std::string>{"id-2", "id-3"}));
  notifier->Stop();
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_queue_length"), 0);
}

TEST_F(AlertmanagerNotifierTest, DeadAlertmanagerDoesNotHoldUpTheLiveOne) {
  const std::string dead = DeadUrl();
  auto notifier = Make(Opts({dead, server_.url()}));
  notifier->Start();
  notifier->OnFiring(Flap("id-1", "gpu-node-002", clock_.NowNanos()));
  server_.WaitFor(1);
  // The dead one is retried with backoff: errors pile up, the live one got it once.
  for (int i = 0; i < 400 && Metric(registry_, "railwatch_alertmanager_posts_total",
                                    {{"alertmanager", dead}, {"result", "error"}}) < 3;
       ++i) {
    absl::SleepFor(absl::Milliseconds(25));
  }
  notifier->Stop();
  EXPECT_GE(Metric(registry_, "railwatch_alertmanager_posts_total",
                   {{"alertmanager", dead}, {"result", "error"}}),
            3);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_posts_total",
                   {{"alertmanager", dead}, {"result", "ok"}}),
            0);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_posts_total",
                   {{"alertmanager", server_.url()}, {"result", "ok"}}),
            1);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_last_success_timestamp_seconds",
                   {{"alertmanager", dead}}),
            0);
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(AlertmanagerNotifierTest, RefusedBatchIsDroppedNotRetried) {
  server_.Script({400});
  auto notifier = Make(Opts({server_.url()}));
  notifier->Start();
  notifier->OnFiring(Flap("id-1", "gpu-node-002", clock_.NowNanos()));
  server_.WaitFor(1);
  notifier->OnFiring(Flap("id-2", "gpu-node-003", clock_.NowNanos()));
  const auto requests = server_.WaitFor(2);
  notifier->Stop();
  EXPECT_THAT(requests[1].body, HasSubstr("id-2"));
  EXPECT_THAT(requests[1].body, testing::Not(HasSubstr("id-1")));
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_dropped_total"), 1);
  EXPECT_EQ(Metric(registry_, "railwatch_alertmanager_posts_total",
                   {{"alertmanager", server_.url()}, {"result", "error"}}),
            1);
}

TEST_F(AlertmanagerNotifierTest, ResolveQueuedAtStopStillGoesOut) {
  auto notifier = Make(Opts({server_.url()}));
  notifier->Start();
  AlertRecord d = Flap("id-1", "gpu-node-002", clock_.NowNanos());
  d.state = AlertState::kResolved;
  d.resolved_at = clock_.NowNanos() + 1'000'000'000;
  notifier->OnResolved(d);
  notifier->Stop();
  notifier->OnFiring(Flap("id-2", "gpu-node-003", clock_.NowNanos()));  // after Stop: ignored
  const auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(requests[0].body)[0]["endsAt"], "2023-11-14T22:13:21.000Z");
}

TEST(AlertmanagerUrlsTest, OnlyHttpUrlsWithAHost) {
  EXPECT_TRUE(AlertmanagerNotifier::ValidateUrls({"http://am-0:9093", "https://am.example/"}).ok());
  EXPECT_FALSE(AlertmanagerNotifier::ValidateUrls({"am-0:9093"}).ok());
  EXPECT_FALSE(AlertmanagerNotifier::ValidateUrls({"http://"}).ok());
  EXPECT_FALSE(AlertmanagerNotifier::ValidateUrls({"ftp://am"}).ok());
  absl::Status s = AlertmanagerNotifier::ValidateUrls({"am-user:secret@am-0:9093"});
  EXPECT_THAT(std::string(s.message()), testing::Not(HasSubstr("secret")));
}

TEST(RedactUrlTest, RemovesCredentials) {
  EXPECT_EQ(RedactUrl("https://user:pw@am.example:9093/x@y"), "https://am.example:9093/x@y");
  EXPECT_EQ(RedactUrl("http://am-0:9093"), "http://am-0:9093");
}

}  // namespace alertmanager_test
}  // namespace railwatch
