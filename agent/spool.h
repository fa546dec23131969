#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/batch_builder.h"
#include "agent/spool_format.h"
#include "common/clock.h"
#include "railwatch/v1/ingest.pb.h"

namespace railwatch {

// The agent's bounded on-disk spool: a write-ahead log of every batch handed to the sender, in
// segment files in one directory (format in agent/spool_format.h), so that neither an outage
// of the daemon nor a restart of the agent (SIGKILL included) loses a batch.
//
// - Append writes each batch (one write(2), no fsync: the page cache survives the death of the
//   process, not of the host) before the sender may send it.
// - Ack deletes the segments whose batches the daemon has all stored.
// - Past max_bytes the oldest segments are dropped, and their unacknowledged batches counted.
// - Open recovers an earlier process's segments: a torn or damaged tail is cut, with a warning;
//   Read hands their batches back with their series re-interned into this process's registry.
// - Sequence numbers continue across processes: the directory keeps the agent's instance id
//   (its Hello.instance_id) and a generation bumped by every Open; this process's sequences
//   start at generation << 40, above any earlier one, so the daemon's per-instance "last
//   sequence stored" check drops whatever it already has.
//
// One process per directory (flock). Thread-safe.
class Spool {
 public:
  struct Options {
    std::string dir;
    uint64_t max_bytes = uint64_t{256} << 20;
    // A new segment after this many bytes; 0: max_bytes / 16 within [64 KiB, 16 MiB].
    uint64_t segment_bytes = 0;
    // The segment being written is deleted, once all acknowledged, after this long, so that in
    // steady state the page cache drops it before writeback (30 s) puts it on disk.
    absl::Duration rotate_acked_after = absl::Seconds(10);
  };

  struct Stats {
    uint64_t batches_spooled = 0;    // appended by this process
    uint64_t bytes_spooled = 0;
    uint64_t batches_recovered = 0;  // found at Open, left by an earlier process
    uint64_t batches_replayed = 0;   // read back from disk to be sent
    uint64_t batches_dropped = 0;    // unacknowledged, in segments dropped at max_bytes
    uint64_t bytes_dropped = 0;
    uint64_t torn_tails = 0;         // segments cut at Open
    uint64_t append_errors = 0;
    uint64_t bytes = 0;              // on disk now
    uint64_t segments = 0;
  };

  // Opens (creating) the directory, takes its lock, recovers what is there.
  static absl::StatusOr<std::unique_ptr<Spool>> Open(Options options,
                                                     const Clock& clock = RealClock::Get());
  ~Spool();

  uint64_t instance_id() const { return instance_id_; }
  // This process's first sequence number.
  uint64_t first_sequence() const { return first_sequence_; }
  // The newest sequence recovered at Open; 0 when none.
  uint64_t last_recovered_sequence() const { return last_recovered_sequence_; }

  // Appends a batch (without definitions), after the definitions this segment lacks.
  absl::Status Append(const v1::Batch& batch, const SeriesRegistry& registry);
  // The daemon has stored every batch up to `sequence`.
  void Ack(uint64_t sequence);
  // The first spooled batch's sequence above `after`; 0 when none.
  uint64_t NextAfter(uint64_t after) const;
  // Batch `sequence` from disk into `out`, its series ids mapped to `registry` (defining them
  // there when new). NotFound when it is no longer spooled.
  absl::Status Read(uint64_t sequence, SeriesRegistry& registry, v1::Batch& out);

  Stats stats() const;

 private:
  struct Segment {
    std::string path;
    uint64_t first = 0, last = 0;  // sequences; a segment's are consecutive
    uint64_t batches = 0;
    uint64_t bytes = 0;
    absl::Time created;
  };
  // The segment Read last loaded, with its ids mapped into the reader's registry.
  struct ReadCache {
    uint64_t first = 0;  // of the segment; 0: nothing loaded
    std::string bytes;
    spool::ScanResult scan;
    absl::flat_hash_map<uint32_t, uint32_t> ids;  // the writer's id -> the registry's
  };

  Spool(Options options, const Clock& clock) : options_(std::move(options)), clock_(clock) {}
  absl::Status Init();
  absl::Status LoadIdentity(uint64_t newest_sequence);
  absl::Status Recover(const std::string& path);
  void DropOldestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CloseActiveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DeleteFrontLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status StartSegmentLocked(uint64_t sequence) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  const Clock& clock_;
  int lock_fd_ = -1;
  uint64_t instance_id_ = 0;
  uint64_t first_sequence_ = 1;
  uint64_t last_recovered_sequence_ = 0;

  mutable absl::Mutex mu_;
  std::deque<Segment> segments_ ABSL_GUARDED_BY(mu_);  // oldest first
  int active_fd_ ABSL_GUARDED_BY(mu_) = -1;            // segments_.back() while open
  size_t active_definitions_ ABSL_GUARDED_BY(mu_) = 0;  // registry ids written to it
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  ReadCache cache_ ABSL_GUARDED_BY(mu_);
  std::string scratch_ ABSL_GUARDED_BY(mu_);
  v1::Batch definitions_ ABSL_GUARDED_BY(mu_);
};

// An agent's spool: opened, then the Hello's instance id and the builder's sequence numbers
// come from it. Null, after logging why, when it cannot be opened (the agent then runs on its
// memory queue alone) or when options.dir is empty; the Hello gets a random instance id then.
std::unique_ptr<Spool> OpenAgentSpool(const Spool::Options& options, v1::Hello& hello,
                                      BatchBuilder& builder, const Clock& clock);

}  // namespace railwatch
