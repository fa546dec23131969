#include "store/series_store.h"

#include <algorithm>
#include <cmath>

#include "store/counter_math.h"

namespace railwatch {

SeriesStore::SeriesStore(Options options) : options_(options) {
  if (options_.capacity < 2) options_ = Options{.capacity = 2};
  // The high half tells stores apart, so a cache keyed by generation never mistakes a new
  // store (perhaps at the address of an old one) for the one it read.
  static std::atomic<uint64_t> next_instance{1};
  generation_.store(next_instance.fetch_add(1, std::memory_order_relaxed) << 32,
                    std::memory_order_release);
}

const Sample& SeriesStore::Series::At(size_t i) const {
  // No '%': a 64-bit division costs more than the rest of a short window.
  const size_t cap = ring.size();
  const size_t oldest = head >= count ? head - count : head + cap - count;
  const size_t p = oldest + i;
  return ring[p >= cap ? p - cap : p];
}

std::pair<size_t, size_t> SeriesStore::Series::WindowOf(int64_t from, int64_t to) const {
  // Samples are in time order. Windows are usually a few samples at the newest end, so walk
  // back from it, and binary-search when the window is long.
  size_t end = count;
  while (end > 0 && At(end - 1).time_unix_nano > to) --end;
  constexpr size_t kWalk = 8;
  size_t first = end;
  while (first > 0 && end - first < kWalk && At(first - 1).time_unix_nano >= from) --first;
  if (first > 0 && end - first == kWalk && At(first - 1).time_unix_nano >= from) {
    size_t lo = 0, hi = first - 1;  // the answer is in [lo, hi]
    // Samples usually come at a steady interval: guess the place from the interval of the
    // samples just walked (already read), then check the guess and its neighbour before
    // searching.
    const int64_t t_hi = At(hi).time_unix_nano, t_end = At(end - 1).time_unix_nano;
    const size_t steps = end - 1 - hi;
    if (t_end > t_hi && steps > 0) {
      const double interval = static_cast<double>(t_end - t_hi) / static_cast<double>(steps);
      const double back = std::ceil(static_cast<double>(t_hi - from) / interval);
      if (back >= 0 && back <= static_cast<double>(hi)) {
        const size_t guess = hi - static_cast<size_t>(back);
        if (At(guess).time_unix_nano >= from) {
          if (guess == 0 || At(guess - 1).time_unix_nano < from) return {guess, end};
        } else if (guess < hi && At(guess + 1).time_unix_nano >= from) {
          return {guess + 1, end};
        }
      }
    }
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (At(mid).time_unix_nano >= from) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    first = lo;
  }
  return {first, end};
}

template <typename Fn>
void SeriesStore::Series::ForEachIn(int64_t from, int64_t to, Fn&& fn) const {
  const auto [first, end] = WindowOf(from, to);
  for (size_t i = first; i < end; ++i) fn(At(i));
}

std::optional<CounterWindow> SeriesStore::Series::IncreaseIn(int64_t from, int64_t to) const {
  const auto [first, end] = WindowOf(from, to);
  if (end - first < 2) return std::nullopt;
  CounterWindow w;
  w.samples = end - first;
  w.first_time = At(first).time_unix_nano;
  w.last_time = At(end - 1).time_unix_nano;
  // The usual window never goes down: its per-step increases add up to last - first.
  bool monotonic = last_decrease <= w.first_time;
  if (!monotonic) {  // a decrease since the window's start, perhaps after it: look
    monotonic = true;
    for (size_t i = first + 1; i < end && monotonic; ++i) {
      monotonic = At(i).value >= At(i - 1).value;
    }
  }
  if (monotonic) {
    w.increase = static_cast<double>(static_cast<uint64_t>(At(end - 1).value) -
                                     static_cast<uint64_t>(At(first).value));
    return w;
  }
  uint64_t prev = static_cast<uint64_t>(At(first).value);
  for (size_t i = first + 1; i < end; ++i) {
    const auto cur = static_cast<uint64_t>(At(i).value);
    CounterStep step = CounterDelta(prev, cur, meta.width_bits);
    w.increase += static_cast<double>(step.delta);
    w.resets += step.reset;
    w.wraps += step.wrapped;
    prev = cur;
  }
  return w;
}

SeriesRef SeriesStore::Intern(std::string_view name, const Labels& labels, MetricKind kind,
                              uint32_t width_bits, std::string_view help) {
  const uint64_t fp = SeriesFingerprint(name, labels);
  absl::MutexLock lock(&mu_);
  auto& candidates = by_fingerprint_[fp];
  for (SeriesRef ref : candidates) {
    const SeriesMeta& m = series_[ref].meta;
    if (m.name == name && m.labels == labels) return ref;
  }
  const SeriesRef ref = static_cast<SeriesRef>(series_.size());
  Series& s = series_.emplace_back();
  by_ref_.push_back(&s);
  s.meta = SeriesMeta{std::string(name), labels, kind, width_bits, std::string(help)};
  s.watched = watched_names_.contains(AsAbsl(name));
  s.ring.resize(options_.capacity);
  candidates.push_back(ref);
  by_name_[s.meta.name].push_back(ref);
  generation_.fetch_add(1, std::memory_order_release);
  return ref;
}

bool SeriesStore::Append(SeriesRef ref, int64_t t, double value) {
  absl::MutexLock lock(&mu_);
  return AppendLocked(ref, t, value);
}

bool SeriesStore::AppendMany(std::span<const PendingSample> samples) {
  bool watched = false;
  absl::MutexLock lock(&mu_);
  for (const PendingSample& p : samples) watched |= AppendLocked(p.ref, p.time_unix_nano, p.value);
  return watched;
}

bool SeriesStore::AppendLocked(SeriesRef ref, int64_t t, double value) {
  Series& s = series_[ref];
  if (s.count > 0) {
    const Sample& last = s.ring[(s.head + s.ring.size() - 1) % s.ring.size()];
    if (t <= last.time_unix_nano) {
      ++stats_.samples_out_of_order;
      return false;
    }
    if (value < last.value) s.last_decrease = t;
    if (s.meta.kind == MetricKind::kCounter && value < last.value &&
        CounterDelta(static_cast<uint64_t>(last.value), static_cast<uint64_t>(value),
                     s.meta.width_bits)
            .reset) {
      ++stats_.counter_resets;
    }
  }
  s.ring[s.head] = Sample{t, value};
  s.head = (s.head + 1) % s.ring.size();
  s.count = std::min(s.count + 1, s.ring.size());
  ++stats_.samples_appended;
  return s.watched;
}

void SeriesStore::Watch(const absl::flat_hash_set<std::string>& names) {
  absl::MutexLock lock(&mu_);
  watched_names_ = names;
  for (Series& s : series_) s.watched = watched_names_.contains(s.meta.name);
}

std::vector<SeriesRef> SeriesStore::Select(std::string_view name,
                                           const std::vector<LabelMatcher>& matchers) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<SeriesRef> out;
  auto it = by_name_.find(AsAbsl(name));
  if (it == by_name_.end()) return out;
  for (SeriesRef ref : it->second) {
    const Labels& labels = series_[ref].meta.labels;
    bool match = std::all_of(matchers.begin(), matchers.end(), [&](const LabelMatcher& m) {
      const std::string* v = FindLabel(labels, m.name);
      const std::string_view actual = v ? std::string_view(*v) : std::string_view();
      return (actual == m.value) != m.negate;
    });
    if (match) out.push_back(ref);
  }
  return out;
}

