#include "collectors/nccl_ras_collector.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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
    bool monitor = true;  // takes MONITOR (NCCL 2.29+); else "ERROR: Unknown command ..."
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
    DropMonitor();
  }
  int port() const { return port_; }
  int connections() const { return connections_; }
  std::string Address() const { return absl::StrCat("127.0.0.1:", port_); }
  void set_json_report(std::string r) {
    std::lock_guard<std::mutex> lock(mu_);
    b_.json_report = std::move(r);
  }
  // The open MONITOR connection (-1: none), what the last one asked for.
  int monitor_fd() {
    std::lock_guard<std::mutex> lock(mu_);
    return monitor_fd_;
  }
  std::string monitor_command() {
    std::lock_guard<std::mutex> lock(mu_);
    return monitor_command_;
  }
  // Writes `text` on the MONITOR connection, as NCCL writes its events.
  void SendMonitor(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    ASSERT_GE(monitor_fd_, 0);
    Send(monitor_fd_, text);
  }
  // The job's process that served MONITOR went away.
  void DropMonitor() {
    std::lock_guard<std::mutex> lock(mu_);
    if (monitor_fd_ >= 0) close(monitor_fd_);
    monitor_fd_ = -1;
  }

 private:
  void Serve() {
    while (!stop_) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      if (!Handle(c)) close(c);
    }
  }
  void Send(int c, const std::string& text) { (void)send(c, text.data(), text.size(), MSG_NOSIGNAL); }
  // True: the connection stays open (MONITOR).
  bool Handle(int c) {
    std::string buffer;
    bool json = false;
    char chunk[4096];
    while (!stop_) {
      size_t nl;
      while ((nl = buffer.find('\n')) == std::string::npos) {
        const ssize_t n = recv(c, chunk, sizeof(chunk), 0);
        if (n <= 0) return false;
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
          return false;
        }
        Send(c, json ? b_.json_report : b_.text_report);
        return false;  // the server closes after the report
      } else if (absl::StartsWithIgnoreCase(cmd, "monitor") && b_.monitor) {
        Send(c, "OK\n");
        if (monitor_fd_ >= 0) close(monitor_fd_);
        monitor_fd_ = c;
        monitor_command_ = cmd;
        return true;
      } else {
        Send(c, "ERROR: Unknown command " + cmd + "\n");
      }
    }
    return false;
  }

  Behaviour b_;
  int monitor_fd_ = -1;
  std::string monitor_command_;
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

// MONITOR mode (NCCL 2.29+) -----------------------------------------------------------------

// Waits (up to 3 s) for `done`, which the collector's MONITOR thread makes true.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 1500 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return done();
}

NcclRasCollector::Options MonitorOptions(const FakeRasServer& server) {
  return {.endpoints = server.Address(),
          .proc_root = "/proc",
          .interval = absl::Seconds(30),
          .timeout = absl::Seconds(2),
          .init_grace = absl::Seconds(60),
          .background = false,
          .monitor = true,
          .monitor_backoff_initial = absl::Milliseconds(5),
          .monitor_backoff_max = absl::Milliseconds(20)};
}

std::string MonitorSeries(const FakeRasServer& server, const std::string& name,
                          const std::string& extra = "") {
  return absl::StrCat(name, "{endpoint=\"", server.Address(), "\"", extra, "}");
}

// Collects until an event of `kind` has come (the MONITOR thread hands it over in between).
std::vector<EventRecord> CollectUntil(NcclRasCollector& collector, RecordingEmitter& e,
                                      const std::string& kind, size_t count) {
  Eventually([&] {
    EXPECT_TRUE(collector.Collect(e).ok());
    return e.EventsOfKind(kind).size() >= count;
  });
  return e.EventsOfKind(kind);
}

TEST(RasMonitor, VersionsWithMonitorModeAndTheEventsSent) {
  EXPECT_TRUE(RasSupportsMonitor("2.29.1"));
  EXPECT_TRUE(RasSupportsMonitor("2.30.7+cuda12.8"));
  EXPECT_TRUE(RasSupportsMonitor("3.0.0"));
  EXPECT_FALSE(RasSupportsMonitor("2.28.9"));
  EXPECT_FALSE(RasSupportsMonitor("2.3"));
  EXPECT_FALSE(RasSupportsMonitor(""));
  EXPECT_TRUE(RasMonitorEventSent("PEER_DEAD"));
  EXPECT_TRUE(RasMonitorEventSent("PEER_UNRESPONSIVE"));
  EXPECT_TRUE(RasMonitorEventSent("PEER_RECOVERED"));
  EXPECT_FALSE(RasMonitorEventSent("PEER_NEW"));
  EXPECT_FALSE(RasMonitorEventSent("PEER_CONNECTED"));
}

