// The fault flags' parsers, each its kind's (sim/faults/<kind>.cc, through FaultKind::ParseFlag),
// and the driver reload's (noise, sim/scenario.h): every form the docs show, and errors that name
// the flag and what is wrong.
#include <string>

#include "gtest/gtest.h"
#include "sim/fault_kinds.h"
#include "sim/scenario.h"
#include "sim/switch_model.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {
namespace fault_flags_test {

// A kind's flag value, parsed by its kind.
absl::StatusOr<ScenarioFault> Parse(absl::string_view kind, absl::string_view spec) {
  const FaultKind* k = FindFaultKind(kind);
  EXPECT_NE(k, nullptr) << kind;
  if (k == nullptr) return absl::NotFoundError(kind);
  return k->ParseFlag(spec);
}
absl::StatusOr<ScenarioFault> ParseRepeatedFlap(absl::string_view s) {
  return Parse("link_flap_repeated", s);
}
absl::StatusOr<ScenarioFault> ParseBitErrors(absl::string_view s) { return Parse("bit_errors", s); }
absl::StatusOr<ScenarioFault> ParseStraggler(absl::string_view s) { return Parse("straggler", s); }
absl::StatusOr<ScenarioFault> ParsePacketLoss(absl::string_view s) {
  return Parse("packet_loss", s);
}
absl::StatusOr<ScenarioFault> ParseWrongPriority(absl::string_view s) {
  return Parse("wrong_priority", s);
}
absl::StatusOr<ScenarioFault> ParseNcclError(absl::string_view s) { return Parse("nccl_error", s); }
absl::StatusOr<ScenarioFault> ParseNicGone(absl::string_view s) { return Parse("nic_gone", s); }
absl::StatusOr<ScenarioFault> ParsePfcDeadlock(absl::string_view s) {
  return Parse("pfc_deadlock", s);
}
absl::StatusOr<ScenarioFault> ParsePfcStorm(absl::string_view s) { return Parse("pfc_storm", s); }
absl::StatusOr<ScenarioFault> ParseLinkFlap(absl::string_view s) { return Parse("link_flap", s); }
absl::StatusOr<ScenarioFault> ParseDegrade(absl::string_view s) { return Parse("link_degrade", s); }
absl::StatusOr<ScenarioFault> ParseEcnMisconfig(absl::string_view s) {
  return Parse("ecn_misconfig", s);
}

// The error of a status that must have failed, for message checks.
template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& v) {
  EXPECT_FALSE(v.ok());
  return v.ok() ? "" : std::string(v.status().message());
}

TEST(FaultFlags, RepeatedFlap) {
  absl::StatusOr<ScenarioFault> f = ParseRepeatedFlap("gpu-node-002/mlx5_1/1@15s:5:7s");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->host, "gpu-node-002");
  EXPECT_EQ(f->device, "mlx5_1");
  EXPECT_EQ(f->port, 1);
  EXPECT_EQ(f->at, absl::Seconds(15));
  EXPECT_EQ(f->count, 5);
  EXPECT_EQ(f->period, absl::Seconds(7));

  std::string e = ErrorOf(ParseRepeatedFlap("gpu-node-002/mlx5_1@15s:5:7s"));
  EXPECT_NE(e.find("--flap_repeat"), std::string::npos) << e;
  EXPECT_NE(e.find("HOST/DEVICE/PORT"), std::string::npos) << e;
  e = ErrorOf(ParseRepeatedFlap("gpu-node-002/mlx5_1/1@15s:0:7s"));
  EXPECT_NE(e.find("COUNT \"0\""), std::string::npos) << e;
  e = ErrorOf(ParseRepeatedFlap("gpu-node-002/mlx5_1/1@15s:3:soon"));
  EXPECT_NE(e.find("PERIOD \"soon\""), std::string::npos) << e;
  e = ErrorOf(ParseRepeatedFlap("gpu-node-002/mlx5_1/1@15s"));
  EXPECT_NE(e.find("COUNT and PERIOD are required"), std::string::npos) << e;
  EXPECT_FALSE(ParseRepeatedFlap("gpu-node-002/mlx5_1/1@15s:3:0s").ok());
  EXPECT_FALSE(ParseRepeatedFlap("gpu-node-002/mlx5_1/x@15s:3:5s").ok());
}

