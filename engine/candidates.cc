#include "engine/candidates.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace railwatch {
namespace {

// Caps that keep one diagnosis readable (and bounded) however much a storm spreads.
constexpr size_t kMaxSeriesEvidence = 16;
constexpr size_t kMaxEventEvidence = 8;

template <typename T>
void AppendCapped(std::vector<T>& to, const std::vector<T>& from, size_t cap) {
  for (const T& x : from) {
    if (to.size() >= cap) return;
    to.push_back(x);
  }
}

}  // namespace

Labels CulpritLabels(const Playbook& pb, const Labels& labels) {
  if (pb.culprit.empty()) return labels;
  Labels out;
  for (const std::string& name : pb.culprit) {
    if (const std::string* v = FindLabel(labels, name)) out.push_back({name, *v});
  }
  NormalizeLabels(out);
  return out;
}

std::string GroupKey(const Playbook& pb, const Labels& labels) {
  if (!pb.group_by.empty()) {
    Labels key;
    for (const std::string& name : pb.group_by) {
      const std::string* v = FindLabel(labels, name);
      if (v == nullptr) {
        key.clear();
        break;
      }
      key.push_back({name, *v});
    }
    if (!key.empty()) {
      NormalizeLabels(key);
      return FormatLabels(key);
    }
  }
  return FormatLabels(CulpritLabels(pb, labels));
}

std::vector<Candidate> EvaluateCandidates(const Playbook& pb, const EvalContext& ctx) {
  std::vector<Candidate> out;
  absl::flat_hash_map<std::string, size_t> index;
  for (VectorElement& element : pb.condition->Evaluate(ctx)) {
    Labels labels = std::move(element.labels);
    if (ctx.fabric != nullptr) ctx.fabric->Enrich(labels);
    std::string key = GroupKey(pb, labels);
    auto [it, inserted] = index.try_emplace(key, out.size());
    if (inserted) {
      out.push_back({std::move(key), std::move(labels), element.value, element.unknown,
                     std::move(element.evidence), std::move(element.event_evidence)});
      continue;
    }
    // Several results for one incident (both ends of a link, five flaps): one candidate
    // with everyone's evidence; known as soon as one of them is.
    Candidate& c = out[it->second];
    if (c.unknown && !element.unknown) {
      c.unknown = false;
      c.value = element.value;
    } else if (!element.unknown) {
      c.value = std::max(c.value, element.value);
    }
    AppendCapped(c.evidence, element.evidence, kMaxSeriesEvidence);
    AppendCapped(c.events, element.event_evidence, kMaxEventEvidence);
  }
  return out;
}

}  // namespace railwatch
