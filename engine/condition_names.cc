// Names of the condition language: its functions, aggregations and keywords, which of them a
// metric may not be called, and the "did you mean" suggestion for a misspelt function.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/condition_internal.h"

namespace railwatch::cond {
namespace {

struct AggEntry {
  std::string_view name;
  AggOp op;
};
constexpr AggEntry kAggs[] = {{"sum", AggOp::kSum},
                             {"avg", AggOp::kAvg},
                             {"min", AggOp::kMin},
                             {"max", AggOp::kMax},
                             {"count", AggOp::kCount}};
constexpr std::string_view kOtherFns[] = {"count_over_time", "peer_median", "peer_ratio",
                                          "topology", "peer", "abs", "label"};
constexpr std::string_view kKeywords[] = {"and", "or", "unless", "by", "without",
                                          "on", "ignoring", "bool"};

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<AggOp> FindAgg(std::string_view name) {
  for (const AggEntry& a : kAggs) {
    if (a.name == name) return a.op;
  }
  return std::nullopt;
}

bool IsOperatorKeyword(std::string_view name) {
  return std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords);
}

bool IsLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool IsOtherFunction(std::string_view name) {
  return std::find(std::begin(kOtherFns), std::end(kOtherFns), name) != std::end(kOtherFns);
}

bool IsReserved(std::string_view name) {
  return FindRangeFunction(name) || FindAgg(name) || name == "events" || IsOtherFunction(name) ||
         IsOperatorKeyword(name);
}

// The closest function name, when one is close enough to be a typo.
std::string SuggestFunction(std::string_view name) {
  std::vector<std::string_view> all;
  for (const RangeFunction& f : RangeFunctions()) all.push_back(f.name);
  for (const AggEntry& a : kAggs) all.push_back(a.name);
  all.insert(all.end(), std::begin(kOtherFns), std::end(kOtherFns));
  return SuggestName(name, all, 3);
}

std::string SuggestName(std::string_view name, std::span<const std::string_view> names,
                        size_t max_distance) {
  // A misspelt metric differs in a letter or two, or in a word's form (frame/frames,
  // _total missing): by default up to a quarter of the name, at least 2.
  size_t best_distance =
      max_distance > 0 ? max_distance : std::max<size_t>(3, name.size() / 4 + 1);
  std::string_view best;
  for (std::string_view candidate : names) {
    const size_t d = EditDistance(name, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return std::string(best);
}

}  // namespace railwatch::cond
