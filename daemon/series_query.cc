#include "daemon/series_query.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/condition.h"

namespace railwatch {
namespace {

v1::SeriesKind KindOf(MetricKind kind) {
  return kind == MetricKind::kCounter ? v1::SERIES_KIND_COUNTER : v1::SERIES_KIND_GAUGE;
}

void SetLabels(const Labels& labels, v1::Series& out) {
  for (const Label& l : labels) {
    v1::Label& pb = *out.add_labels();
    pb.set_name(l.name);
    pb.set_value(l.value);
  }
}

absl::Status ParseError(std::string_view text, const ConditionError& err) {
  return absl::InvalidArgumentError(
      absl::StrCat(TextPosition(text, err.offset), ": ", err.message));
}

bool SeriesOrder(const v1::Series& a, const v1::Series& b) {
  if (a.name() != b.name()) return a.name() < b.name();
  const int n = std::min(a.labels_size(), b.labels_size());
  for (int i = 0; i < n; ++i) {
    const v1::Label& x = a.labels(i);
    const v1::Label& y = b.labels(i);
    if (x.name() != y.name()) return x.name() < y.name();
    if (x.value() != y.value()) return x.value() < y.value();
  }
  return a.labels_size() < b.labels_size();
}

// The series the selector matches, in the order the store interned them.
std::vector<SeriesRef> MatchingSeries(const SeriesStore& store, const SeriesSelector& selector) {
  std::vector<SeriesRef> refs;
  if (selector.name().empty()) {
    // Every series with a sample, matched under the store's lock without copying name or
    // labels (1M series: one pass over the store's records, no allocation per series).
    store.ForEachLatestView([&](SeriesRef ref, const SeriesStore::SeriesView& view, const Sample&) {
      if (selector.Matches(view.labels)) refs.push_back(ref);
    });
    std::sort(refs.begin(), refs.end());
    return refs;
  }
  store.ForEachSeriesNamed(selector.name(), 0, [&](SeriesRef ref, const Labels& labels) {
    if (selector.Matches(labels)) refs.push_back(ref);
  });
  return refs;
}

void SelectorQuery(const SeriesSelector& selector, const SeriesStore& store, int64_t start,
                   int64_t end, uint32_t limit, v1::QuerySeriesResponse& response) {
  std::vector<SeriesRef> refs = MatchingSeries(store, selector);
  // Only series with a sample in the range count.
  std::vector<bool> in_range(refs.size());
  store.ForEachWindow(refs, start, end, [&](size_t i, std::span<const Sample> window) {
    in_range[i] = !window.empty();
  });
  size_t kept = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (in_range[i]) refs[kept++] = refs[i];
  }
  refs.resize(kept);
  response.set_matched(static_cast<uint32_t>(refs.size()));
  if (refs.size() > limit) {
    response.set_truncated(true);
    refs.resize(limit);
  }
  for (SeriesRef ref : refs) {
    const SeriesMeta meta = store.Meta(ref);
    v1::Series& s = *response.add_series();
    s.set_name(meta.name);
    SetLabels(meta.labels, s);
    s.set_kind(KindOf(meta.kind));
    for (const Sample& sample : store.Range(ref, start, end)) {
      v1::EvidencePoint& p = *s.add_points();
      p.set_time_unix_nano(sample.time_unix_nano);
      p.set_value(sample.value);
    }
  }
  std::sort(response.mutable_series()->begin(), response.mutable_series()->end(), SeriesOrder);
}

void ExpressionQuery(const Condition& condition, const SeriesQuerySources& sources, int64_t end,
                     uint32_t limit, v1::QuerySeriesResponse& response) {
  std::vector<VectorElement> elements =
      condition.Evaluate(EvalContext{sources.store, sources.events, sources.fabric, end});
  // A series whose window does not hold its data yet has no value to show.
  std::erase_if(elements, [](const VectorElement& e) { return e.unknown; });
  response.set_matched(static_cast<uint32_t>(elements.size()));
  std::sort(elements.begin(), elements.end(),
            [](const VectorElement& a, const VectorElement& b) { return a.labels < b.labels; });
  if (elements.size() > limit) {
    response.set_truncated(true);
    elements.resize(limit);
  }
  for (const VectorElement& e : elements) {
    v1::Series& s = *response.add_series();
    s.set_kind(v1::SERIES_KIND_GAUGE);
    // An element that is one series' reading (a selector, filtered or not) keeps its name,
    // as in PromQL; a computed value has none.
    if (e.evidence.size() == 1 && e.evidence[0].function.empty()) {
      const SeriesMeta meta = sources.store.Meta(e.evidence[0].series);
      if (meta.labels == e.labels) {
        s.set_name(meta.name);
        s.set_kind(KindOf(meta.kind));
      }
    }
    SetLabels(e.labels, s);
    v1::EvidencePoint& p = *s.add_points();
    p.set_time_unix_nano(end);
    p.set_value(e.value);
  }
  std::stable_sort(response.mutable_series()->begin(), response.mutable_series()->end(),
                   SeriesOrder);
}

}  // namespace

absl::StatusOr<v1::QuerySeriesResponse> RunSeriesQuery(const v1::QuerySeriesRequest& request,
                                                       const SeriesQuerySources& sources,
                                                       int64_t now) {
  const std::string& query = request.query();
  if (query.find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError(
        "query is empty: give a selector such as fabric_pfc_pause_frames_total{host=\"...\"} "
        "or an expression such as rate(fabric_roce_cnp_sent_total[1m]) > 0");
  }
  if (request.start_unix_nano() < 0 || request.end_unix_nano() < 0) {
    return absl::InvalidArgumentError("start_unix_nano and end_unix_nano must not be negative "
                                      "(0: the default)");
  }
  if (request.limit() > kMaxSeriesLimit) {
    return absl::InvalidArgumentError(absl::StrCat("limit ", request.limit(),
                                                   " is above the maximum, ", kMaxSeriesLimit));
  }
  const int64_t end = request.end_unix_nano() > 0 ? request.end_unix_nano() : now;
  const int64_t start = request.start_unix_nano() > 0
                            ? request.start_unix_nano()
                            : end - absl::ToInt64Nanoseconds(kDefaultSeriesRange);
  if (start > end) {
    return absl::InvalidArgumentError(absl::StrCat("start_unix_nano ", start,
                                                   " is after end_unix_nano ", end));
  }
  const uint32_t limit = request.limit() > 0 ? request.limit() : kDefaultSeriesLimit;

  v1::QuerySeriesResponse response;
  ConditionError err;
  absl::StatusOr<std::optional<SeriesSelector>> selector = ParseSeriesSelector(query, &err);
  if (!selector.ok()) return ParseError(query, err);
  if (*selector) {
    response.set_query_type("selector");
    SelectorQuery(**selector, sources.store, start, end, limit, response);
    return response;
  }
  absl::StatusOr<std::unique_ptr<Condition>> condition = ParseCondition(query, &err);
  if (!condition.ok()) return ParseError(query, err);
  response.set_query_type("expression");
  ExpressionQuery(**condition, sources, end, limit, response);
  return response;
}

}  // namespace railwatch
