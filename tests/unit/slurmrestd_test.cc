// railwatchd --slurm=slurmrestd:URL (jobs/slurmrestd.h): the URL and flag forms, the API
// version's discovery, Slurm's error answers, and the client and the watch against an in-process
// HTTP server on a Unix socket or loopback TCP that answers with the real slurmrestd 22.05.8
// answers of tests/fixtures/slurm. ctest -R '^Slurmrest'

#include "jobs/slurmrestd.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jobs/slurm_watch.h"
#include "support/ttar.h"

namespace railwatch {
namespace slurmrestd_test {

using ::railwatch::testing::ReadFixture;
using ::railwatch::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Captured from Debian 12's slurmrestd 22.05.8 on loopback (tests/fixtures/slurm/README.md):
// GET /slurm/v0.0.38/jobs with one running job, and the same while slurmctld was down.
constexpr char kRestJobs[] =
    "slurm/slurmrestd_v0.0.38_22.05.8_debian_loopback_jobs_running_gpu8.json";
constexpr char kRestDown[] =
    "slurm/slurmrestd_v0.0.38_22.05.8_debian_loopback_jobs_500_slurmctld_down.json";
constexpr char kNotFoundBody[] =
    "Unable find requested URL. Please view /openapi/v3 for API reference.";

// The OpenAPI document's paths, as slurmrestd lists them (22.05: v0.0.36-v0.0.38 with -s
// openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38).
std::string OpenApi(const std::vector<std::string>& versions) {
  std::string paths;
  for (const std::string& v : versions) {
    absl::StrAppend(&paths, "\"/slurm/", v, "/ping\": {}, \"/slurm/", v, "/jobs\": {}, \"/slurm/",
                    v, "/job/{job_id}\": {}, ");
  }
  return absl::StrCat(R"({"openapi": "3.0.2", "info": {"version": "x"}, "paths": {)", paths,
                      R"("/openapi/v3": {}, "/slurmdb/v0.0.99/jobs": {}}})");
}

struct Request {
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
};

// An HTTP/1.1 server that answers GETs from a table (404 with slurmrestd's text for the rest),
// one connection at a time, each closed after its answer.
class FakeSlurmrestd {
 public:
  struct Reply {
    int status = 200;
    std::string body;
  };

  // On a Unix socket at `unix_path`, else on 127.0.0.1 at a free port.
  explicit FakeSlurmrestd(const std::string& unix_path = "") {
    if (!unix_path.empty()) {
      fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      unix_path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
      ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    } else {
      fd_ = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
      socklen_t len = sizeof(addr);
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
      port_ = ntohs(addr.sin_port);
    }
    ok_ = ok_ && listen(fd_, 8) == 0;
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeSlurmrestd() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }

  bool ok() const { return ok_; }
  int port() const { return port_; }
  void Set(const std::string& path, Reply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_[path] = std::move(reply);
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    replies_.clear();
  }
  // Read requests and never answer them.
  void set_stuck(bool stuck) { stuck_ = stuck; }
  std::vector<Request> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  static bool Readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return poll(&p, 1, ms) > 0;
  }

