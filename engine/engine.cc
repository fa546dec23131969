#include "engine/engine.h"

#include <chrono>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text.h"
#include "common/logging.h"

namespace railwatch {

std::string ExpandTemplate(const std::string& tmpl, const Labels& labels, double value) {
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    size_t close = open == std::string::npos ? open : tmpl.find("}}", open + 2);
    if (close == std::string::npos) {
      out.append(tmpl, pos, std::string::npos);
      break;
    }
    out.append(tmpl, pos, open - pos);
    std::string key(absl::StripAsciiWhitespace(tmpl.substr(open + 2, close - open - 2)));
    if (key == "value") {
      absl::StrAppend(&out, absl::StrFormat("%g", value));
    } else if (const std::string* v = FindLabel(labels, key)) {
      out += *v;
    } else {
      absl::StrAppend(&out, "<", key, "?>");
    }
    pos = close + 2;
  }
  return out;
}

Engine::Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
               const Clock& clock)
    : options_(options), playbooks_(std::move(playbooks)), store_(store), clock_(clock) {
  absl::flat_hash_set<std::string> names;
  for (const Playbook& pb : playbooks_) {
    if (!pb.enabled) continue;
    std::vector<std::string> metric_names;
    pb.condition->CollectMetricNames(metric_names);
    names.insert(metric_names.begin(), metric_names.end());
  }
  store_.Watch(names);
}

Engine::~Engine() { Stop(); }

void Engine::AddListener(DiagnosisListener* listener) {
  absl::MutexLock lock(&mu_);
  listeners_.push_back(listener);
}

void Engine::Start() { thread_ = std::thread([this] { Run(); }); }

