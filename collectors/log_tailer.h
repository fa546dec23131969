#pragma once

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectors/log_tailer_state.h"
#include "common/clock.h"

namespace railwatch {

// One line read from a followed file, without its newline.
struct TailedLine {
  // Identifies one continuous run of a file's content: a file gets a new stream when it is first
  // opened and again after each truncation. Lines of one stream arrive in file order; a stream
  // ends with exactly one `end_of_stream` item, after which its id is not used again.
  uint64_t stream = 0;
  // The path the file was opened under (it keeps this name after a rename rotation).
  std::string path;
  // The configured pattern that matched `path`: a bounded label, unlike the path itself.
  std::string pattern;
  std::string text;
  // 1-based line number in the file; 0 when unknown (reading started in the middle of the file).
  int64_t line_number = 0;
  // When the tailer read it.
  int64_t read_unix_nano = 0;
  // No more lines will come for `stream`; `text` is empty.
  bool end_of_stream = false;
};

// Follows a set of log files, given as paths or glob patterns, through rename and copytruncate
// rotation, and hands out their lines through a bounded queue. See docs/LOG_TAILING.md.
//
// A dedicated thread blocks on an inotify descriptor (watching the directories of the patterns and
// of the open files, and each file that has left its path) and on an eventfd for Stop, so that
// new data is read promptly: with copytruncate,
// whatever was read before the truncation is safe. Read offsets are saved in a state file at
// most every `state_write_interval` and at Stop, so a restarted agent resumes without duplicates
// and without losing what was written while it was down.
//
// An offset counts as done only once its line has been taken with Drain(): lines still queued
// at Stop are read again by the next tailer (at least once, never silently lost).
class LogTailer {
 public:
  struct Options {
    // Paths or glob(7) patterns. A pattern's directory part may contain wildcards too, but new
    // directories are then found only by the periodic rescan.
    std::vector<std::string> patterns;
    // Where the state file lives; empty keeps no state (every start is a first start).
    std::string state_dir;
    // A file with no saved state is read from its beginning, but from at most this many bytes
    // before its end (from the first line that starts there) so that a huge old log does not
    // flood the daemon when the agent is first installed.
    uint64_t start_backlog_bytes = 8 << 20;
    // Longer lines are handed out in pieces of this size (and counted).
    size_t max_line_bytes = 64 << 10;
    // Queued text beyond this is dropped (and counted) until the consumer catches up.
    size_t max_queued_bytes = 16 << 20;
    size_t max_files = 1024;
    // Globs are expanded again this often, as a safety net for missed inotify events and for
    // directories that did not exist before.
    absl::Duration rescan_interval = absl::Seconds(5);
    // A file that left its path (renamed or deleted) is read until it has been idle this long:
    // its writer may keep appending until it reopens the log.
    absl::Duration rotated_close_after = absl::Seconds(5);
    absl::Duration state_write_interval = absl::Seconds(1);
    // Longest the thread blocks without looking at the clock (timers run on the injected Clock).
    absl::Duration max_poll_wait = absl::Seconds(1);
  };

  struct Stats {
    uint64_t lines = 0;  // read from files, including dropped ones
    uint64_t bytes = 0;
    uint64_t rotations = 0;         // a followed file left its path (renamed, deleted, replaced)
    uint64_t truncations = 0;       // a file was truncated (copytruncate) or rewritten in place
    uint64_t dropped_lines = 0;     // did not fit in the queue
    uint64_t long_line_splits = 0;  // lines broken at max_line_bytes
    uint64_t errors = 0;            // failed reads, opens, watches, state writes
    uint64_t open_files = 0;
  };

  static constexpr char kStateFileName[] = "log_tailer.state";

  LogTailer(Options options, const Clock& clock);
  ~LogTailer();
  LogTailer(const LogTailer&) = delete;
  LogTailer& operator=(const LogTailer&) = delete;