  void Serve() {
    while (!stop_) {
      if (!Readable(fd_, 20)) continue;
      const int conn = accept(fd_, nullptr, nullptr);
      if (conn < 0) continue;
      std::string in;
      char buf[4096];
      while (!absl::StrContains(in, "\r\n\r\n") && Readable(conn, 2000)) {
        const ssize_t n = read(conn, buf, sizeof(buf));
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      Request request;
      std::vector<std::string> lines = absl::StrSplit(in, "\r\n");
      if (!lines.empty()) {
        std::vector<std::string> words = absl::StrSplit(lines[0], ' ');
        if (words.size() >= 2) request.path = words[1];
        for (size_t i = 1; i < lines.size(); ++i) {
          const size_t colon = lines[i].find(':');
          if (colon == std::string::npos) continue;
          request.headers[absl::AsciiStrToLower(lines[i].substr(0, colon))] =
              std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
        }
      }
      Reply reply{404, kNotFoundBody};
      {
        std::lock_guard<std::mutex> lock(mu_);
        requests_.push_back(request);
        if (auto it = replies_.find(request.path); it != replies_.end()) reply = it->second;
      }
      while (stuck_ && !stop_) Readable(conn, 20);
      const std::string out = absl::StrCat(
          "HTTP/1.1 ", reply.status, " X\r\nContent-Length: ", reply.body.size(),
          "\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n", reply.body);
      for (size_t done = 0; done < out.size();) {
        const ssize_t n = send(conn, out.data() + done, out.size() - done, MSG_NOSIGNAL);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      close(conn);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  bool ok_ = false;
  std::atomic<bool> stop_{false}, stuck_{false};
  std::mutex mu_;
  std::map<std::string, Reply> replies_;
  std::vector<Request> requests_;
  std::thread thread_;
};

// SLURM_JWT unset for the test's length (a developer's shell may export one).
class NoEnvToken {
 public:
  NoEnvToken() {
    if (const char* v = std::getenv("SLURM_JWT")) saved_ = v;
    unsetenv("SLURM_JWT");
  }
  ~NoEnvToken() {
    if (!saved_.empty()) setenv("SLURM_JWT", saved_.c_str(), 1);
  }

 private:
  std::string saved_;
};

SlurmRestOptions Options(const std::string& url) {
  SlurmRestOptions options = *SlurmRestOptionsFromUrl(url);
  options.timeout = absl::Seconds(5);
  return options;
}

TEST(SlurmrestdFlags, UrlForms) {
  absl::StatusOr<SlurmRestOptions> tcp = SlurmRestOptionsFromUrl("http://slurm-head:6820");
  ASSERT_TRUE(tcp.ok()) << tcp.status();
  EXPECT_EQ(tcp->base_url, "http://slurm-head:6820");
  EXPECT_EQ(tcp->unix_socket, "");
  EXPECT_EQ(SlurmRestOptionsFromUrl("https://proxy.example/slurmrest/")->base_url,
            "https://proxy.example/slurmrest");
  EXPECT_EQ(SlurmRestOptionsFromUrl("http://[::1]:6820/")->base_url, "http://[::1]:6820");
  for (const char* unix_url : {"unix:/run/slurmrestd.socket", "unix:///run/slurmrestd.socket"}) {
    absl::StatusOr<SlurmRestOptions> u = SlurmRestOptionsFromUrl(unix_url);
    ASSERT_TRUE(u.ok()) << unix_url;
    EXPECT_EQ(u->unix_socket, "/run/slurmrestd.socket");
    EXPECT_EQ(u->base_url, "http://localhost");
  }
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "no http://"},
      {"slurm-head:6820", "no http://"},
      {"ftp://slurm-head:6820", "no http://"},
      {"http://", "no host"},
      {"http://:6820", "no host"},
      {"http://slurm-head:68x0", "port"},
      {"http://slurm-head:70000", "port"},
      {"http://root:secret@slurm-head:6820", "--slurm_token_file"},
      {"http://slurm-head:6820/?x=1", "query"},
      {"http://slurm head:6820", "space"},
      {"unix:run/slurmrestd.socket", "absolute"},
      {"unix:", "absolute"},
  };
  for (const auto& [url, why] : bad) {
    absl::StatusOr<SlurmRestOptions> got = SlurmRestOptionsFromUrl(url);
    ASSERT_FALSE(got.ok()) << url;
    EXPECT_THAT(got.status().message(), HasSubstr(why)) << url;
    EXPECT_THAT(got.status().message(), HasSubstr("--slurm=slurmrestd:" + url)) << url;
  }

  // Through --slurm: slurmrestd replaces the squeue command.
  absl::StatusOr<SlurmWatchOptions> watch =
      SlurmWatchOptionsFromFlag("slurmrestd:unix:/run/s.sock");
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE(watch->enabled());
  EXPECT_TRUE(watch->command.empty());
  ASSERT_TRUE(watch->rest.has_value());
  EXPECT_EQ(watch->rest->unix_socket, "/run/s.sock");
  EXPECT_FALSE(SlurmWatchOptionsFromFlag("off")->enabled());
  EXPECT_FALSE(SlurmWatchOptionsFromFlag("squeue")->rest.has_value());
  EXPECT_THAT(SlurmWatchOptionsFromFlag("slurmrestd:").status().message(), HasSubstr("unix:"));
  EXPECT_THAT(SlurmWatchOptionsFromFlag("restd").status().message(), HasSubstr("slurmrestd:URL"));
}

TEST(SlurmrestdFlags, ApiVersionFlag) {
  EXPECT_EQ(*SlurmApiVersionFromFlag("auto"), "");
  EXPECT_EQ(*SlurmApiVersionFromFlag(""), "");
  EXPECT_EQ(*SlurmApiVersionFromFlag("v0.0.38"), "v0.0.38");
  EXPECT_EQ(*SlurmApiVersionFromFlag("0.0.41"), "v0.0.41");
  for (const char* bad : {"v38", "latest", "v0.0.", "v0.0.38/jobs", "v0.x.38"}) {
    absl::StatusOr<std::string> got = SlurmApiVersionFromFlag(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_THAT(got.status().message(), HasSubstr("v0.0.38")) << bad;
  }
}

TEST(SlurmrestdVersion, TheNewestKnownVersionTheServerListsIsChosen) {
  // Debian 12's 22.05.8; 23.02; 24.05; a release past the readers (its oldest is known).
  EXPECT_EQ(*ChooseSlurmApiVersion(OpenApi({"v0.0.36", "v0.0.37", "v0.0.38"})), "v0.0.38");
  EXPECT_EQ(*ChooseSlurmApiVersion(OpenApi({"v0.0.39", "v0.0.37", "v0.0.38"})), "v0.0.39");
  EXPECT_EQ(*ChooseSlurmApiVersion(OpenApi({"v0.0.39", "v0.0.40", "v0.0.41"})), "v0.0.41");
  EXPECT_EQ(*ChooseSlurmApiVersion(OpenApi({"v0.0.41", "v0.0.42", "v0.0.43"})), "v0.0.41");
  // Only versions newer than the readers know: the lowest of them (the closest to v0.0.41).
  EXPECT_EQ(*ChooseSlurmApiVersion(OpenApi({"v0.0.44", "v0.0.42", "v0.0.43"})), "v0.0.42");

  absl::StatusOr<std::string> old = ChooseSlurmApiVersion(OpenApi({"v0.0.35"}));
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(old.status().message(), HasSubstr("v0.0.35"));
  EXPECT_THAT(old.status().message(), HasSubstr("--slurm_api"));
  absl::StatusOr<std::string> none = ChooseSlurmApiVersion(OpenApi({}));
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("slurmrestd -s"));
  EXPECT_FALSE(ChooseSlurmApiVersion(kNotFoundBody).ok());
  EXPECT_FALSE(ChooseSlurmApiVersion(R"({"openapi": "3.0.2"})").ok());
}

TEST(SlurmrestdErrors, SlurmsErrorsArrayElseTheBodysFirstLine) {
  // The real answer while slurmctld was down (HTTP 500).
  EXPECT_EQ(SlurmRestErrorText(ReadFixture(kRestDown)),
            "Unspecified error: Failed while looking for jobs (-1) [slurm_load_jobs]");
  EXPECT_EQ(SlurmRestErrorText(R"({"errors": [{"error": "Invalid job id specified",
      "description": "Unable to find JobId=99999", "error_number": 2017,
      "source": "slurm_load_job"},
      {"error": "second"}]})"),
            "Invalid job id specified: Unable to find JobId=99999 (2017) [slurm_load_job]; second");
  EXPECT_EQ(SlurmRestErrorText(kNotFoundBody), kNotFoundBody);
  EXPECT_EQ(SlurmRestErrorText("\n  Authentication failure\nmore\n"), "Authentication failure");
  EXPECT_EQ(SlurmRestErrorText(std::string(500, 'x')).size(), 200u);
  EXPECT_EQ(SlurmRestErrorText(""), "");
}

