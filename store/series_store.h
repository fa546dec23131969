#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "common/labels.h"
#include "common/vocabulary.h"
#include "store/line_rate.h"
#include "store/sample_chunk.h"

namespace railwatch {

// Index of a series in the store; stable for the life of the store.
using SeriesRef = uint32_t;

struct SeriesMeta {
  std::string name;
  Labels labels;
  MetricKind kind = MetricKind::kGauge;
  uint32_t width_bits = 0;
  std::string help;
};

struct Sample {
  int64_t time_unix_nano = 0;
  // Counters: the counter as the store counts it (docs/STORE.md, "Counter semantics"): the
  // first reading, then plus every accepted step; resets, wraps and steps above line rate
  // never make it go down or jump. Gauges: the reading.
  double value = 0;
};

// What a counter did over a window of samples.
struct CounterWindow {
  double increase = 0;  // sum of per-step increases, safe across resets and wraps
  int64_t first_time = 0;
  int64_t last_time = 0;
  size_t samples = 0;
};

// Label match for Select: name="value" or name!="value".
struct LabelMatcher {
  std::string name;
  std::string value;
  bool negate = false;
};

// In-memory time series keeping the last `capacity` samples of each series, compressed
// (docs/STORE.md).
//
// Thread-safe: many writers (ingest streams) and readers (rules engine, exporter, queries).
// A counter is corrected as it is appended (AdvanceCounter): each step's increase, net of
// resets and wraps, is at most what the port can carry (line_rate.h), and the store keeps the
// running sum. So rate, increase, delta and /metrics read one monotonic counter that never
// implies a rate above line rate; raw readings are not kept, and no reader can bypass it.
class SeriesStore {
 public:
  struct Options {
    // Samples kept per series (600 = 10 minutes at 1 s).
    size_t capacity = 600;
    // The most a series keeps to hold its name's span (KeepSpans); 0: 16 x capacity.
    size_t max_capacity = 0;
  };

  struct Stats {
    uint64_t samples_appended = 0;
    uint64_t samples_out_of_order = 0;
    // Counter steps by CounterTrap (railwatch_store_traps_total{reason}).
    uint64_t counter_resets = 0;
    uint64_t counter_wraps = 0;
    uint64_t counter_steps_above_line_rate = 0;
    uint64_t counter_values_invalid = 0;
  };

  explicit SeriesStore(Options options);
  ~SeriesStore();
  SeriesStore(const SeriesStore&) = delete;
  SeriesStore& operator=(const SeriesStore&) = delete;

  // Returns the series for (name, labels), creating it on first sight. Labels must be
  // normalised (sorted). A later Intern with another kind keeps the first; one with another
  // non-zero width changes the width (a driver reload that moved a counter to 32 or 64 bits).
  // The store knows no metric names: what a canonical series is (a counter's bound, the
  // port-rate gauge) comes in `traits`, from the vocabulary (TraitsOf, common/vocabulary.h).
  SeriesRef Intern(std::string_view name, const Labels& labels, const SeriesTraits& traits,
                   std::string_view help = {});
  // A series with no bound: what a test or a non-canonical series needs.
  SeriesRef Intern(std::string_view name, const Labels& labels, MetricKind kind,
                   uint32_t width_bits = 0, std::string_view help = {});

  // Appends a sample; one not newer than the series' last is dropped and counted, and so is a
  // counter reading that is NaN, infinite or negative. Returns true
  // when the series is watched (see Watch), so the caller can wake the rules engine.
  bool Append(SeriesRef ref, int64_t time_unix_nano, double value);

  // One sample of a batch for AppendMany.
  struct PendingSample {
    SeriesRef ref = 0;
    int64_t time_unix_nano = 0;
    double value = 0;
  };
  // Appends a batch's samples under one lock, each as Append would; returns true when any of
  // them is for a watched series.
  bool AppendMany(std::span<const PendingSample> samples);

