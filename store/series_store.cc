#include "store/series_store.h"

#include <algorithm>

#include "store/counter_math.h"

namespace railwatch {

SeriesStore::SeriesStore(Options options) : options_(options) {
  if (options_.capacity < 2) options_ = Options{.capacity = 2};
}

template <typename Fn>
void SeriesStore::Series::ForEachIn(int64_t from, int64_t to, Fn&& fn) const {
  const size_t cap = ring.size();
  const size_t oldest = (head + cap - count) % cap;
  for (size_t i = 0; i < count; ++i) {
    const Sample& s = ring[(oldest + i) % cap];
    if (s.time_unix_nano < from) continue;
    if (s.time_unix_nano > to) break;
    fn(s);
  }
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
  const Series& s = series_[ref];
  CounterWindow w;
  std::optional<uint64_t> prev;
  s.ForEachIn(from, to, [&](const Sample& sample) {
    const auto cur = static_cast<uint64_t>(sample.value);
    if (!prev) {
      w.first_time = sample.time_unix_nano;
    } else {
      CounterStep step = CounterDelta(*prev, cur, s.meta.width_bits);
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

std::optional<double> SeriesStore::Rate(SeriesRef ref, int64_t from, int64_t to) const {
  std::optional<CounterWindow> w = Increase(ref, from, to);
  if (!w || w->last_time <= w->first_time) return std::nullopt;
  return w->increase / (static_cast<double>(w->last_time - w->first_time) / 1e9);
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