TEST(SlurmrestdReader, TheRealV0038JobsAnswerIsRead) {
  jobs::SlurmJobsResult read = jobs::ParseSqueueJson(ReadFixture(kRestJobs), "slurmrestd");
  EXPECT_TRUE(read.problems.empty()) << read.problems[0].ToString();
  EXPECT_EQ(read.format, "openapi/v0.0.38");
  EXPECT_EQ(read.slurm_release, "22.05.8");
  ASSERT_EQ(read.jobs.size(), 1u);
  const jobs::SlurmJob& j = read.jobs[0];
  EXPECT_EQ(j.id, "1");
  EXPECT_EQ(j.name, "model_pretrain");
  EXPECT_EQ(j.user, "root");
  EXPECT_EQ(j.partition, "gpu");
  EXPECT_EQ(j.state, "RUNNING");
  EXPECT_THAT(j.nodes, ElementsAre("vm"));
  EXPECT_EQ(j.gpus_per_node, 8);
  EXPECT_EQ(j.gpus_total, 8);
  EXPECT_EQ(j.gpu_indexes_by_node.at("vm"), "0-7");
  EXPECT_GT(j.start_unix, j.submit_unix - 1);
  EXPECT_GT(j.submit_unix, 0);
  std::vector<JobInfo> running = RunningSlurmJobs(read.jobs);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].name, "slurm-1");
  EXPECT_EQ(running[0].gpus, 8u);
  EXPECT_EQ(running[0].detail, "model_pretrain by root in gpu");
}

