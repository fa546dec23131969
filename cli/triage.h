#pragma once

// `railwatch triage FILE... [--json] [--rules=DIR]`: offline triage of NCCL, PyTorch, NCCL RAS
// and nccl-tests logs, for the engineer who pastes a log at 3 AM. No daemon is involved: the
// triage library (triage/) parses and groups the lines and plays them through the daemon's
// playbooks; this prints what it found.

#include <iosfwd>
#include <string>
#include <vector>

namespace railwatch {

// Parses every file ("-" reads `in`) and writes to `out` either a short human summary (what
// failed, where, what the lines mean, the playbook diagnoses they fire with their runbooks and
// commands, the next commands the lines themselves suggest) or, with `json`, one JSON object
// per line: each event, each finding, then one summary object. Problems with the inputs go to
// `err`, naming the file (and line). `rules` is the playbooks' directory or file (empty: the
// shipped rules, ShippedPath).
//
// Returns kExitOk when every input was read (whatever it held: a malformed file still gets an
// answer), kExitNotFound when a named file does not exist, kExitError when one exists but cannot
// be read; the other files are triaged either way. kExitInvalid when a rules file has errors
// (each on `err`, file:line:column; the playbooks that loaded still run). kExitUsage without
// any file.
int RunTriage(const std::vector<std::string>& files, bool json, std::istream& in, std::ostream& out,
              std::ostream& err, const std::string& rules = "");

}  // namespace railwatch
