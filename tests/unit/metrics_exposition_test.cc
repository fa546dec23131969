// The /metrics text rendered straight from the store (exporters/store_exposition.h) against
// prometheus-cpp's TextSerializer over the MetricFamily path (StoreCollectable), which it
// replaced: byte-identical output, escaping, stale series, ordering.

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/clock.h"
#include "exporters/exposition_text.h"
#include "exporters/fabric_collectable.h"
#include "exporters/store_exposition.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/client_metric.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace railwatch {
namespace metrics_exposition_test {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ViaPrometheusCpp(const prometheus::Collectable& collectable) {
  return prometheus::TextSerializer().Serialize(collectable.Collect());
}

std::string Render(StoreExposition& exposition) {
  std::string out;
  exposition.AppendExposition(out);
  return out;
}

TEST(MetricsExpositionText, ValuesAreFormattedAsPrometheusCppFormatsThem) {
  const std::vector<double> values = {0.0,
                                      -0.0,
                                      1,
                                      -1,
                                      1.5,
                                      0.1,
                                      1e-7,
                                      2.5e-300,
                                      1.0 / 3,
                                      42e6,
                                      999999999999999.0,
                                      1e15,
                                      1234567890123456.0,
                                      9007199254740993.0,
                                      18446744073709551615.0,
                                      1e20,
                                      -3e21,
                                      std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::denorm_min(),
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity()};
  prometheus::MetricFamily family{"v", "", prometheus::MetricType::Gauge, {}};
  std::string ours;
  AppendFamilyHeader(ours, "v", "", "gauge");
  for (double v : values) {
    family.metric.emplace_back().gauge.value = v;
    AppendSampleLine(ours, "v", {}, v);
  }
  EXPECT_EQ(ours, prometheus::TextSerializer().Serialize({family}));
}

TEST(MetricsExpositionText, LabelValuesAreEscaped) {
  std::string out;
  AppendSampleLine(out, "m", {{"a", "say \"hi\""}, {"b", "C:\\dir"}, {"c", "two\nlines"}}, 1);
  EXPECT_EQ(out, "m{a=\"say \\\"hi\\\"\",b=\"C:\\\\dir\",c=\"two\\nlines\"} 1\n");
}

TEST(MetricsExpositionText, HelpEscapesBackslashAndNewlineButNotQuotes) {
  std::string out;
  AppendFamilyHeader(out, "m", "a \"b\" c\\d\ne", "counter");
  EXPECT_EQ(out, "# HELP m a \"b\" c\\\\d\\ne\n# TYPE m counter\n");
}

class MetricsStoreExpositionTest : public ::testing::Test {
 protected:
  SeriesRef Add(std::string_view name, Labels labels, MetricKind kind, double value,
                absl::Duration age = absl::ZeroDuration()) {
    NormalizeLabels(labels);
    const SeriesRef ref = store_.Intern(name, labels, kind, 0, "help of " + std::string(name));
    store_.Append(ref, absl::ToUnixNanos(clock_.Now() - age), value);
    return ref;
  }

