#pragma once

// Shared by the engine's tests: a listener that records every transition, and playbooks from
// a YAML string (any load problem fails the test).

#include <string>
#include <vector>

#include "engine/engine.h"
#include "gtest/gtest.h"

namespace railwatch {

class RecordingListener final : public DiagnosisListener {
 public:
  void OnFiring(const v1::Diagnosis& d) override { fired.push_back(d); }
  void OnResolved(const v1::Diagnosis& d) override { resolved.push_back(d); }
  void OnPending(const v1::Diagnosis& d) override { pending.push_back(d); }
  void OnRestored(const v1::Diagnosis& d) override { restored.push_back(d); }
  std::vector<v1::Diagnosis> fired, resolved, pending, restored;
};

inline std::vector<Playbook> LoadPlaybooksOrFail(const std::string& yaml) {
  LoadResult r;
  LoadPlaybooksFromString(yaml, "test.yaml", r);
  EXPECT_TRUE(r.ok());
  for (const auto& p : r.problems) ADD_FAILURE() << p.ToString();
  return std::move(r.playbooks);
}

}  // namespace railwatch
