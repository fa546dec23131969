// `railwatch watch` against a fake daemon's scripted WatchDiagnoses streams: events printed in
// order, the stream's end and its exit code, Ctrl-C (the interrupt), --reconnect, JSON Lines.
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli_fake_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace railwatch::testing {
namespace cli_watch_test {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr int64_t kT0 = 1714564800LL * 1000000000;  // 2024-05-01T12:00:00Z

v1::DiagnosisEvent Event(v1::DiagnosisEvent::Kind kind, int64_t seconds, const std::string& id,
                         v1::DiagnosisState state) {
  v1::DiagnosisEvent e;
  e.set_kind(kind);
  e.set_time_unix_nano(kT0 + seconds * 1000000000);
  if (kind != v1::DiagnosisEvent::KIND_SYNCED) {
    *e.mutable_diagnosis() = MakeDiagnosis(
        id, "pfc_storm", v1::SEVERITY_CRITICAL, state,
        {{"host", "gpu-node-003"}, {"device", "mlx5_2"}}, "PFC storm from gpu-node-003 mlx5_2");
    // The location's head names the culprit; without a location, the culprit's values do.
    if (id == "bbbbbbbbbbbb") {
      e.mutable_diagnosis()->set_location("gpu-node-003 mlx5_2/1 (rail 2)");
    }
  }
  return e;
}

std::vector<v1::DiagnosisEvent> Lifecycle() {
  return {Event(v1::DiagnosisEvent::KIND_INITIAL, 0, "aaaaaaaaaaaa", v1::DIAGNOSIS_STATE_FIRING),
          Event(v1::DiagnosisEvent::KIND_SYNCED, 0, "", v1::DIAGNOSIS_STATE_UNSPECIFIED),
          Event(v1::DiagnosisEvent::KIND_PENDING, 3, "bbbbbbbbbbbb", v1::DIAGNOSIS_STATE_PENDING),
          Event(v1::DiagnosisEvent::KIND_FIRING, 4, "bbbbbbbbbbbb", v1::DIAGNOSIS_STATE_FIRING),
          Event(v1::DiagnosisEvent::KIND_RESOLVED, 9, "aaaaaaaaaaaa",
                v1::DIAGNOSIS_STATE_RESOLVED)};
}

FakeQueryData Scripts(std::vector<FakeQueryData::WatchScript> scripts) {
  FakeQueryData data;
  data.watches = std::move(scripts);
  return data;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(CliWatchTest, PrintsEveryEventInOrderAndEndsWithTheStream) {
  FakeQueryServer server(Scripts({{Lifecycle(), grpc::Status::OK}}));
  CliOptions o = OptionsFor(server);
  o.host = "gpu-node-003";
  o.severity = "critical";
  CliRun r = RunCli({"watch"}, o);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_THAT(lines[0], MatchesRegex("12:00:00  INITIAL   pfc_storm +critical  gpu-node-003 "
                                     "mlx5_2 +PFC storm from gpu-node-003 mlx5_2  "
                                     "\\[aaaaaaaaaaaa\\]"));
  EXPECT_EQ(lines[1], "12:00:00  SYNCED    1 matching diagnoses now; watching for changes");
  EXPECT_THAT(lines[2], MatchesRegex("12:00:03  PENDING   pfc_storm +critical  gpu-node-003 "
                                     "mlx5_2/1 +PFC storm .*\\[bbbbbbbbbbbb\\]"));
  EXPECT_THAT(lines[3], MatchesRegex("12:00:04  FIRING    pfc_storm .*\\[bbbbbbbbbbbb\\]"));
  EXPECT_THAT(lines[4], MatchesRegex("12:00:09  RESOLVED  pfc_storm .*\\[aaaaaaaaaaaa\\]"));
  EXPECT_THAT(r.err, HasSubstr("the daemon ended the watch"));

  ASSERT_EQ(server.watch_requests().size(), 1u);
  const v1::WatchDiagnosesRequest req = server.watch_requests()[0];
  EXPECT_TRUE(req.send_initial());
  EXPECT_EQ(req.filter().host(), "gpu-node-003");
  EXPECT_EQ(req.filter().severities_size(), 1);
  EXPECT_EQ(req.filter().states_size(), 2);  // active: pending and firing
}

TEST(CliWatchTest, JsonLinesOneObjectPerEvent) {
  FakeQueryServer server(Scripts({{Lifecycle(), grpc::Status::OK}}));
  CliOptions o = OptionsFor(server);
  o.json = true;
  CliRun r = RunCli({"watch"}, o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 5u);
  const char* kinds[] = {"KIND_INITIAL", "KIND_SYNCED", "KIND_PENDING", "KIND_FIRING",
                         "KIND_RESOLVED"};
  for (size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json j = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(j["kind"], kinds[i]);
  }
  EXPECT_EQ(nlohmann::json::parse(lines[3])["diagnosis"]["id"], "bbbbbbbbbbbb");
}

TEST(CliWatchTest, AStreamThatBecomesUnavailableIsExitThree) {
  FakeQueryServer server(Scripts(
      {{Lifecycle(), grpc::Status(grpc::StatusCode::UNAVAILABLE, "daemon shutting down")}}));
  CliRun r = RunCli({"watch"}, OptionsFor(server));
  EXPECT_EQ(r.code, kExitUnavailable);
  EXPECT_EQ(Lines(r.out).size(), 5u);
  EXPECT_THAT(r.err, HasSubstr("daemon shutting down"));
}

// Runs `watch` on its own thread until the test interrupts it (as main does on SIGINT) once
// `lines` lines were printed.
CliRun WatchUntilInterrupted(CliOptions o, int lines) {
  absl::Notification interrupt;
  o.interrupt = &interrupt;
  SharedOutput out;
  std::ostringstream err;
  std::future<int> run = std::async(std::launch::async,
                                    [&] { return RunCommand({"watch"}, o, out, err); });
  const bool printed = out.WaitForLines(lines, absl::Seconds(30));
  interrupt.Notify();
  EXPECT_EQ(run.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(printed) << out.Text();
  int code = run.get();
  return {code, out.Text(), err.str()};
}

TEST(CliWatchTest, InterruptCancelsTheStreamAndExitsZero) {
  FakeQueryServer server(Scripts({{Lifecycle(), std::nullopt}}));  // never ends by itself
  CliRun r = WatchUntilInterrupted(OptionsFor(server), 5);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 5u);
  EXPECT_EQ(r.err, "");
}

TEST(CliWatchTest, ReconnectResumesAfterTheStreamBreaks) {
  FakeQueryServer server(Scripts({
      {{Lifecycle()[0]}, grpc::Status(grpc::StatusCode::UNAVAILABLE, "connection reset")},
      {Lifecycle(), std::nullopt},
  }));
  CliOptions o = OptionsFor(server);
  o.reconnect = true;
  o.reconnect_initial = absl::Milliseconds(10);
  CliRun r = WatchUntilInterrupted(o, 6);
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(Lines(r.out).size(), 6u) << r.out;  // one event, then the second stream's five
  EXPECT_THAT(r.err, HasSubstr("watch ended (connection reset); reconnecting in"));
  EXPECT_EQ(server.watch_requests().size(), 2u);
}

TEST(CliWatchTest, BadFiltersAreUsageErrors) {
  FakeQueryServer server(Scripts({{Lifecycle(), grpc::Status::OK}}));
  CliOptions o = OptionsFor(server);
  o.state = "sometimes";
  EXPECT_EQ(RunCli({"watch"}, o).code, kExitUsage);
  EXPECT_TRUE(server.watch_requests().empty());
}

}  // namespace
}  // namespace railwatch::testing
