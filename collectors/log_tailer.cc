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
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {
namespace fs = std::filesystem;

namespace {

constexpr size_t kReadChunk = 64 << 10;
// Per file and pass, so that one file with a long backlog does not starve the others or Stop.
constexpr uint64_t kMaxReadPerPass = 1 << 20;

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

// The inverse of DirOf, so that paths built from inotify names compare equal to glob's output.
std::string Join(const std::string& dir, absl::string_view name) {
  if (dir == ".") return std::string(name);
  if (!dir.empty() && dir.back() == '/') return absl::StrCat(dir, name);
  return absl::StrCat(dir, "/", name);
}

// Reads exactly `size` bytes at `offset` unless the file is shorter; returns the bytes read.
size_t PreadUpTo(int fd, char* buf, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, buf + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// Hash of [offset, offset + len), or nullopt when the file is shorter than that.
std::optional<uint64_t> HashRange(int fd, uint64_t offset, uint32_t len) {
  char buf[kTailerHeadBytes];
  if (len > sizeof(buf)) return std::nullopt;
  if (PreadUpTo(fd, buf, len, offset) != len) return std::nullopt;
  return Fnv1a64(absl::string_view(buf, len));
}

bool SameContent(int fd, const TailerStateEntry& saved) {
  return HashRange(fd, 0, saved.head_len) == saved.head_hash &&
         HashRange(fd, saved.offset - saved.tail_len, saved.tail_len) == saved.tail_hash;
}

}  // namespace

struct LogTailer::File {
  uint64_t device = 0;
  uint64_t inode = 0;
  int fd = -1;
  int wd = -1;
  std::string origin_path;  // the path it was opened under: what its lines are labelled with
  std::string pattern;
  std::string current_path;  // empty once it has left every followed path
  uint64_t stream = 0;
  uint64_t offset = 0;      // bytes consumed
  uint64_t line_start = 0;  // where the line being assembled in `partial` starts
  int64_t next_line = 0;    // number of that line; 0 = unknown
  std::string partial;
  // Started in the middle of a line: drop bytes up to the first newline.
  bool skip_to_newline = false;
  // At the start of a stream: a writer without O_APPEND keeps writing at its old offset after
  // copytruncate, leaving a hole of zero bytes in front; skip them.
  bool skip_nuls = false;
  // The last bytes before `offset`, compared with the file on every read: if they changed, the
  // file was truncated and written again (possibly past our offset) since we last looked.
  std::string tail;
  bool more = false;  // the read budget ran out with data left
  absl::Time last_activity;
  // Hashes for the state file, recomputed only when the saved offset moves.
  uint64_t hashed_offset = UINT64_MAX;
  uint32_t head_len = 0;
  uint64_t head_hash = 0;
  uint32_t tail_len = 0;
  uint64_t tail_hash = 0;
};

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
  read_buf_.resize(kReadChunk);
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

size_t LogTailer::Drain(std::vector<TailedLine>& out, size_t max_items) {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (; n < max_items && !queue_.empty(); ++n) {
    Queued& q = queue_.front();
    if (q.line.end_of_stream) {
      progress_.erase(q.line.stream);
    } else {
      StreamProgress& p = progress_[q.line.stream];
      --p.queued;
      p.delivered_offset = q.end_offset;
      p.delivered_next_line = q.next_line;
      queued_bytes_ -= q.line.text.size();
    }
    out.push_back(std::move(q.line));
    queue_.pop_front();
  }
  return n;
}

LogTailer::Stats LogTailer::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
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

// ---- reading ----------------------------------------------------------------------------------

bool LogTailer::ReadNew(File& f) {
  f.more = false;
  if (f.fd < 0) return false;
  struct stat st;
  if (::fstat(f.fd, &st) != 0) {
    ReportError(f.origin_path, absl::StrCat("fstat ", f.origin_path, ": ", std::strerror(errno)));
    return false;
  }
  read_time_ = clock_.NowNanos();
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  bool rewritten = size < f.offset;
  if (!rewritten && !f.tail.empty()) {
    char buf[kTailerTailBytes];
    rewritten = PreadUpTo(f.fd, buf, f.tail.size(), f.offset - f.tail.size()) != f.tail.size() ||
                absl::string_view(buf, f.tail.size()) != f.tail;
  }
  if (rewritten) {
    spdlog::debug(
        "log tailer: {} was truncated (size {}, read up to {}); reading it from the start",
        f.origin_path, size, f.offset);
    EndStream(f);
    StartStream(f, 0, 1);
    absl::MutexLock lock(&mu_);
    ++stats_.truncations;
  }
  if (f.skip_nuls && size > f.offset) {
    // Jump over the hole rather than read it: it can be as long as the file was.
    const off_t data = ::lseek(f.fd, static_cast<off_t>(f.offset), SEEK_DATA);
    if (data > static_cast<off_t>(f.offset)) SkipTo(f, static_cast<uint64_t>(data));
  }
  uint64_t budget = kMaxReadPerPass;
  while (budget > 0) {
    const ssize_t n = ::pread(f.fd, read_buf_.data(), std::min<uint64_t>(read_buf_.size(), budget),
                              static_cast<off_t>(f.offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ReportError(f.origin_path, absl::StrCat("read ", f.origin_path, ": ", std::strerror(errno)));
      break;
    }
    if (n == 0) break;
    Consume(f, read_buf_.data(), static_cast<size_t>(n));
    budget -= static_cast<uint64_t>(n);
    f.last_activity = clock_.Now();
  }
  f.more = budget == 0;
  Publish();
  return f.more;
}

void LogTailer::Consume(File& f, const char* data, size_t size) {
  const uint64_t base = f.offset;  // file offset of data[0]
  size_t i = 0;
  if (f.skip_nuls) {
    while (i < size && data[i] == '\0') ++i;
    if (i < size) f.skip_nuls = false;
    f.line_start = base + i;
  }
  while (i < size) {
    const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', size - i));
    const size_t end = nl != nullptr ? static_cast<size_t>(nl - data) : size;
    if (f.skip_to_newline) {
      if (nl == nullptr) break;
      f.skip_to_newline = false;
      i = end + 1;
      f.line_start = base + i;
      continue;
    }
    absl::string_view segment(data + i, end - i);
    while (f.partial.size() + segment.size() > options_.max_line_bytes) {
      const size_t take = options_.max_line_bytes - f.partial.size();
      f.partial.append(segment.data(), take);
      segment.remove_prefix(take);
      EmitLine(f, std::move(f.partial), base + static_cast<size_t>(segment.data() - data),
               /*complete=*/false);
      f.partial.clear();
    }
    f.partial.append(segment.data(), segment.size());
    if (nl == nullptr) break;
    EmitLine(f, std::move(f.partial), base + end + 1, /*complete=*/true);
    f.partial.clear();
    i = end + 1;
  }
  f.offset = base + size;
  if (size >= kTailerTailBytes) {
    f.tail.assign(data + size - kTailerTailBytes, kTailerTailBytes);
  } else {
    f.tail.append(data, size);
    if (f.tail.size() > kTailerTailBytes) f.tail.erase(0, f.tail.size() - kTailerTailBytes);
  }
  pending_bytes_ += size;
}

void LogTailer::EmitLine(File& f, std::string text, uint64_t end_offset, bool complete) {
  Queued q;
  q.line.stream = f.stream;
  q.line.path = f.origin_path;
  q.line.pattern = f.pattern;
  q.line.text = std::move(text);
  q.line.line_number = f.next_line;
  q.line.read_unix_nano = read_time_;
  if (complete && f.next_line > 0) ++f.next_line;
  q.end_offset = end_offset;
  q.next_line = f.next_line;
  f.line_start = end_offset;
  pending_.push_back(std::move(q));
  if (!complete) {
    absl::MutexLock lock(&mu_);
    ++stats_.long_line_splits;
  }
}

void LogTailer::StartStream(File& f, uint64_t offset, int64_t next_line) {
  f.stream = ++next_stream_;
  f.next_line = next_line;
  f.partial.clear();
  f.skip_to_newline = false;
  f.skip_nuls = offset == 0;
  SkipTo(f, offset);
  absl::MutexLock lock(&mu_);
  progress_[f.stream] = {0, offset, next_line};
}

void LogTailer::SkipTo(File& f, uint64_t offset) {
  f.offset = f.line_start = offset;
  const size_t tail_len = static_cast<size_t>(std::min<uint64_t>(offset, kTailerTailBytes));
  f.tail.resize(tail_len);
  f.tail.resize(PreadUpTo(f.fd, f.tail.data(), tail_len, offset - tail_len));
}

void LogTailer::EndStream(File& f) {
  // A last line without its newline: the writer is gone (or the file was cut under it), so the
  // newline is not coming.
  if (!f.partial.empty() && !f.skip_to_newline) {
    EmitLine(f, std::move(f.partial), f.offset, /*complete=*/true);
  }
  f.partial.clear();
  Queued q;
  q.line.stream = f.stream;
  q.line.path = f.origin_path;
  q.line.pattern = f.pattern;
  q.line.read_unix_nano = clock_.NowNanos();
  q.line.end_of_stream = true;
  pending_.push_back(std::move(q));
}

void LogTailer::Publish() {
  if (pending_.empty() && pending_bytes_ == 0) return;
  bool started_dropping = false;
  bool stopped_dropping = false;
  {
    absl::MutexLock lock(&mu_);
    stats_.bytes += pending_bytes_;
    for (Queued& q : pending_) {
      if (!q.line.end_of_stream) {
        ++stats_.lines;
        // End-of-stream items are never dropped: the consumer needs them to free its state.
        if (queued_bytes_ + q.line.text.size() > options_.max_queued_bytes) {
          ++stats_.dropped_lines;
          started_dropping |= !dropping_;
          dropping_ = true;
          continue;
        }
        stopped_dropping |= dropping_;
        dropping_ = false;
        queued_bytes_ += q.line.text.size();
        ++progress_[q.line.stream].queued;
      }
      queue_.push_back(std::move(q));
    }
  }
  pending_.clear();
  pending_bytes_ = 0;
  if (started_dropping) {
    spdlog::warn("log tailer: queue full ({} bytes), dropping lines until the collector catches up",
                 options_.max_queued_bytes);
  } else if (stopped_dropping) {
    spdlog::info("log tailer: queue has room again");
  }
}

// ---- state ------------------------------------------------------------------------------------

std::vector<TailerStateEntry> LogTailer::SnapshotState() {
  struct Resume {
    File* file;
    uint64_t offset;
    int64_t next_line;
  };
  std::vector<Resume> resume;
  {
    absl::MutexLock lock(&mu_);
    for (auto& f : files_) {
      // Mid-way through skipping a partial first line there is no line start to resume at; the
      // next start applies the start policy again.
      if (f->fd < 0 || f->skip_to_newline) continue;
      // Lines still queued have not been taken by the consumer: resume before them.
      auto p = progress_.find(f->stream);
      if (p != progress_.end() && p->second.queued > 0) {
        resume.push_back({f.get(), p->second.delivered_offset, p->second.delivered_next_line});
      } else {
        resume.push_back({f.get(), f->line_start, f->next_line});
      }
    }
  }
  std::vector<TailerStateEntry> entries;
  for (const Resume& r : resume) {
    File& f = *r.file;
    if (f.hashed_offset != r.offset) {
      f.head_len = static_cast<uint32_t>(std::min<uint64_t>(r.offset, kTailerHeadBytes));
      f.tail_len = static_cast<uint32_t>(std::min<uint64_t>(r.offset, kTailerTailBytes));
      std::optional<uint64_t> head = HashRange(f.fd, 0, f.head_len);
      std::optional<uint64_t> tail = HashRange(f.fd, r.offset - f.tail_len, f.tail_len);
      if (!head || !tail) continue;  // truncated under us; the next read notices
      f.head_hash = *head;
      f.tail_hash = *tail;
      f.hashed_offset = r.offset;
    }
    TailerStateEntry e;
    e.path = f.current_path.empty() ? f.origin_path : f.current_path;
    e.device = f.device;
    e.inode = f.inode;
    e.offset = r.offset;
    e.next_line = r.next_line;
    e.head_len = f.head_len;
    e.head_hash = f.head_hash;
    e.tail_len = f.tail_len;
    e.tail_hash = f.tail_hash;
    entries.push_back(std::move(e));
  }
  return entries;
}

void LogTailer::MaybeWriteState(bool force) {
  if (options_.state_dir.empty()) return;
  const absl::Time now = clock_.Now();
  if (!force && now < next_state_write_) return;
  next_state_write_ = now + options_.state_write_interval;
  std::string content = FormatTailerState(SnapshotState());
  if (content == last_state_) return;
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  const std::string path = Join(options_.state_dir, kStateFileName);
  if (absl::Status s = WriteFileAtomically(path, content); !s.ok()) {
    ReportError("state", absl::StrCat("cannot save read offsets: ", s.message()));
    return;
  }
  ClearError("state");
  last_state_ = std::move(content);
}

void LogTailer::LoadState() {
  if (options_.state_dir.empty()) return;
  const std::string path = Join(options_.state_dir, kStateFileName);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    spdlog::info("log tailer: no saved offsets in {}; starting fresh", path);
    return;
  }
  absl::StatusOr<std::string> text = railwatch::ReadFile(path);
  if (!text.ok()) {
    ReportError("state", absl::StrCat("cannot read saved offsets: ", text.status().message()));
    return;
  }
  int bad_lines = 0;
  absl::StatusOr<std::vector<TailerStateEntry>> entries = ParseTailerState(*text, &bad_lines);
  if (!entries.ok()) {
    ReportError("state", absl::StrCat(path, ": ", entries.status().message()));
    return;
  }
  if (bad_lines > 0) {
    ReportError("state", absl::StrCat(path, ": skipped ", bad_lines, " malformed lines"));
  }
  restored_ = std::move(*entries);
  last_state_ = *text;
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
