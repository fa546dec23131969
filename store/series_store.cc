#include "store/series_store.h"

#include <algorithm>
#include <cmath>

#include "store/counter_math.h"

namespace railwatch {

using store_internal::kChunkSamples;
using store_internal::ValueChunk;

SeriesStore::SeriesStore(Options options) : options_(options) {
  if (options_.capacity < 2) options_.capacity = 2;
  max_capacity_ = options_.max_capacity != 0 ? std::max(options_.max_capacity, options_.capacity)
                                             : 16 * options_.capacity;
  // The high half tells stores apart, so a cache keyed by generation never mistakes a new
  // store (perhaps at the address of an old one) for the one it read.
  static std::atomic<uint64_t> next_instance{1};
  generation_.store(next_instance.fetch_add(1, std::memory_order_relaxed) << 32,
                    std::memory_order_release);
}

SeriesStore::~SeriesStore() {
  absl::MutexLock lock(&mu_);
  for (Series& s : series_) {
    for (ValueChunk& c : s.chunks) store_internal::FreeChunk(arena_, c);
  }
}

std::pair<size_t, size_t> SeriesStore::Series::WindowOf(int64_t from, int64_t to) const {
  // Samples are in time order. Windows are usually a few samples at the newest end, so walk
  // back from it, and binary-search when the window is long.
  size_t end = count;
  while (end > 0 && TimeAt(end - 1) > to) --end;
  constexpr size_t kWalk = 8;
  size_t first = end;
  while (first > 0 && end - first < kWalk && TimeAt(first - 1) >= from) --first;
  if (first > 0 && end - first == kWalk && TimeAt(first - 1) >= from) {
    size_t lo = 0, hi = first - 1;  // the answer is in [lo, hi]
    // Samples usually come at a steady interval: guess the place from the interval of the
    // samples just walked (already read), then check the guess and its neighbour before
    // searching.
    const int64_t t_hi = TimeAt(hi), t_end = TimeAt(end - 1);
    const size_t steps = end - 1 - hi;
    if (t_end > t_hi && steps > 0) {
      // In doubles: `from` may be as far back as INT64_MIN (a range of everything), where the
      // difference in int64 would overflow. The guess is only a guess: it is checked below.
      const double interval = (static_cast<double>(t_end) - static_cast<double>(t_hi)) /
                              static_cast<double>(steps);
      const double back =
          std::ceil((static_cast<double>(t_hi) - static_cast<double>(from)) / interval);
      if (back >= 0 && back <= static_cast<double>(hi)) {
        const size_t guess = hi - static_cast<size_t>(back);
        if (TimeAt(guess) >= from) {
          if (guess == 0 || TimeAt(guess - 1) < from) return {guess, end};
        } else if (guess < hi && TimeAt(guess + 1) >= from) {
          return {guess + 1, end};
        }
      }
    }
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      if (TimeAt(mid) >= from) {
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
  w.first_time = TimeAt(first);
  w.last_time = TimeAt(end - 1);
  // The usual window never goes down (a counter's never does: the store corrects it as it
  // is appended): its per-step increases add up to last - first.
  const double first_value = At(first).value;
  const double last_value = end == count ? this->last_value : At(end - 1).value;
  bool monotonic = kind == MetricKind::kCounter || last_decrease <= w.first_time;
  if (!monotonic) {  // a decrease since the window's start, perhaps after it: look
    monotonic = true;
    double prev = first_value;
    for (size_t i = first + 1; i < end && monotonic; ++i) {
      const double cur = At(i).value;
      monotonic = cur >= prev;
      prev = cur;
    }
  }
  if (monotonic) {
    w.increase = CounterDifference(first_value, last_value);
    return w;
  }
  // A gauge read as a counter: Prometheus' reading, a decrease is a reset.
  double prev = first_value;
  for (size_t i = first + 1; i < end; ++i) {
    const double cur = At(i).value;
    w.increase += GaugeStepAsCounter(prev, cur);
    prev = cur;
  }
  return w;
}

uint32_t SeriesStore::InternLabelsLocked(const Labels& labels) {
  std::vector<uint32_t>& ids = label_ids_[SeriesFingerprint({}, labels)];
  for (uint32_t id : ids) {
    if (label_sets_[id] == labels) return id;
  }
  const auto id = static_cast<uint32_t>(label_sets_.size());
  label_sets_.push_back(labels);
  line_rate_by_labels_.push_back(0);
  ids.push_back(id);
  return id;
}

SeriesRef SeriesStore::Intern(std::string_view name, const Labels& labels, MetricKind kind,
                              uint32_t width_bits, std::string_view help) {
  return Intern(name, labels, SeriesTraits{.kind = kind, .width_bits = width_bits}, help);
}

SeriesRef SeriesStore::Intern(std::string_view name, const Labels& labels,
                              const SeriesTraits& traits, std::string_view help) {
  const MetricKind kind = traits.kind;
  const uint32_t width_bits = traits.width_bits;
  absl::MutexLock lock(&mu_);
  auto [name_it, new_name] =
      name_ids_.try_emplace(AsAbsl(name), static_cast<uint32_t>(names_.size()));
  if (new_name) {
    NameEntry& e = names_.emplace_back();
    e.name = std::string(name);
    e.watched = watched_names_.contains(AsAbsl(name));
    if (auto span = spans_.find(AsAbsl(name)); span != spans_.end()) e.span = span->second;
  }
  const uint32_t name_id = name_it->second;
  NameEntry& entry = names_[name_id];
  if (entry.help.empty() && !help.empty()) entry.help = std::string(help);
  const uint32_t labels_id = InternLabelsLocked(labels);
  auto [it, inserted] = by_key_.try_emplace(uint64_t{name_id} << 32 | labels_id, 0);
  if (!inserted) {
    Series& s = *by_ref_[it->second];
    if (width_bits != 0) s.width_bits = static_cast<uint8_t>(std::min<uint32_t>(width_bits, 64));
    return it->second;
  }
  const SeriesRef ref = static_cast<SeriesRef>(series_.size());
  it->second = ref;
  Series& s = series_.emplace_back();
  by_ref_.push_back(&s);
  s.name_id = name_id;
  s.labels_id = labels_id;
  s.kind = kind;
  s.width_bits = static_cast<uint8_t>(std::min<uint32_t>(width_bits, 64));
  s.watched = entry.watched;
  if (kind == MetricKind::kCounter) s.bound = traits.bound;
  s.port_rate = kind == MetricKind::kGauge && traits.sets_line_rate;
  entry.refs.push_back(ref);
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

namespace {
// The float at or below v (>= 0): a credit rounded up would let a step past the bound.
float FloorFloat(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) > v) f = std::nextafter(f, 0.0f);
  return f < 0 ? 0 : f;
}
}  // namespace

bool SeriesStore::CorrectCounterLocked(Series& s, int64_t t, double& value) {
  const double raw = value + 0.0;  // -0 reads 0
  if (!(raw >= 0 && raw <= std::numeric_limits<double>::max())) {  // NaN, negative, infinite
    ++stats_.counter_values_invalid;
    return false;
  }
  const bool bounded = s.bound != CounterBound::kNone;
  const double max_rate =
      bounded ? MaxCounterRate(s.bound, line_rate_by_labels_[s.labels_id]) : 0;
  if (s.count == 0) {
    s.raw_last = raw;
    s.credit = bounded ? FloorFloat(max_rate * kCounterBurstSeconds) : 0;
    value = raw;  // the first reading is the start: the exported counter begins where it is
    return true;
  }
  if (!bounded && raw >= s.raw_last) {  // the usual step of an unbounded counter, inline
    const double increase = CounterDifference(s.raw_last, raw);
    s.raw_last = raw;
    value = s.last_value + increase;
    return true;
  }
  double allowed = std::numeric_limits<double>::infinity();
  CounterAllowance allowance{s.credit};
  if (bounded) {
    allowed = allowance.Allowed(max_rate, static_cast<double>(t - s.last_time) / 1e9);
  }
  const CounterAdvance step = AdvanceCounter(s.raw_last, raw, s.width_bits, allowed);
  if (bounded) {
    allowance.Spend(max_rate, allowed, step.increase);
    s.credit = FloorFloat(allowance.credit);
  }
  s.raw_last = raw;
  switch (step.trap) {
    case CounterTrap::kNone: break;
    case CounterTrap::kReset: ++stats_.counter_resets; break;
    case CounterTrap::kWrap: ++stats_.counter_wraps; break;
    case CounterTrap::kAboveLineRate: ++stats_.counter_steps_above_line_rate; break;
    case CounterTrap::kInvalidValue: ++stats_.counter_values_invalid; break;
  }
  value = s.last_value + step.increase;
  return step.trap != CounterTrap::kInvalidValue;
}

bool SeriesStore::AppendLocked(SeriesRef ref, int64_t t, double value) {
  Series& s = *by_ref_[ref];
  if (s.count > 0 && t <= s.last_time) {
    ++stats_.samples_out_of_order;
    return false;
  }
  if (s.kind == MetricKind::kCounter) {
    if (!CorrectCounterLocked(s, t, value)) return false;
  } else if (s.port_rate && value > line_rate_by_labels_[s.labels_id]) {
    line_rate_by_labels_[s.labels_id] = value;  // NaN never compares greater
  }
  if (s.kind != MetricKind::kCounter && s.count > 0 && value < s.last_value) {
    s.last_decrease = t;
  }
  // Past capacity, the oldest sample stays while the name's span still reaches it.
  bool keep_oldest = s.count < options_.capacity;
  if (!keep_oldest && s.count < max_capacity_) {
    const int64_t span = names_[s.name_id].span;
    keep_oldest = span > 0 && s.TimeAt(0) >= t - span;
  }
  store_internal::TimeBlock* prev = nullptr;
  if (s.chunks.empty()) {
    // The most chunks retention needs (the open one and those with retained samples): one
    // allocation, never regrown.
    s.chunks.reserve((options_.capacity + kChunkSamples - 2) / kChunkSamples + 1);
  }
  if (s.chunks.empty() || s.open_n == kChunkSamples) {
    if (!s.chunks.empty()) prev = s.chunks.back().times();
    s.chunks.push_back(ValueChunk{});
    s.open_n = 0;
  }
  ValueChunk& c = s.chunks.back();
  store_internal::AppendTime(arena_, c, s.open_n, t, prev);
  store_internal::AppendValue(arena_, c, s.open_n, value);
  ++s.open_n;
  s.last_time = t;
  s.last_value = value;
  if (keep_oldest) {
    ++s.count;
  } else {
    s.trimmed = true;
  }
  // The oldest chunk goes once all its samples are past retention.
  if (s.chunks.size() > 1 && s.skip() >= kChunkSamples) {
    store_internal::FreeChunk(arena_, s.chunks.front());
    s.chunks.erase(s.chunks.begin());
  }
  ++stats_.samples_appended;
  return s.watched;
}

void SeriesStore::KeepSpans(const absl::flat_hash_map<std::string, int64_t>& span_ns) {
  absl::MutexLock lock(&mu_);
  spans_ = span_ns;
  for (NameEntry& e : names_) {
    auto it = spans_.find(e.name);
    e.span = it != spans_.end() ? it->second : 0;
  }
}

void SeriesStore::Watch(const absl::flat_hash_set<std::string>& names) {
  absl::MutexLock lock(&mu_);
  watched_names_ = names;
  for (NameEntry& e : names_) e.watched = watched_names_.contains(e.name);
  for (Series& s : series_) s.watched = names_[s.name_id].watched;
}

std::vector<SeriesRef> SeriesStore::Select(std::string_view name,
                                           const std::vector<LabelMatcher>& matchers) const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<SeriesRef> out;
  auto it = name_ids_.find(AsAbsl(name));
  if (it == name_ids_.end()) return out;
  for (SeriesRef ref : names_[it->second].refs) {
    const Labels& labels = label_sets_[series_[ref].labels_id];
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
  const Series& s = series_[ref];
  const NameEntry& e = names_[s.name_id];
  return SeriesMeta{e.name, label_sets_[s.labels_id], s.kind, s.width_bits, e.help};
}

std::optional<Sample> SeriesStore::Latest(SeriesRef ref) const {
  absl::ReaderMutexLock lock(&mu_);
  const Series& s = series_[ref];
  if (s.count == 0) return std::nullopt;
  return Sample{s.last_time, s.last_value};
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

// Calls fn(i, series) for each of refs, prefetching ahead: a series, its chunks and their
// samples are apart in memory and each is a cache (and often TLB) miss, so fetching the next
// ones while this one is computed keeps several misses in flight. Four stages, each a few
// series apart: the series' entry in by_ref_ (refs of one name are far apart when each host
// interns many names), the series (its chunk pointer, count and newest sample), its open
// chunk's descriptor, then the newest times and values of that chunk (a time block is
// usually shared by many series, so it is often cached already).
template <typename Fn>
void SeriesStore::ForEachRefLocked(std::span<const SeriesRef> refs, Fn&& fn) const {
  constexpr size_t kAhead = 8;
  const size_t n = refs.size();
  for (size_t i = 0; i < n; ++i) {
    if (i + 4 * kAhead < n) __builtin_prefetch(&by_ref_[refs[i + 4 * kAhead]]);
    if (i + 3 * kAhead < n) {
      const Series* later = by_ref_[refs[i + 3 * kAhead]];
      __builtin_prefetch(later);
      __builtin_prefetch(reinterpret_cast<const char*>(later) + 63);
    }
    if (i + 2 * kAhead < n) {
      const Series& s = *by_ref_[refs[i + 2 * kAhead]];
      if (!s.chunks.empty()) __builtin_prefetch(&s.chunks.back());
    }
    if (i + kAhead < n) {
      const Series& s = *by_ref_[refs[i + kAhead]];
      if (!s.chunks.empty()) {
        const ValueChunk& c = s.chunks.back();
        const int64_t* newest = c.times()->t + (s.open_n - 1);
        __builtin_prefetch(newest);
        __builtin_prefetch(reinterpret_cast<const char*>(newest) - 64);
        if (const uint64_t* p = c.payload()) {
          __builtin_prefetch(p);
          __builtin_prefetch(reinterpret_cast<const char*>(p) + 64);
        }
      }
    }
    fn(i, *by_ref_[refs[i]]);
  }
}

size_t SeriesStore::ForEachSeriesNamed(
    std::string_view name, size_t skip,
    absl::FunctionRef<void(SeriesRef, const Labels&)> fn) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = name_ids_.find(AsAbsl(name));
  if (it == name_ids_.end()) return 0;
  const std::vector<SeriesRef>& refs = names_[it->second].refs;
  for (size_t i = skip; i < refs.size(); ++i) {
    fn(refs[i], label_sets_[series_[refs[i]].labels_id]);
  }
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
      out[i] = Sample{s.last_time, s.last_value};
    }
  });
}

