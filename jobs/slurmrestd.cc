#include "jobs/slurmrestd.h"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"
#include "common/version.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace slurmrestd_internal {

using Json = nlohmann::json;

// "v0.0.38" -> {0, 0, 38}; nullopt when not that form.
std::optional<std::array<int, 3>> VersionNumbers(std::string_view v) {
  if (v.size() < 2 || v[0] != 'v') return std::nullopt;
  const std::vector<absl::string_view> parts =
      absl::StrSplit(absl::string_view(v.data() + 1, v.size() - 1), '.');
  if (parts.size() != 3) return std::nullopt;
  std::array<int, 3> out{};
  for (size_t i = 0; i < 3; ++i) {
    if (parts[i].empty() || !std::all_of(parts[i].begin(), parts[i].end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(parts[i], &out[i])) {
      return std::nullopt;
    }
  }
  return out;
}

struct Body {
  std::string text;
  size_t limit = 0;
  bool over = false;
};

size_t Keep(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  const size_t n = size * count;
  if (body->text.size() + n > body->limit) {
    body->over = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  body->text.append(data, n);
  return n;
}

std::string JsonString(const Json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<int64_t>());
  return "";
}

}  // namespace slurmrestd_internal

absl::StatusOr<SlurmRestOptions> SlurmRestOptionsFromUrl(std::string_view url_view) {
  const std::string url(url_view);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slurm=slurmrestd:", url, ": ", absl::string_view(why.data(), why.size()),
                     " (want http://HOST:PORT, https://HOST:PORT or unix:/PATH/TO/SOCKET)"));
  };
  for (char c : url) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c)) || absl::ascii_iscntrl(c)) {
      return bad("a space or control character");
    }
  }
  SlurmRestOptions options;
  options.url = url;
  absl::string_view rest(url);
  if (absl::ConsumePrefix(&rest, "unix:")) {
    if (absl::StartsWith(rest, "//")) rest.remove_prefix(2);  // unix:///path, as 24.05+ writes it
    if (!absl::StartsWith(rest, "/") || rest.size() < 2) {
      return bad("the socket's path must be absolute");
    }
    options.unix_socket = std::string(rest);
    options.base_url = "http://localhost";  // the Host header; the socket is what connects
    return options;
  }
  absl::string_view scheme;
  if (absl::StartsWith(rest, "http://")) {
    scheme = "http://";
  } else if (absl::StartsWith(rest, "https://")) {
    scheme = "https://";
  } else {
    return bad("no http://, https:// or unix:");
  }
  rest.remove_prefix(scheme.size());
  const size_t slash = rest.find('/');
  const absl::string_view authority = rest.substr(0, slash);
  if (authority.empty() || authority.front() == ':') return bad("no host");
  if (absl::StrContains(authority, '@')) {
    return bad("credentials in the URL: give the JWT with --slurm_token_file");
  }
  if (absl::StrContains(rest, '?') || absl::StrContains(rest, '#')) {
    return bad("a query or fragment: the API's paths are added to the URL");
  }
  // host:port (or [v6]:port): the port, where given, is a number.
  const size_t colon = authority.rfind(':');
  if (colon != absl::string_view::npos && authority.find(']', colon) == absl::string_view::npos) {
    int port = 0;
    if (!absl::SimpleAtoi(authority.substr(colon + 1), &port) || port < 1 || port > 65535) {
      return bad("the port is not a number from 1 to 65535");
    }
  }
  absl::string_view prefix = slash == absl::string_view::npos ? "" : rest.substr(slash);
  while (absl::ConsumeSuffix(&prefix, "/")) {
  }
  options.base_url = absl::StrCat(scheme, authority, prefix);
  return options;
}

absl::StatusOr<std::string> SlurmApiVersionFromFlag(std::string_view flag) {
  if (flag.empty() || flag == "auto") return std::string();
  std::string v(flag);
  if (v[0] != 'v') v = "v" + v;
  if (!slurmrestd_internal::VersionNumbers(v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--slurm_api=", std::string(flag),
                     ": want auto or a slurmrestd API version such as v0.0.38"));
  }
  return v;
}