// The real 2.29.1 report (ras_07: rank 1, pid 1524345, is missing) and the real MONITOR event
// of the same doc (ras_12: that process declared dead): the event comes as soon as NCCL writes
// it, with the communicator and rank the report gave the process.
TEST(RasMonitor, PeerDeadIsSentAtOnceWithTheCommunicatorOfTheLastReport) {
  FakeRasServer server(
      {.json_report = Fixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json")});
  FakeClock clock;
  NcclRasCollector collector(MonitorOptions(server), clock);
  RecordingEmitter e;
  collector.QueryOnce();
  EXPECT_EQ(server.connections(), 0) << "connected during the init grace";
  clock.Advance(absl::Seconds(61));
  collector.QueryOnce();  // STATUS says 2.29.1: MONITOR is opened after it
  ASSERT_TRUE(Eventually([&] { return server.monitor_fd() >= 0; }));
  EXPECT_EQ(server.connections(), 2);
  EXPECT_EQ(server.monitor_command(), "MONITOR lifecycle,trace");

  // A connection of the RAS network (chatter: counted, not sent), then the death.
  server.SendMonitor(
      "{\n  \"timestamp\": \"2025-12-19 13:07:05\",\n  \"group\": \"TRACE\",\n"
      "  \"event\": \"PEER_CONNECTED\",\n  \"peer\": {\n    \"addr\": \"172.16.64.245<41234>\"\n"
      "  },\n  \"details\": \"connection established successfully\"\n}\n");
  server.SendMonitor(Fixture("ras_12_v2.29doc_monitor_json_peer_dead_event.json"));
  std::vector<EventRecord> events = CollectUntil(collector, e, "nccl_ras.event", 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Attribute(events[0], "event"), "PEER_DEAD");
  EXPECT_EQ(Attribute(events[0], "group"), "LIFECYCLE");
  EXPECT_EQ(Attribute(events[0], "node"), "172.16.64.245");
  EXPECT_EQ(Attribute(events[0], "pid"), "1524345");
  EXPECT_EQ(Attribute(events[0], "gpus"), "1");
  EXPECT_EQ(Attribute(events[0], "comm_hash"), "ae94423cfbb2ef4a");
  EXPECT_EQ(Attribute(events[0], "ranks"), "1");
  EXPECT_EQ(Attribute(events[0], "endpoint"), server.Address());
  EXPECT_EQ(events[0].time_unix_nano, absl::ToUnixNanos(clock.Now())) << "when it was heard";
  EXPECT_EQ(server.connections(), 2) << "no STATUS was needed";
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_connections_total")), 1u);
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_events_total",
                                ",result=\"sent\"")),
            1u);
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_events_total",
                                ",result=\"ignored\"")),
            1u);
  EXPECT_EQ(e.GetGauge(MonitorSeries(server, "railwatch_nccl_ras_monitor_up")), 1.0);
}

// Something that is not NCCL's JSON on the MONITOR connection is counted and logged with
// where it is; the events after it and the STATUS polling go on.
TEST(RasMonitor, AMalformedEventIsCountedAndTheStreamGoesOn) {
  FakeRasServer server(
      {.json_report = Fixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json")});
  FakeClock clock;
  NcclRasCollector collector(MonitorOptions(server), clock);
  RecordingEmitter e;
  collector.QueryOnce();  // the socket is seen: its init grace starts
  clock.Advance(absl::Seconds(61));
  collector.QueryOnce();
  ASSERT_TRUE(Eventually([&] { return server.monitor_fd() >= 0; }));
  server.SendMonitor("{\n  \"timestamp\": \"2025-12-19 13:07:07\",\n  \"event\": PEER_DEAD\n}\n");
  server.SendMonitor("garbage that is no event\n");
  server.SendMonitor("{\"timestamp\": \"2025-12-19 13:07:08\", \"pid\": 4}\n");  // no event
  server.SendMonitor("{\n  \"timestamp\": \"2025-12-19 13:07:09\",\n  \"peer\": {\n");  // cut short
  server.SendMonitor(Fixture("ras_12_v2.29doc_monitor_json_peer_dead_event.json"));
  std::vector<EventRecord> events = CollectUntil(collector, e, "nccl_ras.event", 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Attribute(events[0], "event"), "PEER_DEAD");
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_events_total",
                                ",result=\"malformed\"")),
            4u);
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_errors_total",
                                ",reason=\"dropped\"")),
            0u);
  clock.Advance(absl::Seconds(30));
  collector.QueryOnce();
  ASSERT_TRUE(collector.Collect(e).ok());
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_queries_total", ",result=\"ok\"")), 2u);
}