void Engine::Stop() {
  {
    absl::MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Engine::Poke() {
  absl::MutexLock lock(&wake_mu_);
  poked_ = true;
}

void Engine::Run() {
  absl::Time next_tick = absl::Now();
  while (true) {
    {
      absl::MutexLock lock(&wake_mu_);
      auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(wake_mu_) { return poked_ || stopping_; };
      wake_mu_.AwaitWithDeadline(absl::Condition(&woken), next_tick);
      if (stopping_) return;
      poked_ = false;
    }
    EvaluateOnce();
    next_tick = absl::Now() + options_.interval;
    // Coalesce bursts of pokes (many agents reporting in the same instant).
    absl::SleepFor(options_.min_interval);
  }
}

void Engine::EvaluateOnce() {
  const auto started = std::chrono::steady_clock::now();
  const int64_t now = clock_.NowNanos();
  std::vector<std::pair<bool, v1::Diagnosis>> transitions;  // (firing?, diagnosis)
  std::vector<DiagnosisListener*> listeners;
  {
    absl::MutexLock lock(&mu_);
    for (const Playbook& pb : playbooks_) {
      if (pb.enabled) EvaluatePlaybook(pb, now, transitions);
    }
    ++stats_.evaluations;
    stats_.last_duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    listeners = listeners_;
  }
  // Listeners run outside the lock so that they may query the engine.
  for (const auto& [firing, d] : transitions) {
    for (DiagnosisListener* l : listeners) {
      if (firing) l->OnFiring(d);
      else l->OnResolved(d);
    }
  }
}

namespace {

Labels CulpritLabels(const Playbook& pb, const Labels& labels) {
  if (pb.culprit.empty()) return labels;
  Labels out;
  for (const std::string& name : pb.culprit) {
    if (const std::string* v = FindLabel(labels, name)) out.push_back({name, *v});
  }
  NormalizeLabels(out);
  return out;
}

std::string DiagnosisId(const std::string& playbook, const Labels& culprit, int64_t since) {
  uint64_t h = SeriesFingerprint(playbook, culprit) ^ static_cast<uint64_t>(since);
  h *= 0x9E3779B97F4A7C15ull;
  return absl::StrFormat("%012x", h >> 16);
}

}  // namespace

void Engine::FillEvidence(const VectorElement& element, int64_t now, v1::Diagnosis& d) const {
  d.clear_evidence();
  for (const EvidenceRef& ref : element.evidence) {
    SeriesMeta meta = store_.Meta(ref.series);
    v1::Evidence* e = d.add_evidence();
    e->set_series(FormatSeries(meta.name, meta.labels));
    e->set_name(meta.name);
    for (const Label& l : meta.labels) {
      v1::Label* pl = e->add_labels();
      pl->set_name(l.name);
      pl->set_value(l.value);
    }
    e->set_value(ref.value);
    if (ref.function.empty()) {
      e->set_summary(absl::StrFormat("value = %g", ref.value));
    } else {
      e->set_summary(absl::StrFormat("%s over %s = %g", ref.function,
                                     HumanDuration(ref.window), ref.value));
    }
    const int64_t from = ref.window > absl::ZeroDuration()
                             ? now - absl::ToInt64Nanoseconds(ref.window)
                             : now - absl::ToInt64Nanoseconds(absl::Minutes(1));
    // Keep the samples where the value changed (and the first and last): the readings that
    // show what happened, without a row per second of a quiet counter.
    std::vector<Sample> samples = store_.Range(ref.series, from, now);
    for (size_t i = 0; i < samples.size(); ++i) {
      bool keep = i == 0 || i + 1 == samples.size() || samples[i].value != samples[i - 1].value;
      if (!keep) continue;
      v1::EvidencePoint* p = e->add_points();
      p->set_time_unix_nano(samples[i].time_unix_nano);
      p->set_value(samples[i].value);
    }
  }
}

void Engine::EvaluatePlaybook(const Playbook& pb, int64_t now,
                              std::vector<std::pair<bool, v1::Diagnosis>>& transitions) {
  const std::string prefix = pb.name + '\0';
  absl::flat_hash_set<std::string> seen;
  for (const VectorElement& element : pb.condition->Evaluate(store_, now)) {
    Labels culprit = CulpritLabels(pb, element.labels);
    std::string key = prefix + FormatLabels(culprit);
    if (!seen.insert(key).second) continue;  // several series for one culprit: first wins
    auto [it, inserted] = active_.try_emplace(key);
    Active& a = it->second;
    v1::Diagnosis& d = a.diagnosis;
    if (inserted) {
      d.set_id(DiagnosisId(pb.name, culprit, now));
      d.set_playbook(pb.name);
      d.set_severity(pb.severity);
      d.set_state(v1::DIAGNOSIS_STATE_PENDING);
      d.set_runbook(pb.runbook);
      d.set_description(pb.desc);
      for (const std::string& t : pb.tags) d.add_tags(t);
      for (const Label& l : culprit) {
        v1::Label* pl = d.add_culprit();
        pl->set_name(l.name);
        pl->set_value(l.value);
      }
      d.set_active_since_unix_nano(now);
    }
    a.last_true = now;
    d.set_last_evaluated_unix_nano(now);
    d.set_summary(pb.summary.empty()
                      ? absl::StrCat(pb.name, " on ", FormatLabels(culprit))
                      : ExpandTemplate(pb.summary, element.labels, element.value));
    FillEvidence(element, now, d);
    if (d.state() == v1::DIAGNOSIS_STATE_PENDING &&
        now - d.active_since_unix_nano() >= absl::ToInt64Nanoseconds(pb.for_duration)) {
      d.set_state(v1::DIAGNOSIS_STATE_FIRING);
      d.set_fired_at_unix_nano(now);
      transitions.emplace_back(true, d);
    }
  }
  // Results that no longer hold.
  for (auto it = active_.begin(); it != active_.end();) {
    auto cur = it++;
    if (!cur->first.starts_with(prefix) || seen.contains(cur->first)) continue;
    Active& a = cur->second;
    v1::Diagnosis& d = a.diagnosis;
    d.set_last_evaluated_unix_nano(now);
    if (d.state() == v1::DIAGNOSIS_STATE_FIRING &&
        now - a.last_true < absl::ToInt64Nanoseconds(pb.keep_firing_for)) {
      continue;
    }
    if (d.state() == v1::DIAGNOSIS_STATE_FIRING) {
      d.set_state(v1::DIAGNOSIS_STATE_RESOLVED);
      d.set_resolved_at_unix_nano(now);
      transitions.emplace_back(false, d);
      resolved_.push_front(std::move(d));
      if (resolved_.size() > options_.history) resolved_.pop_back();
    }
    active_.erase(cur);
  }
}

std::vector<v1::Diagnosis> Engine::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Diagnosis> out;
  out.reserve(active_.size() + resolved_.size());
  for (const auto& [key, a] : active_) out.push_back(a.diagnosis);
  std::sort(out.begin(), out.end(), [](const v1::Diagnosis& a, const v1::Diagnosis& b) {
    return a.active_since_unix_nano() > b.active_since_unix_nano();
  });
  out.insert(out.end(), resolved_.begin(), resolved_.end());
  return out;
}

std::optional<v1::Diagnosis> Engine::Get(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [key, a] : active_) {
    if (a.diagnosis.id() == id) return a.diagnosis;
  }
  for (const v1::Diagnosis& d : resolved_) {
    if (d.id() == id) return d;
  }
  return std::nullopt;
}

Engine::Stats Engine::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace railwatch
