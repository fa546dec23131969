#include "daemon/auth.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace railwatch {
namespace {

constexpr absl::string_view kBearer = "bearer ";

// Where to read about credentials, at the end of every refusal.
constexpr char kSeeDocs[] = " (docs/SECURITY.md)";

std::string View(const grpc::string_ref& s) { return std::string(s.data(), s.size()); }

}  // namespace

// Inode, modification time and size: a file replaced by rename or rewritten in place.
std::optional<Authenticator::FileStamp> Authenticator::StampOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{st.st_ino, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec, st.st_size};
}

Authenticator::Authenticator(Options options, const Clock& clock, prometheus::Registry& registry)
    : options_(std::move(options)),
      clock_(clock),
      failures_(prometheus::BuildCounter()
                    .Name("railwatch_grpc_auth_failures_total")
                    .Help("gRPC calls and streams refused for their credentials, by service "
                          "(ingest, query) and reason (no_credentials, bad_token, "
                          "no_client_certificate, permission_denied)")
                    .Register(registry)),
      reloads_(prometheus::BuildCounter()
                   .Name("railwatch_auth_file_reloads_total")
                   .Help("times the --query_tokens access file was read again after a change, "
                         "by result (ok; error: the previous one is kept)")
                   .Register(registry)) {}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Create(
    Options options, const Clock& clock, prometheus::Registry& registry) {
  std::unique_ptr<Authenticator> auth(new Authenticator(std::move(options), clock, registry));
  // The series that can move exist from 0, so that increase() sees the first refusal.
  if (!auth->query_open()) {
    for (const char* reason : {"no_credentials", "bad_token", "permission_denied"}) {
      auth->failures_.Add({{"service", "query"}, {"reason", reason}});
    }
  }
  if (auth->options_.client_certificates) {
    auth->failures_.Add({{"service", "ingest"}, {"reason", "no_client_certificate"}});
  }
  if (!auth->options_.access_file.empty()) {
    for (const char* result : {"ok", "error"}) auth->reloads_.Add({{"result", result}});
  }
  if (!auth->options_.access_file.empty()) {
    std::optional<FileStamp> stamp = StampOf(auth->options_.access_file);
    if (!stamp) {
      return absl::InvalidArgumentError(
          absl::StrCat("--query_tokens ", auth->options_.access_file, ": ", std::strerror(errno)));
    }
    absl::MutexLock lock(&auth->mu_);
    auth->next_check_ = clock.Now() + auth->options_.reload_check;
    if (absl::Status s = auth->Load(*stamp); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--query_tokens:\n", s.message()));
    }
  }
  return auth;
}

absl::Status Authenticator::Load(const FileStamp& stamp) {
  absl::StatusOr<AccessFile> file = LoadAccessFile(options_.access_file);
  stamp_ = stamp;  // a broken file is reported once, not on every check until it changes
  if (!file.ok()) return file.status();
  tokens_.clear();
  certificates_.clear();
  for (AccessFile::Token& t : file->tokens) tokens_[t.sha256] = std::move(t);
  for (const AccessFile::Certificate& c : file->certificates) certificates_[c.identity] = c.role;
  default_certificate_role_ = file->default_certificate_role;
  spdlog::info("--query_tokens {}: {} tokens, {} certificate identities", options_.access_file,
               tokens_.size(), certificates_.size());
  return absl::OkStatus();
}

void Authenticator::ReloadIfChanged() {
  if (options_.access_file.empty()) return;
  // A file that is gone keeps the tokens read last (a stamp that differs once).
  const FileStamp stamp = StampOf(options_.access_file).value_or(FileStamp{});
  absl::MutexLock lock(&mu_);
  next_check_ = clock_.Now() + options_.reload_check;
  if (stamp == stamp_) return;
  if (absl::Status s = Load(stamp); !s.ok()) {
    reloads_.Add({{"result", "error"}}).Increment();
    spdlog::error("--query_tokens changed but cannot be used; keeping the previous tokens:\n{}",
                  s.message());
    return;
  }
  reloads_.Add({{"result", "ok"}}).Increment();
}

void Authenticator::MaybeReload() {
  if (options_.access_file.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    if (clock_.Now() < next_check_) return;
  }
  ReloadIfChanged();
}

