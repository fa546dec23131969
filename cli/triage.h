#pragma once

// `railwatch triage FILE... [--json]`: offline triage of NCCL, PyTorch, NCCL RAS and nccl-tests
// logs, for the engineer who pastes a log at 3 AM. No daemon is involved.

#include <iosfwd>
#include <string>
#include <vector>

namespace railwatch {

// Parses every file ("-" reads `in`) and writes to `out` either a short human summary (what
// failed, where, the likely fabric cause, the next commands to run) or, with `json`, one JSON
// object per line: each event, each finding, then one summary object. Problems with the inputs
// go to `err`, naming the file (and line).
//
// Returns kExitOk when every input was read (whatever it held: a malformed file still gets an
// answer), kExitNotFound when a named file does not exist, kExitError when one exists but cannot
// be read; the other files are triaged either way. kExitUsage without any file.
int RunTriage(const std::vector<std::string>& files, bool json, std::istream& in, std::ostream& out,
              std::ostream& err);

}  // namespace railwatch
