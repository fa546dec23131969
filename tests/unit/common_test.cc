#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/backoff.h"
#include "common/labels.h"
#include "common/metrics_doc.h"
#include "common/shipped_data.h"
#include "common/text.h"
#include "common/vocabulary.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace common_test {

// Issue 20: one way for every program to find the shipped playbooks, profiles and baseline.
TEST(ShippedData, FirstShareRootThatHasItThenTheSourceTreeThenTheInstalledPath) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / "shipped_data_test";
  fs::remove_all(root);
  const std::string env = (root / "env").string(), prefix = (root / "usr/share/railwatch").string(),
                    source = (root / "src").string();
  fs::create_directories(root / "env/rules");
  fs::create_directories(root / "usr/share/railwatch/rules");
  fs::create_directories(root / "usr/share/railwatch/profiles/gnmi");
  fs::create_directories(root / "src/profiles/gnmi");
  fs::create_directories(root / "src/sim/baseline");
  std::ofstream(root / "src/sim/baseline/baseline.py") << "#\n";

  // The first root that has it wins, before the source tree.
  EXPECT_EQ(FindShippedPath("rules", {env, prefix}, source, "x"), env + "/rules");
  EXPECT_EQ(FindShippedPath("profiles/gnmi", {env, prefix}, source, "x"),
            prefix + "/profiles/gnmi");
  // Only the source tree has it; the baseline script is under sim/ there.
  EXPECT_EQ(FindShippedPath("baseline/baseline.py", {env, prefix}, source, "x"),
            source + "/sim/baseline/baseline.py");
  // Nowhere: the fallback, so that the caller's error names where it was expected.
  EXPECT_EQ(FindShippedPath("nothing", {env, prefix}, source, "/usr/share/railwatch/nothing"),
            "/usr/share/railwatch/nothing");
  EXPECT_EQ(FindShippedPath("rules", {}, "", "fallback"), "fallback");
  fs::remove_all(root);
}

TEST(ShippedData, TheEnvironmentVariableFirstThenThisBuildsSourceTree) {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(::testing::TempDir()) / "shipped_data_env";
  fs::remove_all(root);
  fs::create_directories(root / "rules");
  ASSERT_EQ(setenv("RAILWATCH_SHARE_DIR", root.c_str(), 1), 0);
  EXPECT_EQ(ShippedPath("rules"), (root / "rules").string());
  EXPECT_EQ(ShippedPathCandidates("rules").front(), (root / "rules").string());
  ASSERT_EQ(unsetenv("RAILWATCH_SHARE_DIR"), 0);
  // A test binary runs from its build tree, with nothing installed beside it: the source
  // tree's playbooks, which hold the shipped pfc-storm.yaml.
  const std::string rules = ShippedPath("rules");
  EXPECT_TRUE(fs::exists(fs::path(rules) / "pfc-storm.yaml")) << rules;
  EXPECT_EQ(ShippedPathCandidates("rules").back(), rules);
  fs::remove_all(root);
}

TEST(ParseDuration, PrometheusForms) {
  EXPECT_EQ(*ParseDuration("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseDuration("5m"), absl::Minutes(5));
  EXPECT_EQ(*ParseDuration("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseDuration("2d"), absl::Hours(48));
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_FALSE(ParseDuration("5").ok());
  EXPECT_FALSE(ParseDuration("5 minutes").ok());
  EXPECT_FALSE(ParseDuration("m5").ok());
  EXPECT_EQ(HumanDuration(absl::Minutes(90)), "1h30m");
  EXPECT_EQ(HumanDuration(absl::Milliseconds(1500)), "1s500ms");
}

TEST(ParseCounterText, SysfsValues) {
  EXPECT_EQ(ParseCounterText("12345\n"), 12345u);
  EXPECT_EQ(ParseCounterText("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseCounterText("18446744073709551616").has_value());
  EXPECT_FALSE(ParseCounterText("N/A (no PMA)\n").has_value());
  EXPECT_FALSE(ParseCounterText("").has_value());
  EXPECT_FALSE(ParseCounterText("12abc").has_value());
}

TEST(Labels, FormatAndFingerprint) {
  Labels l = {{"port", "1"}, {"host", "a\"b"}, {"host", "dup"}};
  NormalizeLabels(l);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(FormatSeries("m", l), "m{host=\"a\\\"b\",port=\"1\"}");
  EXPECT_NE(SeriesFingerprint("m", l), SeriesFingerprint("n", l));
  EXPECT_EQ(SeriesFingerprint("m", l), SeriesFingerprint("m", l));
}

TEST(Backoff, GrowsJittersAndCaps) {
  Backoff b({absl::Milliseconds(100), absl::Seconds(2), 2.0, 0.2}, 42);
  absl::Duration prev_base = b.current_base();
  for (int i = 0; i < 20; ++i) {
    absl::Duration base = b.current_base();
    absl::Duration d = b.Next();
    EXPECT_GE(d, base * 0.8);
    EXPECT_LE(d, std::min(base * 1.2, absl::Seconds(2)));
    EXPECT_GE(b.current_base(), prev_base);
    prev_base = b.current_base();
  }
  EXPECT_EQ(b.current_base(), absl::Seconds(2));
  b.Reset();
  EXPECT_EQ(b.current_base(), absl::Milliseconds(100));
}

TEST(Backoff, JitterSpreadsAgents) {
  // Two agents that lost the daemon at the same moment should not retry in lockstep.
  Backoff a({absl::Seconds(1), absl::Seconds(30), 1.6, 0.2}, 1);
  Backoff b({absl::Seconds(1), absl::Seconds(30), 1.6, 0.2}, 2);
  int same = 0;
  for (int i = 0; i < 10; ++i) same += a.Next() == b.Next();
  EXPECT_LT(same, 10);
}

TEST(Vocabulary, MetricsDocIsGeneratedFromTheTable) {
  absl::StatusOr<std::string> doc = ReadFile(std::string(RAILWATCH_SOURCE_DIR) + "/docs/METRICS.md");
  ASSERT_TRUE(doc.ok()) << doc.status();
  EXPECT_TRUE(*doc == RenderMetricsMarkdown())
      << "docs/METRICS.md is stale: regenerate it with "
         "`build/release/cli/railwatch metrics --markdown > docs/METRICS.md`";
}

TEST(Vocabulary, CanonicalNamesFollowConventions) {
  for (const MetricSpec& m : CanonicalMetrics()) {
    EXPECT_EQ(FindMetric(m.name), &m);
    EXPECT_FALSE(m.help.empty()) << m.name;
    for (const SysfsSource& source : m.sysfs) {
      EXPECT_TRUE(source.path.starts_with("counters/") ||
                  source.path.starts_with("counters_ext/") ||
                  source.path.starts_with("hw_counters/"))
          << m.name << ": " << source.path;
      EXPECT_TRUE(source.pma_bits == 0 || source.pma_bits == 4 || source.pma_bits == 8 ||
                  source.pma_bits == 16 || source.pma_bits == 32)
          << m.name << ": " << source.path;
    }
    if (m.kind == MetricKind::kCounter) {
      EXPECT_TRUE(m.name.ends_with("_total")) << m.name;
    }
    EXPECT_TRUE(m.name.starts_with("fabric_")) << m.name;
  }
  EXPECT_EQ(FindMetric("no_such_metric"), nullptr);
}

}  // namespace
}  // namespace railwatch
