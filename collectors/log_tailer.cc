#include "collectors/log_tailer.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "collectors/log_tailer_file.h"
#include "common/logging.h"

namespace railwatch {
namespace fs = std::filesystem;
using tailer_internal::HashRange;
using tailer_internal::Join;
using tailer_internal::PreadUpTo;

namespace {

constexpr uint32_t kDirMask = IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_MODIFY |
                              IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF |
                              IN_ONLYDIR;
// On the file itself: a file renamed into another directory is no longer seen by its old
// directory's watch, and its writer may still be appending.
constexpr uint32_t kFileMask =
    IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

bool HasGlobMagic(absl::string_view s) { return s.find_first_of("*?[") != absl::string_view::npos; }

std::string DirOf(const std::string& path) {
  std::string dir = fs::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

bool SameContent(int fd, const TailerStateEntry& saved) {
  return HashRange(fd, 0, saved.head_len) == saved.head_hash &&
         HashRange(fd, saved.offset - saved.tail_len, saved.tail_len) == saved.tail_hash;
}

}  // namespace

LogTailer::LogTailer(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  for (std::string& p : options_.patterns) p = fs::path(p).lexically_normal().string();
  options_.max_line_bytes = std::max<size_t>(options_.max_line_bytes, 1);
}

LogTailer::~LogTailer() { Stop(); }

absl::Status LogTailer::Start() {
  if (started_ || stop_) return absl::FailedPreconditionError("log tailer already started");
  inotify_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (inotify_fd_ < 0) {
    return absl::UnavailableError(absl::StrCat("inotify_init1: ", std::strerror(errno)));
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    const int err = errno;
    ::close(inotify_fd_);
    inotify_fd_ = -1;
    return absl::UnavailableError(absl::StrCat("eventfd: ", std::strerror(err)));
  }
  for (const std::string& pattern : options_.patterns) {
    std::string dir = DirOf(pattern);
    if (!HasGlobMagic(dir) &&
        std::find(literal_dirs_.begin(), literal_dirs_.end(), dir) == literal_dirs_.end()) {
      literal_dirs_.push_back(std::move(dir));
    }
  }
  // Before returning, so that whatever happens in these directories from now on is seen.
  for (const std::string& dir : literal_dirs_) EnsureDirWatch(dir);
  started_ = true;
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void LogTailer::Stop() {
  if (!started_) return;
  stop_ = true;
  const uint64_t one = 1;
  // Should this fail, the thread still sees stop_ within max_poll_wait.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  thread_.join();
  ::close(wake_fd_);
  ::close(inotify_fd_);
  wake_fd_ = inotify_fd_ = -1;
  started_ = false;
}

// ---- the tailer thread ------------------------------------------------------------------------

void LogTailer::Run() {
  LoadState();
  const absl::Time now = clock_.Now();
  next_rescan_ = now + options_.rescan_interval;
  next_state_write_ = now + options_.state_write_interval;
  FullPass();
  RestoreRenamedWhileDown();
  restored_.clear();
  spdlog::info("log tailer: following {} files for {} patterns", files_.size(),
               options_.patterns.size());
  RunLoop();
  Publish();
  MaybeWriteState(/*force=*/true);
  for (auto& f : files_) {
    if (f->fd >= 0) ::close(f->fd);
  }
  files_.clear();
  by_path_.clear();
  watched_files_.clear();
}

absl::Duration LogTailer::PollTimeout(bool more) const {
  if (more) return absl::ZeroDuration();
  absl::Time deadline = next_rescan_;
  if (!options_.state_dir.empty()) deadline = std::min(deadline, next_state_write_);
  for (const auto& f : files_) {
    if (f->current_path.empty()) {
      deadline = std::min(deadline, f->last_activity + options_.rotated_close_after);
    }
  }
  return std::clamp(deadline - clock_.Now(), absl::ZeroDuration(), options_.max_poll_wait);
}

void LogTailer::RunLoop() {
  bool more = std::any_of(files_.begin(), files_.end(), [](const auto& f) { return f->more; });
  while (!stop_) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int timeout_ms = static_cast<int>(
        absl::ToInt64Milliseconds(absl::Ceil(PollTimeout(more), absl::Milliseconds(1))));
    if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR) {
      ReportError("poll", absl::StrCat("poll: ", std::strerror(errno)));
    }
    if (stop_) break;
    bool full_pass = false;
    if (fds[0].revents & POLLIN) HandleInotify(full_pass);
    const absl::Time now = clock_.Now();
    if (full_pass || now >= next_rescan_) {
      FullPass();
      next_rescan_ = now + options_.rescan_interval;
    }
    more = false;
    for (auto& f : files_) {
      if (f->more && !stop_) more |= ReadNew(*f);
    }
    CloseIdleRotated();
    Publish();
    MaybeWriteState(/*force=*/false);
  }
}

void LogTailer::HandleInotify(bool& full_pass) {
  alignas(inotify_event) char buf[64 << 10];
  absl::flat_hash_set<std::string> paths;
  absl::flat_hash_set<File*> reads;
  absl::flat_hash_map<uint32_t, std::string> moved_from;  // rename cookie -> followed path
  std::vector<std::pair<std::string, std::string>> renamed;
  for (;;) {
    const ssize_t n = ::read(inotify_fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0 && errno != EAGAIN) {
        ReportError("inotify", absl::StrCat("reading inotify events: ", std::strerror(errno)));
      }
      break;
    }
    for (const char* p = buf; p < buf + n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(p);
      p += sizeof(inotify_event) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) {
        // Events were lost: look at everything again. A file that was created and rotated away
        // meanwhile cannot be found any more.
        ReportError("overflow",
                    "inotify queue overflowed; rescanning (files rotated meanwhile "
                    "may have been missed)");
        full_pass = true;
        continue;
      }
      if (auto dir = watched_dirs_.find(ev->wd); dir != watched_dirs_.end()) {
        if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
          // The directory went away or moved: its watch no longer means its path. The full
          // pass watches whatever directory is at that path now.
          if (!(ev->mask & IN_IGNORED)) ::inotify_rm_watch(inotify_fd_, ev->wd);
          dir_watches_.erase(dir->second);
          watched_dirs_.erase(dir);
          full_pass = true;
        } else if (ev->len > 0) {
          std::string path = Join(dir->second, ev->name);
          const bool followed = MatchingPattern(path) != nullptr;
          if ((ev->mask & IN_MOVED_FROM) && followed) moved_from[ev->cookie] = path;
          if (ev->mask & IN_MOVED_TO) {
            if (auto from = moved_from.find(ev->cookie); from != moved_from.end()) {
              renamed.emplace_back(std::move(from->second), path);
              moved_from.erase(from);
            }
          }
          if (followed) paths.insert(std::move(path));
        }
      } else if (auto file = watched_files_.find(ev->wd); file != watched_files_.end()) {
        reads.insert(file->second);
        if (ev->mask & IN_IGNORED) {
          file->second->wd = -1;
          watched_files_.erase(file);
        }
      }
    }
  }
  // Paths first: a rotation reads the old file to its end before the new one is opened.
  for (const std::string& path : paths) {
    if (const std::string* pattern = MatchingPattern(path)) CheckPath(path, *pattern);
  }
  for (const auto& [from, to] : renamed) FollowRenamed(from, to);
  for (File* f : reads) ReadNew(*f);
}

