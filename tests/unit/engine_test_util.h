#pragma once

// Shared by the engine's tests: a listener that records every transition, the engine's
// diagnoses as the Query API shows them, and playbooks from a YAML string (any load problem fails
// the test).

#include <optional>
#include <string>
#include <vector>

#include "engine/alert_proto.h"
#include "engine/engine.h"
#include "gtest/gtest.h"

namespace railwatch {

// Every transition a listener is told about, as the Query API would show it (alert_proto.h).
class RecordingListener final : public DiagnosisListener {
 public:
  void OnFiring(const AlertRecord& a) override { fired.push_back(ToDiagnosis(a)); }
  void OnResolved(const AlertRecord& a) override { resolved.push_back(ToDiagnosis(a)); }
  void OnPending(const AlertRecord& a) override { pending.push_back(ToDiagnosis(a)); }
  void OnRestored(const AlertRecord& a) override { restored.push_back(ToDiagnosis(a)); }
  std::vector<v1::Diagnosis> fired, resolved, pending, restored;
};

// The engine's diagnoses (Engine::List, Engine::Get) as the Query API shows them.
inline std::vector<v1::Diagnosis> Diagnoses(const Engine& engine) {
  std::vector<v1::Diagnosis> out;
  for (const AlertRecord& a : engine.List()) out.push_back(ToDiagnosis(a));
  return out;
}
inline std::optional<v1::Diagnosis> DiagnosisById(const Engine& engine, const std::string& id) {
  std::optional<AlertRecord> a = engine.Get(id);
  if (!a) return std::nullopt;
  return ToDiagnosis(*a);
}

inline std::vector<Playbook> LoadPlaybooksOrFail(const std::string& yaml) {
  LoadResult r;
  LoadPlaybooksFromString(yaml, "test.yaml", r);
  EXPECT_TRUE(r.ok());
  for (const auto& p : r.problems) ADD_FAILURE() << p.ToString();
  return std::move(r.playbooks);
}

}  // namespace railwatch
