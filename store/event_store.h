#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "common/labels.h"
#include "store/series_store.h"

namespace railwatch {

// Something that happened at one instant, as the daemon keeps it: a carrier change, an NCCL
// error line, a switch oper-status change.
struct StoredEvent {
  uint64_t seq = 0;  // assigned by EventStore::Append, increasing
  std::string kind;  // "link.carrier_down"
  int64_t time_unix_nano = 0;
  Labels labels;     // sorted (NormalizeLabels); host / switch / agent included
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string raw;

  // nullptr when absent.
  const std::string* Attribute(std::string_view key) const;
};

// A bounded log of recent events for the rules engine: the oldest are evicted (and counted)
// when it is full. Thread-safe.
class EventStore {
 public:
  struct Options {
    size_t capacity = 100'000;
  };
  struct Stats {
    uint64_t appended = 0;
    uint64_t evicted = 0;
  };

  explicit EventStore(Options options);

  // Stores the event (labels are normalised here) and returns its sequence number. Events may
  // arrive out of time order (agents batch them); queries filter by time, not by position.
  // Returns true in *watched when its kind is watched (see Watch).
  uint64_t Append(StoredEvent event, bool* watched = nullptr);

  // Kinds (exact, or a prefix ending in '.', e.g. "nccl.") a playbook reads.
  void Watch(const absl::flat_hash_set<std::string>& kinds);

  // Events with from <= time <= to whose kind matches `kind` (exact; "" matches all; a prefix
  // ending in '.' matches that family) and whose labels satisfy every matcher (a matcher on
  // the name "kind" tests the kind), oldest first by time. `limit` 0: no limit (the newest
  // `limit` are returned otherwise).
  std::vector<StoredEvent> Query(std::string_view kind, int64_t from, int64_t to,
                                 const std::vector<LabelMatcher>& matchers = {},
                                 size_t limit = 0) const;

  // Calls fn for each matching event, oldest position first, without copying. fn must not
  // call back into the store.
  template <typename Fn>
  void ForEach(int64_t from, int64_t to, Fn&& fn) const {
    absl::MutexLock lock(&mu_);
    for (const StoredEvent& e : events_) {
      if (e.time_unix_nano >= from && e.time_unix_nano <= to) fn(e);
    }
  }

  size_t size() const;
  Stats stats() const;

 private:
  Options options_;
  mutable absl::Mutex mu_;
  std::deque<StoredEvent> events_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> watched_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

// True when the event's kind matches `kind` as Query defines it.
bool EventKindMatches(std::string_view kind_pattern, std::string_view kind);

}  // namespace railwatch
