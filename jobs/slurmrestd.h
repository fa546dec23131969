#pragma once

// Jobs from slurmrestd (issue 23 item 4, docs/JOBS.md "Slurm: the daemon polls"): railwatchd
// --slurm=slurmrestd:URL asks Slurm's REST daemon for GET /slurm/<version>/jobs over HTTP(S) or
// its Unix socket, with libcurl, and reads the answer with jobs::ParseSqueueJson (the same
// document squeue --json prints, of the same plugin version).
//
//   URL      http://host:port[/prefix], https://..., or unix:/path/to/socket (unix:///path too)
//   version  chosen (--slurm_api=v0.0.38) or discovered from the paths /openapi/v3 lists (a
//            release serves about three: Debian 12's 22.05 v0.0.36-v0.0.38; 24.05 up to
//            v0.0.41): the highest whose JSON the readers know (v0.0.36-v0.0.41), else the
//            lowest newer one. A discovered version that answers 404 (slurmrestd upgraded) is
//            discovered again at the next poll.
//   auth     Slurm's JWT as X-SLURM-USER-TOKEN (and X-SLURM-USER-NAME where given): from a file
//            read at every poll (a bare token or `scontrol token`'s SLURM_JWT=... line), else
//            the environment's SLURM_JWT; none over a Unix socket with rest_auth/local (the
//            daemon and slurmrestd under the same uid).
//
// Every request is bounded (connect and whole-request timeouts, a body size limit). Errors say
// what failed: curl's message, or the HTTP status with Slurm's `errors` array (error,
// description, error_number, source) or the start of a body that is not Slurm's JSON.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/slurm.h"

namespace railwatch {

struct SlurmRestOptions {
  std::string url;          // as given, for messages
  std::string base_url;     // scheme://host[:port][/prefix] without a trailing '/'
  std::string unix_socket;  // the socket's path over a Unix socket, else ""
  std::string api_version;  // "v0.0.38"; "" discovers it
  std::string token_file;   // "" takes the environment's SLURM_JWT, where set
  std::string user;         // X-SLURM-USER-NAME; "" sends none (Slurm takes the token's)
  absl::Duration timeout = absl::Seconds(10);  // a whole request, connection to last byte
  absl::Duration connect_timeout = absl::Seconds(3);
  size_t max_body_bytes = size_t{64} << 20;
};

// The URL of --slurm=slurmrestd:URL. Errors name what is wrong with it.
absl::StatusOr<SlurmRestOptions> SlurmRestOptionsFromUrl(std::string_view url);

// --slurm_api: "auto" or "" (discover: ""), "v0.0.38" or "0.0.38" ("v0.0.38").
absl::StatusOr<std::string> SlurmApiVersionFromFlag(std::string_view flag);

// The versions whose /jobs JSON jobs::ParseSqueueJson is known to read.
inline constexpr char kSlurmApiOldestKnown[] = "v0.0.36";
inline constexpr char kSlurmApiNewestKnown[] = "v0.0.41";

// The version to ask, from slurmrestd's OpenAPI document (/openapi/v3): of its /slurm/vX/jobs
// paths, the highest known one, else the lowest newer one. An error when it lists none.
absl::StatusOr<std::string> ChooseSlurmApiVersion(std::string_view openapi_json);

// What a failed answer says: Slurm's `errors` ("Unspecified error: Failed while looking for jobs
// (-1) [slurm_load_jobs]", several joined by "; "), else the start of the body (one line, at
// most 200 characters); "" for an empty body.
std::string SlurmRestErrorText(std::string_view body);

class SlurmRestClient {
 public:
  explicit SlurmRestClient(SlurmRestOptions options);
  ~SlurmRestClient();
  SlurmRestClient(const SlurmRestClient&) = delete;
  SlurmRestClient& operator=(const SlurmRestClient&) = delete;

  // GET /slurm/<version>/jobs, the version discovered first where not chosen, and the answer
  // read. Errors: Unavailable (no connection, a timeout, HTTP 5xx: slurmrestd could not ask
  // slurmctld), PermissionDenied (401, 403: the token, or rest_auth/local's uid), NotFound (404:
  // a version it does not serve), FailedPrecondition (no token in the token file),
  // ResourceExhausted (a body over max_body_bytes), InvalidArgument (other statuses). A 200
  // answer is read whatever it holds: its problems (Slurm's errors among them) are the
  // caller's to judge.
  absl::StatusOr<jobs::SlurmJobsResult> Jobs();

  // The version asked ("" before the first discovery).
  std::string api_version() const { return api_version_; }
  const SlurmRestOptions& options() const { return options_; }

 private:
  struct Answer {
    long status = 0;
    std::string body;
  };
  absl::StatusOr<Answer> Get(const std::string& path, const std::string& token);
  absl::StatusOr<std::string> Token() const;
  absl::Status Discover(const std::string& token);
  // The error of a non-200 answer to `path`.
  absl::Status AnswerError(const std::string& path, const Answer& answer) const;

  SlurmRestOptions options_;
  std::string api_version_;  // chosen or discovered; "" until discovered
  void* curl_ = nullptr;     // CURL*, reused across polls (one thread at a time)
};

}  // namespace railwatch
