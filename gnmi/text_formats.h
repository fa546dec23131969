#pragma once

// Captured gNMI notifications in the text forms people paste into issues, docs and chats, read
// back into ::gnmi::Notification so that the decoder and the profiles can be run on them.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gnmi/gnmi.pb.h"

namespace railwatch {

enum class GnmiTextFormat {
  kAuto,           // find every message below in a document (markdown, log) and read it
  kProtoJson,      // protojson SubscribeResponse, GetResponse or Notification (int64 as strings)
  kProtoText,      // prototext of the same, `{}` or the old `<>` delimiters
  kGnmicJson,      // gnmic --format json: source, timestamp, prefix, updates[].Path/values
  kGnmicEvent,     // gnmic --format event: [{name, timestamp, tags, values}]
  kGnmiCli,        // gnmi_cli display: nested objects, leaves {"timestamp", "value"}
  kGnmicDebugLog,  // gnmic --debug: "received gNMI Subscribe Response: &{... Response:...}"
};

// "auto", "protojson", "prototext", "gnmic-json", "gnmic-event", "gnmi-cli", "gnmic-debug".
std::string_view GnmiTextFormatName(GnmiTextFormat format);
std::optional<GnmiTextFormat> ParseGnmiTextFormat(std::string_view name);

struct GnmiCapture {
  std::vector<::gnmi::Notification> notifications;
  size_t sync_responses = 0;
  // "file:line: what" for each message that looked like gNMI and did not read; the others
  // were read all the same.
  std::vector<std::string> errors;
};

// Reads every message of `format` in `text` (every message of any format with kAuto), in
// document order. Messages that do not read are reported in `errors` and skipped. An error
// status only when nothing at all was read and something failed (or nothing was found).
//
// What the text forms lose, and how it is rebuilt:
//  - gnmic json: values are decoded by gnmic; objects come back as json_val blobs, integers as
//    uint_val (int_val when negative), fractions as double_val. A Get has no timestamp: "time"
//    is used when it is not the zero time.
//  - gnmic event: tags named <elem>_<key> ("interface_name") become the key <key> of the
//    last elem <elem> of the value's path; "source", "subscription-name" and tags that match no
//    elem are dropped. Which elem had a key is lost when two elems share a name.
//  - gnmi_cli: the display nests key values as objects ("interface": {"Ethernet0": ...}), so
//    keys come back as elems; each {"timestamp", "value"} is its own notification; a string
//    value that is a JSON object or array is a json_ietf_val.
//  - prototext and the debug log: a string literal wrapped over lines is joined, and a line
//    "..." or "...," inside one (an excerpt's elision) is dropped.
absl::StatusOr<GnmiCapture> ReadGnmiCapture(std::string_view text, std::string_view file_name,
                                            GnmiTextFormat format = GnmiTextFormat::kAuto);

}  // namespace railwatch
