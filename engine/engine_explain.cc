// Root cause: a symptom result related to an active cause (a playbook's explains: rule) is
// folded into that cause as evidence instead of raising a diagnosis of its own.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"

namespace railwatch {
namespace {

constexpr size_t kMaxSymptoms = 512;

}  // namespace

bool Engine::Related(const ExplainRule& rule, const Active& cause, const Labels& s) const {
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
  auto leaf_of = [](const Labels& l) {
    std::string leaf = LabelValue(l, "leaf");
    if (leaf.empty() && LabelValue(l, "role") == "leaf") leaf = LabelValue(l, "switch");
    return leaf;
  };
  if (r == "same_leaf") {
    const std::string cl = leaf_of(c), sl = leaf_of(s);
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
    if (sources_.fabric != nullptr && !cn.empty() && !sn.empty()) {
      const int hops = sources_.fabric->HopDistance(cn, sn);
      if (hops >= 0) return hops <= rule.hops;
    }
    // Without a path between them, the same leaf is the best we know.
    const std::string cl = leaf_of(c), sl = leaf_of(s);
    return eq(cl, sl) || eq(cl, LabelValue(s, "switch"));
  }
  return false;
}

Engine::Active* Engine::FindCause(const Playbook& symptom, const Candidate& c,
                                  int64_t first_seen, bool firing_only) {
  auto it = causes_of_.find(symptom.name);
  if (it == causes_of_.end()) return nullptr;
  for (const auto& [cause_pb, rule] : it->second) {
    const std::string prefix = cause_pb->name + '\0';
    for (auto& [key, a] : active_) {
      if (!key.starts_with(prefix)) continue;
      if (a.diagnosis.state() != v1::DIAGNOSIS_STATE_FIRING &&
          (firing_only || a.diagnosis.state() != v1::DIAGNOSIS_STATE_PENDING)) {
        continue;
      }
      if (first_seen < a.diagnosis.active_since_unix_nano() -
                           absl::ToInt64Nanoseconds(rule->lead)) {
        continue;  // the symptom was there well before the cause: not its effect
      }
      if (Related(*rule, a, c.labels)) return &a;
    }
  }
  return nullptr;
}

void Engine::Attach(Active& cause, const Playbook& symptom, const Candidate& c,
                    int64_t first_seen, int64_t now) {
  const std::string skey = symptom.name + '\0' + c.key;
  auto [it, inserted] = cause.symptoms.try_emplace(skey);
  Symptom& s = it->second;
  if (inserted) {
    if (cause.symptoms.size() > kMaxSymptoms) {
      cause.symptoms.erase(it);
      return;
    }
    s.playbook = symptom.name;
    s.first_seen = first_seen;
    cause.diagnosis.add_explains(absl::StrCat(symptom.name, " ", c.key));
  }
  s.labels = c.labels;
  s.value = c.value;
  s.last_seen = now;
  if (!c.evidence.empty()) {
    SeriesMeta meta = store_.Meta(c.evidence.front().series);
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
