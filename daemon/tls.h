#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"

namespace railwatch {

// PEM files for the daemon's gRPC listener (Ingest and Query share it).
struct ServerTlsFiles {
  std::string cert;       // --tls_cert: the server's certificate chain
  std::string key;        // --tls_key: its private key
  std::string client_ca;  // --tls_client_ca: when set, clients must present a certificate it signed
};

// Plain text when no file is given; TLS with cert and key; mutual TLS with a client CA too.
// The files are read and checked now, so that a wrong path, a file that is not PEM, or a key
// that is not the certificate's fails the start with a message that names the flag and the
// file, instead of failing every client's handshake later.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files);

}  // namespace railwatch
