#pragma once

// What railwatchd tells Alertmanager about a diagnosis: the alert's labels (its identity, which
// Alertmanager groups, deduplicates and inhibits on), its annotations (what the on-call engineer
// reads) and the JSON body of POST /api/v2/alerts (a list of postableAlert).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/labels.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

class FabricMap;

struct AlertFormatOptions {
  // Added as label cluster= to every alert; empty: no cluster label.
  std::string cluster;
  // Where people reach railwatchd (a UI or proxy): generatorURL is <external_url>/diagnoses/<id>.
  // Empty: no generatorURL.
  std::string external_url;
  // runbook_url is <runbook_url_base>/<runbook file name> when set, else the runbook as the
  // playbook names it (a path or a URL).
  std::string runbook_url_base;
  // The description annotation (playbook text + evidence) is cut to this many bytes.
  size_t max_description_bytes = 4096;
  // Runbook commands given in first_steps.
  size_t first_steps = 3;
};

// One alert as Alertmanager sees it. Labels and annotations are sorted by name.
struct Alert {
  std::string diagnosis_id;
  Labels labels;
  Labels annotations;
  int64_t starts_at_unix_nano = 0;
  // 0 while firing (endsAt is then set at each send, see AlertsToJson); the resolve time once
  // resolved.
  int64_t resolved_at_unix_nano = 0;
  std::string generator_url;

  bool resolved() const { return resolved_at_unix_nano != 0; }
};

// The labels of a diagnosis' alert: alertname (= playbook), playbook, severity, culprit (the
// culprit's labels as "k=v k=v"), and where the culprit or its topology labels (FabricMap::
// Enrich, when `fabric` is not null) have them: host, device, interface, switch (the switch, or
// the leaf of a host culprit), rail, job; cluster when set. Nothing that changes during an
// incident (no id, no value): Alertmanager identifies an alert by its labels.
Labels AlertLabels(const v1::Diagnosis& diagnosis, const FabricMap* fabric,
                   const AlertFormatOptions& options);

// summary, description (bounded), runbook_url, first_steps, blast_radius, gpus,
// cost_per_minute, diagnosis_id, location, railwatch_explain; empty ones are left out.
Labels AlertAnnotations(const v1::Diagnosis& diagnosis, const AlertFormatOptions& options);

// The playbook's description and the evidence, one line each, cut to `max_bytes` (on a UTF-8
// character boundary, with a last line saying how much was left out).
std::string DescribeEvidence(const v1::Diagnosis& diagnosis, size_t max_bytes);

// "$16/min", "$0.50/min"; empty when nothing is hurt.
std::string FormatCostPerMinute(double dollars);

// The whole alert. A resolved diagnosis gives a resolved alert (endsAt = its resolve time).
Alert BuildAlert(const v1::Diagnosis& diagnosis, const FabricMap* fabric,
                 const AlertFormatOptions& options);

// The body of POST /api/v2/alerts. Firing alerts get endsAt = now + firing_ttl so that
// Alertmanager resolves them on its own only when railwatchd stops re-sending them.
std::string AlertsToJson(const std::vector<const Alert*>& alerts, int64_t now_unix_nano,
                         absl::Duration firing_ttl);

}  // namespace railwatch