  // Series with these names are reported as watched by Append.
  void Watch(const absl::flat_hash_set<std::string>& names);
  // How far back (nanoseconds) the series of each name must reach: the rules engine's longest
  // window over it. A series keeps `capacity` samples, and more while its oldest is still
  // inside its name's span (up to `max_capacity`): a playbook that counts symbol errors over
  // 125 minutes gets them from a scanner that reads every 10 s (750 samples), while a series
  // no long window reads keeps 600. Replaces the previous spans.
  void KeepSpans(const absl::flat_hash_map<std::string, int64_t>& span_ns);

  std::vector<SeriesRef> Select(std::string_view name,
                                const std::vector<LabelMatcher>& matchers = {}) const;

  SeriesMeta Meta(SeriesRef ref) const;
  std::optional<Sample> Latest(SeriesRef ref) const;
  // Samples with from <= t <= to, oldest first.
  std::vector<Sample> Range(SeriesRef ref, int64_t from, int64_t to) const;
  // Counter behaviour over samples in [from, to]; nullopt with fewer than two samples (an
  // absent counter has no increase, not a zero one).
  std::optional<CounterWindow> Increase(SeriesRef ref, int64_t from, int64_t to) const;

  // ---- Batch reads for the rules engine: one lock for many series. ----

  // Bumped whenever a new series is interned (read without the lock): a reader that cached
  // a selection re-runs its matchers only when this changed. The high 32 bits identify the
  // store instance (no two stores in a process share them), the low 32 count its series.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  // Calls fn(ref, labels) for the series named `name` in interning order, skipping the first
  // `skip` of them, under one lock; returns how many series have that name. A reader that
  // remembers the count only matches the series added since. The Labels reference stays
  // valid and unchanged for the life of the store (series are never removed or moved). fn
  // must not call back into the store.
  size_t ForEachSeriesNamed(std::string_view name, size_t skip,
                            absl::FunctionRef<void(SeriesRef, const Labels&)> fn) const;

  // out[i] is for refs[i]; out is resized to refs.size().
  void LatestMany(std::span<const SeriesRef> refs, std::vector<std::optional<Sample>>& out) const;
  // For each series, whether it began after `from`: it has samples, has dropped none for
  // retention, and its oldest is newer than `from`. A window that starts at `from` does not
  // yet hold the data of such a series (the daemon or its agent started within the window).
  void BeganAfterMany(std::span<const SeriesRef> refs, int64_t from, std::vector<bool>& out) const;
  // Increase for each of refs: what rate() and increase() read (engine/range_functions.h).
  void IncreaseMany(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                    std::vector<std::optional<CounterWindow>>& out) const;
  // Calls fn(i, window) for each of refs, window its samples with from <= t <= to, oldest
  // first (empty when it has none), under one lock: what the range functions over samples
  // read (engine/range_functions.h). The span is valid during the call; fn must not call back
  // into the store.
  void ForEachWindow(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                     absl::FunctionRef<void(size_t, std::span<const Sample>)> fn) const;

  // Calls fn for every series with its latest sample (series without samples are skipped).
  void ForEachLatest(
      const std::function<void(SeriesRef, const SeriesMeta&, const Sample&)>& fn) const;

  // What ForEachLatestView hands out: views into the store, valid during the callback (the
  // labels for the life of the store).
  struct SeriesView {
    std::string_view name;
    const Labels& labels;
    MetricKind kind;
    uint32_t width_bits;
    std::string_view help;
  };
  // ForEachLatest without building a SeriesMeta (no copies) per series. fn must not call
  // back into the store.
  void ForEachLatestView(
      absl::FunctionRef<void(SeriesRef, const SeriesView&, const Sample&)> fn) const;

  size_t size() const;
  Stats stats() const;
  // Bytes the store holds: samples (chunks, time blocks), series records, names, label sets
  // and indexes (allocator overhead not counted).
  size_t MemoryBytes() const;

 private:
  static constexpr SeriesRef kNoRef = std::numeric_limits<SeriesRef>::max();

