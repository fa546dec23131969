#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "store/series_store.h"

namespace railwatch {

// One Ingest stream's series ids -> the store's series. Agents number their series densely
// (0, 1, 2 ...), so ids index a vector: one load per point instead of a hash lookup. An id far
// beyond the ones seen (a sender with sparse ids, or a hostile one) goes to a hash map instead,
// so that no id can make the vector huge. Redefining an id points it at the new series.
class StreamSeriesMap {
 public:
  // Ids below this many slots, or below 4x the ids defined so far, go to the vector; the
  // rest to the hash map. The vector stays within 4x the series the stream defined (plus 16 KB).
  static constexpr uint32_t kDenseSlots = 4096;

  void Define(uint32_t id, SeriesRef ref) {
    if (id < dense_.size() || FitsDense(id)) {
      if (id >= dense_.size()) dense_.resize(static_cast<size_t>(id) + 1, kNone);
      // An id defined while it was still too far for the vector moves into it.
      const bool known = dense_[id] != kNone || (!sparse_.empty() && sparse_.erase(id) > 0);
      if (!known) ++size_;
      dense_[id] = ref;
      return;
    }
    if (sparse_.insert_or_assign(id, ref).second) ++size_;
  }

  std::optional<SeriesRef> Find(uint32_t id) const {
    if (id < dense_.size() && dense_[id] != kNone) return dense_[id];
    if (sparse_.empty()) return std::nullopt;
    auto it = sparse_.find(id);
    if (it == sparse_.end()) return std::nullopt;
    return it->second;
  }

  // Distinct ids defined.
  size_t size() const { return size_; }
  // Slots of the vector (what a stream's ids cost: 4 bytes each).
  size_t dense_slots() const { return dense_.size(); }

 private:
  // SeriesRef is an index into the store, which never holds 2^32 - 1 series.
  static constexpr SeriesRef kNone = ~SeriesRef{0};

  bool FitsDense(uint32_t id) const {
    const uint64_t limit = std::max<uint64_t>(kDenseSlots, 4 * (uint64_t{size_} + 1));
    return id < limit;
  }

  std::vector<SeriesRef> dense_;
  absl::flat_hash_map<uint32_t, SeriesRef> sparse_;
  size_t size_ = 0;
};

}  // namespace railwatch
