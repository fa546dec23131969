#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {

namespace {

// Caps that keep one diagnosis readable (and bounded) however much a storm spreads.
constexpr size_t kMaxSeriesEvidence = 16;
constexpr size_t kMaxEventEvidence = 8;
constexpr size_t kMaxSymptomEvidence = 32;

void AddLabel(google::protobuf::RepeatedPtrField<v1::Label>* out, const Label& l) {
  v1::Label* pl = out->Add();
  pl->set_name(l.name);
  pl->set_value(l.value);
}

}  // namespace

Engine::Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
               const Clock& clock)
    : Engine(options, std::move(playbooks), store, clock, Sources{}) {}

Engine::Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
               const Clock& clock, Sources sources)
    : options_(options),
      playbooks_(std::move(playbooks)),
      store_(store),
      clock_(clock),
      sources_(sources) {
  absl::flat_hash_set<std::string> names, kinds;
  absl::flat_hash_map<std::string, const Playbook*> by_name;
  for (const Playbook& pb : playbooks_) {
    if (!pb.enabled || pb.condition == nullptr) continue;
    by_name[pb.name] = &pb;
    std::vector<std::string> metric_names, event_kinds;
    pb.condition->CollectMetricNames(metric_names);
    pb.condition->CollectEventKinds(event_kinds);
    names.insert(metric_names.begin(), metric_names.end());
    kinds.insert(event_kinds.begin(), event_kinds.end());
    if (!pb.runbook.empty() && !absl::StrContains(pb.runbook, "://")) {
      absl::StatusOr<std::string> text = ReadFile(pb.runbook);
      if (text.ok()) {
        runbooks_[pb.name] = {*text, RunbookCommands(*text)};
      } else {
        spdlog::warn("playbook {}: cannot read runbook {}: {}", pb.name, pb.runbook,
                     text.status().message());
      }
    }
  }
  store_.Watch(names);
  if (sources_.events != nullptr) sources_.events->Watch(kinds);

  for (const auto& [name, pb] : by_name) {
    for (const ExplainRule& rule : pb->explains) {
      for (const std::string& symptom : rule.playbooks) {
        if (by_name.contains(symptom)) causes_of_[symptom].push_back({pb, &rule});
      }
    }
  }
  // Causes before the symptoms they explain (depth-first; a cycle keeps file order).
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
  for (const Playbook& pb : playbooks_) {
    if (by_name.contains(pb.name) && by_name[pb.name] == &pb) place(&pb);
  }

  int threads = options_.threads;
  if (threads <= 0) {
    threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
  }
  pool_ = std::make_unique<WorkerPool>(std::min<int>(threads, std::max<size_t>(order_.size(), 1)));
  schedule_.resize(order_.size());
  for (size_t i = 0; i < order_.size(); ++i) schedule_[i] = i;
  cost_seconds_.assign(order_.size(), 0);
}


namespace {

// `first`, plus the labels of `more` that `first` does not have.
Labels FillMissing(const Labels& first, const Labels& more) {
  Labels out = first;
  for (const Label& l : more) {
    if (FindLabel(first, l.name) == nullptr) out.push_back(l);
  }
  return out;
}

Labels CulpritLabels(const Playbook& pb, const Labels& labels) {
  if (pb.culprit.empty()) return labels;
  Labels out;
  for (const std::string& name : pb.culprit) {
    if (const std::string* v = FindLabel(labels, name)) out.push_back({name, *v});
  }
  NormalizeLabels(out);
  return out;
}

// group_by when the result has all of those labels, else the culprit labels.
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

std::string DiagnosisId(const std::string& playbook, const std::string& key, int64_t since) {
  uint64_t h = SeriesFingerprint(playbook, {{"key", key}}) ^ static_cast<uint64_t>(since);
  h *= 0x9E3779B97F4A7C15ull;
  return absl::StrFormat("%012x", h >> 16);
}

template <typename T>
void AppendCapped(std::vector<T>& to, const std::vector<T>& from, size_t cap) {
  for (const T& x : from) {
    if (to.size() >= cap) return;
    to.push_back(x);
  }
}

}  // namespace

