// The Query API's credentials against a real Daemon on loopback: no credentials and a wrong
// token are UNAUTHENTICATED, a read-only token cannot call the admin RPC (PERMISSION_DENIED),
// an admin token or an admin client certificate can; an unmapped certificate gets the file's
// default role; every refusal is counted; a changed access file is used without a restart;
// the start-up rules (no authentication on a non-loopback address, a broken access file).
#include <thread>

#include "auth_test_util.h"
#include "cli/commands.h"
#include "daemon/auth.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "railwatch/v1/ingest.grpc.pb.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch::testing {
namespace auth_query_test {

using ::testing::HasSubstr;

class AuthQueryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Certificates().ok()) << Certificates().log(); }

  // Starts a daemon with TLS, client certificates and the access file.
  void StartDaemon(const std::string& default_role = "read-only") {
    DaemonOptions o = TlsDaemonOptions(dir_.path(), /*client_ca=*/true);
    o.query_tokens = dir_.path() + "/access.yaml";
    std::ofstream(o.query_tokens) << AccessFileText(default_role);
    daemon_ = std::make_unique<Daemon>(o);
    absl::Status s = daemon_->Start();
    ASSERT_TRUE(s.ok()) << s;
  }

  // One call on a new channel, with `authorization` metadata when not empty.
  template <typename Request, typename Response>
  grpc::Status Call(std::shared_ptr<grpc::ChannelCredentials> credentials,
                    const std::string& authorization,
                    grpc::Status (v1::Query::Stub::*method)(grpc::ClientContext*, const Request&,
                                                            Response*),
                    const Request& request) {
    auto stub = v1::Query::NewStub(grpc::CreateChannel(daemon_->grpc_address(), credentials));
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
    Response response;
    return (stub.get()->*method)(&ctx, request, &response);
  }
  static std::string Bearer(const std::string& token) {
    return token.empty() ? "" : "Bearer " + token;
  }

  // ListPlaybooks (read-only) as `credentials` with `token` ("" for none).
  grpc::Status Read(std::shared_ptr<grpc::ChannelCredentials> credentials,
                    const std::string& token) {
    return Call(credentials, Bearer(token), &v1::Query::Stub::ListPlaybooks,
                v1::ListPlaybooksRequest());
  }

  // ForgetAgent (admin) of an agent that does not exist: NOT_FOUND once allowed.
  grpc::Status Forget(std::shared_ptr<grpc::ChannelCredentials> credentials,
                      const std::string& token) {
    v1::ForgetAgentRequest request;
    request.set_agent_id("gpu-node-999");
    return Call(credentials, Bearer(token), &v1::Query::Stub::ForgetAgent, request);
  }

  double Failures(const std::string& reason, const std::string& service = "query") {
    return MetricValue(*daemon_, absl::StrCat("railwatch_grpc_auth_failures_total{reason=\"",
                                              reason, "\",service=\"", service, "\"}"));
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(AuthQueryTest, NoCredentialsOrAWrongTokenAreUnauthenticated) {
  StartDaemon();
  grpc::Status none = Read(TlsClient("ca.pem"), "");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), HasSubstr("needs credentials: a bearer token"));
  EXPECT_THAT(none.error_message(), HasSubstr("or a client certificate"));
  grpc::Status wrong = Read(TlsClient("ca.pem"), "admin-token-2");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(wrong.error_message(), HasSubstr("not one this daemon knows"));
  EXPECT_THAT(wrong.error_message(), ::testing::Not(HasSubstr("admin-token-2")));
  grpc::Status not_bearer = Call(TlsClient("ca.pem"), "Basic dXNlcjpwYXNz",
                                 &v1::Query::Stub::ListAgents, v1::ListAgentsRequest());
  EXPECT_EQ(not_bearer.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(not_bearer.error_message(), HasSubstr("not \"Bearer TOKEN\""));
  // Streams are checked too.
  auto stub = v1::Query::NewStub(grpc::CreateChannel(daemon_->grpc_address(), TlsClient("ca.pem")));
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  auto reader = stub->WatchDiagnoses(&ctx, {});
  v1::DiagnosisEvent event;
  EXPECT_FALSE(reader->Read(&event));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);

  EXPECT_EQ(Failures("no_credentials"), 2);
  EXPECT_EQ(Failures("bad_token"), 2);
  EXPECT_EQ(Failures("permission_denied"), 0) << "exists from 0 (-1: absent)";
}