void SeriesStore::BeganAfterMany(std::span<const SeriesRef> refs, int64_t from,
                                 std::vector<bool>& out) const {
  out.assign(refs.size(), false);
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs, [&](size_t i, const Series& s) {
    out[i] = s.count > 0 && !s.trimmed && s.TimeAt(0) > from;
  });
}

void SeriesStore::IncreaseMany(std::span<const SeriesRef> refs, int64_t from, int64_t to,
                               std::vector<std::optional<CounterWindow>>& out) const {
  out.resize(refs.size());
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs, [&](size_t i, const Series& s) { out[i] = s.IncreaseIn(from, to); });
}

void SeriesStore::ForEachWindow(
    std::span<const SeriesRef> refs, int64_t from, int64_t to,
    absl::FunctionRef<void(size_t, std::span<const Sample>)> fn) const {
  std::vector<Sample> window;
  absl::ReaderMutexLock lock(&mu_);
  ForEachRefLocked(refs, [&](size_t i, const Series& series) {
    window.clear();
    series.ForEachIn(from, to, [&](const Sample& s) { window.push_back(s); });
    fn(i, window);
  });
}

void SeriesStore::ForEachLatest(
    const std::function<void(SeriesRef, const SeriesMeta&, const Sample&)>& fn) const {
  SeriesMeta meta;  // reused: its strings keep their capacity
  ForEachLatestView([&](SeriesRef ref, const SeriesView& v, const Sample& sample) {
    meta.name.assign(v.name);
    meta.labels = v.labels;
    meta.kind = v.kind;
    meta.width_bits = v.width_bits;
    meta.help.assign(v.help);
    fn(ref, meta, sample);
  });
}

