#include "daemon/alert_format.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "common/text.h"
#include "engine/diagnosis_text.h"
#include "nlohmann/json.hpp"
#include "topology/fabric_map.h"

namespace railwatch {
namespace {

Labels CulpritOf(const v1::Diagnosis& d) {
  Labels out;
  out.reserve(d.culprit_size());
  for (const v1::Label& l : d.culprit()) out.push_back({l.name(), l.value()});
  NormalizeLabels(out);
  return out;
}

void AddIfSet(Labels& to, std::string name, std::string value) {
  if (!value.empty()) to.push_back({std::move(name), std::move(value)});
}

// The longest prefix of `s` of at most `max` bytes that does not end inside a UTF-8 character.
std::string_view Utf8Prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string RunbookUrl(const std::string& runbook, const std::string& base) {
  if (base.empty() || runbook.empty()) return runbook;
  size_t slash = runbook.find_last_of('/');
  std::string_view file =
      slash == std::string::npos ? std::string_view(runbook) : std::string_view(runbook).substr(slash + 1);
  return absl::StrCat(absl::StripSuffix(base, "/"), "/", AsAbsl(file));
}

}  // namespace

Labels AlertLabels(const v1::Diagnosis& d, const FabricMap* fabric,
                   const AlertFormatOptions& options) {
  const Labels culprit = CulpritOf(d);
  Labels where = culprit;
  if (fabric != nullptr) fabric->Enrich(where);  // adds rail, leaf, job ...; never overwrites

  Labels labels;
  labels.push_back({"alertname", d.playbook()});
  labels.push_back({"playbook", d.playbook()});
  labels.push_back({"severity", SeverityName(d.severity())});
  std::vector<std::string> parts;
  parts.reserve(culprit.size());
  for (const Label& l : culprit) parts.push_back(absl::StrCat(l.name, "=", l.value));
  AddIfSet(labels, "culprit", absl::StrJoin(parts, " "));
  for (const char* name : {"host", "device", "interface", "rail"}) {
    AddIfSet(labels, name, LabelValue(where, name));
  }
  // `job` is the scrape job on every alert Prometheus sends to the same Alertmanager; the
  // training job is `training_job`, as on /metrics.
  AddIfSet(labels, "training_job", LabelValue(where, "job"));
  std::string sw = LabelValue(where, "switch");
  if (sw.empty() && !LabelValue(where, "host").empty()) sw = LabelValue(where, "leaf");
  AddIfSet(labels, "switch", std::move(sw));
  AddIfSet(labels, "cluster", options.cluster);
  NormalizeLabels(labels);
  return labels;
}

std::string DescribeEvidence(const v1::Diagnosis& d, size_t max_bytes) {
  std::vector<std::string> lines;
  if (!d.description().empty()) {
    lines.push_back(std::string(absl::StripTrailingAsciiWhitespace(d.description())));
  }
  if (d.evidence_size() > 0) lines.push_back("Evidence:");
  for (const v1::Evidence& e : d.evidence()) {
    if (e.kind() == "symptom") {
      lines.push_back(absl::StrCat("- symptom: ", e.summary()));
    } else {
      lines.push_back(absl::StrCat("- ", e.series(), ": ", e.summary()));
    }
    if (!e.raw().empty()) lines.push_back(absl::StrCat("  log: ", e.raw()));
  }

  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t sep = out.empty() ? 0 : 1;
    if (out.size() + sep + lines[i].size() <= max_bytes) {
      if (sep) out += '\n';
      out += lines[i];
      continue;
    }
    // Out of room: as much of this line as fits beside a note that says what was left out.
    const std::string note =
        absl::StrCat("\n[", lines.size() - i, " more line(s): railwatch explain ", d.id(), "]");
    if (note.size() >= max_bytes) return std::string(Utf8Prefix(out, max_bytes));
    const size_t room = max_bytes - note.size();
    if (out.size() + sep < room) {
      if (sep) out += '\n';
      out.append(Utf8Prefix(lines[i], room - out.size()));
    } else {
      out.resize(Utf8Prefix(out, room).size());
    }
    out += note;
    break;
  }
  return out;
}