// A file renamed away from a followed path. Usually it is one we hold and Detach() has dealt
// with it; but when the tailer fell behind (events are handled in batches, and a starved thread
// can be many events late), the file may have been created and rotated before it was ever
// opened: the rename is then the only trace of where its lines went.
void LogTailer::FollowRenamed(const std::string& from, const std::string& to) {
  if (MatchingPattern(to) != nullptr) return;  // followed under its new name by CheckPath
  const std::string* pattern = MatchingPattern(from);
  if (pattern == nullptr) return;
  const int fd = ::open(to.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;  // renamed again or deleted since: nothing left to read
  struct stat st;
  const bool held = ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
                    std::any_of(files_.begin(), files_.end(), [&](const auto& f) {
                      return f->fd >= 0 && f->device == st.st_dev && f->inode == st.st_ino;
                    });
  if (held) {
    ::close(fd);
    return;
  }
  spdlog::debug("log tailer: {} was rotated to {} before it was read; reading it", from, to);
  File* f = OpenFile(from, *pattern, fd, st, nullptr);
  if (f == nullptr) return;
  f->current_path.clear();
  WatchFile(*f);
  {
    absl::MutexLock lock(&mu_);
    ++stats_.rotations;
  }
  ReadNew(*f);
}

void LogTailer::FullPass() {
  for (const std::string& dir : literal_dirs_) EnsureDirWatch(dir);
  std::vector<std::pair<std::string, const std::string*>> found;
  absl::flat_hash_set<std::string> seen;
  for (const std::string& pattern : options_.patterns) {
    glob_t g{};
    const int rc = ::glob(pattern.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        if (seen.insert(g.gl_pathv[i]).second) found.emplace_back(g.gl_pathv[i], &pattern);
      }
    } else if (rc != GLOB_NOMATCH) {
      ReportError(pattern, absl::StrCat("expanding ", pattern, " failed (glob error ", rc, ")"));
    }
    ::globfree(&g);
  }
  // Followed paths that no longer exist: a rename or delete whose event was missed.
  std::vector<std::pair<std::string, std::string>> gone;
  for (const auto& [path, f] : by_path_) {
    if (!seen.contains(path)) gone.emplace_back(path, f->pattern);
  }
  for (const auto& [path, pattern] : gone) CheckPath(path, pattern);
  for (const auto& [path, pattern] : found) {
    if (stop_) return;
    CheckPath(path, *pattern);
  }
  for (auto& f : files_) {
    if (f->current_path.empty() && f->fd >= 0) ReadNew(*f);
  }
}

