#include "exporters/store_exposition.h"

#include <algorithm>
#include <cstring>

#include "common/vocabulary.h"
#include "exporters/exposition_text.h"

namespace railwatch {

char* StoreExposition::LineBuffer::Reserve(size_t n) {
  if (size_ + n > capacity_) {
    const size_t capacity = std::max({capacity_ * 2, size_ + n, size_t{4096}});
    std::unique_ptr<char[]> data(new char[capacity]);
    if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }
  return data_.get() + size_;
}

uint32_t StoreExposition::FamilyOf(SeriesRef ref, const SeriesStore::SeriesView& series) {
  if (ref < family_of_ref_.size() && family_of_ref_[ref] != kUnknown) return family_of_ref_[ref];
  // First sight of this series: find or make its family (the only allocations of a scrape,
  // and only for series new since the last one).
  auto it = by_name_.find(AsAbsl(series.name));
  if (it == by_name_.end()) {
    it = by_name_.emplace(std::string(series.name), static_cast<uint32_t>(families_.size())).first;
    Family& family = families_.emplace_back();
    const ExposedSeries exposed = ExposedAs(series.name);
    family.name = std::string(exposed.name);
    family.scale = exposed.scale;
    const std::string_view help = MetricHelp(series.name);
    AppendFamilyHeader(family.header, exposed.name, help.empty() ? series.help : help,
                       series.kind == MetricKind::kCounter ? "counter" : "gauge");
    const auto pos = std::lower_bound(
        name_order_.begin(), name_order_.end(), std::string_view(family.name),
        [&](uint32_t i, std::string_view name) { return families_[i].name < name; });
    name_order_.insert(pos, it->second);
  }
  if (ref >= family_of_ref_.size()) {
    family_of_ref_.resize(std::max<size_t>(ref + 1, family_of_ref_.size() * 2), kUnknown);
  }
  family_of_ref_[ref] = it->second;
  return it->second;
}

void StoreExposition::AppendExposition(std::string& out) {
  absl::MutexLock lock(&mu_);
  for (Family& family : families_) family.lines.clear();  // keeps the capacity
  const int64_t oldest = clock_.NowNanos() - absl::ToInt64Nanoseconds(stale_after_);
  store_.ForEachLatestView(
      [&](SeriesRef ref, const SeriesStore::SeriesView& series, const Sample& sample) {
        if (sample.time_unix_nano < oldest) return;
        Family& family = families_[FamilyOf(ref, series)];
        LineBuffer& lines = family.lines;
        lines.Commit(WriteSampleLine(lines.Reserve(SampleLineBound(family.name, series.labels)),
                                     family.name, series.labels, sample.value * family.scale));
      });
  for (uint32_t i : name_order_) {
    const Family& family = families_[i];
    if (family.lines.view().empty()) continue;
    out += family.header;
    out += family.lines.view();
  }
}

}  // namespace railwatch