absl::StatusOr<std::string> ChooseSlurmApiVersion(std::string_view openapi_json) {
  using slurmrestd_internal::Json;
  Json doc = Json::parse(openapi_json.begin(), openapi_json.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::DataLossError("the OpenAPI document is not JSON");
  }
  auto paths = doc.find("paths");
  if (paths == doc.end() || !paths->is_object()) {
    return absl::DataLossError("the OpenAPI document has no \"paths\"");
  }
  const auto oldest = *slurmrestd_internal::VersionNumbers(kSlurmApiOldestKnown);
  const auto newest = *slurmrestd_internal::VersionNumbers(kSlurmApiNewestKnown);
  std::optional<std::array<int, 3>> best_known, lowest_newer;
  std::vector<std::string> listed;
  for (auto it = paths->begin(); it != paths->end(); ++it) {
    absl::string_view path(it.key());
    if (!absl::ConsumePrefix(&path, "/slurm/") || !absl::ConsumeSuffix(&path, "/jobs")) continue;
    const std::optional<std::array<int, 3>> v =
        slurmrestd_internal::VersionNumbers(std::string_view(path.data(), path.size()));
    if (!v) continue;
    listed.emplace_back(path);
    if (*v >= oldest && *v <= newest) {
      if (!best_known || *v > *best_known) best_known = v;
    } else if (*v > newest) {
      if (!lowest_newer || *v < *lowest_newer) lowest_newer = v;
    }
  }
  const std::optional<std::array<int, 3>> chosen = best_known ? best_known : lowest_newer;
  if (!chosen) {
    return absl::NotFoundError(
        listed.empty()
            ? std::string("slurmrestd serves no /slurm/vX/jobs (is an openapi/slurmctld or "
                          "openapi/v0.0.* plugin loaded? slurmrestd -s)")
            : absl::StrCat("slurmrestd serves /jobs only in ", absl::StrJoin(listed, ", "),
                           ", older than ", kSlurmApiOldestKnown, ": choose one with --slurm_api"));
  }
  return absl::StrCat("v", (*chosen)[0], ".", (*chosen)[1], ".", (*chosen)[2]);
}

std::string SlurmRestErrorText(std::string_view body) {
  using slurmrestd_internal::Json;
  const Json doc = Json::parse(body.begin(), body.end(), nullptr, false);
  if (!doc.is_discarded() && doc.is_object()) {
    auto errors = doc.find("errors");
    if (errors != doc.end() && errors->is_array()) {
      std::vector<std::string> said;
      for (const Json& e : *errors) {
        if (e.is_string()) {
          said.push_back(e.get<std::string>());
          continue;
        }
        if (!e.is_object()) continue;
        std::string text = slurmrestd_internal::JsonString(e, "error");
        const std::string description = slurmrestd_internal::JsonString(e, "description");
        if (!description.empty() && description != text) {
          absl::StrAppend(&text, text.empty() ? "" : ": ", description);
        }
        for (const char* key : {"error_number", "errno"}) {
          const std::string n = slurmrestd_internal::JsonString(e, key);
          if (!n.empty() && n != "0") {
            absl::StrAppend(&text, " (", n, ")");
            break;
          }
        }
        const std::string source = slurmrestd_internal::JsonString(e, "source");
        if (!source.empty()) absl::StrAppend(&text, " [", source, "]");
        if (!text.empty()) said.push_back(std::move(text));
      }
      if (!said.empty()) return absl::StrJoin(said, "; ");
    }
  }
  const absl::string_view first(
      FirstLine(absl::StripAsciiWhitespace(absl::string_view(body.data(), body.size()))));
  return std::string(first.substr(0, 200));
}

SlurmRestClient::SlurmRestClient(SlurmRestOptions options)
    : options_(std::move(options)), api_version_(options_.api_version) {
  // Thread-safe since curl 7.84 (Debian 12 has 7.88); the alert poster calls it too.
  curl_global_init(CURL_GLOBAL_DEFAULT);
  curl_ = curl_easy_init();
}

SlurmRestClient::~SlurmRestClient() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

absl::StatusOr<std::string> SlurmRestClient::Token() const {
  std::string token;
  std::string from;
  if (!options_.token_file.empty()) {
    absl::StatusOr<std::string> text = ReadFile(options_.token_file);
    if (!text.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("--slurm_token_file: ", text.status().message()));
    }
    absl::string_view t = absl::StripAsciiWhitespace(*text);
    absl::ConsumePrefix(&t, "export ");
    absl::ConsumePrefix(&t, "SLURM_JWT=");  // what `scontrol token` prints
    token = std::string(absl::StripAsciiWhitespace(t));
    from = options_.token_file;
    if (token.empty()) {
      return absl::FailedPreconditionError(absl::StrCat("--slurm_token_file ", options_.token_file,
                                                        " holds no token (scontrol token)"));
    }
  } else if (const char* env = std::getenv("SLURM_JWT"); env != nullptr) {
    token = std::string(absl::StripAsciiWhitespace(env));
    from = "SLURM_JWT";
  }
  // A JWT is base64url and dots; anything else would end up in an HTTP header.
  for (char c : token) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '=' && c != '+' && c != '/') {
      return absl::FailedPreconditionError(absl::StrCat("the token in ", from,
                                                        " is not a JWT (a character other than "
                                                        "base64url and dots)"));
    }
  }
  return token;
}

