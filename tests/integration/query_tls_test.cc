// TLS and mutual TLS on the gRPC listener, with a CA, server and client certificates made by
// the `openssl` CLI for each run (TestCertificates): a plain client is refused by a TLS server,
// a client with a certificate from another CA by an mTLS server (the daemon's Query service
// refuses one without a certificate or token), one with a certificate signed by the CA is
// served; and the start-up errors for missing, mismatched or non-PEM files.
#include <chrono>

#include "daemon/daemon.h"
#include "daemon/tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query_test_server.h"
#include "support/test_certificates.h"
#include "support/ttar.h"

namespace railwatch::testing {
namespace query_tls_test {

using ::testing::HasSubstr;

class QueryTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs_ = new TestCertificates("localhost"); }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(certs_->ok()) << certs_->log(); }

  static std::string Path(const char* name) { return certs_->Path(name); }
  static std::string Pem(const char* name) { return certs_->Pem(name); }

  static std::shared_ptr<grpc::ServerCredentials> Server(bool mtls) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> c = MakeServerCredentials(
        {Path("server.pem"), Path("server.key"), mtls ? Path("ca.pem") : ""});
    EXPECT_TRUE(c.ok()) << c.status();
    return c.value_or(nullptr);
  }

  // A client that trusts our CA, presenting `cert` (none when null).
  static std::shared_ptr<grpc::ChannelCredentials> Client(const char* cert, const char* key) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = Pem("ca.pem");
    if (cert != nullptr) {
      o.pem_cert_chain = Pem(cert);
      o.pem_private_key = Pem(key);
    }
    return grpc::SslCredentials(o);
  }

  static grpc::Status Call(const std::string& address,
                           std::shared_ptr<grpc::ChannelCredentials> credentials) {
    auto stub = v1::Query::NewStub(grpc::CreateChannel(address, credentials));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListPlaybooksResponse r;
    grpc::Status s = stub->ListPlaybooks(&ctx, {}, &r);
    if (s.ok()) {
      EXPECT_EQ(r.playbooks_size(), 3);
    }
    return s;
  }

  static TestCertificates* certs_;
};
TestCertificates* QueryTlsTest::certs_ = nullptr;

TEST_F(QueryTlsTest, TlsServerServesTlsClientsAndRefusesPlainText) {
  QueryTestServer server({.credentials = Server(false)});
  EXPECT_TRUE(Call(server.address(), Client(nullptr, nullptr)).ok());
  EXPECT_EQ(Call(server.address(), grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// The handshake verifies a client certificate that is presented; one that is not is for the
// services to judge (daemon/auth.h: Ingest refuses, Query wants a token instead), so this
// server without an Authenticator serves it.
TEST_F(QueryTlsTest, MutualTlsVerifiesAPresentedClientCertificate) {
  QueryTestServer server({.credentials = Server(true)});
  EXPECT_TRUE(Call(server.address(), Client("client.pem", "client.key")).ok());
  EXPECT_TRUE(Call(server.address(), Client(nullptr, nullptr)).ok()) << "no client certificate";
  EXPECT_EQ(Call(server.address(), Client("rogue.pem", "rogue.key")).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "a certificate from another CA";
  EXPECT_EQ(Call(server.address(), grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(QueryTlsTest, NoFilesIsPlainText) {
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> c = MakeServerCredentials({});
  ASSERT_TRUE(c.ok());
  QueryTestServer server({.credentials = *c});
  EXPECT_TRUE(Call(server.address(), grpc::InsecureChannelCredentials()).ok());
}

TEST_F(QueryTlsTest, BadFilesAreClearStartUpErrors) {
  auto error = [](ServerTlsFiles files) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> c = MakeServerCredentials(files);
    EXPECT_FALSE(c.ok());
    return std::string(c.status().message());
  };
  EXPECT_THAT(error({Path("server.pem"), "", ""}), HasSubstr("--tls_cert and --tls_key go together"));
  EXPECT_THAT(error({"", "", Path("ca.pem")}), HasSubstr("--tls_client_ca needs --tls_cert"));
  EXPECT_THAT(error({Path("missing.pem"), Path("server.key"), ""}),
              HasSubstr("--tls_cert: " + Path("missing.pem") + ": No such file"));
  EXPECT_THAT(error({Path("server.pem"), Path("client.key"), ""}),
              HasSubstr("--tls_key " + Path("client.key") +
                        " is not the key of the certificate in --tls_cert " +
                        Path("server.pem")));
  EXPECT_THAT(error({Path("server.key"), Path("server.key"), ""}),
              HasSubstr("--tls_cert " + Path("server.key") + ": no PEM certificate in it"));
  EXPECT_THAT(error({Path("server.pem"), Path("server.pem"), ""}),
              HasSubstr("--tls_key " + Path("server.pem") + ": no unencrypted PEM private key"));
  EXPECT_THAT(error({Path("server.pem"), Path("server.key"), Path("openssl.log")}),
              HasSubstr("--tls_client_ca " + Path("openssl.log") + ": no PEM certificate"));
}

TEST_F(QueryTlsTest, DaemonServesIngestAndQueryOverMutualTls) {
  TempDir dir;
  DaemonOptions options = QueryTestDaemonOptions(dir.path());
  options.tls_cert = Path("server.pem");
  options.tls_key = Path("server.key");
  options.tls_client_ca = Path("ca.pem");
  Daemon daemon(options);
  ASSERT_TRUE(daemon.Start().ok());
  EXPECT_TRUE(Call(daemon.grpc_address(), Client("client.pem", "client.key")).ok());
  EXPECT_EQ(Call(daemon.grpc_address(), Client(nullptr, nullptr)).error_code(),
            grpc::StatusCode::UNAUTHENTICATED)
      << "no client certificate and no token";
  EXPECT_EQ(Call(daemon.grpc_address(), grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  daemon.Stop();

  options.tls_key = Path("client.key");
  Daemon mismatched(options);
  absl::Status s = mismatched.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("is not the key of the certificate"));
}

}  // namespace
}  // namespace railwatch::testing
