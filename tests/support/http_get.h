#pragma once

#include <string>

namespace railwatch::testing {

struct HttpResponse {
  int status = 0;
  std::string headers;  // status line and headers, CRLF-separated
  std::string body;
};

// GET http://127.0.0.1:<port><path> over a fresh connection (Connection: close), with
// `extra_headers` ("Name: value\r\n" each) added; status 0 when the request fails.
HttpResponse HttpGet(int port, const std::string& path, const std::string& extra_headers = "");

}  // namespace railwatch::testing