TEST(SlurmrestdClient, UnixSocketDiscoversTheVersionAndSendsNoToken) {
  NoEnvToken no_env;
  TempDir dir;
  FakeSlurmrestd server(dir.path() + "/rest.sock");
  ASSERT_TRUE(server.ok());
  server.Set("/openapi/v3", {200, OpenApi({"v0.0.36", "v0.0.37", "v0.0.38"})});
  server.Set("/slurm/v0.0.38/jobs", {200, ReadFixture(kRestJobs)});
  SlurmRestClient client(Options("unix:" + dir.path() + "/rest.sock"));
  absl::StatusOr<jobs::SlurmJobsResult> jobs = client.Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(client.api_version(), "v0.0.38");
  ASSERT_EQ(jobs->jobs.size(), 1u);
  EXPECT_THAT(jobs->jobs[0].nodes, ElementsAre("vm"));
  // Discovered once: the second poll asks for the jobs alone.
  ASSERT_TRUE(client.Jobs().ok());
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].path, "/openapi/v3");
  EXPECT_EQ(requests[1].path, "/slurm/v0.0.38/jobs");
  EXPECT_EQ(requests[2].path, "/slurm/v0.0.38/jobs");
  EXPECT_EQ(requests[1].headers.count("x-slurm-user-token"), 0u);
  EXPECT_EQ(requests[1].headers.count("x-slurm-user-name"), 0u);
  EXPECT_EQ(requests[1].headers["accept"], "application/json");
}

