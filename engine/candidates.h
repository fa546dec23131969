#pragma once

// A playbook's condition results as the engine takes them: one candidate per incident (the
// playbook's group_by, else its culprit labels), topology-enriched, with everyone's evidence.

#include <cstdint>
#include <string>
#include <vector>

#include "common/labels.h"
#include "engine/condition.h"
#include "engine/playbook.h"
#include "topology/fabric_map.h"

namespace railwatch {

struct Candidate {
  std::string key;  // group key (without the playbook)
  Labels labels;    // enriched
  double value = 0;
  // Every element of it is unknown (VectorElement::unknown): a window does not yet hold its
  // data. It neither starts a diagnosis nor resolves one.
  bool unknown = false;
  std::vector<EvidenceRef> evidence;
  std::vector<EventEvidence> events;
};

// Evaluates `pb`'s condition and groups its elements into candidates (in first-seen order).
std::vector<Candidate> EvaluateCandidates(const Playbook& pb, const EvalContext& ctx);

// The labels of `labels` that name the culprit (all of them when the playbook names none).
Labels CulpritLabels(const Playbook& pb, const Labels& labels);

// group_by when the result has all of those labels, else the culprit labels.
std::string GroupKey(const Playbook& pb, const Labels& labels);

}  // namespace railwatch