void SeriesStore::ForEachLatestView(
    absl::FunctionRef<void(SeriesRef, const SeriesView&, const Sample&)> fn) const {
  absl::ReaderMutexLock lock(&mu_);
  for (size_t i = 0; i < series_.size(); ++i) {
    const Series& s = series_[i];
    if (s.count == 0) continue;
    const NameEntry& e = names_[s.name_id];
    fn(static_cast<SeriesRef>(i), SeriesView{e.name, label_sets_[s.labels_id], s.kind, s.width_bits, e.help},
       Sample{s.last_time, s.last_value});
  }
}

size_t SeriesStore::MemoryBytes() const {
  absl::ReaderMutexLock lock(&mu_);
  size_t bytes = static_cast<size_t>(arena_.bytes) + series_.size() * sizeof(Series) +
                 by_ref_.capacity() * sizeof(Series*) +
                 by_key_.capacity() * (sizeof(std::pair<uint64_t, SeriesRef>) + 1);
  for (const Series& s : series_) bytes += s.chunks.capacity() * sizeof(ValueChunk);
  for (const NameEntry& e : names_) {
    bytes += sizeof(NameEntry) + e.name.capacity() + e.help.capacity() +
             e.refs.capacity() * sizeof(SeriesRef);
  }
  bytes += name_ids_.capacity() * (sizeof(std::pair<std::string, uint32_t>) + 1);
  for (const Labels& l : label_sets_) {
    bytes += sizeof(Labels) + l.capacity() * sizeof(Label);
    for (const Label& x : l) bytes += x.name.capacity() + x.value.capacity();
  }
  return bytes;
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
