#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "cli/commands.h"
#include "google/protobuf/message.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {

// --tls, or any other TLS flag.
bool UsesTls(const TlsOptions& tls);

// Channel credentials for --tls, --tls_ca, --tls_cert, --tls_key (insecure when none is set).
// Fails with the path when a file cannot be read, or when a certificate comes without its key.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsOptions& tls);

// The bearer token of --token / $RAILWATCH_TOKEN, or read from --token_file (its first line,
// trimmed); "" when none. The error names the flag and the file.
absl::StatusOr<std::string> TokenFor(const CliOptions& options);

// One connection to railwatchd's Query service for the length of a command: the channel (with
// TLS), the bearer token, the per-request deadline, and what a failed status means to a script (its exit code and
// one clear line).
class QueryClient {
 public:
  // nullptr when the TLS settings are unusable; the reason is written to `err`.
  static std::unique_ptr<QueryClient> Open(const CliOptions& options, std::ostream& err);

  template <typename Request, typename Response>
  using Method = grpc::Status (v1::Query::Stub::*)(grpc::ClientContext*, const Request&,
                                                   Response*);

  // One unary call under --timeout; kExitOk, or the failure's exit code with its message
  // written to `err`.
  template <typename Request, typename Response>
  int Call(Method<Request, Response> method, const Request& request, Response* response,
           std::ostream& err) {
    grpc::ClientContext context;
    SetDeadline(context);
    AddCredentials(context);
    grpc::Status status = (stub_.get()->*method)(&context, request, response);
    return status.ok() ? kExitOk : ExitCodeFor(status, err);
  }

  void SetDeadline(grpc::ClientContext& context) const;
  // The bearer token, when there is one (every call, streams included).
  void AddCredentials(grpc::ClientContext& context) const;
  // Writes what went wrong to `err` and returns the exit code for it.
  int ExitCodeFor(const grpc::Status& status, std::ostream& err) const;

  v1::Query::Stub& stub() { return *stub_; }
  const CliOptions& options() const { return options_; }

 private:
  QueryClient(const CliOptions& options, std::unique_ptr<v1::Query::Stub> stub,
              std::string token)
      : options_(options), stub_(std::move(stub)), token_(std::move(token)) {}

  const CliOptions& options_;
  std::unique_ptr<v1::Query::Stub> stub_;
  std::string token_;
};

// A message as JSON with the proto's field names (what scripts parse): indented, or one line
// (JSON Lines, for `watch --json`).
std::string ToJson(const google::protobuf::Message& message, bool one_line = false);

// Opens a client and makes one call: kExitOk, or the exit code with its reason on `err`.
template <typename Request, typename Response>
int QueryOnce(const CliOptions& options, QueryClient::Method<Request, Response> method,
              const Request& request, Response* response, std::ostream& err) {
  std::unique_ptr<QueryClient> client = QueryClient::Open(options, err);
  if (client == nullptr) return kExitUsage;
  return client->Call(method, request, response, err);
}

// One call for a command that prints a table: on failure, or with --json (the response
// printed as JSON), the command is done and this is its exit code; nullopt: print the table.
template <typename Request, typename Response>
std::optional<int> QueryForTable(const CliOptions& options,
                                 QueryClient::Method<Request, Response> method,
                                 const Request& request, Response* response, std::ostream& out,
                                 std::ostream& err) {
  int rc = QueryOnce(options, method, request, response, err);
  if (rc != kExitOk) return rc;
  if (!options.json) return std::nullopt;
  out << ToJson(*response) << "\n";
  return kExitOk;
}


}  // namespace railwatch