TEST(FaultFlags, BitErrorsStragglerPacketLoss) {
  absl::StatusOr<ScenarioFault> b = ParseBitErrors("gpu-node-004/mlx5_2@20s");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->device, "mlx5_2");
  EXPECT_EQ(b->per_minute, 120);
  b = ParseBitErrors("gpu-node-004/mlx5_2@1m30s:600");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->at, absl::Seconds(90));
  EXPECT_EQ(b->per_minute, 600);
  std::string e = ErrorOf(ParseBitErrors("gpu-node-004/mlx5_2@20s:lots"));
  EXPECT_NE(e.find("--ber"), std::string::npos) << e;
  EXPECT_NE(e.find("\"lots\" is not a number"), std::string::npos) << e;
  EXPECT_FALSE(ParseBitErrors("gpu-node-004/mlx5_2@20s:0").ok());
  EXPECT_FALSE(ParseBitErrors("gpu-node-004@20s").ok());

  absl::StatusOr<ScenarioFault> s = ParseStraggler("gpu-node-005/mlx5_1@15s");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->factor, 0.5);
  s = ParseStraggler("gpu-node-005/mlx5_1@15s:0.3");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->factor, 0.3);
  e = ErrorOf(ParseStraggler("gpu-node-005/mlx5_1@15s:1.5"));
  EXPECT_NE(e.find("--straggler"), std::string::npos) << e;
  EXPECT_NE(e.find("(0, 1)"), std::string::npos) << e;

  absl::StatusOr<ScenarioFault> p = ParsePacketLoss("gpu-node-002/mlx5_3@15s");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->per_second, 500);
  p = ParsePacketLoss("gpu-node-002/mlx5_3@15s:2000");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->per_second, 2000);
  EXPECT_FALSE(ParsePacketLoss("gpu-node-002/mlx5_3@15s:-1").ok());
  e = ErrorOf(ParsePacketLoss("gpu-node-002/mlx5_3@15s:5:6"));
  EXPECT_NE(e.find("more than 1 ':'"), std::string::npos) << e;
}

TEST(FaultFlags, HostFaults) {
  absl::StatusOr<ScenarioFault> w = ParseWrongPriority("gpu-node-006@20s");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->host, "gpu-node-006");
  EXPECT_EQ(w->at, absl::Seconds(20));
  std::string e = ErrorOf(ParseWrongPriority("gpu-node-006/mlx5_0@20s"));
  EXPECT_NE(e.find("--wrong_priority"), std::string::npos) << e;
  EXPECT_NE(e.find("HOST without /DEVICE"), std::string::npos) << e;
  e = ErrorOf(ParseWrongPriority("gpu-node-006@20s:3"));
  EXPECT_NE(e.find("nothing may follow OFFSET"), std::string::npos) << e;

  absl::StatusOr<ScenarioFault> n = ParseNcclError("gpu-node-001@15s");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->error, "timeout");
  n = ParseNcclError("gpu-node-001@15s:ib_completion");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->error, "ib_completion");
  e = ErrorOf(ParseNcclError("gpu-node-001@15s:segfault"));
  EXPECT_NE(e.find("--nccl_error"), std::string::npos) << e;
  EXPECT_NE(e.find("\"segfault\""), std::string::npos) << e;

  absl::StatusOr<ScenarioFault> g = ParseNicGone("gpu-node-001/mlx5_0@15s");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->host, "gpu-node-001");
  EXPECT_EQ(g->device, "mlx5_0");
  EXPECT_FALSE(ParseNicGone("gpu-node-001/mlx5_0@15s:2").ok());

  absl::StatusOr<DriverReload> r = ParseDriverReload("gpu-node-002/mlx5_1@30s");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->at, absl::Seconds(30));
  e = ErrorOf(ParseDriverReload("gpu-node-002/mlx5_1"));
  EXPECT_NE(e.find("--driver_reload"), std::string::npos) << e;
  EXPECT_NE(e.find("no '@OFFSET'"), std::string::npos) << e;
  e = ErrorOf(ParseDriverReload("gpu-node-002/mlx5_1@later"));
  EXPECT_NE(e.find("OFFSET \"later\""), std::string::npos) << e;
  EXPECT_FALSE(ParseDriverReload("/mlx5_1@3s").ok());
  EXPECT_FALSE(ParseDriverReload("a@b@3s").ok());
}

TEST(FaultFlags, EcnMisconfigNamesALeafOfARailGroup) {
  absl::StatusOr<ScenarioFault> m = ParseEcnMisconfig("leaf-g2-r5@20s:3");
  ASSERT_TRUE(m.ok()) << m.status();
  int group = -1, rail = -1;
  ASSERT_TRUE(ParseLeafName(m->switch_name, group, rail));
  EXPECT_EQ(group, 2);
  EXPECT_EQ(rail, 5);
  EXPECT_EQ(m->switch_name, "leaf-g2-r5");
  m = ParseEcnMisconfig("leaf-r4@20s");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE(ParseLeafName(m->switch_name, group, rail));
  EXPECT_EQ(group, 0);
  EXPECT_EQ(rail, 4);
  for (const char* bad : {"leaf-g-r5@20s", "leaf-g2@20s", "leaf-g2-x5@20s", "spine-0@20s"}) {
    std::string e = ErrorOf(ParseEcnMisconfig(bad));
    EXPECT_NE(e.find("--ecn_misconfig"), std::string::npos) << bad << ": " << e;
  }
}

