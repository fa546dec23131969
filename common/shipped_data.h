#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace railwatch {

// The data railwatch ships beside its programs: playbooks and runbooks (`rules`), gNMI path
// profiles (`profiles/gnmi`), the baseline script (`baseline/baseline.py`). Every program finds
// them the same way, so that a default works the same from a build tree, a package, a
// relocated installation and a container:
//
//   1. $RAILWATCH_SHARE_DIR/<path>, when the variable is set (data kept elsewhere);
//   2. <directory of this executable>/../share/railwatch/<path> (any installation prefix:
//      /usr/bin/railwatchd reads /usr/share/railwatch/rules);
//   3. <CMAKE_INSTALL_PREFIX>/share/railwatch/<path>, the prefix the build was configured with;
//   4. the source tree the program was built from (a program run from its build tree).
//
// The first that exists wins. When none does, the installed path (3) is returned, so that the
// error the caller reports names where the data was expected.
std::string ShippedPath(std::string_view path);

// Where ShippedPath looks for `path`, in order (for --help texts and messages).
std::vector<std::string> ShippedPathCandidates(std::string_view path);

// The rule behind ShippedPath, on given roots: `share_roots` hold the data as installed
// (share/railwatch), `source_root` as in the repository (where the baseline script is
// sim/baseline/). Returns the first candidate that exists, else `fallback`.
std::string FindShippedPath(std::string_view path, const std::vector<std::string>& share_roots,
                            const std::string& source_root, const std::string& fallback);

}  // namespace railwatch
