#include "daemon/alert_format.h"

#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "engine/diagnosis_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "topology/fabric_map.h"
#include "topology/topology.h"

namespace railwatch {
namespace alert_format_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kT0 = 1'700'000'000 * kSecond;

void AddCulprit(v1::Diagnosis& d, const std::string& name, const std::string& value) {
  v1::Label* l = d.add_culprit();
  l->set_name(name);
  l->set_value(value);
}

// A diagnosis with nothing but what labels are made of.
v1::Diagnosis Bare(const std::string& playbook, v1::Severity severity, const Labels& culprit) {
  v1::Diagnosis d;
  d.set_id("id-" + playbook);
  d.set_playbook(playbook);
  d.set_severity(severity);
  for (const Label& l : culprit) AddCulprit(d, l.name, l.value);
  return d;
}

// A PFC storm as the engine raises it with a topology: host culprit with its rail and leaf.
v1::Diagnosis Storm(const std::string& id, double value) {
  v1::Diagnosis d;
  d.set_id(id);
  d.set_playbook("pfc_storm");
  d.set_severity(v1::SEVERITY_CRITICAL);
  d.set_state(v1::DIAGNOSIS_STATE_FIRING);
  d.set_summary("PFC storm: gpu-node-003 mlx5_2 is sending pause frames (" +
                std::to_string(value) + "/s)");
  d.set_description("A NIC is sending PFC pause frames at storm rate.");
  AddCulprit(d, "device", "mlx5_2");
  AddCulprit(d, "host", "gpu-node-003");
  AddCulprit(d, "leaf", "leaf-r2");
  AddCulprit(d, "leaf_port", "Ethernet8");
  AddCulprit(d, "rail", "2");
  d.set_runbook("/opt/railwatch/rules/runbooks/pfc-storm.md");
  d.add_commands("ssh gpu-node-003 mlnx_qos -i enp56s0np0");
  d.add_commands("ssh gpu-node-003 ethtool -S enp56s0np0 | grep pause");
  d.add_commands("ssh gpu-node-003 dmesg | tail");
  d.add_commands("ssh gpu-node-003 reboot  # the fourth: not a first step");
  d.set_location("gpu-node-003 mlx5_2 (rail 2, leaf-r2 Ethernet8, job train)");
  d.set_active_since_unix_nano(kT0);
  d.set_fired_at_unix_nano(kT0 + kSecond);
  v1::BlastRadius* b = d.mutable_blast_radius();
  b->set_scope("leaf");
  for (int i = 1; i <= 8; ++i) b->add_hosts("gpu-node-00" + std::to_string(i));
  v1::JobImpact* j = b->add_jobs();
  j->set_job("train");
  j->set_gpus(32);
  b->set_gpus(32);
  b->set_cost_per_minute(16);
  v1::Evidence* e = d.add_evidence();
  e->set_kind("series");
  e->set_series(
      "fabric_pfc_pause_frames_total{direction=\"tx\",host=\"gpu-node-003\",priority=\"3\"}");
  e->set_summary("rate over 3s = " + std::to_string(value));
  v1::Evidence* s = d.add_evidence();
  s->set_kind("symptom");
  s->set_summary("pfc_pause_relay explained by this diagnosis: leaf-r2 Ethernet32");
  s->set_raw("NET/IB : Got completion with error 12");
  return d;
}

AlertFormatOptions WithCluster() {
  AlertFormatOptions o;
  o.cluster = "pod-a";
  return o;
}

TEST(AlertLabelsTest, NameThePlaybookSeverityAndCulpritWithTheLeafAsSwitch) {
  const Labels labels = AlertLabels(Storm("abc123", 7000), nullptr, WithCluster());
  EXPECT_EQ(labels, (Labels{{"alertname", "pfc_storm"},
                            {"cluster", "pod-a"},
                            {"culprit", "device=mlx5_2 host=gpu-node-003 leaf=leaf-r2 "
                                        "leaf_port=Ethernet8 rail=2"},
                            {"device", "mlx5_2"},
                            {"host", "gpu-node-003"},
                            {"playbook", "pfc_storm"},
                            {"rail", "2"},
                            {"severity", "critical"},
                            {"switch", "leaf-r2"}}));
}

TEST(AlertLabelsTest, StableForOneIncidentAndFreeOfTheIdAndValues) {
  const v1::Diagnosis first = Storm("0123456789ab", 7000);
  const v1::Diagnosis later = Storm("ba9876543210", 9100.5);
  EXPECT_EQ(AlertLabels(first, nullptr, {}), AlertLabels(later, nullptr, {}));
  for (const Label& l : AlertLabels(first, nullptr, {})) {
    EXPECT_THAT(l.value, Not(HasSubstr("0123456789ab"))) << l.name;
    EXPECT_THAT(l.value, Not(HasSubstr("7000"))) << l.name;
    EXPECT_NE(l.name, "diagnosis_id");
  }
}

TEST(AlertLabelsTest, NoClusterLabelWhenNoneIsSet) {
  for (const Label& l : AlertLabels(Storm("x", 1), nullptr, {})) EXPECT_NE(l.name, "cluster");
}

TEST(AlertLabelsTest, SwitchCulpritKeepsItsSwitchAndInterface) {
  const Labels labels = AlertLabels(
      Bare("pfc_deadlock", v1::SEVERITY_WARNING,
           {{"interface", "Ethernet12"}, {"queue", "3"}, {"switch", "leaf-r3"}}),
      nullptr, {});
  EXPECT_EQ(LabelValue(labels, "switch"), "leaf-r3");
  EXPECT_EQ(LabelValue(labels, "interface"), "Ethernet12");
  EXPECT_EQ(LabelValue(labels, "severity"), "warning");
  EXPECT_EQ(LabelValue(labels, "culprit"), "interface=Ethernet12 queue=3 switch=leaf-r3");
  EXPECT_EQ(LabelValue(labels, "host"), "");
}

constexpr char kTopology[] = R"(
switches:
  - {name: leaf-r1, role: leaf, dialect: sonic}
hosts:
  - name: gpu-node-002
    nics:
      - {device: mlx5_1, netdev: enp40s0np0, rail: 1, switch: leaf-r1, port: Ethernet4}
jobs:
  - {name: train, gpus_per_host: 8, hosts: [gpu-node-002]}
)";

