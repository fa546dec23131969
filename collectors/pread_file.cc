#include "collectors/pread_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"

namespace railwatch {

absl::StatusOr<PreadFile> PreadFile::Open(const std::string& path) {
  // Reading a file should not write its inode: O_NOATIME spares a regular file (a simulator's
  // or a fixture's tree) an atime update per read. sysfs keeps no atime; where the flag is not
  // permitted (a file we do not own, without CAP_FOWNER) open without it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string msg = absl::StrCat(path, ": ", std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
    return absl::UnavailableError(msg);
  }
  return PreadFile(fd, path);
}

PreadFile::PreadFile(PreadFile&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

PreadFile& PreadFile::operator=(PreadFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

PreadFile::~PreadFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<size_t> PreadFile::Read(char* buf, size_t size) const {
  ssize_t n;
  do {
    n = ::pread(fd_, buf, size, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    return absl::UnavailableError(absl::StrCat(path_, ": ", std::strerror(errno)));
  }
  return static_cast<size_t>(n);
}

absl::StatusOr<std::optional<uint64_t>> PreadFile::ReadCounter() const {
  // A 64-bit decimal is at most 20 digits; sysfs values fit with room to spare.
  char buf[64];
  absl::StatusOr<size_t> n = Read(buf, sizeof(buf));
  if (!n.ok()) return n.status();
  // Only the first line counts: a writer that shrinks a file in place may leave a tail behind
  // for an instant.
  return ParseCounterText(FirstLine(absl::string_view(buf, *n)));
}

}  // namespace railwatch
