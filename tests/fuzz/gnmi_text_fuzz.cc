// libFuzzer target for captured gNMI notifications in text (gnmi/text_formats*: protojson,
// prototext, gnmic json/event, gnmi_cli, gnmic debug logs, found anywhere in a document), the
// notifications read then decoded into leaves (gnmi/decode.*, JSON blobs flattened), and gNMI
// path strings. Must not crash; a path that parses prints as a string that parses back to the
// same string. Seeds: tests/fixtures/gnmi.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "gnmi/decode.h"
#include "gnmi/text_formats.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/gnmi_leaf_checker.h"

using railwatch::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<railwatch::GnmiCapture> capture = railwatch::ReadGnmiCapture(text, "fuzz.md");
  if (capture.ok()) {
    railwatch::GnmiDecoder decoder;
    railwatch::fuzz::GnmiLeafChecker visitor;
    for (const gnmi::Notification& n : capture->notifications) decoder.Decode(n, visitor);
    Check(decoder.stats().notifications == capture->notifications.size());
  }
  const std::string_view first_line = text.substr(0, text.find('\n'));
  if (absl::StatusOr<gnmi::Path> path = railwatch::ParseGnmiPath(first_line); path.ok()) {
    const std::string printed = railwatch::GnmiPathString(*path);
    absl::StatusOr<gnmi::Path> again = railwatch::ParseGnmiPath(printed);
    Check(again.ok());
    Check(railwatch::GnmiPathString(*again) == printed);
  }
  return 0;
}