// The process serving MONITOR exits (or the job's port is taken over): the connection is
// opened again after the backoff and the next event comes on the new one.
TEST(RasMonitor, ADroppedConnectionIsOpenedAgain) {
  FakeRasServer server(
      {.json_report = Fixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json")});
  FakeClock clock;
  NcclRasCollector collector(MonitorOptions(server), clock);
  RecordingEmitter e;
  collector.QueryOnce();  // the socket is seen: its init grace starts
  clock.Advance(absl::Seconds(61));
  collector.QueryOnce();
  ASSERT_TRUE(Eventually([&] { return server.monitor_fd() >= 0; }));
  // Half an event, then the connection goes.
  server.SendMonitor("{\n  \"timestamp\": \"2025-12-19 13:07:07\",\n");
  server.DropMonitor();
  ASSERT_TRUE(Eventually([&] { return server.monitor_fd() >= 0; })) << "not opened again";
  EXPECT_EQ(server.connections(), 3);
  server.SendMonitor(Fixture("ras_12_v2.29doc_monitor_json_peer_dead_event.json"));
  std::vector<EventRecord> events = CollectUntil(collector, e, "nccl_ras.event", 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(Attribute(events[0], "pid"), "1524345");
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_errors_total",
                                ",reason=\"dropped\"")),
            1u);
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_connections_total")), 2u);
  EXPECT_EQ(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_events_total",
                                ",result=\"malformed\"")),
            0u) << "half an event cut by the drop is not malformed";
}

// NCCL 2.28.9 has no MONITOR: none is asked for. A 2.29 report from an endpoint that refuses
// MONITOR anyway: asked once, counted, not again; STATUS polling goes on. --nccl_ras_monitor=false:
// never.
TEST(RasMonitor, OnlyWhereTheVersionHasItAndNotWhenTurnedOff) {
  {
    FakeRasServer server(
        {.json_report = Fixture("ras_08_v2.28.9_json_mismatch_allreduce_4nodes_a10g.json")});
    FakeClock clock;
    NcclRasCollector collector(MonitorOptions(server), clock);
    collector.QueryOnce();
    clock.Advance(absl::Seconds(61));
    collector.QueryOnce();
    clock.Advance(absl::Seconds(30));
    collector.QueryOnce();
    EXPECT_EQ(server.connections(), 2) << "only the two STATUS queries";
  }
  {
    FakeRasServer server(
        {.json_report = Fixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json"),
         .monitor = false});
    FakeClock clock;
    NcclRasCollector collector(MonitorOptions(server), clock);
    RecordingEmitter e;
    collector.QueryOnce();
    clock.Advance(absl::Seconds(61));
    collector.QueryOnce();
    ASSERT_TRUE(Eventually([&] {
      EXPECT_TRUE(collector.Collect(e).ok());
      return e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_errors_total",
                                 ",reason=\"unsupported\"")) == 1u;
    }));
    clock.Advance(absl::Seconds(30));
    collector.QueryOnce();
    EXPECT_EQ(server.connections(), 3) << "STATUS, MONITOR refused, STATUS";
  }
  {
    FakeRasServer server(
        {.json_report = Fixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json")});
    FakeClock clock;
    NcclRasCollector::Options options = MonitorOptions(server);
    options.monitor = false;
    NcclRasCollector collector(options, clock);
    RecordingEmitter e;
    collector.QueryOnce();
    clock.Advance(absl::Seconds(61));
    collector.QueryOnce();
    ASSERT_TRUE(collector.Collect(e).ok());
    EXPECT_EQ(server.connections(), 1);
    EXPECT_FALSE(e.Get(MonitorSeries(server, "railwatch_nccl_ras_monitor_connections_total")));
  }
}

TEST(RasMonitor, ProcessesOfAReportEvenWithNccl2289sMissingComma) {
  std::map<std::string, logs::RasProcess> p = logs::RasReportProcesses(
      Fixture("ras_09_v2.28.9_json_missing_rank_unresponsive_INVALID_missing_comma.json"));
  ASSERT_EQ(p.count("10.0.77.184/10017"), 1u);
  EXPECT_EQ(p["10.0.77.184/10017"].ranks, "1");
  p = logs::RasReportProcesses(Fixture("ras_10_v2.28.9_json_three_comms_one_mismatched_single_node.json"));
  // pid 10206 holds rank 1 of 0xbeebea5449e0a7e7 and a rank of 0xd0d47b5885b3b54b.
  EXPECT_THAT(p["10.0.77.184/10206"].comm_hashes, HasSubstr("beebea5449e0a7e7"));
  EXPECT_THAT(p["10.0.77.184/10206"].comm_hashes, HasSubstr("d0d47b5885b3b54b"));
  EXPECT_TRUE(logs::RasReportProcesses("not json").empty());
}

}  // namespace nccl_ras_collector_test
}  // namespace railwatch
