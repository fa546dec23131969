#pragma once

#include <string>

namespace railwatch::testing {

// Certificates for TLS tests, made by the `openssl` CLI in a temporary directory that lives as
// long as this object: a CA (ca.pem, ca.key); a server certificate signed by it for
// `server_dns_name` and 127.0.0.1 (server.pem, server.key); a client certificate signed by it
// (client.pem, client.key); an unrelated CA (other-ca.pem, other.key); and a client certificate
// signed by that unrelated CA (rogue.pem, rogue.key), which a mutual-TLS server trusting ca.pem
// must refuse. For the auth tests: a second client of ca.pem, CN "reader client" (reader.pem,
// reader.key); a server certificate for the same names signed by the unrelated CA
// (other-server.pem, other-server.key: a renewal to another PKI); and one signed by ca.pem that
// names only elsewhere.example (elsewhere.pem, elsewhere.key: the wrong name). The log of
// openssl's run is openssl.log. Make one per test suite
// (SetUpTestSuite): openssl takes a few hundred milliseconds.
class TestCertificates {
 public:
  explicit TestCertificates(const std::string& server_dns_name);
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  // False when openssl failed; log() says why.
  bool ok() const { return ok_; }
  std::string log() const;

  // The file's path, and its contents.
  std::string Path(const std::string& name) const;
  std::string Pem(const std::string& name) const;

 private:
  std::string dir_;
  bool ok_ = false;
};

}  // namespace railwatch::testing
