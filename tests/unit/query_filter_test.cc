// The Query API's pieces without a server: DiagnosisFilter on hand-made diagnoses (every
// culprit label host and switch look at), and which queries read as plain selectors.
#include "daemon/diagnosis_filter.h"
#include "engine/condition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace query_filter_test {

using ::testing::HasSubstr;

v1::Diagnosis Make(const std::string& playbook, v1::DiagnosisState state,
                   std::vector<std::pair<std::string, std::string>> culprit,
                   int64_t resolved_at = 0) {
  v1::Diagnosis d;
  d.set_playbook(playbook);
  d.set_state(state);
  d.set_severity(v1::SEVERITY_WARNING);
  d.set_resolved_at_unix_nano(resolved_at);
  for (const auto& [name, value] : culprit) {
    v1::Label& l = *d.add_culprit();
    l.set_name(name);
    l.set_value(value);
  }
  return d;
}

TEST(DiagnosisFilterTest, HostLooksAtHostAndPeerHostOnly) {
  v1::DiagnosisFilter f;
  f.set_host("h1");
  DiagnosisFilter filter(f);
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"host", "h1"}})));
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"peer_host", "h1"}})));
  EXPECT_FALSE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"switch", "h1"}})));
  EXPECT_FALSE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"host", "h10"}})));
  EXPECT_FALSE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {})));
}

TEST(DiagnosisFilterTest, SwitchLooksAtSwitchLeafAndTheirPeers) {
  v1::DiagnosisFilter f;
  f.set_switch_("leaf-3");
  DiagnosisFilter filter(f);
  for (const char* label : {"switch", "leaf", "peer_switch", "peer_leaf"}) {
    EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{label, "leaf-3"}})))
        << label;
  }
  EXPECT_FALSE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"host", "leaf-3"}})));
  EXPECT_FALSE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"spine", "leaf-3"}})));
}

TEST(DiagnosisFilterTest, JobLooksAtTheBlastRadiusAndTheCulpritsJob) {
  v1::DiagnosisFilter f;
  f.set_job("slurm-42");
  DiagnosisFilter filter(f);
  v1::Diagnosis hurt = Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"host", "h1"}});
  hurt.mutable_blast_radius()->add_jobs()->set_job("eval");
  hurt.mutable_blast_radius()->add_jobs()->set_job("slurm-42");
  EXPECT_TRUE(filter.Matches(hurt));
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"job", "slurm-42"}})));
  v1::Diagnosis other = Make("p", v1::DIAGNOSIS_STATE_FIRING, {{"host", "slurm-42"}});
  other.mutable_blast_radius()->add_jobs()->set_job("slurm-420");
  EXPECT_FALSE(filter.Matches(other));
}

TEST(DiagnosisFilterTest, SinceKeepsActiveAndLaterResolved) {
  v1::DiagnosisFilter f;
  f.set_since_unix_nano(1000);
  DiagnosisFilter filter(f);
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_PENDING, {})));
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_FIRING, {})));
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_RESOLVED, {}, 1000)));
  EXPECT_FALSE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_RESOLVED, {}, 999)));
}

TEST(DiagnosisFilterTest, EmptyFilterMatchesEverything) {
  DiagnosisFilter filter({});
  EXPECT_TRUE(filter.Matches(Make("p", v1::DIAGNOSIS_STATE_RESOLVED, {}, 1)));
  EXPECT_TRUE(DiagnosisFilter::Validate({}, {"p"}).ok());
}

TEST(DiagnosisFilterTest, ValidateNamesTheField) {
  v1::DiagnosisFilter f;
  f.add_playbooks("x");
  EXPECT_TRUE(DiagnosisFilter::Validate(f).ok()) << "no known list: any name";
  absl::Status s = DiagnosisFilter::Validate(f, {"a", "b"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("filter.playbooks: no playbook \"x\" is loaded (loaded: a, b)"));
}

// Which queries are plain selectors; the rest go to the condition parser.
TEST(SeriesSelectorTest, PlainSelectorsAndTheRest) {
  auto kind = [](const std::string& q) -> std::string {
    absl::StatusOr<std::optional<SeriesSelector>> s = ParseSeriesSelector(q);
    if (!s.ok()) return "error";
    return *s ? "selector " + (*s)->ToString() : "expression";
  };
  EXPECT_EQ(kind("up"), "selector up");
  EXPECT_EQ(kind(" x{a=\"1\", b=~\"c.*\"} "), "selector x{a=\"1\",b=~\"c.*\"}");
  EXPECT_EQ(kind("{host=\"h\"}"), "selector {host=\"h\"}");
  EXPECT_EQ(kind("x{a in (\"1\",\"2\")}"), "selector x{a in (\"1\", \"2\")}");
  EXPECT_EQ(kind("x > 1"), "expression");
  EXPECT_EQ(kind("rate(x[1m])"), "expression");
  EXPECT_EQ(kind("sum(x)"), "expression");
  EXPECT_EQ(kind("rate"), "expression") << "a function name is not a metric";
  EXPECT_EQ(kind("events"), "expression");
  EXPECT_EQ(kind("x{a=}"), "expression") << "the condition parser reports the error";
  EXPECT_EQ(kind("{a=}"), "error");
  EXPECT_EQ(kind("{}"), "error");
  EXPECT_EQ(kind("x{a=\"1"), "error") << "an unterminated string is an error either way";
}

TEST(SeriesSelectorTest, MatchesWithTheConditionLanguagesMatchers) {
  absl::StatusOr<std::optional<SeriesSelector>> s =
      ParseSeriesSelector("{host=~\"gpu-.*\", device!=\"mlx5_1\", rail=\"\"}");
  ASSERT_TRUE(s.ok() && *s);
  const SeriesSelector& sel = **s;
  EXPECT_EQ(sel.name(), "");
  EXPECT_TRUE(sel.Matches({{"device", "mlx5_0"}, {"host", "gpu-1"}}));
  EXPECT_FALSE(sel.Matches({{"device", "mlx5_1"}, {"host", "gpu-1"}}));
  EXPECT_FALSE(sel.Matches({{"device", "mlx5_0"}, {"host", "cpu-1"}}));
  EXPECT_FALSE(sel.Matches({{"device", "mlx5_0"}, {"host", "gpu-1"}, {"rail", "3"}}))
      << "rail=\"\" wants the label absent";
}

}  // namespace
}  // namespace railwatch
