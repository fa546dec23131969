// Agent -> daemon mutual TLS against a real Daemon on loopback, with the agent's own channel
// credentials (agent/tls_channel.h): an agent with a certificate from the daemon's client CA
// streams; one without a certificate is refused with UNAUTHENTICATED (and counted); one with a
// certificate from another CA, or in plain text, never gets past the handshake; a daemon
// certificate that does not name the address is refused by the agent; and renewed files are
// used for new connections without restarting the daemon or the agent.
#include <thread>

#include "agent/tls_channel.h"
#include "auth_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "railwatch/v1/ingest.grpc.pb.h"

namespace railwatch::testing {
namespace auth_ingest_test {

using ::testing::HasSubstr;

class AuthIngestTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(Certificates().ok()) << Certificates().log(); }

  void StartDaemon(DaemonOptions o) {
    daemon_ = std::make_unique<Daemon>(std::move(o));
    absl::Status s = daemon_->Start();
    ASSERT_TRUE(s.ok()) << s;
  }

  // The agent's credentials for files of Certificates() (cert "" for none).
  static std::shared_ptr<grpc::ChannelCredentials> Agent(const std::string& ca,
                                                         const std::string& cert,
                                                         const std::string& key) {
    AgentTlsFiles files{Certificates().Path(ca), cert.empty() ? "" : Certificates().Path(cert),
                        key.empty() ? "" : Certificates().Path(key), absl::Seconds(1)};
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> c =
        MakeAgentChannelCredentials(files);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.value_or(grpc::InsecureChannelCredentials());
  }

  // Opens a stream on a new connection, says Hello and sends one batch: OK when the daemon
  // welcomed and acknowledged it, else why the stream ended.
  grpc::Status Stream(std::shared_ptr<grpc::ChannelCredentials> credentials) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a handshake of its own
    auto stub =
        v1::Ingest::NewStub(grpc::CreateCustomChannel(daemon_->grpc_address(), credentials, args));
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(5));
    auto stream = stub->Stream(&ctx);
    v1::AgentMessage hello;
    hello.mutable_hello()->set_agent_id("gpu-node-007");
    hello.mutable_hello()->set_instance_id(++instance_);
    v1::AgentMessage batch;
    batch.mutable_batch()->set_sequence(1);
    v1::DaemonMessage welcome, ack;
    if (stream->Write(hello) && stream->Read(&welcome) && stream->Write(batch) &&
        stream->Read(&ack)) {
      EXPECT_TRUE(welcome.has_welcome());
      EXPECT_EQ(ack.ack().sequence(), 1u);
      stream->WritesDone();
    }
    return stream->Finish();
  }

  // Streams until OK (files are re-read every second), at most 10 s.
  bool StreamsWithin10s(std::shared_ptr<grpc::ChannelCredentials> credentials) {
    for (int i = 0; i < 50; ++i) {
      if (Stream(credentials).ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  TempDir dir_;
  std::unique_ptr<Daemon> daemon_;
  uint64_t instance_ = 0;
};

TEST_F(AuthIngestTest, OnlyAgentsWithACertificateFromTheClientCaStream) {
  StartDaemon(TlsDaemonOptions(dir_.path(), /*client_ca=*/true));
  grpc::Status good = Stream(Agent("ca.pem", "client.pem", "client.key"));
  EXPECT_TRUE(good.ok()) << good.error_message();

  grpc::Status none = Stream(Agent("ca.pem", "", ""));
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(),
              HasSubstr("Ingest needs a client certificate signed by the daemon's "
                        "--tls_client_ca"));
  EXPECT_EQ(MetricValue(*daemon_,
                        "railwatch_grpc_auth_failures_total{reason="
                        "\"no_client_certificate\",service=\"ingest\"}"),
            1);

  EXPECT_EQ(Stream(Agent("ca.pem", "rogue.pem", "rogue.key")).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "a certificate from another CA";
  EXPECT_EQ(Stream(grpc::InsecureChannelCredentials()).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "plain text";
  EXPECT_EQ(Stream(Agent("other-ca.pem", "client.pem", "client.key")).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "an agent that does not trust the daemon's CA";
}

TEST_F(AuthIngestTest, TheAgentRefusesADaemonCertificateForAnotherName) {
  DaemonOptions o = TlsDaemonOptions(dir_.path(), /*client_ca=*/true);
  o.tls_cert = Certificates().Path("elsewhere.pem");
  o.tls_key = Certificates().Path("elsewhere.key");
  StartDaemon(o);
  EXPECT_EQ(Stream(Agent("ca.pem", "client.pem", "client.key")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(AuthIngestTest, TheDaemonUsesRenewedFilesWithoutARestart) {
  StartDaemon(TlsDaemonOptions(dir_.path(), /*client_ca=*/true));
  ASSERT_TRUE(Stream(Agent("ca.pem", "client.pem", "client.key")).ok());
  // Move the daemon to another PKI: its certificate and its client CA.
  Install(dir_.path(), "other-server.key", "server.key");
  Install(dir_.path(), "other-server.pem", "server.pem");
  Install(dir_.path(), "other-ca.pem", "client-ca.pem");
  EXPECT_TRUE(StreamsWithin10s(Agent("other-ca.pem", "rogue.pem", "rogue.key")));
  EXPECT_EQ(Stream(Agent("ca.pem", "client.pem", "client.key")).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(AuthIngestTest, TheAgentUsesARenewedCertificateWithoutARestart) {
  StartDaemon(TlsDaemonOptions(dir_.path(), /*client_ca=*/true));
  // The agent's files, in a directory of its own; it starts with a certificate the daemon
  // does not trust.
  TempDir agent_dir;
  Install(agent_dir.path(), "ca.pem", "ca.pem");
  Install(agent_dir.path(), "rogue.pem", "agent.pem");
  Install(agent_dir.path(), "rogue.key", "agent.key");
  auto credentials =
      MakeAgentChannelCredentials({agent_dir.path() + "/ca.pem", agent_dir.path() + "/agent.pem",
                                   agent_dir.path() + "/agent.key", absl::Seconds(1)});
  ASSERT_TRUE(credentials.ok()) << credentials.status();
  EXPECT_EQ(Stream(*credentials).error_code(), grpc::StatusCode::UNAVAILABLE);
  Install(agent_dir.path(), "client.key", "agent.key");
  Install(agent_dir.path(), "client.pem", "agent.pem");
  EXPECT_TRUE(StreamsWithin10s(*credentials)) << "the same credentials, the renewed files";
}

TEST_F(AuthIngestTest, AgentTlsFlagsAreCheckedAtStart) {
  auto error = [](AgentTlsFiles files) {
    return std::string(MakeAgentChannelCredentials(files).status().message());
  };
  const std::string ca = Certificates().Path("ca.pem");
  const std::string cert = Certificates().Path("client.pem");
  const std::string key = Certificates().Path("client.key");
  EXPECT_THAT(error({ca, cert, ""}), HasSubstr("--tls_cert and --tls_key go together"));
  EXPECT_THAT(error({"", cert, key}), HasSubstr("--tls_ca is needed"));
  EXPECT_THAT(error({ca + ".missing", cert, key}),
              HasSubstr("--tls_ca: " + ca + ".missing: No such file"));
  EXPECT_THAT(error({ca, key, key}), HasSubstr("--tls_cert " + key + ": no PEM certificate"));
  EXPECT_THAT(error({ca, cert, cert}), HasSubstr("--tls_key " + cert + ": no PEM private key"));
  EXPECT_TRUE(MakeAgentChannelCredentials({ca, cert, key}).ok());
}

}  // namespace
}  // namespace railwatch::testing