SeriesMeta SeriesStore::Meta(SeriesRef ref) const {
  absl::ReaderMutexLock lock(&mu_);
  return series_[ref].meta;
}

std::optional<Sample> SeriesStore::Latest(SeriesRef ref) const {
  absl::ReaderMutexLock lock(&mu_);
  const Series& s = series_[ref];
  if (s.count == 0) return std::nullopt;
  return s.ring[(s.head + s.ring.size() - 1) % s.ring.size()];
}

std::vector<Sample> SeriesStore::Range(SeriesRef ref, int64_t from, int64_t to) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<Sample> out;
  series_[ref].ForEachIn(from, to, [&](const Sample& s) { out.push_back(s); });
  return out;
}

std::optional<CounterWindow> SeriesStore::Increase(SeriesRef ref, int64_t from,
                                                   int64_t to) const {
  absl::ReaderMutexLock lock(&mu_);
  return series_[ref].IncreaseIn(from, to);
}

namespace {
std::optional<double> RateOf(const std::optional<CounterWindow>& w) {
  if (!w || w->last_time <= w->first_time) return std::nullopt;
  return w->increase / (static_cast<double>(w->last_time - w->first_time) / 1e9);
}
}  // namespace

std::optional<double> SeriesStore::Rate(SeriesRef ref, int64_t from, int64_t to) const {
  return RateOf(Increase(ref, from, to));
}

