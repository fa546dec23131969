#include "common/backoff.h"
#include "common/labels.h"
#include "common/metrics_doc.h"
#include "common/text.h"
#include "common/vocabulary.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace common_test {

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
