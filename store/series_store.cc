#include "store/series_store.h"

#include <algorithm>

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

template <typename Fn>
void SeriesStore::Series::ForEachIn(int64_t from, int64_t to, Fn&& fn) const {
  const size_t cap = ring.size();
  const size_t oldest = (head + cap - count) % cap;
  auto at = [&](size_t i) -> const Sample& { return ring[(oldest + i) % cap]; };
  // The first sample at or after `from`: windows are usually a few samples, so walk back from
  // the newest, and binary-search (samples are in time order) when the window is long.
  constexpr size_t kWalk = 8;
  size_t first = count;
  while (first > 0 && count - first < kWalk && at(first - 1).time_unix_nano >= from) --first;
  if (first > 0 && count - first == kWalk && at(first - 1).time_unix_nano >= from) {
    size_t lo = 0, hi = first - 1;  // answer in [lo, hi]
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (at(mid).time_unix_nano >= from) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    first = lo;
  }
  for (size_t i = first; i < count; ++i) {
    const Sample& s = at(i);
    if (s.time_unix_nano > to) break;
    fn(s);
  }
}

std::optional<CounterWindow> SeriesStore::Series::IncreaseIn(int64_t from, int64_t to) const {
  CounterWindow w;
  uint64_t prev = 0;
  ForEachIn(from, to, [&](const Sample& sample) {
    const auto cur = static_cast<uint64_t>(sample.value);
    if (w.samples == 0) {
      w.first_time = sample.time_unix_nano;
    } else {
      CounterStep step = CounterDelta(prev, cur, meta.width_bits);
      w.increase += static_cast<double>(step.delta);
      w.resets += step.reset;
      w.wraps += step.wrapped;
    }
    w.last_time = sample.time_unix_nano;
    prev = cur;
    ++w.samples;
  });
  if (w.samples < 2) return std::nullopt;
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
  Series& s = series_[ref];
  if (s.count > 0) {
    const Sample& last = s.ring[(s.head + s.ring.size() - 1) % s.ring.size()];
    if (t <= last.time_unix_nano) {
      ++stats_.samples_out_of_order;
      return false;
    }
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
  for (size_t i = 0; i < refs.size(); ++i) {
    const Series& s = series_[refs[i]];
    if (s.count == 0) {
      out[i].reset();
    } else {
      out[i] = s.ring[(s.head + s.ring.size() - 1) % s.ring.size()];
    }
  }
}

void SeriesStore::IncreaseMany(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                               std::vector<std::optional<CounterWindow>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < refs.size(); ++i) out[i] = series_[refs[i]].IncreaseIn(from, to);
}

void SeriesStore::RateMany(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                           std::vector<std::optional<double>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < refs.size(); ++i) out[i] = RateOf(series_[refs[i]].IncreaseIn(from, to));
}

void SeriesStore::WindowMany(WindowFunction fn, std::span<const SeriesRef> refs, int64_t from,
                             int64_t to, std::vector<std::optional<double>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < refs.size(); ++i) {
    size_t n = 0;
    double first = 0, last = 0, sum = 0, lo = 0, hi = 0, changes = 0;
    series_[refs[i]].ForEachIn(from, to, [&](const Sample& s) {
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
  }
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
