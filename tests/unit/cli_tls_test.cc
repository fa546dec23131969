// --tls, --tls_ca, --tls_cert/--tls_key and --tls_server_name against a fake daemon serving
// TLS, with a CA, a server and a client certificate made by the `openssl` CLI for each run.
#include <memory>

#include "cli/commands.h"
#include "cli_fake_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_certificates.h"

namespace railwatch::testing {
namespace cli_tls_test {

using ::testing::HasSubstr;

// The server certificate names railwatchd.example and 127.0.0.1.
class CliTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs_ = new TestCertificates("railwatchd.example"); }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(certs_->ok()) << certs_->log(); }

  static std::string File(const char* name) { return certs_->Path(name); }

  static FakeQueryData Data() {
    FakeQueryData data;
    data.agents.add_agents()->set_agent_id("gpu-node-001");
    return data;
  }
  static FakeTls ServerTls(bool require_client_cert) {
    FakeTls tls{certs_->Pem("server.pem"), certs_->Pem("server.key"), ""};
    if (require_client_cert) tls.client_ca_pem = certs_->Pem("ca.pem");
    return tls;
  }

  static TestCertificates* certs_;
};

TestCertificates* CliTlsTest::certs_ = nullptr;

TEST_F(CliTlsTest, TlsWithTheDaemonsCa) {
  FakeQueryServer server(Data(), ServerTls(false));
  CliOptions o = OptionsFor(server);
  o.tls.enabled = true;
  o.tls.ca_file = File("ca.pem");
  CliRun r = RunCli({"agents"}, o);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpu-node-001"));
  // The name checked can be overridden (the certificate names railwatchd.example).
  o.tls.server_name = "railwatchd.example";
  EXPECT_EQ(RunCli({"agents"}, o).code, kExitOk);
  o.tls.server_name = "elsewhere.example";
  EXPECT_EQ(RunCli({"agents"}, o).code, kExitUnavailable);
}

TEST_F(CliTlsTest, APlainClientOrAnotherCaCannotConnect) {
  FakeQueryServer server(Data(), ServerTls(false));
  CliOptions o = OptionsFor(server);
  o.timeout_seconds = 3;
  CliRun plain = RunCli({"agents"}, o);
  EXPECT_EQ(plain.code, kExitUnavailable);
  EXPECT_THAT(plain.err, HasSubstr("--tls if it serves TLS"));
  o.tls.ca_file = File("other-ca.pem");  // implies --tls
  CliRun wrong_ca = RunCli({"agents"}, o);
  EXPECT_EQ(wrong_ca.code, kExitUnavailable);
  EXPECT_THAT(wrong_ca.err, HasSubstr("--tls_ca"));
}

TEST_F(CliTlsTest, MutualTlsNeedsTheClientCertificate) {
  FakeQueryServer server(Data(), ServerTls(true));
  CliOptions o = OptionsFor(server);
  o.timeout_seconds = 3;
  o.tls.ca_file = File("ca.pem");
  EXPECT_EQ(RunCli({"agents"}, o).code, kExitUnavailable);
  o.tls.cert_file = File("client.pem");
  o.tls.key_file = File("client.key");
  CliRun r = RunCli({"agents"}, o);
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST_F(CliTlsTest, UnreadableOrIncompleteTlsFilesAreUsageErrors) {
  CliOptions o;
  o.tls.ca_file = File("missing.pem");
  CliRun r = RunCli({"agents"}, o);
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--tls_ca: " + File("missing.pem")));
  o.tls.ca_file = File("server.ext");
  r = RunCli({"agents"}, o);
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("is not PEM"));
  o.tls.ca_file = File("ca.pem");
  o.tls.cert_file = File("client.pem");
  r = RunCli({"agents"}, o);
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--tls_cert and --tls_key go together"));
}

}  // namespace
}  // namespace railwatch::testing
