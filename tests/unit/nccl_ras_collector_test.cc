#include "collectors/nccl_ras_collector.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace nccl_ras_collector_test {

using ::railwatch::testing::Attribute;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Fixture(const std::string& name) { return testing::ReadFixture("logs/" + name); }

// A RAS endpoint on loopback that speaks the client protocol of NCCL's src/ras/client_support.cc:
// "CLIENT PROTOCOL n" -> "SERVER PROTOCOL 2", "TIMEOUT s" -> "OK", "SET FORMAT json" -> "OK"
// (NCCL 2.28.7+) or "ERROR: Unknown command ..." (older), "STATUS" -> the report, then close.
class FakeRasServer {
 public:
  struct Behaviour {
    bool json = true;            // takes SET FORMAT json
    std::string json_report = "";  // answered to STATUS in JSON mode
    std::string text_report = "";  // answered to STATUS in text mode
    bool hang_on_status = false; // never answers STATUS
    std::string greeting = "SERVER PROTOCOL 2";
  };

  explicit FakeRasServer(Behaviour b) : b_(std::move(b)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    EXPECT_EQ(listen(fd_, 8), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeRasServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  int port() const { return port_; }
  int connections() const { return connections_; }
  std::string Address() const { return absl::StrCat("127.0.0.1:", port_); }
  void set_json_report(std::string r) {
    std::lock_guard<std::mutex> lock(mu_);
    b_.json_report = std::move(r);
  }

 private:
  void Serve() {
    while (!stop_) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      Handle(c);
      close(c);
    }
  }
  void Send(int c, const std::string& text) { (void)send(c, text.data(), text.size(), MSG_NOSIGNAL); }
  void Handle(int c) {
    std::string buffer;
    bool json = false;
    char chunk[4096];
    while (!stop_) {
      size_t nl;
      while ((nl = buffer.find('\n')) == std::string::npos) {
        const ssize_t n = recv(c, chunk, sizeof(chunk), 0);
        if (n <= 0) return;
        buffer.append(chunk, static_cast<size_t>(n));
      }
      const std::string cmd = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      std::lock_guard<std::mutex> lock(mu_);
      if (absl::StartsWithIgnoreCase(cmd, "client protocol ")) {
        Send(c, b_.greeting + "\n");
      } else if (absl::StartsWithIgnoreCase(cmd, "timeout ")) {
        Send(c, "OK\n");
      } else if (absl::EqualsIgnoreCase(cmd, "set format json")) {
        json = b_.json;
        Send(c, b_.json ? "OK\n" : "ERROR: Unknown command " + cmd + "\n");
      } else if (absl::EqualsIgnoreCase(cmd, "status")) {
        if (b_.hang_on_status) {
          while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(10));
          return;
        }
        Send(c, json ? b_.json_report : b_.text_report);
        return;  // the server closes after the report
      } else {
        Send(c, "ERROR: Unknown command " + cmd + "\n");
      }
    }
  }

  Behaviour b_;
  std::mutex mu_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

RasEndpoint Endpoint(const FakeRasServer& s) { return *ParseRasAddress(s.Address(), "test"); }

std::vector<logs::LogEvent> OfKind(const std::vector<logs::LogEvent>& events, std::string_view kind) {
  std::vector<logs::LogEvent> out;
  for (const logs::LogEvent& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

TEST(RasQuery, JsonReportOfNccl2289NamesTheRankBehind) {
  FakeRasServer server(
      {.json_report = Fixture("ras_08_v2.28.9_json_mismatch_allreduce_4nodes_a10g.json")});
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(Endpoint(server), absl::Seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_TRUE(answer->json);
  EXPECT_EQ(answer->protocol, "2");
  std::vector<std::string> problems;
  std::vector<logs::LogEvent> events = RasAnswerEvents(*answer, "ras", problems);
  EXPECT_TRUE(problems.empty());
  std::vector<logs::LogEvent> issues = OfKind(events, "nccl_ras.comm_issue");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].Value("ranks"), "1");
  EXPECT_EQ(issues[0].Value("nodes"), "10.0.109.86");
}

TEST(RasQuery, OlderNcclWithoutJsonAnswersInText) {
  FakeRasServer server({.json = false,
                        .text_report = Fixture("nccl_ras_01_v2.26.2_mismatch_allgather_4nodes.txt")});
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(Endpoint(server), absl::Seconds(5));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_FALSE(answer->json);
  std::vector<std::string> problems;
  std::vector<logs::LogEvent> events = RasAnswerEvents(*answer, "ras", problems);
  std::vector<logs::LogEvent> issues = OfKind(events, "nccl_ras.comm_issue");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].Value("op"), "AllGather");
  EXPECT_EQ(issues[0].Value("ranks"), "12,13");
  EXPECT_EQ(OfKind(events, "nccl_ras.report")[0].Value("nccl_version"), "2.26.2");
}

