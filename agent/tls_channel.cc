#include "agent/tls_channel.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "grpcpp/security/tls_certificate_provider.h"
#include "grpcpp/security/tls_certificate_verifier.h"
#include "grpcpp/security/tls_credentials_options.h"

namespace railwatch {
namespace {

// The file exists, is readable and holds a PEM block of `kind` ("CERTIFICATE", "PRIVATE KEY").
absl::Status CheckPem(const char* flag, const std::string& path, const char* kind) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok())
    return absl::InvalidArgumentError(absl::StrCat(flag, ": ", text.status().message()));
  if (text->find("-----BEGIN ") == std::string::npos || text->find(kind) == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, " ", path, ": no PEM ", absl::AsciiStrToLower(kind), " in it"));
  }
  return absl::OkStatus();
}

}  // namespace

bool UsesTls(const AgentTlsFiles& files) {
  return !files.ca.empty() || !files.cert.empty() || !files.key.empty();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeAgentChannelCredentials(
    const AgentTlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key go together (a client certificate needs its key)");
  }
  if (files.ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls_ca is needed with --tls_cert: the CA that signed railwatchd's certificate");
  }
  if (files.reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("--tls_reload_interval must be at least 1s");
  }
  if (absl::Status s = CheckPem("--tls_ca", files.ca, "CERTIFICATE"); !s.ok()) return s;
  if (!files.cert.empty()) {
    if (absl::Status s = CheckPem("--tls_cert", files.cert, "CERTIFICATE"); !s.ok()) return s;
    if (absl::Status s = CheckPem("--tls_key", files.key, "PRIVATE KEY"); !s.ok()) return s;
  }
  const auto refresh = static_cast<unsigned int>(absl::ToInt64Seconds(files.reload_interval));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      files.key, files.cert, files.ca, refresh);
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(provider);
  options.watch_root_certs();
  if (!files.cert.empty()) options.watch_identity_key_cert_pairs();
  // The daemon's certificate must name the host the agent dials.
  options.set_certificate_verifier(
      std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
  return grpc::experimental::TlsCredentials(options);
}

}  // namespace railwatch
