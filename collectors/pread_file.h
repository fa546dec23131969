#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace railwatch {

// A small file opened once and re-read from offset 0 with pread each cycle: sysfs counter
// files are regenerated on every read, so one descriptor serves for the life of the device.
class PreadFile {
 public:
  static absl::StatusOr<PreadFile> Open(const std::string& path);
  PreadFile(PreadFile&& other) noexcept;
  PreadFile& operator=(PreadFile&& other) noexcept;
  PreadFile(const PreadFile&) = delete;
  PreadFile& operator=(const PreadFile&) = delete;
  ~PreadFile();

  // Reads up to the buffer's size into `buf` and returns the bytes read, or an error naming the
  // path (ENODEV when the device went away).
  absl::StatusOr<size_t> Read(char* buf, size_t size) const;
  // Reads and parses an unsigned counter. nullopt when the file holds something else, such as
  // "N/A (no PMA)"; error when the read itself failed.
  absl::StatusOr<std::optional<uint64_t>> ReadCounter() const;

  const std::string& path() const { return path_; }

 private:
  PreadFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

}  // namespace railwatch