TEST(FaultFlags, LinkFlapForms) {
  absl::StatusOr<ScenarioFault> f = ParseLinkFlap("gpu-node-003/mlx5_5/1@8s");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->host, "gpu-node-003");
  EXPECT_EQ(f->device, "mlx5_5");
  EXPECT_EQ(f->port, 1);
  EXPECT_EQ(f->at, absl::Seconds(8));
  EXPECT_FALSE(ParseLinkFlap("gpu-node-003/mlx5_5@8s").ok());
  EXPECT_FALSE(ParseLinkFlap("gpu-node-003/mlx5_5/x@8s").ok());
  EXPECT_FALSE(ParseLinkFlap("gpu-node-003/mlx5_5/1").ok());
}

TEST(FaultFlags, DegradesAndEcnMisconfigs) {
  absl::StatusOr<ScenarioFault> d = ParseDegrade("gpu-node-003/mlx5_5@10s");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->host, "gpu-node-003");
  EXPECT_EQ(d->device, "mlx5_5");
  EXPECT_EQ(d->at, absl::Seconds(10));
  EXPECT_DOUBLE_EQ(d->factor, 0.5);
  d = ParseDegrade("gpu-node-003/mlx5_5@1m:0.25");
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->factor, 0.25);
  for (const char* bad : {"gpu-node-003@10s", "gpu-node-003/mlx5_5", "gpu-node-003/mlx5_5@10s:1",
                          "gpu-node-003/mlx5_5@soon", "gpu-node-003/mlx5_5@1s:0.5:2"}) {
    EXPECT_FALSE(ParseDegrade(bad).ok()) << bad;
  }
  absl::StatusOr<ScenarioFault> m = ParseEcnMisconfig("leaf-r3@20s");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->switch_name, "leaf-r3");
  int group = -1, rail = -1;
  ASSERT_TRUE(ParseLeafName(m->switch_name, group, rail));
  EXPECT_EQ(rail, 3);
  EXPECT_EQ(m->at, absl::Seconds(20));
  EXPECT_DOUBLE_EQ(m->offset_kb, 3);
  m = ParseEcnMisconfig("leaf-r0@0s:1.5");
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->offset_kb, 1.5);
  absl::StatusOr<ScenarioFault> spine = ParseEcnMisconfig("spine-0@1s");
  ASSERT_FALSE(spine.ok());
  EXPECT_NE(std::string(spine.status().message()).find("leaf-r<rail>"), std::string::npos);
  EXPECT_FALSE(ParseEcnMisconfig("leaf-r1@1s:0").ok());
}

TEST(FaultFlags, PfcDeadlock) {
  absl::StatusOr<ScenarioFault> d = ParsePfcDeadlock("gpu-node-004/mlx5_1@15s");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->host, "gpu-node-004");
  EXPECT_EQ(d->device, "mlx5_1");
  EXPECT_EQ(d->at, absl::Seconds(15));
  EXPECT_EQ(d->duration, absl::ZeroDuration()) << "to the end";
  d = ParsePfcDeadlock("gpu-node-004/mlx5_1@1m:40s");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->at, absl::Minutes(1));
  EXPECT_EQ(d->duration, absl::Seconds(40));
  for (const char* bad : {"gpu-node-004@15s", "gpu-node-004/mlx5_1", "gpu-node-004/mlx5_1@soon",
                          "gpu-node-004/mlx5_1@15s:long", "gpu-node-004/mlx5_1@15s:-1s",
                          "gpu-node-004/mlx5_1@15s:1s:2s", "/mlx5_1@1s"}) {
    absl::StatusOr<ScenarioFault> b = ParsePfcDeadlock(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(std::string(b.status().message()).find("--pfc_deadlock"), std::string::npos)
        << b.status();
    EXPECT_NE(std::string(b.status().message()).find("HOST/DEVICE@OFFSET[:DURATION]"),
              std::string::npos);
  }
}

TEST(FaultFlags, PfcStorm) {
  absl::StatusOr<ScenarioFault> s = ParsePfcStorm("gpu-node-002/mlx5_3@10s");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->host, "gpu-node-002");
  EXPECT_EQ(s->device, "mlx5_3");
  EXPECT_EQ(s->at, absl::Seconds(10));
  EXPECT_FALSE(ParsePfcStorm("gpu-node-002@10s").ok());
  EXPECT_FALSE(ParsePfcStorm("gpu-node-002/mlx5_3").ok());
  EXPECT_FALSE(ParsePfcStorm("gpu-node-002/mlx5_3@soon").ok());
}

}  // namespace fault_flags_test
}  // namespace railwatch::sim
