#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"

namespace railwatch {

// The agent's side of mutual TLS toward railwatchd (railwatch-agent --tls_ca, --tls_cert,
// --tls_key; docs/SECURITY.md).
struct AgentTlsFiles {
  std::string ca;    // the CA that signed the daemon's certificate
  std::string cert;  // this agent's client certificate (chain), signed by the daemon's
                     // --tls_client_ca
  std::string key;   // its private key (unencrypted PEM)
  // How often the files are read again: a renewed certificate is used from the next
  // connection on, without restarting the agent.
  absl::Duration reload_interval = absl::Minutes(1);
};

// Whether any TLS file is given (plain text otherwise).
bool UsesTls(const AgentTlsFiles& files);

// Channel credentials that verify the daemon against `ca` (and that its certificate names the
// host of --server: a DNS or IP subject alternative name) and present cert/key when given.
// The files are checked now (readable, PEM, cert and key together), so that a wrong path fails
// the start with the flag and the file; gRPC's file watcher then re-reads them.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeAgentChannelCredentials(
    const AgentTlsFiles& files);

}  // namespace railwatch
