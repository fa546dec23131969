#include "daemon/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/text.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace railwatch {
namespace {

// The newest OpenSSL error, for messages ("no start line", "bad decrypt" ...).
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "not PEM";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio MemoryBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

absl::StatusOr<std::string> ReadPem(const char* flag, const std::string& path) {
  absl::StatusOr<std::string> pem = ReadFile(path);
  if (!pem.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", pem.status().message()));
  }
  return pem;
}

// The first certificate of a PEM file; warns when it has expired (TLS clients will refuse it).
absl::StatusOr<Cert> FirstCertificate(const char* flag, const std::string& path,
                                      const std::string& pem) {
  Bio bio = MemoryBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return absl::InvalidArgumentError(absl::StrCat(flag, " ", path, ": no PEM certificate in it (",
                                                   OpenSslError(), ")"));
  }
  if (X509_cmp_current_time(X509_get0_notAfter(cert.get())) < 0) {
    spdlog::warn("{} {}: the certificate has expired; clients will refuse it", flag, path);
  }
  return cert;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key go together: give both (TLS) or neither (plain text)");
  }
  if (files.cert.empty()) {
    if (!files.client_ca.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs --tls_cert and --tls_key: client certificates are only asked "
          "for over TLS");
    }
    return grpc::InsecureServerCredentials();
  }

  absl::StatusOr<std::string> cert_pem = ReadPem("--tls_cert", files.cert);
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem = ReadPem("--tls_key", files.key);
  if (!key_pem.ok()) return key_pem.status();
  absl::StatusOr<Cert> cert = FirstCertificate("--tls_cert", files.cert, *cert_pem);
  if (!cert.ok()) return cert.status();
  Bio key_bio = MemoryBio(*key_pem);
  // No passphrase callback: OpenSSL's default would prompt on the terminal for an encrypted
  // key, and a daemon has none.
  pem_password_cb* no_passphrase = [](char*, int, int, void*) { return -1; };
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr));
  if (!key) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_key ", files.key, ": no unencrypted PEM private key in it (", OpenSslError(), ")"));
  }
  if (X509_check_private_key(cert->get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("--tls_key ", files.key,
                                                   " is not the key of the certificate in "
                                                   "--tls_cert ",
                                                   files.cert));
  }

  if (!files.client_ca.empty()) {
    absl::StatusOr<std::string> ca_pem = ReadPem("--tls_client_ca", files.client_ca);
    if (!ca_pem.ok()) return ca_pem.status();
    if (absl::StatusOr<Cert> ca = FirstCertificate("--tls_client_ca", files.client_ca, *ca_pem);
        !ca.ok()) {
      return ca.status();
    }
  }
  if (files.reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--tls_reload_interval must be at least 1s");
  }
  const auto refresh_seconds =
      static_cast<unsigned int>(absl::ToInt64Seconds(files.reload_interval));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      files.key, files.cert, files.client_ca, refresh_seconds);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!files.client_ca.empty()) {
    options.watch_root_certs();
    // Request, verify when presented, but do not require: Query clients may come with a bearer
    // token instead; Ingest refuses a stream without a verified certificate (daemon/auth.h).
    options.set_cert_request_type(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace railwatch
