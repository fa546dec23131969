#pragma once

// Shared by text_formats.cc (finding messages in a document) and text_formats_json.cc
// (reading the JSON ones).

#include <string>
#include <string_view>

#include "gnmi/text_formats.h"
#include "nlohmann/json.hpp"

namespace railwatch::gnmi_text {

// Where read messages and errors go.
struct Sink {
  GnmiCapture& capture;
  std::string_view file_name;
  void Error(size_t line, std::string_view what);
};

enum class JsonVerdict {
  kRead,     // a gNMI message of an accepted format: its notifications are in the sink
  kNotGnmi,  // some other JSON (a config snippet, a bare blob): nothing to report
  kFailed,   // looked like a message and did not read: reported in the sink
};

// Reads one JSON document as `format` (kAuto: whichever it looks like). `gnmi_cli_hint` says
// the text around it marks it as gnmi_cli output (which has no field of its own to tell).
JsonVerdict ReadJsonMessage(const nlohmann::json& j, std::string_view raw, GnmiTextFormat format,
                            bool gnmi_cli_hint, size_t line, Sink& sink);

// RFC 3339 ("2018-01-23T01:15:40.117234683Z", "+08:00" offsets) or gnmi_cli's poll form
// "2018-03-01-18:40:45.775251073" (UTC) -> ns since the epoch.
bool ParseGnmiTime(std::string_view text, int64_t& unix_nanos);

}  // namespace railwatch::gnmi_text