TEST(AlertLabelsTest, TopologyAddsRailLeafAndJobTheCulpritLacks) {
  absl::StatusOr<Topology> topo = Topology::LoadString(kTopology, "topology.yaml");
  ASSERT_TRUE(topo.ok()) << topo.status();
  auto shared = std::make_shared<const Topology>(std::move(*topo));
  JobRegistry jobs;
  jobs.SetStatic(shared->jobs());
  FabricMap fabric(shared, &jobs);

  // link_flap's culprit: link, host, device, port; no rail or leaf of its own.
  const Labels labels = AlertLabels(
      Bare("link_flap", v1::SEVERITY_CRITICAL,
           {{"device", "mlx5_1"}, {"host", "gpu-node-002"}, {"port", "1"}}),
      &fabric, {});
  EXPECT_EQ(LabelValue(labels, "rail"), "1");
  EXPECT_EQ(LabelValue(labels, "switch"), "leaf-r1");
  EXPECT_EQ(LabelValue(labels, "training_job"), "train");
  EXPECT_EQ(LabelValue(labels, "job"), "");
  // The culprit label says what the playbook named, not what the topology added.
  EXPECT_EQ(LabelValue(labels, "culprit"), "device=mlx5_1 host=gpu-node-002 port=1");
}

TEST(AlertAnnotationsTest, CarryWhatTheOnCallEngineerNeeds) {
  AlertFormatOptions o;
  o.runbook_url_base = "https://wiki.example/railwatch/runbooks/";
  const Labels a = AlertAnnotations(Storm("abc123", 7000), o);
  EXPECT_THAT(LabelValue(a, "summary"), HasSubstr("PFC storm: gpu-node-003 mlx5_2"));
  EXPECT_EQ(LabelValue(a, "runbook_url"), "https://wiki.example/railwatch/runbooks/pfc-storm.md");
  EXPECT_EQ(LabelValue(a, "first_steps"),
            "ssh gpu-node-003 mlnx_qos -i enp56s0np0\n"
            "ssh gpu-node-003 ethtool -S enp56s0np0 | grep pause\n"
            "ssh gpu-node-003 dmesg | tail");
  EXPECT_EQ(LabelValue(a, "blast_radius"),
            "job train stalls (32 GPUs); the fault is on 8 hosts (leaf scope): gpu-node-001, "
            "gpu-node-002, gpu-node-003 and 5 more");
  EXPECT_EQ(LabelValue(a, "gpus"), "32");
  EXPECT_EQ(LabelValue(a, "jobs"), "train");
  EXPECT_EQ(LabelValue(a, "cost_per_minute"), "$16/min");
  EXPECT_EQ(LabelValue(a, "diagnosis_id"), "abc123");
  EXPECT_EQ(LabelValue(a, "railwatch_explain"), "railwatch explain abc123");
  EXPECT_EQ(LabelValue(a, "location"), "gpu-node-003 mlx5_2 (rail 2, leaf-r2 Ethernet8, job train)");
  const std::string description = LabelValue(a, "description");
  EXPECT_THAT(description, HasSubstr("A NIC is sending PFC pause frames at storm rate."));
  EXPECT_THAT(description, HasSubstr("fabric_pfc_pause_frames_total{direction=\"tx\""));
  EXPECT_THAT(description, HasSubstr("rate over 3s = 7000"));
  EXPECT_THAT(description, HasSubstr("symptom: pfc_pause_relay explained by this diagnosis"));
  EXPECT_THAT(description, HasSubstr("log: NET/IB : Got completion with error 12"));
}