void LogTailer::CheckPath(const std::string& path, const std::string& pattern) {
  File* at = nullptr;
  if (auto it = by_path_.find(path); it != by_path_.end()) at = it->second;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    if (at != nullptr) Detach(*at);
    return;
  }
  if (at != nullptr && at->device == st.st_dev && at->inode == st.st_ino) {
    ReadNew(*at);
    return;
  }
  // Something else is at the path now. Open it before deciding, so that the identity we act on
  // is that of the file we hold, not of whatever the path named a moment ago.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    if (fd >= 0) {
      ::close(fd);
    } else if (errno != ENOENT && errno != ENOTDIR) {
      ReportError(path, absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    }
    return;
  }
  ClearError(path);
  if (at != nullptr && !(at->device == st.st_dev && at->inode == st.st_ino)) Detach(*at);
  for (auto& f : files_) {
    if (f->fd < 0 || f->device != st.st_dev || f->inode != st.st_ino) continue;
    // A file we already follow, renamed into this path: the same stream goes on.
    ::close(fd);
    if (!f->current_path.empty()) {
      struct stat there;
      if (f->current_path == path || (::stat(f->current_path.c_str(), &there) == 0 &&
                                      there.st_dev == st.st_dev && there.st_ino == st.st_ino)) {
        // Still at its path too (a hard link): keep following it there, once.
        ReadNew(*f);
        return;
      }
      by_path_.erase(f->current_path);
      absl::MutexLock lock(&mu_);
      ++stats_.rotations;
    }
    f->current_path = path;
    by_path_[path] = f.get();
    ReadNew(*f);
    return;
  }
  const TailerStateEntry* saved = FindRestored(st.st_dev, st.st_ino);
  if (saved != nullptr && !SameContent(fd, *saved)) {
    spdlog::info("log tailer: {} is not the file saved at offset {} (inode reused or rewritten)",
                 path, saved->offset);
    saved = nullptr;
  }
  File* f = OpenFile(path, pattern, fd, st, saved);
  if (f == nullptr) return;
  by_path_[path] = f;
  ReadNew(*f);
}

LogTailer::File* LogTailer::OpenFile(const std::string& path, const std::string& pattern, int fd,
                                     const struct stat& st, const TailerStateEntry* saved) {
  if (files_.size() >= options_.max_files) {
    ::close(fd);
    ReportError("max_files", absl::StrCat("not following ", path, ": already ", options_.max_files,
                                          " files open"));
    return nullptr;
  }
  auto owned = std::make_unique<File>();
  File& f = *owned;
  f.device = st.st_dev;
  f.inode = st.st_ino;
  f.fd = fd;
  f.origin_path = path;
  f.pattern = pattern;
  f.current_path = path;
  f.last_activity = clock_.Now();
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (saved != nullptr) {
    StartStream(f, saved->offset, saved->next_line);
  } else if (size > options_.start_backlog_bytes) {
    // A file with no saved state: its last start_backlog_bytes, from the first whole line.
    const uint64_t start = size - options_.start_backlog_bytes;
    char before = '\n';
    if (start > 0) PreadUpTo(fd, &before, 1, start - 1);
    StartStream(f, start, 0);
    f.skip_to_newline = before != '\n';
  } else {
    StartStream(f, 0, 1);
  }
  // Its directory's watch reports its writes while it is there; the file's own watch is for once
  // it has left (Detach), or for when the directory cannot be watched.
  EnsureDirWatch(DirOf(path));
  if (!dir_watches_.contains(DirOf(path))) WatchFile(f);
  spdlog::debug("log tailer: following {} (inode {}) from offset {}", path, f.inode, f.offset);
  files_.push_back(std::move(owned));
  absl::MutexLock lock(&mu_);
  stats_.open_files = files_.size();
  return &f;
}

