#include "support/test_certificates.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace railwatch::testing {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TestCertificates::TestCertificates(const std::string& server_dns_name) {
  static std::atomic<int> sequence{0};
  const fs::path dir = fs::temp_directory_path() /
                       ("railwatch_certs_" + std::to_string(getpid()) + "_" +
                        std::to_string(sequence++));
  fs::create_directories(dir);
  dir_ = dir.string();
  std::ofstream(dir / "server.ext") << "subjectAltName=DNS:" << server_dns_name
                                    << ",IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
  std::ofstream(dir / "client.ext") << "extendedKeyUsage=clientAuth\n";
  std::ofstream(dir / "elsewhere.ext")
      << "subjectAltName=DNS:elsewhere.example\nextendedKeyUsage=serverAuth\n";
  const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  const std::string sign = "-CA ca.pem -CAkey ca.key -CAcreateserial -days 2";
  const std::string script =
      "set -e; cd '" + dir_ + "'; " +
      "openssl req -x509 " + key + " -keyout ca.key -out ca.pem -days 2 -subj '/CN=test CA'; " +
      "openssl req -x509 " + key + " -keyout other.key -out other-ca.pem -days 2 " +
      "-subj '/CN=other CA'; " +
      "openssl req " + key + " -keyout server.key -out server.csr -subj '/CN=" +
      server_dns_name + "'; " +
      "openssl x509 -req -in server.csr " + sign + " -extfile server.ext -out server.pem; " +
      "openssl req " + key + " -keyout client.key -out client.csr -subj '/CN=test client'; " +
      "openssl x509 -req -in client.csr " + sign + " -extfile client.ext -out client.pem; " +
      "openssl req " + key + " -keyout rogue.key -out rogue.csr -subj '/CN=rogue client'; " +
      "openssl x509 -req -in rogue.csr -CA other-ca.pem -CAkey other.key -CAcreateserial " +
      "-days 2 -extfile client.ext -out rogue.pem; " +
      "openssl req " + key + " -keyout reader.key -out reader.csr -subj '/CN=reader client'; " +
      "openssl x509 -req -in reader.csr " + sign + " -extfile client.ext -out reader.pem; " +
      "openssl req " + key + " -keyout other-server.key -out other-server.csr -subj '/CN=" +
      server_dns_name + "'; " +
      "openssl x509 -req -in other-server.csr -CA other-ca.pem -CAkey other.key " +
      "-CAcreateserial -days 2 -extfile server.ext -out other-server.pem; " +
      "openssl req " + key + " -keyout elsewhere.key -out elsewhere.csr " +
      "-subj '/CN=elsewhere.example'; " +
      "openssl x509 -req -in elsewhere.csr " + sign + " -extfile elsewhere.ext -out elsewhere.pem";
  const std::string cmd = "sh -c \"" + script + "\" >'" + dir_ + "/openssl.log' 2>&1";
  ok_ = std::system(cmd.c_str()) == 0;
}

TestCertificates::~TestCertificates() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

std::string TestCertificates::log() const { return Slurp(fs::path(dir_) / "openssl.log"); }

std::string TestCertificates::Path(const std::string& name) const {
  return (fs::path(dir_) / name).string();
}

std::string TestCertificates::Pem(const std::string& name) const { return Slurp(Path(name)); }

}  // namespace railwatch::testing