TEST_F(AuthQueryTest, ReadOnlyTokensReadAndOnlyAdminsForget) {
  StartDaemon();
  EXPECT_TRUE(Read(TlsClient("ca.pem"), "reader-token").ok());
  grpc::Status denied = Forget(TlsClient("ca.pem"), "reader-token");
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(),
              HasSubstr("ForgetAgent needs the admin role; token \"grafana\" has read-only"));
  EXPECT_EQ(Failures("permission_denied"), 1);
  EXPECT_TRUE(Read(TlsClient("ca.pem"), "admin-token").ok());
  EXPECT_EQ(Forget(TlsClient("ca.pem"), "admin-token").error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthQueryTest, ClientCertificatesHaveRoles) {
  StartDaemon();
  // "test client" is mapped to admin.
  EXPECT_TRUE(Read(TlsClient("ca.pem", "client.pem", "client.key"), "").ok());
  EXPECT_EQ(Forget(TlsClient("ca.pem", "client.pem", "client.key"), "").error_code(),
            grpc::StatusCode::NOT_FOUND);
  // "reader client" is not mapped: the default, read-only.
  EXPECT_TRUE(Read(TlsClient("ca.pem", "reader.pem", "reader.key"), "").ok());
  grpc::Status denied = Forget(TlsClient("ca.pem", "reader.pem", "reader.key"), "");
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("certificate \"reader client\" has read-only"));
  // A certificate from another CA does not get past the handshake.
  EXPECT_EQ(Read(TlsClient("ca.pem", "rogue.pem", "rogue.key"), "").error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(AuthQueryTest, UnmappedCertificatesCanBeGivenNoRole) {
  StartDaemon("none");
  EXPECT_TRUE(Read(TlsClient("ca.pem", "client.pem", "client.key"), "").ok());
  EXPECT_EQ(Read(TlsClient("ca.pem", "reader.pem", "reader.key"), "").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A token still works over the same connection kind.
  EXPECT_TRUE(Read(TlsClient("ca.pem", "reader.pem", "reader.key"), "reader-token").ok());
}

TEST_F(AuthQueryTest, AChangedAccessFileIsUsedWithoutARestart) {
  StartDaemon();
  ASSERT_TRUE(Read(TlsClient("ca.pem"), "reader-token").ok());
  // Rotate: the reader's token is replaced by a new one (written aside, then renamed).
  const std::string file = dir_.path() + "/access.yaml";
  std::ofstream(file + ".new") << "tokens:\n  - {name: grafana, role: read-only, sha256: "
                               << Sha256Hex("rotated-token") << "}\n";
  std::filesystem::rename(file + ".new", file);
  // The daemon looks at the file at most once a second.
  bool rotated = false;
  for (int i = 0; i < 100 && !rotated; ++i) {
    rotated = Read(TlsClient("ca.pem"), "rotated-token").ok();
    if (!rotated) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(rotated);
  EXPECT_EQ(Read(TlsClient("ca.pem"), "reader-token").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(MetricValue(*daemon_, "railwatch_auth_file_reloads_total{result=\"ok\"}"), 1);

  // A broken file keeps the previous tokens.
  std::ofstream(file + ".new") << "tokens:\n  - {name: x, role: root, sha256: abc}\n";
  std::filesystem::rename(file + ".new", file);
  bool failed = false;
  for (int i = 0; i < 100 && !failed; ++i) {
    failed = MetricValue(*daemon_, "railwatch_auth_file_reloads_total{result=\"error\"}") == 1;
    if (!failed) {
      Read(TlsClient("ca.pem"), "rotated-token");  // a call makes the daemon look
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  EXPECT_TRUE(failed);
  EXPECT_TRUE(Read(TlsClient("ca.pem"), "rotated-token").ok());
}

TEST_F(AuthQueryTest, TokensOverPlainTextOnLoopback) {
  DaemonOptions o = LoopbackDaemonOptions();
  o.query_tokens = dir_.path() + "/access.yaml";
  std::ofstream(o.query_tokens) << AccessFileText();
  daemon_ = std::make_unique<Daemon>(o);
  ASSERT_TRUE(daemon_->Start().ok());
  auto plain = grpc::InsecureChannelCredentials();
  grpc::Status none = Read(plain, "");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), ::testing::Not(HasSubstr("certificate")));
  EXPECT_TRUE(Read(plain, "reader-token").ok());
  EXPECT_EQ(Forget(plain, "admin-token").error_code(), grpc::StatusCode::NOT_FOUND);
  // Without client certificates Ingest stays open (the warning at start says so).
  auto ingest = v1::Ingest::NewStub(grpc::CreateChannel(daemon_->grpc_address(), plain));
  grpc::ClientContext ctx;
  ctx.set_deadline(Deadline());
  auto stream = ingest->Stream(&ctx);
  v1::AgentMessage hello;
  hello.mutable_hello()->set_agent_id("gpu-node-001");
  ASSERT_TRUE(stream->Write(hello));
  v1::DaemonMessage welcome;
  EXPECT_TRUE(stream->Read(&welcome));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_F(AuthQueryTest, WithoutAnyAuthenticationLoopbackIsOpen) {
  daemon_ = std::make_unique<Daemon>(LoopbackDaemonOptions());
  ASSERT_TRUE(daemon_->Start().ok());
  EXPECT_EQ(Forget(grpc::InsecureChannelCredentials(), "").error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(AuthQueryTest, ANonLoopbackAddressNeedsAuthenticationOrAnExplicitFlag) {
  DaemonOptions o = LoopbackDaemonOptions();
  o.grpc_listen = "0.0.0.0:0";
  Daemon refused(o);
  absl::Status s = refused.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("--listen=0.0.0.0:0 is not a loopback address"));
  EXPECT_THAT(s.message(), HasSubstr("--allow_unauthenticated"));

  EXPECT_TRUE(CheckListenerAuthentication({"0.0.0.0:9740", false, false, false, false,
                                           /*allow_unauthenticated=*/true})
                  .ok());
  EXPECT_TRUE(CheckListenerAuthentication({"10.0.0.1:9740", false, true, true, false, false}).ok());
  EXPECT_FALSE(CheckListenerAuthentication({"10.0.0.1:9740", false, true, false, true, false}).ok())
      << "tokens authenticate Query clients, not agents";
  EXPECT_TRUE(
      CheckListenerAuthentication({"127.0.0.1:9740", true, false, false, false, false}).ok());
  EXPECT_TRUE(CheckListenerAuthentication(
                  {"unix:/run/railwatch/grpc.sock", false, false, false, false, false})
                  .ok());
}

TEST_F(AuthQueryTest, ABrokenAccessFileStopsTheStart) {
  DaemonOptions o = TlsDaemonOptions(dir_.path(), /*client_ca=*/true);
  o.query_tokens = dir_.path() + "/access.yaml";
  std::ofstream(o.query_tokens) << "tokens:\n  - {name: x, role: root, sha256: abc}\n";
  Daemon daemon(o);
  absl::Status s = daemon.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr(o.query_tokens + ":2:21: error[bad-value]: role \"root\""));

  o.query_tokens = dir_.path() + "/missing.yaml";
  Daemon missing(o);
  EXPECT_THAT(missing.Start().message(), HasSubstr("--query_tokens " + o.query_tokens));
}

// The CLI: --token_file, $RAILWATCH_TOKEN-style options, `agents forget`, exit code 6.
TEST_F(AuthQueryTest, TheCliSendsItsTokenAndForgetsAgents) {
  StartDaemon();
  CliOptions o;
  o.server = daemon_->grpc_address();
  o.tls.ca_file = Certificates().Path("ca.pem");
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand({"agents"}, o, out, err), kExitDenied);
  EXPECT_THAT(err.str(), HasSubstr("wants credentials"));
  EXPECT_THAT(err.str(), HasSubstr("--token_file"));

  const std::string token_file = dir_.path() + "/token";
  std::ofstream(token_file) << "reader-token\n";
  o.token_file = token_file;
  err.str("");
  EXPECT_EQ(RunCommand({"agents"}, o, out, err), kExitOk) << err.str();
  EXPECT_EQ(RunCommand({"agents", "forget", "gpu-node-999"}, o, out, err), kExitDenied);
  EXPECT_THAT(err.str(), HasSubstr("not allowed: ForgetAgent needs the admin role"));

  // An agent that came and went, forgotten by an admin.
  o.token_file.clear();
  o.token = "admin-token";
  {
    auto ingest = v1::Ingest::NewStub(grpc::CreateChannel(
        daemon_->grpc_address(), TlsClient("ca.pem", "client.pem", "client.key")));
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    auto stream = ingest->Stream(&ctx);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_agent_id("gpu-node-042");
    hello.mutable_hello()->set_hostname("gpu-node-042");
    ASSERT_TRUE(stream->Write(hello));
    v1::DaemonMessage welcome;
    ASSERT_TRUE(stream->Read(&welcome));
    err.str("");
    EXPECT_EQ(RunCommand({"agents", "forget", "gpu-node-042"}, o, out, err), kExitError);
    EXPECT_THAT(err.str(), HasSubstr("is connected"));
    stream->WritesDone();
    ASSERT_TRUE(stream->Finish().ok());
  }
  // The daemon learns of the disconnection asynchronously.
  int rc = kExitError;
  for (int i = 0; i < 100 && rc != kExitOk; ++i) {
    out.str("");
    err.str("");
    rc = RunCommand({"agents", "forget", "gpu-node-042"}, o, out, err);
    if (rc != kExitOk) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(rc, kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("Forgot agent gpu-node-042"));
  out.str("");
  EXPECT_EQ(RunCommand({"agents"}, o, out, err), kExitOk);
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("gpu-node-042")));
  EXPECT_EQ(RunCommand({"agents", "forget", "gpu-node-042"}, o, out, err), kExitNotFound);
}

}  // namespace
}  // namespace railwatch::testing