// After a rename rotation while the agent was down, the file it was reading is no longer at a
// followed path; look for it next to where it was, and read what was added to it since.
void LogTailer::RestoreRenamedWhileDown() {
  for (const TailerStateEntry& saved : restored_) {
    const std::string* pattern = MatchingPattern(saved.path);
    if (pattern == nullptr) continue;  // no longer configured
    const bool open = std::any_of(files_.begin(), files_.end(), [&](const auto& f) {
      return f->device == saved.device && f->inode == saved.inode;
    });
    if (open) continue;  // found at a followed path by the first pass
    const std::string dir = DirOf(saved.path);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    std::string found;
    while (const dirent* e = ::readdir(d)) {
      if (e->d_ino == saved.inode) {
        found = Join(dir, e->d_name);
        break;
      }
    }
    ::closedir(d);
    if (found.empty()) continue;
    const int fd = ::open(found.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != saved.device ||
        st.st_ino != saved.inode || !SameContent(fd, saved)) {
      ::close(fd);
      continue;
    }
    spdlog::info("log tailer: {} was renamed to {} while the agent was down; reading its rest",
                 saved.path, found);
    File* f = OpenFile(saved.path, *pattern, fd, st, &saved);
    if (f == nullptr) continue;
    f->current_path.clear();
    WatchFile(*f);
    ReadNew(*f);
  }
}

void LogTailer::WatchFile(File& f) {
  if (f.wd >= 0) return;
  // Through /proc/self/fd: the watch must be on the inode we hold, whatever the path names now.
  const std::string proc_path = absl::StrCat("/proc/self/fd/", f.fd);
  f.wd = ::inotify_add_watch(inotify_fd_, proc_path.c_str(), kFileMask);
  if (f.wd >= 0) {
    watched_files_[f.wd] = &f;
  } else {
    ReportError(absl::StrCat("watch ", f.origin_path),
                absl::StrCat("cannot watch ", f.origin_path, " (", std::strerror(errno),
                             "); relying on the rescan"));
  }
}

void LogTailer::Detach(File& f) {
  if (f.current_path.empty()) return;
  // Its directory no longer reports its writes. Watch it first, then take what is in it now
  // (written before the rotation): a write in between is either read now or reported.
  WatchFile(f);
  ReadNew(f);
  by_path_.erase(f.current_path);
  f.current_path.clear();
  f.last_activity = clock_.Now();
  spdlog::debug("log tailer: {} (inode {}) left its path; reading it until idle", f.origin_path,
                f.inode);
  absl::MutexLock lock(&mu_);
  ++stats_.rotations;
}

void LogTailer::CloseIdleRotated() {
  const absl::Time now = clock_.Now();
  bool closed = false;
  for (auto& f : files_) {
    if (!f->current_path.empty() || now - f->last_activity < options_.rotated_close_after) {
      continue;
    }
    const uint64_t offset = f->offset;
    const uint64_t stream = f->stream;
    ReadNew(*f);
    if (f->offset != offset || f->stream != stream) continue;  // it is still being written
    CloseFile(*f);
    closed = true;
  }
  if (!closed) return;
  files_.erase(
      std::remove_if(files_.begin(), files_.end(), [](const auto& f) { return f->fd < 0; }),
      files_.end());
  absl::MutexLock lock(&mu_);
  stats_.open_files = files_.size();
}

void LogTailer::CloseFile(File& f) {
  EndStream(f);
  if (f.wd >= 0) {
    ::inotify_rm_watch(inotify_fd_, f.wd);
    watched_files_.erase(f.wd);
    f.wd = -1;
  }
  ::close(f.fd);
  f.fd = -1;
}

void LogTailer::EnsureDirWatch(const std::string& dir) {
  if (dir_watches_.contains(dir)) return;
  const int wd = ::inotify_add_watch(inotify_fd_, dir.c_str(), kDirMask);
  if (wd < 0) {
    // A directory that does not exist yet is looked for again at the next rescan.
    if (errno != ENOENT && errno != ENOTDIR) {
      ReportError(absl::StrCat("watch ", dir),
                  absl::StrCat("cannot watch ", dir, ": ", std::strerror(errno)));
    }
    return;
  }
  dir_watches_[dir] = wd;
  watched_dirs_[wd] = dir;
}

const TailerStateEntry* LogTailer::FindRestored(uint64_t device, uint64_t inode) const {
  for (const TailerStateEntry& e : restored_) {
    if (e.device == device && e.inode == inode) return &e;
  }
  return nullptr;
}

// ---- helpers ----------------------------------------------------------------------------------

const std::string* LogTailer::MatchingPattern(const std::string& path) const {
  for (const std::string& pattern : options_.patterns) {
    if (::fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) return &pattern;
  }
  return nullptr;
}

void LogTailer::CountError() {
  absl::MutexLock lock(&mu_);
  ++stats_.errors;
}

void LogTailer::ReportError(const std::string& key, absl::string_view message) {
  CountError();
  if (failing_.insert(key).second) spdlog::warn("log tailer: {}", message);
}

void LogTailer::ClearError(const std::string& key) { failing_.erase(key); }

}  // namespace railwatch
