#include "engine/correlator.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

constexpr size_t kMaxSymptoms = 512;

std::string LeafOf(const Labels& l) {
  std::string leaf = LabelValue(l, "leaf");
  if (leaf.empty() && LabelValue(l, "role") == "leaf") leaf = LabelValue(l, "switch");
  return leaf;
}

}  // namespace

Correlator::Correlator(const std::vector<const Playbook*>& playbooks) {
  absl::flat_hash_map<std::string, const Playbook*> by_name;
  // A name given twice: the last one counts (as the loader's order would have it).
  for (const Playbook* pb : playbooks) by_name[pb->name] = pb;
  for (const Playbook* pb : playbooks) {
    if (by_name[pb->name] != pb) continue;
    for (const ExplainRule& rule : pb->explains) {
      for (const std::string& symptom : rule.playbooks) {
        if (by_name.contains(symptom)) causes_of_[symptom].push_back({pb, &rule});
      }
    }
  }
  absl::flat_hash_set<const Playbook*> placed, visiting;
  std::function<void(const Playbook*)> place = [&](const Playbook* pb) {
    if (placed.contains(pb) || visiting.contains(pb)) return;
    visiting.insert(pb);
    if (auto it = causes_of_.find(pb->name); it != causes_of_.end()) {
      for (const auto& [cause, rule] : it->second) place(cause);
    }
    visiting.erase(pb);
    placed.insert(pb);
    order_.push_back(pb);
  };
  for (const Playbook* pb : playbooks) {
    if (by_name[pb->name] == pb) place(pb);
  }
}

bool Correlator::Related(const ExplainRule& rule, const AlertRecord& cause, const Labels& s,
                         const FabricMap* fabric) {
  const Labels& c = cause.labels;
  for (const std::string& name : rule.equal) {
    const std::string* a = FindLabel(c, name);
    const std::string* b = FindLabel(s, name);
    if (a == nullptr || b == nullptr || *a != *b) return false;
  }
  auto eq = [](const std::string& a, const std::string& b) { return !a.empty() && a == b; };
  const std::string& r = rule.relation;
  if (r == "same_node") return eq(LabelValue(c, "node"), LabelValue(s, "node"));
  if (r == "same_link") return eq(LabelValue(c, "link"), LabelValue(s, "link"));
  if (r == "same_rail") return eq(LabelValue(c, "rail"), LabelValue(s, "rail"));
  if (r == "same_host") {
    const std::string ch = LabelValue(c, "host"), cph = LabelValue(c, "peer_host");
    const std::string sh = LabelValue(s, "host"), sph = LabelValue(s, "peer_host");
    return eq(ch, sh) || eq(ch, sph) || eq(cph, sh);
  }
  if (r == "same_leaf") {
    const std::string cl = LeafOf(c), sl = LeafOf(s);
    return eq(cl, sl) || eq(cl, LabelValue(s, "switch")) || eq(LabelValue(c, "switch"), sl);
  }
  if (r == "same_job") {
    const std::string sj = LabelValue(s, "job");
    if (eq(LabelValue(c, "job"), sj)) return true;
    for (const JobImpact& j : cause.blast.jobs) {
      if (j.job == sj) return true;
    }
    for (const std::string& h : {LabelValue(s, "host"), LabelValue(s, "peer_host")}) {
      if (!h.empty() &&
          std::binary_search(cause.blast.hosts.begin(), cause.blast.hosts.end(), h)) {
        return true;
      }
    }
    return false;
  }
  if (r == "fabric") {
    const std::string cn = LabelValue(c, "node"), sn = LabelValue(s, "node");
    if (eq(cn, sn)) return true;
    if (fabric != nullptr && !cn.empty() && !sn.empty()) {
      const int hops = fabric->HopDistance(cn, sn);
      if (hops >= 0) return hops <= rule.hops;
    }
    // Without a path between them, the same leaf is the best we know.
    const std::string cl = LeafOf(c), sl = LeafOf(s);
    return eq(cl, sl) || eq(cl, LabelValue(s, "switch"));
  }
  return false;
}

AlertRecord* Correlator::FindCause(const Playbook& symptom, const Labels& labels,
                                   int64_t first_seen, bool firing_only, const FabricMap* fabric,
                                   absl::FunctionRef<AlertMap&(const Playbook&)> alerts_of) const {
  auto it = causes_of_.find(symptom.name);
  if (it == causes_of_.end()) return nullptr;
  for (const auto& [cause_pb, rule] : it->second) {
    AlertRecord* best = nullptr;
    for (auto& [key, a] : alerts_of(*cause_pb)) {
      if (a.state != AlertState::kFiring && (firing_only || a.state != AlertState::kPending)) {
        continue;
      }
      if (first_seen < a.active_since - absl::ToInt64Nanoseconds(rule->lead)) {
        continue;  // the symptom was there well before the cause: not its effect
      }
      if (!Related(*rule, a, labels, fabric)) continue;
      if (best == nullptr || a.active_since < best->active_since ||
          (a.active_since == best->active_since && a.key < best->key)) {
        best = &a;
      }
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

void Correlator::Attach(AlertRecord& cause, const Playbook& symptom, const Candidate& c,
                        int64_t first_seen, int64_t now, const SeriesStore& store) {
  const std::string skey = absl::StrCat(symptom.name, std::string(1, '\0'), c.key);
  auto [it, inserted] = cause.symptoms.try_emplace(skey);
  Symptom& s = it->second;
  if (inserted) {
    if (cause.symptoms.size() > kMaxSymptoms) {
      cause.symptoms.erase(it);
      return;
    }
    s.playbook = symptom.name;
    s.first_seen = first_seen;
    cause.explains.push_back(absl::StrCat(symptom.name, " ", c.key));
  }
  s.labels = c.labels;
  s.value = c.value;
  s.last_seen = now;
  if (!c.evidence.empty()) {
    SeriesMeta meta = store.Meta(c.evidence.front().series);
    s.series = FormatSeries(meta.name, meta.labels);
  } else if (!c.events.empty()) {
    s.series = FormatSeries(c.events.front().kind, c.events.front().labels);
  }
  // Log lines are the evidence people read first: keep the newest one.
  const EventEvidence* newest = nullptr;
  for (const EventEvidence& ev : c.events) {
    if (newest == nullptr || ev.time_unix_nano > newest->time_unix_nano) newest = &ev;
  }
  if (newest != nullptr && !newest->raw.empty()) s.raw = newest->raw;
}

}  // namespace railwatch