// Calls fn(i, series) for each of refs, prefetching ahead: a series and its ring are apart in
// memory and each is a cache (and often TLB) miss, so fetching the next ones while this one is
// computed keeps several misses in flight. Two stages: the Series (for its ring pointer), then
// the ring's newest samples.
template <typename Fn>
void SeriesStore::ForEachRefLocked(std::span<const SeriesRef> refs, Fn&& fn) const {
  // Three stages, each a dozen series apart: the series' entry in by_ref_ (refs of one name
  // are far apart when each host interns many names), then the series (its ring pointer and
  // position, which may straddle two cache lines), then the newest samples of its ring.
  constexpr size_t kAhead = 12;
  const size_t n = refs.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + 3 * kAhead < n) __builtin_prefetch(&by_ref_[refs[i + 3 * kAhead]]);
    if (i + 2 * kAhead < n) {
      const Series* later = by_ref_[refs[i + 2 * kAhead]];
      __builtin_prefetch(&later->ring);
      __builtin_prefetch(&later->count);
    }
    if (i + kAhead < n) {
      const Series& next = *by_ref_[refs[i + kAhead]];
      const Sample* newest =
          next.ring.data() + (next.head == 0 ? next.ring.size() - 1 : next.head - 1);
      // A window of a few samples before the newest: up to three lines.
      __builtin_prefetch(newest);
      __builtin_prefetch(reinterpret_cast<const char*>(newest) - 64);
      __builtin_prefetch(reinterpret_cast<const char*>(newest) - 128);
    }
    fn(i, *by_ref_[refs[i]]);
  }
}

size_t SeriesStore::ForEachSeriesNamed(
    std::string_view name, size_t skip,
    absl::FunctionRef<void(SeriesRef, const Labels&)> fn) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = by_name_.find(AsAbsl(name));
  if (it == by_name_.end()) return 0;
  const std::vector<SeriesRef>& refs = it->second;
  for (size_t i = skip; i < refs.size(); ++i) fn(refs[i], series_[refs[i]].meta.labels);
  return refs.size();
}

void SeriesStore::LatestMany(std::span<const SeriesRef> refs,
                             std::vector<std::optional<Sample>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs, [&](size_t i, const Series& s) {
    if (s.count == 0) {
      out[i].reset();
    } else {
      out[i] = s.ring[s.head == 0 ? s.ring.size() - 1 : s.head - 1];
    }
  });
}

void SeriesStore::IncreaseMany(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                               std::vector<std::optional<CounterWindow>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs, [&](size_t i, const Series& s) { out[i] = s.IncreaseIn(from, to); });
}

void SeriesStore::RateMany(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                           std::vector<std::optional<double>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs,
                   [&](size_t i, const Series& s) { out[i] = RateOf(s.IncreaseIn(from, to)); });
}

void SeriesStore::WindowMany(WindowFunction fn, std::span<const SeriesRef> refs, int64_t from,
                             int64_t to, std::vector<std::optional<double>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs, [&](size_t i, const Series& series) {
    size_t n = 0;
    double first = 0, last = 0, sum = 0, lo = 0, hi = 0, changes = 0;
    series.ForEachIn(from, to, [&](const Sample& s) {
      if (n == 0) {
        first = lo = hi = s.value;
      } else {
        if (s.value != last) ++changes;
        lo = std::min(lo, s.value);
        hi = std::max(hi, s.value);
      }
      last = s.value;
      sum += s.value;
      ++n;
    });
    std::optional<double>& v = out[i];
    v.reset();
    switch (fn) {
      case WindowFunction::kDelta:
        if (n >= 2) v = last - first;
        break;
      case WindowFunction::kChanges:
        if (n >= 2) v = changes;
        break;
      case WindowFunction::kAvg:
        if (n >= 1) v = sum / static_cast<double>(n);
        break;
      case WindowFunction::kMin:
        if (n >= 1) v = lo;
        break;
      case WindowFunction::kMax:
        if (n >= 1) v = hi;
        break;
    }
  });
}

void SeriesStore::ForEachLatest(
    const std::function<void(SeriesRef, const SeriesMeta&, const Sample&)>& fn) const {
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < series_.size(); ++i) {
    const Series& s = series_[i];
    if (s.count == 0) continue;
    fn(static_cast<SeriesRef>(i), s.meta, s.ring[(s.head + s.ring.size() - 1) % s.ring.size()]);
  }
}

size_t SeriesStore::size() const {
  absl::ReaderMutexLock lock(&mu_);
  return series_.size();
}

SeriesStore::Stats SeriesStore::stats() const {
  absl::ReaderMutexLock lock(&mu_);
  return stats_;
}

}  // namespace railwatch