std::vector<Engine::Candidate> Engine::Candidates(const Playbook& pb, int64_t now) const {
  EvalContext ctx{store_, sources_.events, sources_.fabric, now};
  std::vector<Candidate> out;
  absl::flat_hash_map<std::string, size_t> index;
  for (VectorElement& element : pb.condition->Evaluate(ctx)) {
    Labels labels = std::move(element.labels);
    if (sources_.fabric != nullptr) sources_.fabric->Enrich(labels);
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


void Engine::FillEvidence(const Candidate& c, const Active& a, int64_t now,
                          v1::Diagnosis& d) const {
  d.clear_evidence();
  for (const EvidenceRef& ref : c.evidence) {
    SeriesMeta meta = store_.Meta(ref.series);
    v1::Evidence* e = d.add_evidence();
    e->set_kind("series");
    e->set_series(FormatSeries(meta.name, meta.labels));
    e->set_name(meta.name);
    for (const Label& l : meta.labels) AddLabel(e->mutable_labels(), l);
    e->set_value(ref.value);
    if (ref.function.empty()) {
      e->set_summary(absl::StrCat("value = ", FormatTemplateNumber(ref.value, "")));
    } else {
      e->set_summary(absl::StrCat(ref.function, " over ", HumanDuration(ref.window), " = ",
                                  FormatTemplateNumber(ref.value, "")));
    }
    const int64_t from = ref.window > absl::ZeroDuration()
                             ? now - absl::ToInt64Nanoseconds(ref.window)
                             : now - absl::ToInt64Nanoseconds(absl::Minutes(1));
    e->set_time_unix_nano(from);
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
  for (const EventEvidence& ev : c.events) {
    v1::Evidence* e = d.add_evidence();
    e->set_kind("event");
    e->set_series(FormatSeries(ev.kind, ev.labels));
    e->set_name(ev.kind);
    for (const Label& l : ev.labels) AddLabel(e->mutable_labels(), l);
    e->set_time_unix_nano(ev.time_unix_nano);
    e->set_raw(ev.raw);
    e->set_value(1);
    e->set_summary(absl::StrCat(ev.kind, " at ", absl::FormatTime(absl::FromUnixNanos(
                                                      ev.time_unix_nano))));
  }
  // Symptoms: the newest first, capped.
  std::vector<const Symptom*> symptoms;
  for (const auto& [key, s] : a.symptoms) symptoms.push_back(&s);
  std::sort(symptoms.begin(), symptoms.end(), [](const Symptom* x, const Symptom* y) {
    return x->first_seen != y->first_seen ? x->first_seen < y->first_seen
                                          : x->series < y->series;
  });
  size_t shown = 0;
  for (const Symptom* s : symptoms) {
    if (++shown > kMaxSymptomEvidence) break;
    v1::Evidence* e = d.add_evidence();
    e->set_kind("symptom");
    e->set_playbook(s->playbook);
    e->set_series(s->series);
    for (const Label& l : s->labels) AddLabel(e->mutable_labels(), l);
    e->set_value(s->value);
    e->set_time_unix_nano(s->first_seen);
    e->set_raw(s->raw);
    e->set_summary(absl::StrCat(s->playbook, " explained by this diagnosis: ",
                                DescribeLocation(s->labels), " (value ",
                                FormatTemplateNumber(s->value, ""), ")"));
  }
}

void Engine::FillBlastRadius(Active& a) const {
  if (sources_.fabric == nullptr) return;
  a.blast = sources_.fabric->Blast(a.labels, a.playbook->blast_radius);
  v1::BlastRadius* b = a.diagnosis.mutable_blast_radius();
  b->Clear();
  b->set_scope(a.blast.scope);
  for (const std::string& h : a.blast.hosts) b->add_hosts(h);
  for (const JobImpact& j : a.blast.jobs) {
    v1::JobImpact* pj = b->add_jobs();
    pj->set_job(j.job);
    pj->set_gpus(j.gpus);
    pj->set_ranks(j.ranks);
    for (const std::string& h : j.hosts) pj->add_hosts(h);
    for (const std::string& h : j.job_hosts) pj->add_job_hosts(h);
  }
  b->set_gpus(a.blast.gpus);
  b->set_cost_per_minute(a.blast.gpus * options_.gpu_hour_cost / 60.0);
}

void Engine::FillRunbook(const Playbook& pb, const Labels& labels, double value,
                         v1::Diagnosis& d) const {
  auto it = runbooks_.find(pb.name);
  if (it == runbooks_.end()) return;
  // Placeholders a culprit does not have read "<name>" in a runbook: a blank to fill in.
  auto expand = [&](const std::string& tmpl) {
    std::string s = ExpandTemplate(tmpl, labels, value);
    size_t pos = 0;
    while ((pos = s.find("?>", pos)) != std::string::npos) s.erase(pos, 1);
    return s;
  };
  d.set_runbook_text(expand(it->second.text));
  d.clear_commands();
  for (const std::string& c : it->second.commands) d.add_commands(expand(c));
}

void Engine::Resolve(const std::string& full_key, int64_t now, const std::string& explained_by,
                     std::vector<std::pair<Transition, v1::Diagnosis>>& transitions) {
  auto it = active_.find(full_key);
  if (it == active_.end()) return;
  v1::Diagnosis& d = it->second.diagnosis;
  if (d.state() == v1::DIAGNOSIS_STATE_FIRING) {
    d.set_state(v1::DIAGNOSIS_STATE_RESOLVED);
    d.set_resolved_at_unix_nano(now);
    d.set_last_evaluated_unix_nano(now);
    if (!explained_by.empty()) d.set_explained_by(explained_by);
    transitions.emplace_back(Transition::kResolved, d);
    std::deque<int64_t>& times = incidents_[full_key];
    times.push_back(now);
    if (times.size() > kMaxIncidentTimes) times.pop_front();
    resolved_.push_front(std::move(d));
    if (resolved_.size() > options_.history) resolved_.pop_back();
  } else {
    d.set_last_evaluated_unix_nano(now);
    transitions.emplace_back(Transition::kPendingCleared, std::move(d));
  }
  active_.erase(it);
}

std::string Engine::Summary(const Playbook& pb, const Active& a, int64_t quiet_since) {
  const TemplateValues values{.value = a.last_value, .peak = a.peak,
                              .quiet_since_unix_nano = quiet_since};
  std::string s = pb.summary.empty() ? absl::StrCat(pb.name, " on ", DescribeLocation(a.words))
                                     : ExpandTemplate(pb.summary, a.words, values);
  if (quiet_since == 0) return s;
  if (!pb.summary_quiet.empty()) return ExpandTemplate(pb.summary_quiet, a.words, values);
  return absl::StrCat(s, "; quiet since ", ExpandTemplate("{{quiet_since}}", {}, values));
}

void Engine::EvaluatePlaybook(const Playbook& pb, int64_t now,
                              std::vector<Candidate> candidates,
                              std::vector<std::pair<Transition, v1::Diagnosis>>& transitions) {
  const std::string prefix = pb.name + '\0';
  absl::flat_hash_set<std::string> seen;
  for (Candidate& c : candidates) {
    std::string full_key = prefix + c.key;
    auto existing = active_.find(full_key);
    if (c.unknown) {
      // A window that does not hold its data yet: no new diagnosis, and an active one is
      // neither resolved nor refreshed.
      if (existing != active_.end()) seen.insert(full_key);
      ++stats_.unknown_results;
      continue;
    }
    seen.insert(full_key);
    const int64_t first_seen =
        existing == active_.end() ? now : existing->second.diagnosis.active_since_unix_nano();
    // A pending cause holds back a symptom that has not paged yet; a symptom that has paged
    // is taken back only by a cause that fires, else a cause that never gets past pending
    // would resolve it and let it page again each time the cause's condition blinks.
    const bool paged = existing != active_.end() &&
                       existing->second.diagnosis.state() == v1::DIAGNOSIS_STATE_FIRING;
    if (Active* cause = FindCause(pb, c, first_seen, /*firing_only=*/paged)) {
      // A symptom of an active root cause: evidence there, no diagnosis here.
      Attach(*cause, pb, c, first_seen, now);
      if (existing != active_.end()) Resolve(full_key, now, cause->diagnosis.id(), transitions);
      continue;
    }
    auto [it, inserted] = active_.try_emplace(full_key);
    Active& a = it->second;
    v1::Diagnosis& d = a.diagnosis;
    if (inserted) {
      a.playbook = &pb;
      a.key = c.key;
      a.labels = c.labels;
      d.set_id(DiagnosisId(pb.name, c.key, now));
      d.set_playbook(pb.name);
      d.set_severity(pb.severity);
      d.set_state(v1::DIAGNOSIS_STATE_PENDING);
      d.set_runbook(pb.runbook);
      d.set_description(pb.desc);
      d.set_source(pb.source);
      for (const std::string& t : pb.tags) d.add_tags(t);
      for (const Label& l : CulpritLabels(pb, c.labels)) AddLabel(d.mutable_culprit(), l);
      d.set_active_since_unix_nano(now);
      d.set_location(DescribeLocation(c.labels));
      FillRunbook(pb, c.labels, c.value, d);
      if (auto inc = incidents_.find(full_key); inc != incidents_.end()) {
        const int64_t since = now - absl::ToInt64Nanoseconds(options_.repeat_window);
        uint32_t n = 0;
        for (int64_t t : inc->second) n += t >= since ? 1 : 0;
        d.set_previous_incidents(n);
      }
    }
    a.last_true = now;
    if (std::fabs(c.value) > std::fabs(a.peak)) a.peak = c.value;
    d.set_last_evaluated_unix_nano(now);
    // One incident may be seen from either end (a link's host and switch sides): the words
    // stay those of the labels it was first seen with, filled in from this tick's where those
    // lack a label, so a summary does not turn into "<host?>" when only the switch side
    // matches.
    a.words = FillMissing(a.labels, c.labels);
    a.last_value = c.value;
    d.set_summary(Summary(pb, a, /*quiet_since=*/0));
    FillBlastRadius(a);
    FillEvidence(c, a, now, d);
    if (d.state() == v1::DIAGNOSIS_STATE_PENDING &&
        now - d.active_since_unix_nano() >= absl::ToInt64Nanoseconds(pb.for_duration)) {
      d.set_state(v1::DIAGNOSIS_STATE_FIRING);
      d.set_fired_at_unix_nano(now);
      transitions.emplace_back(Transition::kFiring, d);
    } else if (inserted) {
      transitions.emplace_back(Transition::kPending, d);
    }
  }
  // Results that no longer hold.
  std::vector<std::string> gone;
  for (auto& [key, a] : active_) {
    if (!key.starts_with(prefix) || seen.contains(key)) continue;
    v1::Diagnosis& d = a.diagnosis;
    d.set_last_evaluated_unix_nano(now);
    // Restored at start-up: the agents may not be back yet, nor the condition's windows full.
    if (now < a.hold_until) continue;
    if (d.state() == v1::DIAGNOSIS_STATE_FIRING &&
        now - a.last_true < absl::ToInt64Nanoseconds(pb.keep_firing_for)) {
      // Kept firing after the condition stopped holding: say what happened, not what is.
      if (a.last_true > 0) d.set_summary(Summary(pb, a, a.last_true));
      continue;
    }
    gone.push_back(key);
  }
  // In key order, not the map's: listeners see the same sequence from one run to the next.
  std::sort(gone.begin(), gone.end());
  for (const std::string& key : gone) Resolve(key, now, "", transitions);
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