absl::StatusOr<SlurmRestClient::Answer> SlurmRestClient::Get(const std::string& path,
                                                             const std::string& token) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  curl_easy_reset(curl);
  const std::string url = options_.base_url + path;
  slurmrestd_internal::Body body;
  body.limit = options_.max_body_bytes;
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  if (!token.empty()) {
    headers = curl_slist_append(headers, ("X-SLURM-USER-TOKEN: " + token).c_str());
  }
  if (!options_.user.empty()) {
    headers = curl_slist_append(headers, ("X-SLURM-USER-NAME: " + options_.user).c_str());
  }
  const long timeout_ms = std::max<long>(1, absl::ToInt64Milliseconds(options_.timeout));
  const long connect_ms = std::max<long>(
      1, std::min<long>(timeout_ms, absl::ToInt64Milliseconds(options_.connect_timeout)));
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  if (!options_.unix_socket.empty()) {
    curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, options_.unix_socket.c_str());
    curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  }
  curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  curl_easy_setopt(curl, CURLOPT_USERAGENT, (std::string("railwatchd/") + kVersion).c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &slurmrestd_internal::Keep);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(curl);
  Answer answer;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(headers);
  if (body.over) {
    return absl::ResourceExhaustedError(
        absl::StrCat("slurmrestd ", options_.url, ": GET ", path, " answered more than ",
                     options_.max_body_bytes >> 20, " MiB: not read"));
  }
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(
        "slurmrestd ", options_.url, ": GET ", path, ": ",
        error[0] != '\0' ? std::string(error) : std::string(curl_easy_strerror(code))));
  }
  answer.body = std::move(body.text);
  return answer;
}

absl::Status SlurmRestClient::AnswerError(const std::string& path, const Answer& answer) const {
  const std::string said = SlurmRestErrorText(answer.body);
  std::string message = absl::StrCat("slurmrestd ", options_.url, ": GET ", path, ": HTTP ",
                                     answer.status, said.empty() ? "" : ": ", said);
  switch (answer.status) {
    case 401:
    case 403:
      absl::StrAppend(&message, options_.unix_socket.empty()
                                    ? " (the JWT: --slurm_token_file, SLURM_JWT, --slurm_user)"
                                    : " (rest_auth/local wants this daemon under slurmrestd's "
                                      "uid; else a JWT: --slurm_token_file)");
      return absl::PermissionDeniedError(message);
    case 404:
      return absl::NotFoundError(message);
    default:
      return answer.status >= 500 ? absl::UnavailableError(message)
                                  : absl::InvalidArgumentError(message);
  }
}

absl::Status SlurmRestClient::Discover(const std::string& token) {
  std::string path = "/openapi/v3";
  absl::StatusOr<Answer> answer = Get(path, token);
  if (answer.ok() && answer->status == 404) {  // older: /openapi only
    path = "/openapi";
    answer = Get(path, token);
  }
  if (!answer.ok()) return answer.status();
  if (answer->status != 200) return AnswerError(path, *answer);
  absl::StatusOr<std::string> version = ChooseSlurmApiVersion(answer->body);
  if (!version.ok()) {
    return absl::Status(version.status().code(),
                        absl::StrCat("slurmrestd ", options_.url, ": GET ", path, ": ",
                                     version.status().message()));
  }
  api_version_ = *version;
  return absl::OkStatus();
}

absl::StatusOr<jobs::SlurmJobsResult> SlurmRestClient::Jobs() {
  absl::StatusOr<std::string> token = Token();
  if (!token.ok()) return token.status();
  if (api_version_.empty()) {
    if (absl::Status s = Discover(*token); !s.ok()) return s;
  }
  const std::string path = absl::StrCat("/slurm/", api_version_, "/jobs");
  absl::StatusOr<Answer> answer = Get(path, *token);
  if (!answer.ok()) return answer.status();
  if (answer->status != 200) {
    // A discovered version gone (slurmrestd upgraded): discovered again at the next call.
    if (answer->status == 404 && options_.api_version.empty()) api_version_.clear();
    return AnswerError(path, *answer);
  }
  return jobs::ParseSqueueJson(answer->body, options_.url + path);
}

}  // namespace railwatch