  // One series: a few ids and its chunks (docs/STORE.md). Name, help and label set are
  // interned, shared by every series that has them.
  struct Series {
    // Oldest first; the last is the open one (open_n samples), the others hold
    // kChunkSamples. The first `skip()` samples of the oldest are past retention.
    std::vector<store_internal::ValueChunk> chunks;
    int64_t last_time = 0;
    double last_value = 0;
    union {
      // Gauges: time of the newest sample lower than the one before it: a window that starts
      // at or after it never went down, and its increase is last - first without a scan.
      // (A counter never goes down: the store corrects it.)
      int64_t last_decrease = std::numeric_limits<int64_t>::min();
      // Counters: the newest raw reading, from which the next step is measured.
      double raw_last;
    };
    uint32_t count = 0;   // retained samples
    uint32_t open_n = 0;  // samples in chunks.back()
    uint32_t name_id = 0;
    uint32_t labels_id = 0;
    MetricKind kind = MetricKind::kGauge;
    uint8_t width_bits = 0;
    bool watched = false;
    bool trimmed = false;  // it has dropped samples for retention
    CounterBound bound = CounterBound::kNone;
    bool port_rate = false;  // SeriesTraits::sets_line_rate: its samples set line_rate_by_labels_
    // Counters with a bound: the allowance carried over (CounterAllowance::credit). With the
    // union above, the correction grows the record from 72 to 80 bytes.
    float credit = 0;

    uint32_t skip() const {
      return static_cast<uint32_t>(chunks.size() - 1) * store_internal::kChunkSamples + open_n -
             count;
    }
    // The i-th retained sample, 0 the oldest.
    int64_t TimeAt(size_t i) const {
      const size_t g = skip() + i;
      return chunks[g >> store_internal::kChunkLog]
          .times()->t[g & (store_internal::kChunkSamples - 1)];
    }
    Sample At(size_t i) const {
      const size_t g = skip() + i;
      const store_internal::ValueChunk& c = chunks[g >> store_internal::kChunkLog];
      const uint32_t j = g & (store_internal::kChunkSamples - 1);
      return Sample{c.times()->t[j], store_internal::ChunkValue(c, j)};
    }
    // [first, end) in At() indices of the samples with from <= time <= to.
    std::pair<size_t, size_t> WindowOf(int64_t from, int64_t to) const;
    template <typename Fn>
    void ForEachIn(int64_t from, int64_t to, Fn&& fn) const;
    std::optional<CounterWindow> IncreaseIn(int64_t from, int64_t to) const;
  };

  struct NameEntry {
    std::string name;
    std::string help;
    std::vector<SeriesRef> refs;  // interning order
    bool watched = false;
    int64_t span = 0;  // KeepSpans: how far back its series must reach (ns), 0 none
  };

  bool AppendLocked(SeriesRef ref, int64_t time_unix_nano, double value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Turns `value`, a raw reading at t, into the counter value to store (Series::last_value
  // when the step is rejected); false when the reading is dropped. (Not an optional<double>:
  // returned in two registers and spilled, it stalled every append on a store forward.)
  bool CorrectCounterLocked(Series& s, int64_t t, double& value)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  uint32_t InternLabelsLocked(const Labels& labels) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  template <typename Fn>
  void ForEachRefLocked(std::span<const SeriesRef> refs, Fn&& fn) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  Options options_;
  mutable absl::Mutex mu_;
  std::deque<Series> series_ ABSL_GUARDED_BY(mu_);
  // &series_[ref], contiguous: the batch reads prefetch through it (a deque's own index
  // cannot be prefetched without reading it).
  std::vector<Series*> by_ref_ ABSL_GUARDED_BY(mu_);
  // (name id << 32 | labels id) -> series.
  absl::flat_hash_map<uint64_t, SeriesRef> by_key_ ABSL_GUARDED_BY(mu_);
  std::deque<NameEntry> names_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, uint32_t> name_ids_ ABSL_GUARDED_BY(mu_);
  // Label sets never move: ForEachSeriesNamed's references stay valid.
  std::deque<Labels> label_sets_ ABSL_GUARDED_BY(mu_);
  // By label set: the fastest rate (bytes/s) a port-rate gauge with that set has reported;
  // 0 when none has. Counters with the set are bounded by it.
  std::vector<double> line_rate_by_labels_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> label_ids_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> watched_names_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, int64_t> spans_ ABSL_GUARDED_BY(mu_);
  size_t max_capacity_ = 0;
  store_internal::ChunkArena arena_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
};

}  // namespace railwatch