  // Watches the patterns' directories and starts the thread: from its return, every change in
  // those directories is seen. Fails only when inotify or an eventfd cannot be had; files and
  // directories that are missing or unreadable are not errors (they are looked for again).
  absl::Status Start();
  // Stops the thread and saves the state. Idempotent; also called by the destructor.
  void Stop();

  // Moves up to `max_items` queued lines (and end-of-stream items) to `out`.
  size_t Drain(std::vector<TailedLine>& out, size_t max_items);

  Stats stats() const;

  // The patterns as followed (lexically normalised): the values of TailedLine::pattern.
  const std::vector<std::string>& patterns() const { return options_.patterns; }

 private:
  struct File;
  struct Queued {
    TailedLine line;
    uint64_t end_offset = 0;  // just past this line in the file
    int64_t next_line = 0;    // number of the line that starts at end_offset
  };
  // What the consumer has taken of one stream; the state file saves these offsets.
  struct StreamProgress {
    size_t queued = 0;
    uint64_t delivered_offset = 0;
    int64_t delivered_next_line = 0;
  };

  void Run();
  void RunLoop();
  absl::Duration PollTimeout(bool more) const;
  void FullPass();
  void CheckPath(const std::string& path, const std::string& pattern);
  // Takes `fd` (closing it when the max_files bound is reached, then returning nullptr).
  File* OpenFile(const std::string& path, const std::string& pattern, int fd, const struct stat& st,
                 const TailerStateEntry* saved);
  void RestoreRenamedWhileDown();
  void FollowRenamed(const std::string& from, const std::string& to);
  // Reads what is new in `file`, up to a budget; true when more is left.
  bool ReadNew(File& file);
  void Consume(File& file, const char* data, size_t size);
  void EmitLine(File& file, std::string text, uint64_t end_offset, bool complete);
  void StartStream(File& file, uint64_t offset, int64_t next_line);
  // Moves within the current stream (over a hole).
  void SkipTo(File& file, uint64_t offset);
  void EndStream(File& file);
  void Detach(File& file);
  void WatchFile(File& file);
  void CloseFile(File& file);
  void CloseIdleRotated();
  void HandleInotify(bool& full_pass);
  void EnsureDirWatch(const std::string& dir);
  void Publish();
  void MaybeWriteState(bool force);
  std::vector<TailerStateEntry> SnapshotState();
  void LoadState();
  void CountError();
  // Logs a failure about `key` (a path) once until it succeeds again, and counts every one.
  void ReportError(const std::string& key, absl::string_view message);
  void ClearError(const std::string& key);
  // The first pattern that `path` matches, or nullptr.
  const std::string* MatchingPattern(const std::string& path) const;
  const TailerStateEntry* FindRestored(uint64_t device, uint64_t inode) const;

  Options options_;
  const Clock& clock_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  bool started_ = false;
  int inotify_fd_ = -1;
  int wake_fd_ = -1;

  // Owned by the tailer thread (and by Start before it runs).
  std::vector<std::string> literal_dirs_;
  absl::flat_hash_map<std::string, int> dir_watches_;   // directory -> wd
  absl::flat_hash_map<int, std::string> watched_dirs_;  // wd -> directory
  absl::flat_hash_map<int, File*> watched_files_;       // wd -> open file
  std::vector<std::unique_ptr<File>> files_;
  absl::flat_hash_map<std::string, File*> by_path_;  // current path -> file found there
  std::vector<TailerStateEntry> restored_;           // consulted until the first pass is done
  absl::flat_hash_set<std::string> failing_;         // paths whose error was logged
  uint64_t next_stream_ = 0;
  std::vector<Queued> pending_;  // read but not yet published to the queue
  uint64_t pending_bytes_ = 0;
  int64_t read_time_ = 0;
  std::vector<char> read_buf_;
  absl::Time next_rescan_;
  absl::Time next_state_write_;
  std::string last_state_;
  bool dropping_ = false;

  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uint64_t, StreamProgress> progress_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace railwatch