TEST(RasQuery, AStuckEndpointIsGivenUpOnAtTheTimeout) {
  FakeRasServer server({.hang_on_status = true});
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(Endpoint(server), absl::Milliseconds(300));
  ASSERT_FALSE(answer.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(answer.status())) << answer.status();
  EXPECT_THAT(answer.status().message(), HasSubstr("STATUS"));
}

TEST(RasQuery, SomethingElseOnThePortIsNotTakenForRas) {
  FakeRasServer server({.greeting = "HTTP/1.1 400 Bad Request"});
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(Endpoint(server), absl::Seconds(5));
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(), HasSubstr("not an NCCL RAS endpoint"));
}

TEST(RasQuery, NobodyListeningIsRefused) {
  int port;
  {
    FakeRasServer gone({});
    port = gone.port();
  }
  absl::StatusOr<RasAnswer> answer = QueryRasStatus(
      *ParseRasAddress(absl::StrCat("127.0.0.1:", port), "test"), absl::Seconds(2));
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.status().message(), HasSubstr("refused"));
}

TEST(RasEndpoints, AutoFindsTheDefaultAndEachProcesssNcclRasAddrOnce) {
  TempDir proc;
  auto environ = [&](const std::string& pid, const std::string& content) {
    std::filesystem::create_directories(proc.path() + "/" + pid);
    std::ofstream(proc.path() + "/" + pid + "/environ", std::ios::binary) << content;
  };
  using namespace std::string_literals;
  environ("123", "PATH=/usr/bin\0NCCL_RAS_ADDR=10.0.0.5:29000\0HOME=/root\0"s);
  environ("124", "NCCL_RAS_ADDR=10.0.0.5:29000\0"s);  // the same job's other rank
  environ("456", "NCCL_RAS_ADDR=[::1]:28030\0"s);
  environ("789", "NCCL_RAS_ADDR=no-port\0"s);  // malformed: skipped
  environ("790", "NCCL_RAS_ADDR=elsewhere.example.com:28028\0"s);  // not an address here
  environ("self", "NCCL_RAS_ADDR=10.9.9.9:1\0"s);  // not a pid directory
  absl::StatusOr<std::vector<RasEndpoint>> found = RasEndpoints("auto", proc.path());
  ASSERT_TRUE(found.ok()) << found.status();
  std::vector<std::string> addresses;
  for (const RasEndpoint& e : *found) addresses.push_back(e.Address());
  EXPECT_THAT(addresses, ::testing::UnorderedElementsAre("localhost:28028", "10.0.0.5:29000",
                                                         "[::1]:28030"));
  EXPECT_EQ((*found)[0].origin, "default");

  EXPECT_TRUE(RasEndpoints("off", proc.path())->empty());
  EXPECT_EQ(RasEndpoints("10.1.1.1:1, 10.1.1.2:2", "")->size(), 2u);
  EXPECT_THAT(RasEndpoints("10.1.1.1", "").status().message(), HasSubstr("HOST:PORT"));
  EXPECT_FALSE(ParseRasAddress("h:70000", "x").ok());
  EXPECT_FALSE(ParseRasAddress("[::1:5", "x").ok());
}

TEST(RasEndpoints, ListeningSocketFromProcNetTcp) {
  TempDir proc;
  std::filesystem::create_directories(proc.path() + "/net");
  std::ofstream(proc.path() + "/net/tcp")
      << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
         "timeout inode\n"
      << "   0: 0100007F:6D7C 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0"
         "        0 424242 1 0000000000000000 100 0 0 10 0\n"
      << "   1: 0100007F:6D7D 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0"
         "        0 515151 1 0000000000000000 100 0 0 10 0\n";
  // Two jobs of one user share the port (SO_REUSEPORT): both sockets are seen, from tcp6 too.
  std::ofstream(proc.path() + "/net/tcp6")
      << "  sl  local_address                         remote_address                        st "
         "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      << "   0: 00000000000000000000000001000000:6D7C 00000000000000000000000000000000:0000 0A "
         "00000000:00000000 00:00000000 00000000     0        0 434343 1 0000000000000000 100 0 0 10 0\n";
  EXPECT_EQ(ListeningSocketInode(proc.path(), 28028), 424242u);
  EXPECT_EQ(ListeningSocketInode(proc.path(), 28029), 0u);  // ESTABLISHED, not LISTEN
  EXPECT_EQ(ListeningSocketInode(proc.path(), 1234), 0u);
  EXPECT_THAT(ListeningSockets(proc.path())[28028], ElementsAre(424242u, 434343u));
}

