// The agent's on-disk spool (agent/spool.h): append, read back, acknowledge, segment rotation,
// the size limit, torn tails after a crash, and a restart that re-interns series ids.
#include "agent/spool.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace railwatch {
namespace spool_test {
namespace fs = std::filesystem;

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("spool-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Spool::Options Opts(uint64_t max_bytes = 1 << 20, uint64_t segment_bytes = 0) {
    Spool::Options o;
    o.dir = dir_.string();
    o.max_bytes = max_bytes;
    o.segment_bytes = segment_bytes;
    o.rotate_acked_after = absl::ZeroDuration();
    return o;
  }

  // A batch whose points carry `value` on each of `ids`.
  static v1::Batch MakeBatch(uint64_t sequence, const std::vector<uint32_t>& ids,
                             uint64_t value) {
    v1::Batch b;
    b.set_sequence(sequence);
    for (uint32_t id : ids) {
      v1::Point* p = b.add_points();
      p->set_series_id(id);
      p->set_time_unix_nano(static_cast<int64_t>(value) * 1000);
      p->set_counter(value);
    }
    return b;
  }

  // A process that spools batches 0..9 of one series (value i) and ends; returns the first
  // sequence.
  uint64_t SpoolTenBatchesAndExit() {
    SeriesRegistry registry(Labels{});
    const uint32_t a = registry.Define("fabric_a_total", MetricKind::kCounter, {}, 64);
    auto spool = Spool::Open(Opts());
    EXPECT_TRUE(spool.ok()) << spool.status();
    const uint64_t first = (*spool)->first_sequence();
    for (uint64_t i = 0; i < 10; ++i) {
      EXPECT_TRUE((*spool)->Append(MakeBatch(first + i, {a}, i), registry).ok());
    }
    return first;
  }

  std::vector<std::string> Segments() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() == ".seg") out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
};

TEST_F(SpoolTest, AppendsReadsBackAndAcknowledges) {
  SeriesRegistry registry(Labels{{"host", "h1"}});
  const uint32_t a = registry.Define("fabric_a_total", MetricKind::kCounter, {}, 64);
  const uint32_t b = registry.Define("fabric_b_total", MetricKind::kCounter, {}, 64);
  auto spool = Spool::Open(Opts());
  ASSERT_TRUE(spool.ok()) << spool.status();
  const uint64_t first = (*spool)->first_sequence();
  EXPECT_EQ((*spool)->last_recovered_sequence(), 0u);
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_TRUE((*spool)->Append(MakeBatch(first + i, {a, b}, i), registry).ok());
  }
  EXPECT_EQ((*spool)->NextAfter(0), first);
  EXPECT_EQ((*spool)->NextAfter(first + 1), first + 2);
  EXPECT_EQ((*spool)->NextAfter(first + 4), 0u);
  v1::Batch out;
  ASSERT_TRUE((*spool)->Read(first + 3, registry, out).ok());
  EXPECT_EQ(out.sequence(), first + 3);
  ASSERT_EQ(out.points_size(), 2);
  EXPECT_EQ(out.points(0).series_id(), a);
  EXPECT_EQ(out.points(1).series_id(), b);
  EXPECT_EQ(out.points(1).counter(), 3u);
  EXPECT_EQ(registry.size(), 2u);  // read back: the same series, nothing new
  EXPECT_EQ((*spool)->stats().batches_spooled, 5u);

  (*spool)->Ack(first + 2);
  EXPECT_EQ(Segments().size(), 1u);  // still holds unacknowledged batches
  (*spool)->Ack(first + 4);
  EXPECT_TRUE(Segments().empty());
  EXPECT_EQ((*spool)->NextAfter(0), 0u);
  EXPECT_EQ((*spool)->stats().bytes, 0u);
  EXPECT_TRUE(absl::IsNotFound((*spool)->Read(first + 3, registry, out)));
  // The next append opens a new segment, self-contained again.
  ASSERT_TRUE((*spool)->Append(MakeBatch(first + 5, {b}, 5), registry).ok());
  ASSERT_TRUE((*spool)->Read(first + 5, registry, out).ok());
  EXPECT_EQ(out.points(0).series_id(), b);
}

TEST_F(SpoolTest, AckDeletesOnlyWholeSegments) {
  SeriesRegistry registry(Labels{});
  const uint32_t a = registry.Define("fabric_a_total", MetricKind::kCounter, {}, 64);
  auto spool = Spool::Open(Opts(1 << 20, 1024));
  ASSERT_TRUE(spool.ok());
  const uint64_t first = (*spool)->first_sequence();
  for (uint64_t i = 0; i < 200; ++i) {
    ASSERT_TRUE((*spool)->Append(MakeBatch(first + i, {a}, i), registry).ok());
  }
  const size_t before = Segments().size();
  ASSERT_GT(before, 4u);
  (*spool)->Ack(first + 99);
  const size_t after = Segments().size();
  EXPECT_LT(after, before);
  EXPECT_GT(after, 1u);
  // The oldest batch left is at most one segment's worth below the first unacknowledged.
  const uint64_t oldest = (*spool)->NextAfter(0);
  EXPECT_LE(oldest, first + 100);
  EXPECT_GT(oldest, first);
  EXPECT_EQ((*spool)->NextAfter(first + 99), first + 100);
  EXPECT_EQ((*spool)->stats().batches_dropped, 0u);
}