  FakeClock clock_;
  SeriesStore store_{SeriesStore::Options{.capacity = 8}};
  StoreCollectable reference_{store_, clock_, absl::Minutes(5)};
  StoreExposition exposition_{store_, clock_, absl::Minutes(5)};
};

TEST_F(MetricsStoreExpositionTest, SameBytesAsTheMetricFamilyPath) {
  Add("fabric_rdma_port_receive_bytes_total", {{"host", "h1"}, {"device", "mlx5_0"}},
      MetricKind::kCounter, 123456789012.0);
  Add("zz_custom_gauge", {{"host", "h\"1\\\n"}}, MetricKind::kGauge, 0.25);
  Add("fabric_pfc_pause_frames_total", {{"host", "h1"}, {"priority", "3"}, {"direction", "rx"}},
      MetricKind::kCounter, 7);
  Add("fabric_rdma_port_receive_bytes_total", {{"host", "h0"}, {"device", "mlx5_1"}},
      MetricKind::kCounter, 5);
  Add("a_no_labels", {}, MetricKind::kGauge, -1.5);
  Add("fabric_pfc_pause_frames_total", {{"host", "h1"}, {"priority", "3"}, {"direction", "tx"}},
      MetricKind::kCounter, 1e18);
  const std::string ours = Render(exposition_);
  EXPECT_EQ(ours, ViaPrometheusCpp(reference_));
  // Families in name order; canonical help from the vocabulary, the agent's otherwise.
  EXPECT_LT(ours.find("# TYPE a_no_labels gauge"), ours.find("fabric_pfc"));
  EXPECT_LT(ours.find("fabric_rdma_port"), ours.find("zz_custom_gauge"));
  EXPECT_THAT(ours, HasSubstr("# HELP zz_custom_gauge help of zz_custom_gauge\n"));
  EXPECT_THAT(ours, Not(HasSubstr("help of fabric_rdma_port_receive_bytes_total")));
  EXPECT_THAT(ours, HasSubstr("zz_custom_gauge{host=\"h\\\"1\\\\\\n\"} 0.25\n"));
}

TEST_F(MetricsStoreExpositionTest, StaleSeriesAndEmptyFamiliesAreLeftOut) {
  Add("fabric_link_carrier_up_total", {{"host", "fresh"}}, MetricKind::kCounter, 1);
  Add("fabric_link_carrier_up_total", {{"host", "gone"}}, MetricKind::kCounter, 2,
      absl::Minutes(6));
  Add("fabric_link_carrier_down_total", {{"host", "gone"}}, MetricKind::kCounter, 3,
      absl::Minutes(6));
  const std::string ours = Render(exposition_);
  EXPECT_EQ(ours, ViaPrometheusCpp(reference_));
  EXPECT_THAT(ours, HasSubstr("{host=\"fresh\"} 1\n"));
  EXPECT_THAT(ours, Not(HasSubstr("gone")));
  EXPECT_THAT(ours, Not(HasSubstr("fabric_link_carrier_down_total")));

  // The clock moves past the fresh one too: nothing is left, not even a header.
  clock_.Advance(absl::Minutes(6));
  EXPECT_EQ(Render(exposition_), "");
}

TEST_F(MetricsStoreExpositionTest, LaterScrapesFollowNewValuesNewSeriesAndNewFamilies) {
  const SeriesRef a = Add("m_b_total", {{"host", "h2"}}, MetricKind::kCounter, 1);
  Add("m_b_total", {{"host", "h1"}}, MetricKind::kCounter, 1);
  const std::string first = Render(exposition_);
  EXPECT_EQ(first, Render(exposition_)) << "a second scrape of the same store differs";

  clock_.Advance(absl::Seconds(1));
  store_.Append(a, clock_.NowNanos(), 2);
  Add("m_a", {{"host", "h3"}}, MetricKind::kGauge, 9);          // a family sorting first
  Add("m_b_total", {{"host", "h0"}}, MetricKind::kCounter, 4);  // interned last, listed last
  Add("m_c", {}, MetricKind::kGauge, 1);
  const std::string second = Render(exposition_);
  EXPECT_EQ(second, ViaPrometheusCpp(reference_));
  EXPECT_EQ(second,
            "# HELP m_a help of m_a\n# TYPE m_a gauge\nm_a{host=\"h3\"} 9\n"
            "# HELP m_b_total help of m_b_total\n# TYPE m_b_total counter\n"
            "m_b_total{host=\"h2\"} 2\nm_b_total{host=\"h1\"} 1\nm_b_total{host=\"h0\"} 4\n"
            "# HELP m_c help of m_c\n# TYPE m_c gauge\nm_c 1\n");
}

TEST_F(MetricsStoreExpositionTest, AppendsToWhatTheBufferHolds) {
  Add("m", {}, MetricKind::kGauge, 1);
  std::string out = "# before\n";
  exposition_.AppendExposition(out);
  EXPECT_EQ(out, "# before\n# HELP m help of m\n# TYPE m gauge\nm 1\n");
}

}  // namespace
}  // namespace railwatch