// A second job starting on an endpoint already asked (a new socket on the same port) gets the
// init grace of its own: nothing is asked until it has passed.
TEST(NcclRasCollector, ASecondJobOnTheSamePortGetsItsOwnInitGrace) {
  FakeRasServer server(
      {.json_report = Fixture("ras_08_v2.28.9_json_mismatch_allreduce_4nodes_a10g.json")});
  TempDir proc;
  std::filesystem::create_directories(proc.path() + "/net");
  auto listen = [&](const std::vector<int>& inodes) {
    std::ofstream tcp(proc.path() + "/net/tcp");
    tcp << "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
           "timeout inode\n";
    for (int inode : inodes) {
      tcp << absl::StrFormat("   0: 0100007F:%04X 00000000:0000 0A 00000000:00000000 "
                             "00:00000000 00000000     0        0 %d 1 0 100 0 0 10 0\n",
                             server.port(), inode);
    }
  };
  FakeClock clock;
  NcclRasCollector collector({.endpoints = server.Address(),
                              .proc_root = proc.path(),
                              .interval = absl::Seconds(30),
                              .timeout = absl::Seconds(5),
                              .init_grace = absl::Seconds(60),
                              .background = false},
                             clock);
  listen({1001});
  collector.QueryOnce();
  clock.Advance(absl::Seconds(61));
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 1);
  listen({1001, 2002});  // a second job starts
  clock.Advance(absl::Seconds(30));
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 1) << "asked while the second job's communicators start";
  clock.Advance(absl::Seconds(61));
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 2);
  listen({});  // both jobs ended: nothing listens, nothing is asked
  clock.Advance(absl::Seconds(30));
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 2);
}

TEST(NcclRasCollector, VersionsOlderThan2273) {
  EXPECT_TRUE(NcclRasCollector::OlderThan2273("2.26.2"));
  EXPECT_TRUE(NcclRasCollector::OlderThan2273("2.27.2"));
  EXPECT_FALSE(NcclRasCollector::OlderThan2273("2.27.3"));
  EXPECT_FALSE(NcclRasCollector::OlderThan2273("2.28.9"));
  EXPECT_FALSE(NcclRasCollector::OlderThan2273("3.0.0"));
}

// The collector on the real /proc (the fake server's socket is listening there): nothing is
// asked during the init grace, a mismatch is sent once two answers show the same counts, a
// missing rank at once, and the endpoint's health is two series.
TEST(NcclRasCollector, WaitsOutInitThenConfirmsAStuckMismatchAndSendsMissingRanksAtOnce) {
  FakeRasServer server(
      {.json_report = Fixture("ras_08_v2.28.9_json_mismatch_allreduce_4nodes_a10g.json")});
  FakeClock clock;
  NcclRasCollector collector({.endpoints = server.Address(),
                              .proc_root = "/proc",
                              .interval = absl::Seconds(30),
                              .timeout = absl::Seconds(5),
                              .init_grace = absl::Seconds(60),
                              .background = false},
                             clock);
  RecordingEmitter e;
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 0) << "asked during the init grace";
  clock.Advance(absl::Seconds(61));
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 1);
  ASSERT_TRUE(collector.Collect(e).ok());
  EXPECT_TRUE(e.EventsOfKind("nccl_ras.comm_issue").empty()) << "one answer is not a hang";
  EXPECT_EQ(e.EventsOfKind("nccl_ras.report").size(), 1u);  // errors changed: "" -> MISMATCH

  clock.Advance(absl::Seconds(30));
  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(e).ok());
  std::vector<EventRecord> issues = e.EventsOfKind("nccl_ras.comm_issue");
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(Attribute(issues[0], "ranks"), "1");
  EXPECT_EQ(Attribute(issues[0], "stuck_for_s"), "30");
  EXPECT_EQ(Attribute(issues[0], "endpoint"), server.Address());
  EXPECT_EQ(e.EventsOfKind("nccl_ras.report").size(), 1u) << "same errors: no second report";

  // The job moves on and a rank goes missing: INCOMPLETE is sent at the first answer.
  server.set_json_report(Fixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json"));
  clock.Advance(absl::Seconds(30));
  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(e).ok());
  issues = e.EventsOfKind("nccl_ras.comm_issue");
  ASSERT_EQ(issues.size(), 2u);
  EXPECT_EQ(Attribute(issues[1], "issue"), "INCOMPLETE");
  EXPECT_EQ(Attribute(issues[1], "unresponsive_ranks"), "1");

  const std::string labels = absl::StrCat("endpoint=\"", server.Address(), "\"");
  EXPECT_EQ(e.Get(absl::StrCat("railwatch_nccl_ras_queries_total{", labels, ",result=\"ok\"}")), 3u);
  EXPECT_EQ(e.GetGauge(absl::StrCat("railwatch_nccl_ras_up{", labels, "}")), 1.0);
}

}  // namespace nccl_ras_collector_test
}  // namespace railwatch