TEST(SlurmrestdClient, TcpWithATokenFileReadAtEveryPollAndAChosenVersion) {
  NoEnvToken no_env;
  TempDir dir;
  FakeSlurmrestd server;
  ASSERT_TRUE(server.ok());
  server.Set("/slurmrest/slurm/v0.0.37/jobs", {200, ReadFixture(kRestJobs)});
  SlurmRestOptions options =
      Options(absl::StrCat("http://127.0.0.1:", server.port(), "/slurmrest/"));
  options.api_version = "v0.0.37";
  options.token_file = dir.path() + "/jwt";
  options.user = "railwatch";
  std::ofstream(options.token_file) << "SLURM_JWT=eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJyIn0.c2ln\n";
  SlurmRestClient client(options);
  ASSERT_TRUE(client.Jobs().ok());
  std::ofstream(options.token_file) << "eyJ.rotated.token";
  ASSERT_TRUE(client.Jobs().ok());
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);  // no discovery: the version was chosen
  EXPECT_EQ(requests[0].path, "/slurmrest/slurm/v0.0.37/jobs");
  EXPECT_EQ(requests[0].headers["x-slurm-user-token"], "eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJyIn0.c2ln");
  EXPECT_EQ(requests[0].headers["x-slurm-user-name"], "railwatch");
  EXPECT_EQ(requests[1].headers["x-slurm-user-token"], "eyJ.rotated.token");

  // An empty token file, or one with more than a token in it: no request is made.
  std::ofstream(options.token_file) << "\n";
  absl::StatusOr<jobs::SlurmJobsResult> empty = client.Jobs();
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(empty.status().message(), HasSubstr("holds no token"));
  std::ofstream(options.token_file) << "eyJ.a.b\r\nX-Evil: 1";
  EXPECT_EQ(client.Jobs().status().code(), absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove(options.token_file);
  EXPECT_THAT(client.Jobs().status().message(), HasSubstr("--slurm_token_file"));
  EXPECT_EQ(server.requests().size(), 2u);

  // Without a file, the environment's SLURM_JWT.
  options.token_file.clear();
  setenv("SLURM_JWT", "eyJ.from.env", 1);
  SlurmRestClient env_client(options);
  ASSERT_TRUE(env_client.Jobs().ok());
  EXPECT_EQ(server.requests().back().headers["x-slurm-user-token"], "eyJ.from.env");
}

TEST(SlurmrestdClient, ErrorAnswersSayTheStatusAndSlurmsErrors) {
  NoEnvToken no_env;
  FakeSlurmrestd server;
  ASSERT_TRUE(server.ok());
  SlurmRestOptions options = Options(absl::StrCat("http://127.0.0.1:", server.port()));
  SlurmRestClient client(options);

  // slurmrestd up, slurmctld down: 500 with Slurm's errors.
  server.Set("/openapi/v3", {200, OpenApi({"v0.0.38"})});
  server.Set("/slurm/v0.0.38/jobs", {500, ReadFixture(kRestDown)});
  absl::StatusOr<jobs::SlurmJobsResult> down = client.Jobs();
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(down.status().message(), HasSubstr("GET /slurm/v0.0.38/jobs: HTTP 500: "
                                                 "Unspecified error: Failed while looking for "
                                                 "jobs (-1) [slurm_load_jobs]"));

  // JWT refused.
  server.Set("/slurm/v0.0.38/jobs", {401, "Authentication failure"});
  absl::StatusOr<jobs::SlurmJobsResult> refused = client.Jobs();
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("HTTP 401: Authentication failure"));
  EXPECT_THAT(refused.status().message(), HasSubstr("--slurm_token_file"));

  // slurmrestd upgraded: the discovered version is gone (404), and discovered again.
  server.Clear();
  server.Set("/openapi/v3", {200, OpenApi({"v0.0.37", "v0.0.38", "v0.0.39"})});
  absl::StatusOr<jobs::SlurmJobsResult> gone = client.Jobs();
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(gone.status().message(), HasSubstr("HTTP 404: Unable find requested URL"));
  server.Set("/slurm/v0.0.39/jobs",
             {200, ReadFixture("slurm/slurm_11_v23.02.6_squeue_u_json_data_parser_v0.0.39_gpu8_"
                               "job_jean_zay.json")});
  absl::StatusOr<jobs::SlurmJobsResult> again = client.Jobs();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(client.api_version(), "v0.0.39");
  EXPECT_EQ(again->format, "data_parser/v0.0.39");

  // An OpenAPI document without /jobs.
  SlurmRestClient fresh(options);
  server.Set("/openapi/v3", {200, OpenApi({})});
  absl::StatusOr<jobs::SlurmJobsResult> no_jobs = fresh.Jobs();
  EXPECT_EQ(no_jobs.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(no_jobs.status().message(), HasSubstr("GET /openapi/v3: slurmrestd serves no"));

  // A body over the limit is not read (the OpenAPI document is under it, the jobs are not).
  server.Set("/openapi/v3", {200, OpenApi({"v0.0.38"})});
  server.Set("/slurm/v0.0.38/jobs", {200, ReadFixture(kRestJobs)});
  options.max_body_bytes = 1000;
  SlurmRestClient small(options);
  absl::StatusOr<jobs::SlurmJobsResult> big = small.Jobs();
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(big.status().message(), HasSubstr("GET /slurm/v0.0.38/jobs"));
}