TEST_F(SpoolTest, SizeLimitDropsOldestSegmentsAndCountsThem) {
  SeriesRegistry registry(Labels{});
  std::vector<uint32_t> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(registry.Define("fabric_x_total", MetricKind::kCounter,
                                  {{"i", std::to_string(i)}}, 64));
  }
  constexpr uint64_t kMax = 16 << 10;
  auto spool = Spool::Open(Opts(kMax, 2048));
  ASSERT_TRUE(spool.ok());
  const uint64_t first = (*spool)->first_sequence();
  constexpr uint64_t kBatches = 300;
  (*spool)->Ack(first + 9);  // the first 10 are stored: dropping them is no loss
  for (uint64_t i = 0; i < kBatches; ++i) {
    ASSERT_TRUE((*spool)->Append(MakeBatch(first + i, ids, i), registry).ok());
    ASSERT_LE((*spool)->stats().bytes, kMax);
  }
  uint64_t on_disk = 0;
  for (const std::string& s : Segments()) on_disk += fs::file_size(s);
  const Spool::Stats stats = (*spool)->stats();
  EXPECT_EQ(stats.bytes, on_disk);
  EXPECT_LE(on_disk, kMax);
  const uint64_t oldest = (*spool)->NextAfter(0);
  ASSERT_GT(oldest, first + 10);
  // Every batch below the oldest kept was dropped; those above the ack were lost and counted.
  EXPECT_EQ(stats.batches_dropped, oldest - (first + 10));
  EXPECT_GT(stats.bytes_dropped, 0u);
  // What is left reads back in order, nothing missing after the oldest.
  v1::Batch out;
  for (uint64_t s = oldest; s < first + kBatches; ++s) {
    ASSERT_TRUE((*spool)->Read(s, registry, out).ok()) << s;
    ASSERT_EQ(out.points_size(), 20);
    EXPECT_EQ(out.points(19).series_id(), ids[19]);
  }
}

TEST_F(SpoolTest, TornTailIsCutAtOpenWithTheGoodRecordsKept) {
  const uint64_t first = SpoolTenBatchesAndExit();
  ASSERT_EQ(Segments().size(), 1u);
  const std::string seg = Segments()[0];
  const uintmax_t size = fs::file_size(seg);
  fs::resize_file(seg, size - 3);  // the last record torn, as by a crash in write(2)

  SeriesRegistry registry2(Labels{});
  auto spool = Spool::Open(Opts());
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_EQ((*spool)->stats().torn_tails, 1u);
  EXPECT_EQ((*spool)->stats().batches_recovered, 9u);
  EXPECT_EQ((*spool)->last_recovered_sequence(), first + 8);
  EXPECT_LT(fs::file_size(seg), size - 3);  // cut back to the last good record
  v1::Batch out;
  ASSERT_TRUE((*spool)->Read(first + 8, registry2, out).ok());
  EXPECT_EQ(out.points(0).counter(), 8u);
  EXPECT_TRUE(absl::IsNotFound((*spool)->Read(first + 9, registry2, out)));
}

