#include "store/event_store.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace railwatch {

const std::string* StoredEvent::Attribute(std::string_view key) const {
  for (const auto& [k, v] : attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool EventKindMatches(std::string_view pattern, std::string_view kind) {
  if (pattern.empty()) return true;
  if (pattern.back() == '.') return kind.substr(0, pattern.size()) == pattern;
  return pattern == kind;
}

EventStore::EventStore(Options options) : options_(options) {
  if (options_.capacity == 0) options_.capacity = 1;
}

uint64_t EventStore::Append(StoredEvent event, bool* watched) {
  NormalizeLabels(event.labels);
  absl::MutexLock lock(&mu_);
  event.seq = next_seq_++;
  if (watched != nullptr) {
    *watched = false;
    for (const std::string& w : watched_) {
      if (EventKindMatches(w, event.kind)) {
        *watched = true;
        break;
      }
    }
  }
  const uint64_t seq = event.seq;
  events_.push_back(std::move(event));
  ++stats_.appended;
  while (events_.size() > options_.capacity) {
    events_.pop_front();
    ++stats_.evicted;
  }
  return seq;
}

void EventStore::Watch(const absl::flat_hash_set<std::string>& kinds) {
  absl::MutexLock lock(&mu_);
  watched_.insert(kinds.begin(), kinds.end());
}

namespace {
bool Matches(const StoredEvent& e, const std::vector<LabelMatcher>& matchers) {
  for (const LabelMatcher& m : matchers) {
    const std::string* v = m.name == "kind" ? &e.kind : FindLabel(e.labels, m.name);
    const bool eq = v != nullptr ? *v == m.value : m.value.empty();
    if (eq == m.negate) return false;
  }
  return true;
}
}  // namespace

std::vector<StoredEvent> EventStore::Query(std::string_view kind, int64_t from, int64_t to,
                                           const std::vector<LabelMatcher>& matchers,
                                           size_t limit) const {
  std::vector<StoredEvent> out;
  {
    absl::MutexLock lock(&mu_);
    for (const StoredEvent& e : events_) {
      if (e.time_unix_nano < from || e.time_unix_nano > to) continue;
      if (!EventKindMatches(kind, e.kind) || !Matches(e, matchers)) continue;
      out.push_back(e);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const StoredEvent& a, const StoredEvent& b) {
    return a.time_unix_nano < b.time_unix_nano;
  });
  if (limit > 0 && out.size() > limit) out.erase(out.begin(), out.end() - limit);
  return out;
}

size_t EventStore::size() const {
  absl::MutexLock lock(&mu_);
  return events_.size();
}

EventStore::Stats EventStore::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace railwatch
