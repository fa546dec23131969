#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock.h"
#include "daemon/auth_access.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace railwatch {

// Who may use the daemon's gRPC port (docs/SECURITY.md).
//
// Ingest: with client certificates on (--tls_client_ca), a stream needs a certificate verified
// against that CA; one from another CA already fails the TLS handshake, one without any is
// refused here with UNAUTHENTICATED. Without --tls_client_ca, Ingest is open.
//
// Query: open (every caller is admin) when the daemon has neither an access file
// (--query_tokens) nor client certificates; otherwise the caller's role comes from a bearer
// token (metadata `authorization: Bearer TOKEN`, looked up by its SHA-256) or from its
// verified client certificate (its CN or a SAN, mapped in the access file; any other verified
// certificate gets default_certificate_role, read-only unless the file says otherwise). No
// credentials or an unknown token: UNAUTHENTICATED; a role too low for the RPC:
// PERMISSION_DENIED. Each refusal is counted in
// railwatch_grpc_auth_failures_total{service, reason} and logged without the token.
//
// The access file is read again when it changes (checked at most once per
// `reload_check`); a file that no longer parses is logged and counted, and the previous one
// kept. Thread-safe.
class Authenticator {
 public:
  struct Options {
    std::string access_file;           // empty: no tokens
    bool client_certificates = false;  // --tls_client_ca given
    absl::Duration reload_check = absl::Seconds(1);
  };

  // Fails when the access file cannot be read or parsed (path:line:column per problem).
  static absl::StatusOr<std::unique_ptr<Authenticator>> Create(Options options, const Clock& clock,
                                                               prometheus::Registry& registry);

  // OK, or the status to refuse `method` with.
  grpc::Status AuthorizeQuery(const grpc::ServerContextBase& ctx, Role needed,
                              std::string_view method);
  grpc::Status AuthorizeIngest(const grpc::ServerContextBase& ctx);

  // Whether Query calls need credentials at all.
  bool query_open() const { return options_.access_file.empty() && !options_.client_certificates; }

  // Re-reads the access file now if it changed on disk (normally done by the checks).
  void ReloadIfChanged();

 private:
  struct Caller {
    Role role = Role::kNone;
    std::string who;  // "token grafana", "certificate sre-cli": never the token itself
  };
  struct FileStamp {
    ino_t inode = 0;
    int64_t mtime_ns = 0;
    off_t size = -1;
    bool operator==(const FileStamp&) const = default;
  };

  static std::optional<FileStamp> StampOf(const std::string& path);
  Authenticator(Options options, const Clock& clock, prometheus::Registry& registry);
  absl::Status Load(const FileStamp& stamp);
  void MaybeReload();
  // The caller's identity, or the refusal (no credentials, bad token).
  absl::StatusOr<Caller> Identify(const grpc::ServerContextBase& ctx, std::string& reason);
  grpc::Status Refuse(std::string_view service, std::string_view reason, grpc::StatusCode code,
                      std::string message, const grpc::ServerContextBase& ctx);

  const Options options_;
  const Clock& clock_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Counter>& reloads_;

  absl::Mutex mu_;
  absl::Time next_check_ ABSL_GUARDED_BY(mu_);
  FileStamp stamp_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, AccessFile::Token> tokens_ ABSL_GUARDED_BY(mu_);  // by sha256
  absl::flat_hash_map<std::string, Role> certificates_ ABSL_GUARDED_BY(mu_);
  Role default_certificate_role_ ABSL_GUARDED_BY(mu_) = Role::kReadOnly;
};

// The start-up rule for the gRPC listener. A non-loopback address (a Unix socket counts as
// loopback) needs client certificates
// (--tls_client_ca: agents and Query clients authenticated) unless --allow_unauthenticated
// says otherwise; without them whoever reaches the port could send telemetry or read (and,
// with no access file, change) what the daemon knows. Refuses, with what to do, or warns
// (tokens in plain text, an open Ingest) and returns OK.
struct ListenerSecurity {
  std::string listen;
  bool loopback = true;
  bool tls = false;
  bool client_ca = false;
  bool query_tokens = false;
  bool allow_unauthenticated = false;
};
absl::Status CheckListenerAuthentication(const ListenerSecurity& l);

}  // namespace railwatch
