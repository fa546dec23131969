#pragma once

// HTTP POST of a JSON body, the one thing the Alertmanager notifier needs from the network:
// an interface (so the notifier can be driven by a fake) and its libcurl implementation.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"

namespace railwatch {

struct PostResult {
  bool ok = false;
  // Worth trying again later: the server was unreachable, timed out, answered 5xx or 429.
  // A 4xx means the request itself is wrong; sending it again would fail the same way.
  bool retry = false;
  long http_status = 0;  // 0 when no response came
  // What went wrong, for logs: the transport error, or the status and the start of the body.
  std::string error;
};

class HttpPoster {
 public:
  virtual ~HttpPoster() = default;
  virtual PostResult PostJson(const std::string& url, const std::string& body,
                              absl::Duration timeout) = 0;
};

// libcurl, one easy handle per URL so that connections are kept alive between posts. Not
// thread-safe: the notifier's worker thread is its only user.
class CurlPoster final : public HttpPoster {
 public:
  CurlPoster();
  ~CurlPoster() override;
  CurlPoster(const CurlPoster&) = delete;
  CurlPoster& operator=(const CurlPoster&) = delete;

  PostResult PostJson(const std::string& url, const std::string& body,
                      absl::Duration timeout) override;

 private:
  absl::flat_hash_map<std::string, void*> handles_;  // url -> CURL*
  void* headers_ = nullptr;                          // curl_slist*
};

// The URL with any user:password@ removed, for logs and metric labels.
std::string RedactUrl(const std::string& url);

}  // namespace railwatch
