#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/server_credentials.h"

namespace railwatch {

// PEM files for the daemon's gRPC listener (Ingest and Query share it).
struct ServerTlsFiles {
  std::string cert;       // --tls_cert: the server's certificate chain
  std::string key;        // --tls_key: its private key
  // --tls_client_ca: when set, the server asks every client for a certificate and verifies
  // one that is presented against these CAs (a certificate from another CA fails the
  // handshake). A client without one still connects: the services decide (daemon/auth.h):
  // Ingest refuses it, Query accepts a bearer token instead.
  std::string client_ca;
  // How often the files are read again (--tls_reload_interval): a renewed certificate, key or
  // client CA serves new connections without a restart; open ones keep theirs.
  absl::Duration reload_interval = absl::Minutes(1);
};

// Plain text when no file is given; TLS with cert and key; mutual TLS with a client CA too.
// The files are read and checked now, so that a wrong path, a file that is not PEM, or a key
// that is not the certificate's fails the start with a message that names the flag and the
// file, instead of failing every client's handshake later. gRPC's file watcher then re-reads
// them every reload_interval; a renewal that is broken (a key that is not the certificate's)
// is logged by gRPC and the previous pair kept.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerTlsFiles& files);

}  // namespace railwatch