std::string FormatCostPerMinute(double dollars) {
  if (!(dollars > 0)) return "";
  // Cents only where they say something: "$8/min", "$512/min", "$7.50/min".
  if (dollars >= 10 || dollars == std::floor(dollars)) return absl::StrFormat("$%.0f/min", dollars);
  return absl::StrFormat("$%.2f/min", dollars);
}

Labels AlertAnnotations(const v1::Diagnosis& d, const AlertFormatOptions& options) {
  Labels a;
  AddIfSet(a, "summary", d.summary());
  AddIfSet(a, "description", DescribeEvidence(d, options.max_description_bytes));
  AddIfSet(a, "runbook_url", RunbookUrl(d.runbook(), options.runbook_url_base));
  std::vector<std::string> steps;
  for (int i = 0; i < d.commands_size() && steps.size() < options.first_steps; ++i) {
    steps.push_back(d.commands(i));
  }
  AddIfSet(a, "first_steps", absl::StrJoin(steps, "\n"));
  AddIfSet(a, "blast_radius", DescribeBlastRadius(d.blast_radius()));
  // Every job it hurts, by the name railwatch knows it (slurm-1234, ml/llama), for routing and
  // templates: blast_radius above shows the first three in words.
  std::vector<std::string> jobs;
  for (const v1::JobImpact& j : d.blast_radius().jobs()) jobs.push_back(j.job());
  AddIfSet(a, "jobs", absl::StrJoin(jobs, ","));
  if (d.blast_radius().gpus() > 0) AddIfSet(a, "gpus", absl::StrCat(d.blast_radius().gpus()));
  AddIfSet(a, "cost_per_minute", FormatCostPerMinute(d.blast_radius().cost_per_minute()));
  AddIfSet(a, "diagnosis_id", d.id());
  AddIfSet(a, "location", d.location());
  if (!d.id().empty()) a.push_back({"railwatch_explain", absl::StrCat("railwatch explain ", d.id())});
  NormalizeLabels(a);
  return a;
}

Alert BuildAlert(const v1::Diagnosis& d, const FabricMap* fabric,
                 const AlertFormatOptions& options) {
  Alert alert;
  alert.diagnosis_id = d.id();
  alert.labels = AlertLabels(d, fabric, options);
  alert.annotations = AlertAnnotations(d, options);
  alert.starts_at_unix_nano =
      d.active_since_unix_nano() != 0 ? d.active_since_unix_nano() : d.fired_at_unix_nano();
  if (d.state() == v1::DIAGNOSIS_STATE_RESOLVED) {
    // A resolve time of 0 would read as "firing": never send that for a resolved diagnosis.
    alert.resolved_at_unix_nano = std::max<int64_t>(d.resolved_at_unix_nano(), 1);
  }
  if (!options.external_url.empty() && !d.id().empty()) {
    alert.generator_url =
        absl::StrCat(absl::StripSuffix(options.external_url, "/"), "/diagnoses/", d.id());
  }
  return alert;
}

std::string AlertsToJson(const std::vector<const Alert*>& alerts, int64_t now_unix_nano,
                         absl::Duration firing_ttl) {
  nlohmann::json body = nlohmann::json::array();
  for (const Alert* a : alerts) {
    nlohmann::json labels = nlohmann::json::object(), annotations = nlohmann::json::object();
    for (const Label& l : a->labels) labels[l.name] = l.value;
    for (const Label& l : a->annotations) annotations[l.name] = l.value;
    nlohmann::json j = {{"labels", std::move(labels)}, {"annotations", std::move(annotations)}};
    if (a->starts_at_unix_nano != 0) j["startsAt"] = FormatTime(a->starts_at_unix_nano);
    j["endsAt"] = FormatTime(a->resolved() ? a->resolved_at_unix_nano
                                           : now_unix_nano + absl::ToInt64Nanoseconds(firing_ttl));
    if (!a->generator_url.empty()) j["generatorURL"] = a->generator_url;
    body.push_back(std::move(j));
  }
  // Label values come from agents: bytes that are not UTF-8 become U+FFFD rather than an
  // exception (Alertmanager would refuse the whole batch).
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace railwatch
