// TLS and mutual TLS toward a target, with certificates made by the `openssl` CLI for each
// run (TestCertificates); a target whose certificate does not chain to the configured CA is
// refused, and so is one whose certificate names another host than the configured server_name.
#include <fstream>

#include "fake_gnmi_target.h"
#include "gnmi/client.h"
#include "gnmi/targets.h"
#include "gnmi_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/test_certificates.h"

namespace railwatch::testing {
namespace tls_test {

// A CA, a server certificate for leaf-1.example (and 127.0.0.1) and a client certificate,
// all signed by it, plus a second, unrelated CA.
class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { certs_ = new TestCertificates("leaf-1.example"); }
  static void TearDownTestSuite() {
    delete certs_;
    certs_ = nullptr;
  }

  void SetUp() override { ASSERT_TRUE(certs_->ok()) << certs_->log(); }

  static std::string Pem(const char* name) { return certs_->Pem(name); }

  FakeGnmiTarget::Options ServerOptions(bool require_client_cert) {
    FakeGnmiTarget::Options o;
    o.server_cert_pem = Pem("server.pem");
    o.server_key_pem = Pem("server.key");
    if (require_client_cert) o.client_ca_pem = Pem("ca.pem");
    return o;
  }

  GnmiTargetConfig Client(const FakeGnmiTarget& fake, const char* ca, bool with_cert) {
    GnmiTargetConfig t = TestTarget("leaf-1", fake.address());
    GnmiTlsConfig tls;
    tls.ca_pem = Pem(ca);
    tls.server_name = "leaf-1.example";
    if (with_cert) {
      tls.cert_pem = Pem("client.pem");
      tls.key_pem = Pem("client.key");
    }
    t.tls = tls;
    return t;
  }

  static TestCertificates* certs_;
};

TestCertificates* TlsTest::certs_ = nullptr;

TEST_F(TlsTest, StreamsOverTls) {
  FakeGnmiTarget fake(ServerOptions(false));
  ASSERT_TRUE(fake.Start().ok());
  GnmiSwitchCollector::Options options;
  options.targets = {Client(fake, "ca.pem", false)};
  options.channel = FastChannel();
  auto collector = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
  ASSERT_TRUE(collector.ok()) << collector.status();
  (*collector)->Start();
  ASSERT_TRUE(fake.WaitForStreams(1, absl::Seconds(30)));
  ASSERT_EQ(fake.Broadcast(UintUpdate(
                "/interfaces/interface[name=Ethernet9]/state/counters/out-octets", 77, 1)),
            1);
  PointLog log;
  ASSERT_TRUE(CollectUntil(**collector, log, [&] {
    return !log.Of("fabric_switch_interface_transmit_bytes_total").empty();
  }));
  EXPECT_EQ(log.Of("fabric_switch_interface_transmit_bytes_total")[0].counter, 77u);
}

TEST_F(TlsTest, MutualTlsAcceptsTheClientCertificateAndRefusesNone) {
  FakeGnmiTarget fake(ServerOptions(true));
  ASSERT_TRUE(fake.Start().ok());
  auto with_cert = GnmiCapabilities(Client(fake, "ca.pem", true), absl::Seconds(20));
  EXPECT_TRUE(with_cert.ok()) << with_cert.status();
  auto without_cert = GnmiCapabilities(Client(fake, "ca.pem", false), absl::Seconds(5));
  EXPECT_FALSE(without_cert.ok());
}

TEST_F(TlsTest, ATargetSignedByAnotherCaIsRefused) {
  FakeGnmiTarget fake(ServerOptions(false));
  ASSERT_TRUE(fake.Start().ok());
  auto caps = GnmiCapabilities(Client(fake, "other-ca.pem", false), absl::Seconds(5));
  ASSERT_FALSE(caps.ok());
  EXPECT_EQ(caps.status().code(), absl::StatusCode::kUnavailable) << caps.status();

  // The streaming client keeps trying (and counting) but never gets a stream.
  GnmiSwitchCollector::Options options;
  options.targets = {Client(fake, "other-ca.pem", false)};
  options.channel = FastChannel();
  auto collector = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
  ASSERT_TRUE(collector.ok());
  (*collector)->Start();
  PointLog log;
  ASSERT_TRUE(CollectUntil(**collector, log, [&] {
    return (*collector)->target_stats(0).client.errors >= 2;
  }));
  EXPECT_EQ(fake.stream_count(), 0);
  EXPECT_FALSE((*collector)->target_stats(0).client.connected);
}

TEST_F(TlsTest, ATargetWhoseCertificateNamesAnotherHostIsRefused) {
  FakeGnmiTarget fake(ServerOptions(false));
  ASSERT_TRUE(fake.Start().ok());
  GnmiTargetConfig target = Client(fake, "ca.pem", false);
  target.tls->server_name = "leaf-2.example";  // the certificate names leaf-1.example
  auto caps = GnmiCapabilities(target, absl::Seconds(5));
  ASSERT_FALSE(caps.ok());
  EXPECT_EQ(caps.status().code(), absl::StatusCode::kUnavailable) << caps.status();
  // gRPC's words, after the target's name and address.
  EXPECT_THAT(caps.status().message(), ::testing::HasSubstr("gnmi target leaf-1 (127.0.0.1:"));
  EXPECT_THAT(caps.status().message(),
              ::testing::HasSubstr("Peer name leaf-2.example is not in peer certificate"));
  EXPECT_EQ(fake.stream_count(), 0);
}

TEST_F(TlsTest, TargetsFileReadsTheCertificates) {
  std::ofstream(certs_->Path("targets.yaml"))
      << "defaults:\n  tls: {ca: ca.pem, cert: client.pem, key: client.key, "
         "server_name: leaf-1.example}\n"
         "targets:\n  - {name: leaf-1, address: 127.0.0.1:1}\n";
  auto targets = LoadGnmiTargetsFile(certs_->Path("targets.yaml"));
  ASSERT_TRUE(targets.ok()) << targets.status();
  ASSERT_TRUE((*targets)[0].tls.has_value());
  EXPECT_EQ((*targets)[0].tls->cert_pem, Pem("client.pem"));
  EXPECT_EQ((*targets)[0].tls->key_pem, Pem("client.key"));
  EXPECT_EQ((*targets)[0].tls->ca_pem, Pem("ca.pem"));
}

}  // namespace
}  // namespace railwatch::testing
