#include "daemon/alert_poster.h"

#include <curl/curl.h>

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "common/version.h"

namespace railwatch {
namespace {

// Enough of an error response to say why (Alertmanager's errors are one short line).
constexpr size_t kMaxErrorBody = 512;

size_t KeepStart(char* data, size_t size, size_t count, void* user) {
  auto* out = static_cast<std::string*>(user);
  const size_t n = size * count;
  if (out->size() < kMaxErrorBody) out->append(data, std::min(n, kMaxErrorBody - out->size()));
  return n;
}

void GlobalInit() {
  // Once per process; gRPC and prometheus-cpp never call it, so no one else races it.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string RedactUrl(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t path = url.find('/', start);
  const size_t at = url.rfind('@', path == std::string::npos ? url.size() : path);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + url.substr(at + 1);
}

CurlPoster::CurlPoster() {
  GlobalInit();
  curl_slist* h = curl_slist_append(nullptr, "Content-Type: application/json");
  // No "Expect: 100-continue" round trip before bodies over 1 KB.
  h = curl_slist_append(h, "Expect:");
  headers_ = h;
}

CurlPoster::~CurlPoster() {
  for (auto& [url, handle] : handles_) curl_easy_cleanup(static_cast<CURL*>(handle));
  curl_slist_free_all(static_cast<curl_slist*>(headers_));
}

PostResult CurlPoster::PostJson(const std::string& url, const std::string& body,
                                absl::Duration timeout) {
  void*& slot = handles_[url];
  if (slot == nullptr) slot = curl_easy_init();
  CURL* curl = static_cast<CURL*>(slot);
  PostResult result;
  if (curl == nullptr) {
    result.retry = true;
    result.error = "curl_easy_init failed";
    return result;
  }
  std::string response;
  char error[CURL_ERROR_SIZE] = {0};
  const long timeout_ms = std::max<long>(1, absl::ToInt64Milliseconds(timeout));
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(headers_));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  // Signals would interrupt other threads' system calls; timeouts work without them.
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, (std::string("railwatchd/") + kVersion).c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &KeepStart);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(curl);
  // The handle outlives this call; nothing may point at this frame afterwards.
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) {
    result.retry = true;
    result.error = error[0] != '\0' ? std::string(error) : curl_easy_strerror(code);
    return result;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result.http_status);
  const long s = result.http_status;
  result.ok = s >= 200 && s < 300;
  if (!result.ok) {
    result.retry = s == 429 || s >= 500 || s < 400;
    while (!response.empty() && (response.back() == '\n' || response.back() == '\r')) {
      response.pop_back();
    }
    result.error = absl::StrCat("HTTP ", s, response.empty() ? "" : ": ", response);
  }
  return result;
}

}  // namespace railwatch