TEST_F(SpoolTest, DamagedRecordAndGarbageAreCutNotFatal) {
  const uint64_t first = SpoolTenBatchesAndExit();
  const std::string seg = Segments()[0];
  {
    // Flip a byte in the last record's payload: its CRC no longer matches.
    std::fstream f(seg, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.put('\x7f');
  }
  {
    std::ofstream garbage(dir_ / "00000000000000000001.seg", std::ios::binary);
    garbage << "not a spool segment at all";
  }
  SeriesRegistry registry2(Labels{});
  auto spool = Spool::Open(Opts());
  ASSERT_TRUE(spool.ok()) << spool.status();
  EXPECT_EQ((*spool)->stats().torn_tails, 2u);
  EXPECT_EQ((*spool)->stats().batches_recovered, 9u);
  EXPECT_FALSE(fs::exists(dir_ / "00000000000000000001.seg"));
  EXPECT_EQ((*spool)->NextAfter(0), first);
}

TEST_F(SpoolTest, RestartKeepsInstanceRaisesSequencesAndRemapsSeriesIds) {
  uint64_t instance, first;
  {
    SeriesRegistry registry(Labels{{"host", "h1"}});
    const uint32_t x = registry.Define("fabric_x_total", MetricKind::kCounter, {{"p", "1"}}, 32);
    const uint32_t y = registry.Define("fabric_y", MetricKind::kGauge, {}, 0);
    auto spool = Spool::Open(Opts());
    ASSERT_TRUE(spool.ok());
    instance = (*spool)->instance_id();
    first = (*spool)->first_sequence();
    for (uint64_t i = 0; i < 3; ++i) {
      ASSERT_TRUE((*spool)->Append(MakeBatch(first + i, {x, y}, 10 + i), registry).ok());
    }
  }  // the process ends without any acknowledgement

  // The next process defines its series in another order: other ids.
  SeriesRegistry registry(Labels{{"host", "h1"}});
  registry.Define("fabric_z_total", MetricKind::kCounter, {}, 64);
  const uint32_t y = registry.Define("fabric_y", MetricKind::kGauge, {}, 0);
  auto spool = Spool::Open(Opts());
  ASSERT_TRUE(spool.ok());
  EXPECT_EQ((*spool)->instance_id(), instance);
  EXPECT_EQ((*spool)->last_recovered_sequence(), first + 2);
  EXPECT_GT((*spool)->first_sequence(), first + 2);
  EXPECT_EQ((*spool)->stats().batches_recovered, 3u);
  EXPECT_EQ((*spool)->NextAfter(0), first);

  v1::Batch out;
  ASSERT_TRUE((*spool)->Read(first + 1, registry, out).ok());
  ASSERT_EQ(out.points_size(), 2);
  // x was new here: defined on read, with its labels (host included) and width.
  ASSERT_EQ(registry.size(), 3u);
  v1::Batch defs;
  registry.AppendDefinitions(0, defs);
  const v1::SeriesDefinition& x = defs.definitions(out.points(0).series_id());
  EXPECT_EQ(x.name(), "fabric_x_total");
  EXPECT_EQ(x.width_bits(), 32u);
  ASSERT_EQ(x.labels_size(), 2);
  EXPECT_EQ(x.labels(0).name(), "host");
  EXPECT_EQ(x.labels(1).value(), "1");
  EXPECT_EQ(out.points(1).series_id(), y);
  EXPECT_EQ(out.points(0).counter(), 11u);

  // This process's batches go to a new segment, after the recovered ones.
  ASSERT_TRUE((*spool)->Append(MakeBatch((*spool)->first_sequence(), {y}, 1), registry).ok());
  EXPECT_EQ((*spool)->NextAfter(first + 2), (*spool)->first_sequence());
  EXPECT_EQ(Segments().size(), 2u);
  (*spool)->Ack(first + 2);
  EXPECT_EQ(Segments().size(), 1u);
}

TEST_F(SpoolTest, OneProcessPerDirectory) {
  auto one = Spool::Open(Opts());
  ASSERT_TRUE(one.ok());
  auto two = Spool::Open(Opts());
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(two.status().message().find("in use"), std::string::npos);
  one->reset();
  EXPECT_TRUE(Spool::Open(Opts()).ok());
}

TEST_F(SpoolTest, UnusableDirectoryIsAClearError) {
  {
    std::ofstream file(dir_);  // a file where the directory should be
  }
  auto spool = Spool::Open(Opts());
  ASSERT_FALSE(spool.ok());
  EXPECT_NE(spool.status().message().find(dir_.string()), std::string::npos);
  fs::remove(dir_);
}

// A torn write can stop anywhere: every prefix of a segment scans to the records wholly inside
// it, and random damage never yields a record that was not written.
TEST(SpoolFormatTest, EveryPrefixScansToItsWholeRecordsAndDamageNeverInventsOne) {
  std::string segment(spool::kMagic);
  std::vector<uint64_t> ends;  // where each record ends
  for (uint64_t i = 1; i <= 12; ++i) {
    if (i % 4 == 1) spool::AppendRecord(spool::RecordType::kDefinition, "definition", segment);
    spool::AppendBatchRecord(i, std::string(i * 7, static_cast<char>('a' + i)), segment);
    ends.push_back(segment.size());
  }
  const spool::ScanResult whole = spool::Scan(segment);
  EXPECT_TRUE(whole.problem.empty()) << whole.problem;
  EXPECT_EQ(whole.valid_bytes, segment.size());
  for (size_t cut = 0; cut <= segment.size(); ++cut) {
    const spool::ScanResult r = spool::Scan(std::string_view(segment).substr(0, cut));
    uint64_t batches = 0;
    for (const spool::Record& rec : r.records) batches += rec.type == spool::RecordType::kBatch;
    const auto whole_batches =
        static_cast<uint64_t>(std::upper_bound(ends.begin(), ends.end(), cut) - ends.begin());
    ASSERT_EQ(batches, whole_batches) << "cut at " << cut;
    ASSERT_LE(r.valid_bytes, cut);
    // Shorter than the magic: no segment at all. Else a problem exactly when a record is torn.
    ASSERT_EQ(r.problem.empty(), cut >= spool::kMagic.size() && r.valid_bytes == cut)
        << "cut at " << cut;
  }
  std::mt19937 rng(9);
  for (int round = 0; round < 2000; ++round) {
    std::string damaged = segment;
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
      damaged[rng() % damaged.size()] = static_cast<char>(rng());
    }
    const spool::ScanResult r = spool::Scan(damaged);
    ASSERT_LE(r.records.size(), whole.records.size());
    for (size_t i = 0; i < r.records.size(); ++i) {
      // A random error passes CRC-32 with odds of 2^-32: a record that scans is the one written.
      ASSERT_EQ(r.records[i].payload, whole.records[i].payload) << "round " << round;
      ASSERT_EQ(r.records[i].sequence, whole.records[i].sequence);
    }
  }
}

}  // namespace
}  // namespace railwatch
