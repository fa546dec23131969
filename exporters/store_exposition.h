#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "exporters/metrics_server.h"
#include "store/series_store.h"

namespace railwatch {

// Every fresh series of the store (fabric_* from agents, railwatch_collector_* that agents
// report about themselves) with its latest value, one family per name, families in name order,
// series in interning order within a family. A series whose latest sample is older than
// `stale_after` is left out, as Prometheus expects of a target whose device went away; a
// family with no fresh series is left out too.
//
// Renders straight to text: the same bytes as StoreCollectable through prometheus-cpp's
// TextSerializer, without a MetricFamily per name and a ClientMetric with copied labels per
// series. Per-family line buffers and the ref -> family index are kept between scrapes, so a
// scrape in steady state allocates nothing per series.
class StoreExposition final : public ExpositionSource {
 public:
  StoreExposition(const SeriesStore& store, const Clock& clock, absl::Duration stale_after)
      : store_(store), clock_(clock), stale_after_(stale_after) {}

  // Thread-safe; concurrent scrapes take turns.
  void AppendExposition(std::string& out) override;

 private:
  // Grows without zero-filling what it is about to overwrite; keeps its capacity on clear().
  class LineBuffer {
   public:
    void clear() { size_ = 0; }
    std::string_view view() const { return {data_.get(), size_}; }
    char* Reserve(size_t n);  // room for n more bytes at the end
    void Commit(char* end) { size_ = static_cast<size_t>(end - data_.get()); }

   private:
    std::unique_ptr<char[]> data_;
    size_t size_ = 0;
    size_t capacity_ = 0;
  };
  struct Family {
    std::string name;    // as exposed (ExposedAs)
    double scale = 1;    // exposed value / stored value
    std::string header;  // # HELP and # TYPE lines
    LineBuffer lines;    // this scrape's sample lines
  };
  static constexpr uint32_t kUnknown = UINT32_MAX;

  uint32_t FamilyOf(SeriesRef ref, const SeriesStore::SeriesView& series)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const SeriesStore& store_;
  const Clock& clock_;
  absl::Duration stale_after_;
  absl::Mutex mu_;
  std::vector<Family> families_ ABSL_GUARDED_BY(mu_);      // in order of first sight
  std::vector<uint32_t> name_order_ ABSL_GUARDED_BY(mu_);  // indices into families_, by name
  absl::flat_hash_map<std::string, uint32_t> by_name_ ABSL_GUARDED_BY(mu_);
  std::vector<uint32_t> family_of_ref_ ABSL_GUARDED_BY(mu_);  // kUnknown until first sight
};

}  // namespace railwatch