TEST(AlertAnnotationsTest, RunbookAsThePlaybookNamesItWithoutABase) {
  const Labels a = AlertAnnotations(Storm("abc123", 7000), {});
  EXPECT_EQ(LabelValue(a, "runbook_url"), "/opt/railwatch/rules/runbooks/pfc-storm.md");
}

TEST(AlertAnnotationsTest, NoBlastRadiusOrCostWithoutATopology) {
  v1::Diagnosis d = Storm("abc123", 7000);
  d.clear_blast_radius();
  const Labels a = AlertAnnotations(d, {});
  EXPECT_EQ(LabelValue(a, "blast_radius"), "");
  EXPECT_EQ(LabelValue(a, "gpus"), "");
  EXPECT_EQ(FindLabel(a, "jobs"), nullptr);
  EXPECT_EQ(LabelValue(a, "cost_per_minute"), "");
  EXPECT_EQ(FindLabel(a, "gpus"), nullptr);
}

TEST(AlertAnnotationsTest, BlastRadiusAndCostWording) {
  v1::BlastRadius b;
  b.set_scope("host");
  b.add_hosts("gpu-node-003");
  EXPECT_EQ(DescribeBlastRadius(b), "1 host (host scope): gpu-node-003");
  // A flap on one host of a 10-host job stalls the whole job: the job and its hosts first,
  // then where the fault is (it read "host: 1 host, job train (80 GPUs)" before).
  v1::JobImpact* train = b.add_jobs();
  train->set_job("train");
  train->set_gpus(80);
  train->add_hosts("gpu-node-003");
  for (int i = 1; i <= 10; ++i) train->add_job_hosts(absl::StrFormat("gpu-node-%03d", i));
  EXPECT_EQ(DescribeBlastRadius(b),
            "job train stalls (80 GPUs on 10 hosts: gpu-node-001, gpu-node-002, gpu-node-003 "
            "and 7 more); the fault is on 1 host (host scope): gpu-node-003");
  for (const char* job : {"b", "c", "d", "e"}) {
    v1::JobImpact* j = b.add_jobs();
    j->set_job(job);
    j->set_gpus(8);
    j->add_hosts("gpu-node-003");
  }
  EXPECT_EQ(DescribeBlastRadius(b),
            "job train stalls (80 GPUs on 10 hosts: gpu-node-001, gpu-node-002, gpu-node-003 "
            "and 7 more); job b stalls (8 GPUs on 1 host); job c stalls (8 GPUs on 1 host); 2 "
            "more job(s) stall; the fault is on 1 host (host scope): gpu-node-003");
  EXPECT_EQ(FormatCostPerMinute(512), "$512/min");
  EXPECT_EQ(FormatCostPerMinute(8), "$8/min");
  EXPECT_EQ(FormatCostPerMinute(7.5), "$7.50/min");
  EXPECT_EQ(FormatCostPerMinute(0.5), "$0.50/min");
  EXPECT_EQ(FormatCostPerMinute(0), "");
}

bool ValidUtf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