absl::StatusOr<Authenticator::Caller> Authenticator::Identify(const grpc::ServerContextBase& ctx,
                                                              std::string& reason) {
  const auto& metadata = ctx.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    const std::string value = View(it->second);
    reason = "bad_token";
    if (value.size() <= kBearer.size() || !absl::StartsWithIgnoreCase(value, kBearer)) {
      return absl::UnauthenticatedError("the authorization metadata is not \"Bearer TOKEN\"");
    }
    if (options_.access_file.empty()) {
      return absl::UnauthenticatedError(
          "this daemon accepts no bearer tokens (it has no --query_tokens file): use a client "
          "certificate signed by its --tls_client_ca");
    }
    const std::string hash = Sha256Hex(std::string_view(value).substr(kBearer.size()));
    absl::MutexLock lock(&mu_);
    auto token = tokens_.find(hash);
    if (token == tokens_.end()) {
      return absl::UnauthenticatedError(
          "the bearer token is not one this daemon knows (mistyped, revoked, or meant for "
          "another daemon?): ask its operator for a token listed in its --query_tokens file");
    }
    return Caller{token->second.role, absl::StrCat("token \"", token->second.name, "\"")};
  }
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (options_.client_certificates && auth != nullptr && auth->IsPeerAuthenticated()) {
    Caller caller;
    absl::MutexLock lock(&mu_);
    caller.role = default_certificate_role_;
    for (const char* property : {GRPC_X509_CN_PROPERTY_NAME, GRPC_X509_SAN_PROPERTY_NAME}) {
      for (const grpc::string_ref& id : auth->FindPropertyValues(property)) {
        if (caller.who.empty()) caller.who = absl::StrCat("certificate \"", View(id), "\"");
        if (auto it = certificates_.find(View(id)); it != certificates_.end()) {
          caller.role = std::max(caller.role, it->second);
        }
      }
    }
    return caller;
  }
  reason = "no_credentials";
  return absl::UnauthenticatedError(absl::StrCat(
      "the Query API needs credentials: ",
      options_.access_file.empty() ? "" : "a bearer token (railwatch --token_file=FILE) ",
      options_.access_file.empty() || !options_.client_certificates ? "" : "or ",
      options_.client_certificates
          ? "a client certificate signed by the daemon's --tls_client_ca (railwatch --tls_cert, "
            "--tls_key)"
          : ""));
}

grpc::Status Authenticator::Refuse(std::string_view service, std::string_view reason,
                                   grpc::StatusCode code, std::string message,
                                   const grpc::ServerContextBase& ctx) {
  failures_.Add({{"service", std::string(service)}, {"reason", std::string(reason)}}).Increment();
  spdlog::warn("{} refused for {}: {}", service, ctx.peer(), message);
  return grpc::Status(code, absl::StrCat(message, kSeeDocs));
}

grpc::Status Authenticator::AuthorizeQuery(const grpc::ServerContextBase& ctx, Role needed,
                                           std::string_view method) {
  if (query_open()) return grpc::Status::OK;
  MaybeReload();
  std::string reason;
  absl::StatusOr<Caller> caller = Identify(ctx, reason);
  if (!caller.ok()) {
    return Refuse("query", reason, grpc::StatusCode::UNAUTHENTICATED,
                  std::string(caller.status().message()), ctx);
  }
  if (caller->role < needed) {
    return Refuse("query", "permission_denied", grpc::StatusCode::PERMISSION_DENIED,
                  absl::StrCat(std::string(method), " needs the ", RoleName(needed), " role; ",
                               caller->who, " has ", RoleName(caller->role),
                               ": use a token or certificate with that role"),
                  ctx);
  }
  return grpc::Status::OK;
}

grpc::Status Authenticator::AuthorizeIngest(const grpc::ServerContextBase& ctx) {
  if (!options_.client_certificates) return grpc::Status::OK;
  std::shared_ptr<const grpc::AuthContext> auth = ctx.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) return grpc::Status::OK;
  return Refuse("ingest", "no_client_certificate", grpc::StatusCode::UNAUTHENTICATED,
                "Ingest needs a client certificate signed by the daemon's --tls_client_ca: "
                "start the agent with --tls_ca, --tls_cert and --tls_key",
                ctx);
}

absl::Status CheckListenerAuthentication(const ListenerSecurity& l) {
  // A Unix socket is as local as loopback: its file's permissions say who may connect.
  if (l.loopback || absl::StartsWith(l.listen, "unix:")) return absl::OkStatus();
  if (!l.client_ca && !l.allow_unauthenticated) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--listen=", l.listen,
        " is not a loopback address and agents are not authenticated: give --tls_cert, "
        "--tls_key and --tls_client_ca (mutual TLS; and --query_tokens for token access to the "
        "Query API), or --allow_unauthenticated to serve anyone who reaches the port "
        "(docs/SECURITY.md)"));
  }
  if (!l.tls) {
    spdlog::warn(
        "gRPC on {} in plain text: whoever reaches it can read diagnoses{} and send "
        "telemetry; give --tls_cert and --tls_key (and --tls_client_ca for mTLS)",
        l.listen, l.query_tokens ? ", and bearer tokens can be read on the wire" : "");
  } else if (!l.client_ca) {
    spdlog::warn("gRPC on {} without --tls_client_ca: any client may send telemetry{}", l.listen,
                 l.query_tokens ? "" : " and query");
  }
  return absl::OkStatus();
}

}  // namespace railwatch
