#include "engine/enricher.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "common/text.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

// `first`, plus the labels of `more` that `first` does not have.
Labels FillMissing(const Labels& first, const Labels& more) {
  Labels out = first;
  for (const Label& l : more) {
    if (FindLabel(first, l.name) == nullptr) out.push_back(l);
  }
  return out;
}

}  // namespace

Enricher::Enricher(const std::vector<const Playbook*>& playbooks, const SeriesStore& store,
                   const FabricMap* fabric, double gpu_hour_cost)
    : store_(store), fabric_(fabric), gpu_hour_cost_(gpu_hour_cost) {
  for (const Playbook* pb : playbooks) {
    if (pb->runbook.empty() || absl::StrContains(pb->runbook, "://")) continue;
    absl::StatusOr<std::string> text = ReadFile(pb->runbook);
    if (text.ok()) {
      runbooks_[pb->name] = {*text, RunbookCommands(*text)};
    } else {
      spdlog::warn("playbook {}: cannot read runbook {}: {}", pb->name, pb->runbook,
                   text.status().message());
    }
  }
}

std::string Enricher::AlertId(const std::string& playbook, const std::string& key,
                              int64_t since) {
  uint64_t h = SeriesFingerprint(playbook, {{"key", key}}) ^ static_cast<uint64_t>(since);
  h *= 0x9E3779B97F4A7C15ull;
  return absl::StrFormat("%012x", h >> 16);
}

void Enricher::Start(const Playbook& pb, const Candidate& c, int64_t now, AlertRecord& a) const {
  a.id = AlertId(pb.name, c.key, now);
  a.playbook = pb.name;
  a.key = c.key;
  a.labels = c.labels;
  a.severity = pb.severity;
  a.state = AlertState::kPending;
  a.runbook = pb.runbook;
  a.description = pb.desc;
  a.source = pb.source;
  a.tags = pb.tags;
  a.culprit = CulpritLabels(pb, c.labels);
  a.active_since = now;
  a.location = DescribeLocation(c.labels);
  auto it = runbooks_.find(pb.name);
  if (it == runbooks_.end()) return;
  // Placeholders a culprit does not have read "<name>" in a runbook: a blank to fill in.
  auto expand = [&](const std::string& tmpl) {
    std::string s = ExpandTemplate(tmpl, c.labels, c.value);
    size_t pos = 0;
    while ((pos = s.find("?>", pos)) != std::string::npos) s.erase(pos, 1);
    return s;
  };
  a.runbook_text = expand(it->second.text);
  a.commands.clear();
  // A command wholly in a [[section]] whose label the culprit lacks expands to nothing: it is
  // not this incident's (an InfiniBand switch port's command on a RoCE NIC's link).
  for (const std::string& cmd : it->second.commands) {
    std::string e = expand(cmd);
    if (!absl::StripAsciiWhitespace(e).empty()) a.commands.push_back(std::move(e));
  }
}

void Enricher::Refresh(const Playbook& pb, const Candidate& c, int64_t now, AlertRecord& a) const {
  a.last_true = now;
  if (std::fabs(c.value) > std::fabs(a.peak)) a.peak = c.value;
  a.last_evaluated = now;
  // One incident may be seen from either end (a link's host and switch sides): the words
  // stay those of the labels it was first seen with, filled in from this tick's where those
  // lack a label, so a summary does not turn into "<host?>" when only the switch side
  // matches.
  a.words = FillMissing(a.labels, c.labels);
  a.last_value = c.value;
  a.summary = Summary(pb, a, /*quiet_since=*/0);
  FillBlastRadius(pb, a);
  FillEvidence(c, now, a);
}

void Enricher::Quiet(const Playbook& pb, AlertRecord& a) const {
  if (a.last_true > 0) a.summary = Summary(pb, a, a.last_true);
}

std::string Enricher::Summary(const Playbook& pb, const AlertRecord& a, int64_t quiet_since) {
  const TemplateValues values{.value = a.last_value, .peak = a.peak,
                              .quiet_since_unix_nano = quiet_since};
  std::string s = pb.summary.empty() ? absl::StrCat(pb.name, " on ", DescribeLocation(a.words))
                                     : ExpandTemplate(pb.summary, a.words, values);
  if (quiet_since == 0) return s;
  if (!pb.summary_quiet.empty()) return ExpandTemplate(pb.summary_quiet, a.words, values);
  return absl::StrCat(s, "; quiet since ", ExpandTemplate("{{quiet_since}}", {}, values));
}

void Enricher::FillBlastRadius(const Playbook& pb, AlertRecord& a) const {
  if (fabric_ == nullptr) return;
  // The map changed since the diagnosis fired (a cable moved, discovery, docs/TOPOLOGY.md):
  // it keeps the blast radius of the map it fired on. Jobs learnt meanwhile still count.
  const uint64_t generation = fabric_->generation();
  if (a.has_blast && a.fabric_generation != generation) return;
  a.has_blast = true;
  a.fabric_generation = generation;
  a.blast = fabric_->Blast(a.labels, pb.blast_radius);
  a.cost_per_minute = a.blast.gpus * gpu_hour_cost_ / 60.0;
}

void Enricher::FillEvidence(const Candidate& c, int64_t now, AlertRecord& a) const {
  a.evidence.clear();
  for (const EvidenceRef& ref : c.evidence) {
    SeriesMeta meta = store_.Meta(ref.series);
    AlertEvidence& e = a.evidence.emplace_back();
    e.kind = AlertEvidence::Kind::kSeries;
    e.series = FormatSeries(meta.name, meta.labels);
    e.name = meta.name;
    e.labels = meta.labels;
    e.value = ref.value;
    if (ref.function.empty()) {
      e.summary = absl::StrCat("value = ", FormatTemplateNumber(ref.value, ""));
    } else {
      e.summary = absl::StrCat(ref.function, " over ", HumanDuration(ref.window), " = ",
                               FormatTemplateNumber(ref.value, ""));
    }
    const int64_t from = ref.window > absl::ZeroDuration()
                             ? now - absl::ToInt64Nanoseconds(ref.window)
                             : now - absl::ToInt64Nanoseconds(absl::Minutes(1));
    e.time_unix_nano = from;
    // Keep the samples where the value changed (and the first and last): the readings that
    // show what happened, without a row per second of a quiet counter.
    std::vector<Sample> samples = store_.Range(ref.series, from, now);
    for (size_t i = 0; i < samples.size(); ++i) {
      bool keep = i == 0 || i + 1 == samples.size() || samples[i].value != samples[i - 1].value;
      if (keep) e.points.push_back(samples[i]);
    }
  }
  for (const EventEvidence& ev : c.events) {
    AlertEvidence& e = a.evidence.emplace_back();
    e.kind = AlertEvidence::Kind::kEvent;
    e.series = FormatSeries(ev.kind, ev.labels);
    e.name = ev.kind;
    e.labels = ev.labels;
    e.time_unix_nano = ev.time_unix_nano;
    e.raw = ev.raw;
    e.value = 1;
    e.summary = absl::StrCat(ev.kind, " at ",
                             absl::FormatTime(absl::FromUnixNanos(ev.time_unix_nano)));
  }
}

}  // namespace railwatch