TEST(DescribeEvidenceTest, BoundedWithANoteOfWhatWasLeftOut) {
  v1::Diagnosis d = Storm("abc123", 7000);
  for (int i = 0; i < 300; ++i) {
    v1::Evidence* e = d.add_evidence();
    e->set_kind("event");
    e->set_series("events{kind=\"nccl.error\",host=\"gpu-node-00" + std::to_string(i % 9) + "\"}");
    e->set_summary("nccl.error at 2026-01-01T00:00:00Z");
    // Multi-byte characters so that a cut can fall inside one.
    e->set_raw("rank " + std::to_string(i) + ": ∅ NCCL WARN ¡timeout! → é");
  }
  const std::string text = DescribeEvidence(d, 4096);
  EXPECT_LE(text.size(), 4096u);
  EXPECT_GT(text.size(), 3500u);
  EXPECT_THAT(text, HasSubstr("more line(s): railwatch explain abc123]"));
  EXPECT_THAT(text, HasSubstr("A NIC is sending PFC pause frames"));
  EXPECT_TRUE(ValidUtf8(text));
  // Every budget, however small, is kept, and never cuts a character in two.
  for (size_t max : {0u, 1u, 10u, 40u, 77u, 200u, 1001u}) {
    const std::string t = DescribeEvidence(d, max);
    EXPECT_LE(t.size(), max);
    EXPECT_TRUE(ValidUtf8(t)) << max;
  }
}

TEST(DescribeEvidenceTest, ShortEvidenceIsWhole) {
  const std::string text = DescribeEvidence(Storm("abc123", 7000), 4096);
  EXPECT_THAT(text, Not(HasSubstr("more line(s)")));
  EXPECT_EQ(text.substr(0, text.find('\n')), "A NIC is sending PFC pause frames at storm rate.");
}

TEST(AlertsToJsonTest, FiringEndsAfterTheTtlResolvedAtItsResolveTime) {
  AlertFormatOptions o;
  o.external_url = "https://railwatch.example/";
  const Alert firing = BuildAlert(Storm("abc123", 7000), nullptr, o);
  EXPECT_FALSE(firing.resolved());
  v1::Diagnosis r = Storm("def456", 7000);
  r.set_state(v1::DIAGNOSIS_STATE_RESOLVED);
  r.set_resolved_at_unix_nano(kT0 + 90 * kSecond);
  const Alert resolved = BuildAlert(r, nullptr, {});
  EXPECT_TRUE(resolved.resolved());

  const int64_t now = kT0 + 30 * kSecond;
  const nlohmann::json body =
      nlohmann::json::parse(AlertsToJson({&firing, &resolved}, now, absl::Minutes(4)));
  ASSERT_TRUE(body.is_array());
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(body[0]["startsAt"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(body[0]["endsAt"], "2023-11-14T22:17:50.000Z");  // now + 4m
  EXPECT_EQ(body[0]["generatorURL"], "https://railwatch.example/diagnoses/abc123");
  EXPECT_EQ(body[0]["labels"]["alertname"], "pfc_storm");
  EXPECT_EQ(body[0]["labels"]["host"], "gpu-node-003");
  EXPECT_EQ(body[0]["annotations"]["diagnosis_id"], "abc123");
  EXPECT_EQ(body[1]["endsAt"], "2023-11-14T22:14:50.000Z");  // the resolve time
  EXPECT_FALSE(body[1].contains("generatorURL"));
  for (const auto& alert : body) {
    EXPECT_FALSE(alert["labels"].contains("diagnosis_id"));
    for (const auto& [name, value] : alert["labels"].items()) {
      EXPECT_THAT(value.get<std::string>(), Not(HasSubstr("abc123"))) << name;
    }
  }
}

TEST(AlertsToJsonTest, BytesThatAreNotUtf8DoNotSpoilTheBatch) {
  v1::Diagnosis d = Storm("abc123", 7000);
  AddCulprit(d, "interface", std::string("eth\xff\xfe"));
  const Alert alert = BuildAlert(d, nullptr, {});
  const nlohmann::json body = nlohmann::json::parse(AlertsToJson({&alert}, kT0, absl::Minutes(1)));
  EXPECT_EQ(body[0]["labels"]["interface"], "eth\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(AlertsToJsonTest, EmptyBatchIsAnEmptyArray) {
  EXPECT_EQ(AlertsToJson({}, kT0, absl::Minutes(1)), "[]");
}

TEST(BuildAlertTest, StartsWhenTheConditionFirstHeld) {
  const Alert a = BuildAlert(Storm("abc123", 7000), nullptr, {});
  EXPECT_EQ(a.starts_at_unix_nano, kT0);
  EXPECT_EQ(a.diagnosis_id, "abc123");
  EXPECT_THAT(a.labels, testing::Contains(Label{"alertname", "pfc_storm"}));
}

}  // namespace
}  // namespace railwatch
