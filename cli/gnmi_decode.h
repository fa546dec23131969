#pragma once

// `railwatch gnmi decode FILE...|- [--format=F] [--profile=NAME|FILE.yaml] [--profiles_dir=DIR]
// [--json]`: captured gNMI notifications (gnmi/text_formats.h) -> leaves, and with a profile the
// canonical series each leaf maps to. No daemon, no switch.

#include <iosfwd>
#include <string>
#include <vector>

namespace railwatch {

struct GnmiDecodeCommand {
  std::vector<std::string> files;  // "-" reads `in`
  std::string format = "auto";     // a GnmiTextFormatName
  std::string profile;             // a profile name (looked up in profiles_dir) or a .yaml file
  std::string profiles_dir;
  bool json = false;
};

// Prints one line per leaf ("path = value @ time", then "-> series{labels}" or "-> unmapped"
// with a profile), or with `json` one object per leaf and a summary object. Problems go to
// `err` with file:line. Returns kExitOk when every file held gNMI messages (some may still
// have failed: they are reported), kExitNotFound for a missing file, kExitError for one that
// cannot be read, kExitInvalid for a file with no gNMI message or a profile that does not
// load, kExitUsage for a bad format or no file. The other files are decoded either way.
int RunGnmiDecode(const GnmiDecodeCommand& cmd, std::istream& in, std::ostream& out,
                  std::ostream& err);

}  // namespace railwatch
