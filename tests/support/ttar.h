#pragma once

#include <string>

#include "absl/status/status.h"

namespace railwatch::testing {

// Unpacks a ttar text archive (the format node_exporter and procfs use for sysfs fixtures)
// under `dest`: "Directory:", "Path:" + "Lines:" + content, "SymlinkTo:", "Mode:". A last
// content line ending in "EOF" has no trailing newline; "NULLBYTE" stands for '\0'.
absl::Status UnpackTtar(const std::string& archive, const std::string& dest);

// A fresh directory under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Directory of tests/fixtures (set by CMake).
std::string FixturePath(const std::string& name);
// The whole of tests/fixtures/<name> ("" when it cannot be read).
std::string ReadFixture(const std::string& name);

}  // namespace railwatch::testing
