#include "daemon/state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/text.h"

namespace railwatch {

absl::StatusOr<std::unique_ptr<StateDir>> StateDir::Open(const std::string& dir, bool create) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (!create) return absl::NotFoundError(absl::StrCat("state dir ", dir, " does not exist"));
    fs::create_directories(dir, ec);
    if (ec) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create state dir ", dir, ": ", ec.message()));
    }
  }
  if (!fs::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(absl::StrCat("state dir ", dir, " is not a directory"));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("state dir ", dir, " is not writable: ", std::strerror(errno)));
  }
  const std::string lock = dir + "/railwatchd.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot open ", lock, ": ", std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    std::string holder;
    if (absl::StatusOr<std::string> pid = ReadFile(lock); pid.ok()) {
      holder = std::string(absl::StripAsciiWhitespace(*pid));
    }
    if (err == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "state dir ", dir, " is in use by another railwatchd",
          holder.empty() ? "" : absl::StrCat(" (pid ", holder, ")"),
          "; give each daemon its own --state_dir"));
    }
    return absl::PermissionDeniedError(
        absl::StrCat("cannot lock ", lock, ": ", std::strerror(err)));
  }
  // Who holds it, for the message above.
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return std::unique_ptr<StateDir>(new StateDir(dir, fd));
}

StateDir::~StateDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

}  // namespace railwatch
