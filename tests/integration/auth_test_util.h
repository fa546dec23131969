#pragma once

// Shared by the auth_*_test.cc tests: one set of certificates per test binary (openssl runs
// once), a real Daemon on loopback with TLS files copied into a directory of the test's own
// (so that a test can replace them), an access file, and the daemon's counters from /metrics.

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "daemon/auth_access.h"
#include "daemon/daemon.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "support/http_get.h"
#include "support/test_certificates.h"
#include "support/ttar.h"

namespace railwatch::testing {

// The server certificate names localhost and 127.0.0.1.
inline TestCertificates& Certificates() {
  static TestCertificates* certs = new TestCertificates("localhost");
  return *certs;
}

// Copies a certificate file into `dir` under `as` (an atomic rename, as cert managers do).
inline void Install(const std::string& dir, const std::string& name, const std::string& as) {
  const std::string tmp = dir + "/." + as + ".tmp";
  std::filesystem::copy_file(Certificates().Path(name), tmp,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(tmp, dir + "/" + as);
}

// Tokens: "reader-token" (read-only, named grafana), "admin-token" (admin, named oncall);
// certificate "test client" is admin, others get `default_role`.
inline std::string AccessFileText(const std::string& default_role = "read-only") {
  return absl::StrCat("tokens:\n",
                      "  - {name: grafana, role: read-only, sha256: ", Sha256Hex("reader-token"),
                      "}\n", "  - {name: oncall, role: admin, sha256: ", Sha256Hex("admin-token"),
                      "}\n", "certificates:\n  - {identity: test client, role: admin}\n",
                      "default_certificate_role: ", default_role, "\n");
}

// A daemon with the shipped rules on free loopback ports, in plain text.
inline DaemonOptions LoopbackDaemonOptions() {
  DaemonOptions o;
  o.grpc_listen = "127.0.0.1:0";
  o.metrics_listen = "127.0.0.1:0";
  o.rules = {RAILWATCH_RULES_SOURCE_DIR};
  return o;
}

// The same with its TLS files in `dir` (server.pem, server.key, ca.pem installed from
// Certificates()), re-read every second.
inline DaemonOptions TlsDaemonOptions(const std::string& dir, bool client_ca) {
  Install(dir, "server.pem", "server.pem");
  Install(dir, "server.key", "server.key");
  Install(dir, "ca.pem", "client-ca.pem");
  DaemonOptions o = LoopbackDaemonOptions();
  o.tls_cert = dir + "/server.pem";
  o.tls_key = dir + "/server.key";
  if (client_ca) o.tls_client_ca = dir + "/client-ca.pem";
  o.tls_reload_interval = absl::Seconds(1);
  return o;
}

// A client that trusts `ca` and presents `cert` (none when empty).
inline std::shared_ptr<grpc::ChannelCredentials> TlsClient(const std::string& ca,
                                                           const std::string& cert = "",
                                                           const std::string& key = "") {
  grpc::SslCredentialsOptions o;
  o.pem_root_certs = Certificates().Pem(ca);
  if (!cert.empty()) {
    o.pem_cert_chain = Certificates().Pem(cert);
    o.pem_private_key = Certificates().Pem(key);
  }
  return grpc::SslCredentials(o);
}

inline std::chrono::system_clock::time_point Deadline(int seconds = 10) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// The value of one sample line of the daemon's /metrics ("name{labels}"), -1 when absent.
inline double MetricValue(const Daemon& daemon, const std::string& sample) {
  const std::string& address = daemon.metrics_address();
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) return -1;
  const std::string body = HttpGet(port, "/metrics").body;
  const size_t at = body.find("\n" + sample + " ");
  if (at == std::string::npos) return -1;
  double value = -1;
  const size_t start = at + sample.size() + 2;
  (void)absl::SimpleAtod(body.substr(start, body.find('\n', start) - start), &value);
  return value;
}

}  // namespace railwatch::testing
