#include "engine/alert_proto.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

// A diagnosis shows this many of the symptoms folded into it (the oldest first).
constexpr size_t kMaxSymptomEvidence = 32;

void AddProtoLabels(const Labels& labels, google::protobuf::RepeatedPtrField<v1::Label>* out) {
  for (const Label& l : labels) {
    v1::Label* pl = out->Add();
    pl->set_name(l.name);
    pl->set_value(l.value);
  }
}

Labels LabelsOf(const google::protobuf::RepeatedPtrField<v1::Label>& labels) {
  Labels out;
  for (const v1::Label& l : labels) out.push_back({l.name(), l.value()});
  return out;
}

v1::DiagnosisState ProtoState(AlertState s) {
  switch (s) {
    case AlertState::kPending:
      return v1::DIAGNOSIS_STATE_PENDING;
    case AlertState::kFiring:
      return v1::DIAGNOSIS_STATE_FIRING;
    case AlertState::kResolved:
      return v1::DIAGNOSIS_STATE_RESOLVED;
  }
  return v1::DIAGNOSIS_STATE_UNSPECIFIED;
}

const char* KindName(AlertEvidence::Kind k) {
  switch (k) {
    case AlertEvidence::Kind::kSeries:
      return "series";
    case AlertEvidence::Kind::kEvent:
      return "event";
    case AlertEvidence::Kind::kSymptom:
      return "symptom";
  }
  return "";
}

void AddEvidence(const AlertEvidence& from, bool points, v1::Diagnosis& d) {
  v1::Evidence* e = d.add_evidence();
  e->set_kind(KindName(from.kind));
  e->set_series(from.series);
  e->set_name(from.name);
  if (!from.playbook.empty()) e->set_playbook(from.playbook);
  AddProtoLabels(from.labels, e->mutable_labels());
  e->set_value(from.value);
  e->set_summary(from.summary);
  e->set_time_unix_nano(from.time_unix_nano);
  e->set_raw(from.raw);
  if (!points) return;
  for (const Sample& s : from.points) {
    v1::EvidencePoint* p = e->add_points();
    p->set_time_unix_nano(s.time_unix_nano);
    p->set_value(s.value);
  }
}

AlertEvidence SymptomEvidence(const Symptom& s) {
  AlertEvidence e;
  e.kind = AlertEvidence::Kind::kSymptom;
  e.playbook = s.playbook;
  e.series = s.series;
  e.labels = s.labels;
  e.value = s.value;
  e.time_unix_nano = s.first_seen;
  e.raw = s.raw;
  e.summary = absl::StrCat(s.playbook, " explained by this diagnosis: ", DescribeLocation(s.labels),
                           " (value ", FormatTemplateNumber(s.value, ""), ")");
  return e;
}

}  // namespace

v1::Diagnosis ToDiagnosis(const AlertRecord& a, bool points) {
  v1::Diagnosis d;
  d.set_id(a.id);
  d.set_playbook(a.playbook);
  d.set_severity(static_cast<v1::Severity>(a.severity));
  d.set_state(ProtoState(a.state));
  d.set_summary(a.summary);
  d.set_description(a.description);
  AddProtoLabels(a.culprit, d.mutable_culprit());
  for (const AlertEvidence& e : a.evidence) AddEvidence(e, points, d);
  std::vector<const Symptom*> symptoms;
  for (const auto& [key, s] : a.symptoms) symptoms.push_back(&s);
  std::sort(symptoms.begin(), symptoms.end(), [](const Symptom* x, const Symptom* y) {
    return x->first_seen != y->first_seen ? x->first_seen < y->first_seen : x->series < y->series;
  });
  if (symptoms.size() > kMaxSymptomEvidence) symptoms.resize(kMaxSymptomEvidence);
  for (const Symptom* s : symptoms) AddEvidence(SymptomEvidence(*s), points, d);
  d.set_runbook(a.runbook);
  for (const std::string& t : a.tags) d.add_tags(t);
  d.set_active_since_unix_nano(a.active_since);
  d.set_fired_at_unix_nano(a.fired_at);
  d.set_resolved_at_unix_nano(a.resolved_at);
  d.set_last_evaluated_unix_nano(a.last_evaluated);
  if (a.has_blast) {
    v1::BlastRadius* b = d.mutable_blast_radius();
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
    b->set_cost_per_minute(a.cost_per_minute);
  }
  d.set_runbook_text(a.runbook_text);
  for (const std::string& c : a.commands) d.add_commands(c);
  d.set_location(a.location);
  for (const std::string& e : a.explains) d.add_explains(e);
  d.set_explained_by(a.explained_by);
  d.set_source(a.source);
  d.set_previous_incidents(a.previous_incidents);
  return d;
}

AlertRecord AlertFromDiagnosis(const v1::Diagnosis& d) {
  AlertRecord a;
  a.id = d.id();
  a.playbook = d.playbook();
  a.severity = d.severity();
  switch (d.state()) {
    case v1::DIAGNOSIS_STATE_FIRING:
      a.state = AlertState::kFiring;
      break;
    case v1::DIAGNOSIS_STATE_RESOLVED:
      a.state = AlertState::kResolved;
      break;
    default:
      a.state = AlertState::kPending;
      break;
  }
  a.summary = d.summary();
  a.description = d.description();
  a.culprit = LabelsOf(d.culprit());
  for (const v1::Evidence& pe : d.evidence()) {
    // Symptoms are the alert's own (AlertRecord::symptoms): ToDiagnosis lists them again.
    if (pe.kind() == "symptom") continue;
    AlertEvidence& e = a.evidence.emplace_back();
    e.kind = pe.kind() == "event" ? AlertEvidence::Kind::kEvent : AlertEvidence::Kind::kSeries;
    e.series = pe.series();
    e.name = pe.name();
    e.labels = LabelsOf(pe.labels());
    e.summary = pe.summary();
    e.value = pe.value();
    e.time_unix_nano = pe.time_unix_nano();
    e.raw = pe.raw();
    e.playbook = pe.playbook();
    for (const v1::EvidencePoint& p : pe.points()) {
      e.points.push_back({p.time_unix_nano(), p.value()});
    }
  }
  a.runbook = d.runbook();
  a.tags.assign(d.tags().begin(), d.tags().end());
  a.active_since = d.active_since_unix_nano();
  a.fired_at = d.fired_at_unix_nano();
  a.resolved_at = d.resolved_at_unix_nano();
  a.last_evaluated = d.last_evaluated_unix_nano();
  if (d.has_blast_radius()) {
    const v1::BlastRadius& b = d.blast_radius();
    a.has_blast = true;
    a.blast.scope = b.scope();
    a.blast.hosts.assign(b.hosts().begin(), b.hosts().end());
    for (const v1::JobImpact& pj : b.jobs()) {
      a.blast.jobs.push_back({pj.job(),
                              pj.gpus(),
                              pj.ranks(),
                              {pj.hosts().begin(), pj.hosts().end()},
                              {pj.job_hosts().begin(), pj.job_hosts().end()}});
    }
    a.blast.gpus = b.gpus();
    a.cost_per_minute = b.cost_per_minute();
  }
  a.runbook_text = d.runbook_text();
  a.commands.assign(d.commands().begin(), d.commands().end());
  a.location = d.location();
  a.explains.assign(d.explains().begin(), d.explains().end());
  a.explained_by = d.explained_by();
  a.source = d.source();
  a.previous_incidents = d.previous_incidents();
  return a;
}

}  // namespace railwatch
