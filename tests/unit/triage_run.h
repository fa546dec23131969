#pragma once

// `railwatch triage` run in process, for the triage tests: its exit code, standard output and
// standard error, and one finding's block of the human output.

#include <sstream>
#include <string>
#include <vector>

#include "cli/triage.h"

namespace railwatch::testing {

struct TriageRun {
  int code = 0;
  std::string out, err;
};

inline TriageRun Triage(const std::vector<std::string>& files, const std::string& stdin_text = "",
                        bool json = false) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  TriageRun r;
  r.code = RunTriage(files, json, in, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Lines of the human output from the one starting with `head` to the next blank line.
inline std::string Block(const std::string& out, const std::string& head) {
  size_t at = out.find(head);
  if (at == std::string::npos) return "<no block " + head + ">";
  return out.substr(at, out.find("\n\n", at) - at);
}

}  // namespace railwatch::testing