TEST(SlurmrestdClient, NoServerAndAStuckServerAreBoundedErrors) {
  NoEnvToken no_env;
  TempDir dir;
  SlurmRestOptions options = Options("unix:" + dir.path() + "/none.sock");
  options.api_version = "v0.0.38";
  absl::StatusOr<jobs::SlurmJobsResult> none = SlurmRestClient(options).Jobs();
  EXPECT_EQ(none.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(none.status().message(), HasSubstr("none.sock"));

  FakeSlurmrestd server(dir.path() + "/stuck.sock");
  ASSERT_TRUE(server.ok());
  server.set_stuck(true);
  options = Options("unix:" + dir.path() + "/stuck.sock");
  options.api_version = "v0.0.38";
  options.timeout = absl::Milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<jobs::SlurmJobsResult> stuck = SlurmRestClient(options).Jobs();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(stuck.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(stuck.status().message(), HasSubstr("timed out")) << stuck.status();
  EXPECT_LT(took, std::chrono::seconds(2));
  server.set_stuck(false);
}

// The watch with slurmrestd: a job comes and goes with the polls; a failing slurmrestd (500,
// or 200 with Slurm's errors) keeps it, and the failures are counted by kind.
TEST(SlurmrestdWatch, JobsComeAndGoAndFailuresKeepThem) {
  NoEnvToken no_env;
  TempDir dir;
  FakeSlurmrestd server(dir.path() + "/rest.sock");
  ASSERT_TRUE(server.ok());
  server.Set("/openapi/v3", {200, OpenApi({"v0.0.36", "v0.0.37", "v0.0.38"})});
  server.Set("/slurm/v0.0.38/jobs", {200, ReadFixture(kRestJobs)});
  JobRegistry registry;
  absl::StatusOr<SlurmWatchOptions> options =
      SlurmWatchOptionsFromFlag("slurmrestd:unix:" + dir.path() + "/rest.sock");
  ASSERT_TRUE(options.ok());
  SlurmWatch watch(*options, registry);
  ASSERT_TRUE(watch.RunOnce().ok());
  EXPECT_THAT(registry.JobsOfHost("vm"), ElementsAre("slurm-1"));
  EXPECT_EQ(watch.stats().api_version, "v0.0.38");

  server.Set("/slurm/v0.0.38/jobs", {500, ReadFixture(kRestDown)});
  absl::Status down = watch.RunOnce();
  EXPECT_EQ(down.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(registry.JobsOfHost("vm"), ElementsAre("slurm-1"));
  EXPECT_THAT(watch.stats().last_error, HasSubstr("Failed while looking for jobs"));

  // The same errors in a 200 answer (as a proxy might pass them): still a failure.
  server.Set("/slurm/v0.0.38/jobs", {200, ReadFixture(kRestDown)});
  absl::Status errors = watch.RunOnce();
  EXPECT_EQ(errors.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(errors.message(), HasSubstr("Slurm error: Failed while looking for jobs"));
  EXPECT_THAT(registry.JobsOfHost("vm"), ElementsAre("slurm-1"));

  server.Set("/slurm/v0.0.38/jobs", {200, R"({"meta": {}, "errors": [], "jobs": []})"});
  ASSERT_TRUE(watch.RunOnce().ok());
  EXPECT_TRUE(registry.JobsOfHost("vm").empty());
  const SlurmWatch::Stats stats = watch.stats();
  EXPECT_EQ(stats.polls, 4u);
  EXPECT_EQ(stats.failures, 2u);
  EXPECT_EQ(stats.failures_by_code.at("UNAVAILABLE"), 1u);
  EXPECT_EQ(stats.failures_by_code.at("DATA_LOSS"), 1u);
  EXPECT_EQ(stats.last_error, "");
}

}  // namespace slurmrestd_test
}  // namespace railwatch
