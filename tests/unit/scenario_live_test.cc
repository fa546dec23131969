// `railwatch-sim run --live` lines (sim/runner_live.h): what an on-call engineer reads when a
// diagnosis fires or resolves.
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/runner_live.h"

namespace railwatch::sim {
namespace scenario_live_test {

constexpr int64_t kStart = 1'700'000'000'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;

v1::Diagnosis Storm() {
  v1::Diagnosis d;
  d.set_id("bdf8292e359b");
  d.set_playbook("pfc_storm");
  d.set_severity(v1::SEVERITY_CRITICAL);
  d.set_summary("PFC storm: gpu-node-003 mlx5_2 is sending pause frames");
  d.set_location("gpu-node-003 mlx5_2 (rail 2, leaf-r2 Ethernet8)");
  d.set_active_since_unix_nano(kStart + 15 * kSecond);
  d.set_fired_at_unix_nano(kStart + 17 * kSecond);
  for (int i = 0; i < 4; ++i) {
    v1::Evidence* e = d.add_evidence();
    e->set_series("fabric_pfc_pause_frames_total{host=\"gpu-node-003\",n=\"" + std::to_string(i) +
                  "\"}");
    e->set_summary("rate over 3s = 2669.36");
  }
  v1::BlastRadius* b = d.mutable_blast_radius();
  b->set_scope("leaf");
  for (int h = 1; h <= 8; ++h) b->add_hosts("gpu-node-00" + std::to_string(h));
  b->set_gpus(32);
  b->set_cost_per_minute(16);
  b->add_jobs()->set_job("train");
  d.set_runbook("rules/runbooks/pfc-storm.md");
  for (const char* c :
       {"railwatch diagnoses", "ssh gpu-node-003 ethtool -S enp56s0np0", "c3", "c4"}) {
    d.add_commands(c);
  }
  return d;
}

TEST(LiveLines, FiringSaysWhenWhatWhereWhyAndWhatToDo) {
  const std::string text = LiveFiring(Storm(), kStart, kStart + 17 * kSecond + kSecond / 4, "");
  const std::string indent = "          ";
  EXPECT_EQ(
      text,
      " +17.2s  FIRING CRITICAL  pfc_storm  gpu-node-003 mlx5_2 (rail 2, leaf-r2 Ethernet8)\n" +
          indent + "PFC storm: gpu-node-003 mlx5_2 is sending pause frames\n" + indent +
          "(condition held for 2.0 s before paging)\n" + indent +
          "evidence: fabric_pfc_pause_frames_total{host=\"gpu-node-003\",n=\"0\"}  (rate over 3s = "
          "2669.36)\n" +
          indent +
          "          fabric_pfc_pause_frames_total{host=\"gpu-node-003\",n=\"1\"}  (rate over 3s = "
          "2669.36)\n" +
          indent +
          "          fabric_pfc_pause_frames_total{host=\"gpu-node-003\",n=\"2\"}  (rate over 3s = "
          "2669.36)\n" +
          indent + "  ... 1 more (railwatch explain bdf8292e359b)\n" + indent +
          "hurts:    job train stalls; the fault is on 8 hosts (leaf scope): gpu-node-001, "
                  "gpu-node-002, gpu-node-003 and 5 more; 32 GPUs stalled, about $16 a minute\n" +
          indent + "runbook:  rules/runbooks/pfc-storm.md\n" + indent +
          "  $ railwatch diagnoses\n" + indent + "  $ ssh gpu-node-003 ethtool -S enp56s0np0\n" +
          indent + "  $ c3\n" + indent + "  ... railwatch explain bdf8292e359b shows all\n");
}

TEST(LiveLines, PrefixedWhenScenariosRunAtOnceAndResolvesInOneLine) {
  v1::Diagnosis d = Storm();
  const std::string firing = LiveFiring(d, kStart, kStart + 17 * kSecond, "[storm] ");
  for (absl::string_view line : absl::StrSplit(absl::StripSuffix(firing, "\n"), '\n')) {
    EXPECT_TRUE(absl::StartsWith(line, "[storm] ")) << line;
  }
  d.set_explained_by("abc");
  EXPECT_EQ(LiveResolved(d, kStart, kStart + 40 * kSecond, ""),
            " +40.0s  RESOLVED  pfc_storm  gpu-node-003 mlx5_2 (rail 2, leaf-r2 Ethernet8)  (a "
            "symptom: explained by abc)\n");
  // No location: the culprit's labels; no start: no time.
  d.clear_location();
  d.clear_explained_by();
  v1::Label* l = d.add_culprit();
  l->set_name("host");
  l->set_value("gpu-node-003");
  EXPECT_EQ(LiveResolved(d, 0, kStart, ""), "         RESOLVED  pfc_storm  host=gpu-node-003\n");
}

}  // namespace
}  // namespace railwatch::sim
