// TLS and mutual TLS on the gRPC listener, with a CA, server and client certificates made by
// the `openssl` CLI for each run: a plain client is refused by a TLS server, a client without
// a certificate by an mTLS server, one with a certificate signed by the CA is served; and the
// start-up errors for missing, mismatched or non-PEM files.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/text.h"
#include "daemon/daemon.h"
#include "daemon/tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query_test_server.h"
#include "support/ttar.h"

namespace railwatch::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class QueryTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("railwatch_query_tls_" + std::to_string(getpid())));
    fs::create_directories(*dir_);
    const std::string d = dir_->string();
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(*dir_ / "server.ext")
        << "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
    std::ofstream(*dir_ / "client.ext") << "extendedKeyUsage=clientAuth\n";
    const std::string script =
        "set -e; cd '" + d + "'; " +
        "openssl req -x509 " + key + " -keyout ca.key -out ca.pem -days 2 -subj '/CN=rw CA'; " +
        "openssl req -x509 " + key + " -keyout other.key -out other-ca.pem -days 2 "
        "-subj '/CN=other CA'; " +
        "openssl req " + key + " -keyout server.key -out server.csr -subj '/CN=railwatchd'; " +
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-extfile server.ext -out server.pem; " +
        "openssl req " + key + " -keyout client.key -out client.csr -subj '/CN=sre'; " +
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-extfile client.ext -out client.pem; " +
        "openssl req " + key + " -keyout rogue.key -out rogue.csr -subj '/CN=rogue'; " +
        "openssl x509 -req -in rogue.csr -CA other-ca.pem -CAkey other.key -CAcreateserial "
        "-days 2 -extfile client.ext -out rogue.pem";
    const std::string cmd = "sh -c \"" + script + "\" >'" + d + "/openssl.log' 2>&1";
    ok_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(ok_) << ReadFile((*dir_ / "openssl.log").string()).value_or("");
  }

  static std::string Path(const char* name) { return (*dir_ / name).string(); }
  static std::string Pem(const char* name) { return ReadFile(Path(name)).value_or(""); }

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
    if (s.ok()) EXPECT_EQ(r.playbooks_size(), 3);
    return s;
  }

  static fs::path* dir_;
  static bool ok_;
};
fs::path* QueryTlsTest::dir_ = nullptr;
bool QueryTlsTest::ok_ = false;

TEST_F(QueryTlsTest, TlsServerServesTlsClientsAndRefusesPlainText) {
  QueryTestServer server({.credentials = Server(false)});
  EXPECT_TRUE(Call(server.address(), Client(nullptr, nullptr)).ok());
  EXPECT_EQ(Call(server.address(), grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(QueryTlsTest, MutualTlsNeedsAClientCertificateFromTheCa) {
  QueryTestServer server({.credentials = Server(true)});
  EXPECT_TRUE(Call(server.address(), Client("client.pem", "client.key")).ok());
  EXPECT_EQ(Call(server.address(), Client(nullptr, nullptr)).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "no client certificate";
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
