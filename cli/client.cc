#include "cli/client.h"

#include <chrono>
#include <ostream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/grpc_keepalive.h"
#include "common/text.h"
#include "google/protobuf/util/json_util.h"

namespace railwatch {
namespace {

// Reads one PEM file named by a flag; the error names the flag and the path.
absl::Status ReadPem(const std::string& flag, const std::string& path, std::string* pem) {
  if (path.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": ", text.status().message()));
  }
  if (text->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", path, " is not PEM"));
  }
  *pem = std::move(*text);
  return absl::OkStatus();
}

}  // namespace

bool UsesTls(const TlsOptions& tls) {
  return tls.enabled || !tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty() ||
         !tls.server_name.empty();
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsOptions& tls) {
  if (!UsesTls(tls)) return grpc::InsecureChannelCredentials();
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls_cert and --tls_key go together (a client certificate needs its key)");
  }
  grpc::SslCredentialsOptions ssl;
  absl::Status s = ReadPem("tls_ca", tls.ca_file, &ssl.pem_root_certs);
  if (s.ok()) s = ReadPem("tls_cert", tls.cert_file, &ssl.pem_cert_chain);
  if (s.ok()) s = ReadPem("tls_key", tls.key_file, &ssl.pem_private_key);
  if (!s.ok()) return s;
  return grpc::SslCredentials(ssl);
}

absl::StatusOr<std::string> TokenFor(const CliOptions& options) {
  if (options.token_file.empty()) return options.token;
  absl::StatusOr<std::string> text = ReadFile(options.token_file);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--token_file: ", text.status().message()));
  }
  std::string token(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--token_file ", options.token_file, ": empty (no token on its first line)"));
  }
  return token;
}

std::unique_ptr<QueryClient> QueryClient::Open(const CliOptions& options, std::ostream& err) {
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      ChannelCredentialsFor(options.tls);
  if (!credentials.ok()) {
    err << "railwatch: " << credentials.status().message() << "\n";
    return nullptr;
  }
  absl::StatusOr<std::string> token = TokenFor(options);
  if (!token.ok()) {
    err << "railwatch: " << token.status().message() << "\n";
    return nullptr;
  }
  grpc::ChannelArguments args;
  if (!options.tls.server_name.empty()) args.SetSslTargetNameOverride(options.tls.server_name);
  // `watch` streams stay open for hours: keepalives notice a daemon that went away.
  // (A quiet watch carries no data for hours: the client pings regardless.)
  SetClientKeepalive(args);
  auto channel = grpc::CreateCustomChannel(options.server, *credentials, args);
  return std::unique_ptr<QueryClient>(
      new QueryClient(options, v1::Query::NewStub(channel), *std::move(token)));
}

void QueryClient::AddCredentials(grpc::ClientContext& context) const {
  if (!token_.empty()) context.AddMetadata("authorization", "Bearer " + token_);
}

void QueryClient::SetDeadline(grpc::ClientContext& context) const {
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(
                           static_cast<int64_t>(options_.timeout_seconds * 1000)));
}

int QueryClient::ExitCodeFor(const grpc::Status& status, std::ostream& err) const {
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED: {
      const bool tls = UsesTls(options_.tls);
      err << "railwatch: cannot reach railwatchd at " << options_.server << ": "
          << status.error_message() << "\n"
          << (tls ? "(is the daemon running? does its certificate chain to --tls_ca and name "
                    "the server, or --tls_server_name? does it want a client certificate?)\n"
                  : "(is the daemon running? pass --server=HOST:PORT, and --tls if it serves "
                    "TLS)\n");
      return kExitUnavailable;
    }
    case grpc::StatusCode::NOT_FOUND:
      err << "railwatch: " << status.error_message() << "\n";
      return kExitNotFound;
    case grpc::StatusCode::UNAUTHENTICATED:
      err << "railwatch: the daemon wants credentials: " << status.error_message() << "\n"
          << (token_.empty() ? "(give --token_file=FILE or $RAILWATCH_TOKEN, or --tls_cert and "
                               "--tls_key)\n"
                             : "(the token given was refused)\n");
      return kExitDenied;
    case grpc::StatusCode::PERMISSION_DENIED:
      err << "railwatch: not allowed: " << status.error_message() << "\n";
      return kExitDenied;
    case grpc::StatusCode::FAILED_PRECONDITION:
      err << "railwatch: " << status.error_message() << "\n";
      return kExitError;
    case grpc::StatusCode::INVALID_ARGUMENT:
      err << "railwatch: the daemon refused the request: " << status.error_message() << "\n";
      return kExitInvalid;
    default:
      err << "railwatch: request failed: " << status.error_message() << " (code "
          << static_cast<int>(status.error_code()) << ")\n";
      return kExitError;
  }
}

std::string ToJson(const google::protobuf::Message& message, bool one_line) {
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = !one_line;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &json, opts);
  return json;
}

}  // namespace railwatch
