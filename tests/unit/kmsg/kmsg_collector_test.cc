// The host agent's kmsg collector (collectors/kmsg_collector.h) on files of /dev/kmsg records,
// as railwatch-sim writes them: events with the NIC found in sysfs, resuming after a restart,
// a first start's lookback, the per-cycle bounds, lost and user records, a file replaced.

#include "collectors/kmsg_collector.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace kmsg_collector_test {

namespace fs = std::filesystem;
using ::railwatch::testing::Attribute;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TempDir;

std::string Label(const EventRecord& e, const std::string& name) {
  const std::string* v = FindLabel(e.labels, name);
  return v == nullptr ? "" : *v;
}

// A file of /dev/kmsg records, appended like the simulator does (one write a record).
class KmsgFile {
 public:
  explicit KmsgFile(std::string path) : path_(std::move(path)) {}
  void Append(int level, int64_t ts_usec, const std::string& message, const std::string& pci = "",
              int facility = 0) {
    std::ofstream out(path_, std::ios::app);
    out << (facility * 8 + level) << "," << seq_++ << "," << ts_usec << ",-;" << message << "\n";
    if (!pci.empty()) out << " SUBSYSTEM=pci\n DEVICE=+pci:" << pci << "\n";
  }
  void SkipSequence(uint64_t n) { seq_ += n; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  uint64_t seq_ = 0;
};

void MakeDirs(const fs::path& p) { fs::create_directories(p); }

class KmsgCollectorTest : public ::testing::Test {
 protected:
  KmsgCollectorTest() : file_(dir_.path() + "/kmsg") {
    // A NIC at 0000:18:00.0 (mlx5_0, ens1f0np0), below the root port 0000:17:01.0.
    const fs::path devices = fs::path(dir_.path()) / "sys" / "bus" / "pci" / "devices";
    MakeDirs(devices / "0000:18:00.0" / "infiniband" / "mlx5_0");
    MakeDirs(devices / "0000:18:00.0" / "net" / "ens1f0np0");
    MakeDirs(devices / "0000:17:01.0" / "0000:18:00.0" / "infiniband" / "mlx5_0");
    MakeDirs(devices / "0000:17:01.0" / "0000:18:00.0" / "net" / "ens1f0np0");
    MakeDirs(fs::path(dir_.path()) / "sys" / "class" / "infiniband" / "mlx5_0");
    fs::create_symlink(
        "../../../bus/pci/devices/0000:18:00.0",
        fs::path(dir_.path()) / "sys" / "class" / "infiniband" / "mlx5_0" / "device");
  }

  KmsgCollector::Options Options() const {
    KmsgCollector::Options o;
    o.path = file_.path();
    o.sysfs_root = dir_.path() + "/sys";
    o.state_dir = dir_.path() + "/state";
    o.state_write_interval = absl::ZeroDuration();
    return o;
  }

  void HealthReport(int64_t ts_usec, const std::string& pci = "0000:18:00.0") {
    const std::string p = "mlx5_core " + pci + ": ";
    file_.Append(3, ts_usec,
                 p + "poll_health:801:(pid 0): device's health compromised - reached miss count",
                 pci);
    file_.Append(3, ts_usec, p + "print_health_info:447:(pid 0): synd 0x1: firmware internal error",
                 pci);
    file_.Append(3, ts_usec, p + "print_health_info:449:(pid 0): ext_synd 0x8f7a", pci);
  }

  void AerCorrected(int64_t ts_usec) {
    file_.Append(4, ts_usec,
                 "pcieport 0000:17:01.0: AER: Correctable error message received from 0000:18:00.0",
                 "0000:17:01.0");
    file_.Append(4, ts_usec,
                 "mlx5_core 0000:18:00.0: PCIe Bus Error: severity=Correctable, type=Physical "
                 "Layer, (Receiver ID)",
                 "0000:18:00.0");
    file_.Append(4, ts_usec,
                 "mlx5_core 0000:18:00.0:   device [15b3:1021] error status/mask=00000001/00002000",
                 "0000:18:00.0");
    file_.Append(4, ts_usec, "mlx5_core 0000:18:00.0:    [ 0] RxErr                  (First)",
                 "0000:18:00.0");
  }

  TempDir dir_;
  KmsgFile file_;
  FakeClock clock_{absl::FromUnixSeconds(1'750'000'000)};
};

TEST_F(KmsgCollectorTest, FileRecordsBecomeEventsWithTheNicFromSysfs) {
  file_.Append(6, 5'000'000, "mlx5_core 0000:18:00.0: firmware version: 28.39.1002",
               "0000:18:00.0");
  HealthReport(60'000'000);
  KmsgCollector c(Options(), clock_);
  RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  std::vector<EventRecord> health = em.EventsOfKind("kernel.nic_health");
  ASSERT_EQ(health.size(), 1u);
  const EventRecord& h = health[0];
  EXPECT_EQ(Label(h, "pci"), "0000:18:00.0");
  EXPECT_EQ(Label(h, "adapter"), "0000:18:00");
  EXPECT_EQ(Label(h, "device"), "mlx5_0");
  EXPECT_EQ(Label(h, "interface"), "ens1f0np0");
  EXPECT_EQ(Label(h, "log"), "kmsg");
  EXPECT_EQ(Attribute(h, "synd"), "0x1");
  EXPECT_EQ(Attribute(h, "ext_synd"), "0x8f7a");
  EXPECT_EQ(Attribute(h, "seq"), "1");
  EXPECT_EQ(Attribute(h, "pci"), "");  // a label, not an attribute
  // The newest record was written just now: it sets the file's clock.
  EXPECT_EQ(h.time_unix_nano, clock_.NowNanos());
  ASSERT_EQ(em.EventsOfKind("kernel.nic_info").size(), 1u);
  EXPECT_EQ(em.EventsOfKind("kernel.nic_info")[0].time_unix_nano,
            clock_.NowNanos() - absl::ToInt64Nanoseconds(absl::Seconds(55)));
  EXPECT_EQ(em.Get("railwatch_kmsg_records_total"), 4u);
  EXPECT_EQ(em.Get("railwatch_kmsg_events_total{kind=\"kernel.nic_health\"}"), 1u);
  EXPECT_EQ(em.Get("railwatch_kmsg_events_total{kind=\"kernel.pcie_aer\"}"), 0u);

  // Appended later: a corrected AER on the NIC, announced by its root port.
  clock_.Advance(absl::Seconds(10));
  AerCorrected(70'000'000);
  ASSERT_TRUE(c.Collect(em).ok());
  std::vector<EventRecord> aer = em.EventsOfKind("kernel.pcie_aer");
  ASSERT_EQ(aer.size(), 1u);
  EXPECT_EQ(Label(aer[0], "aer_severity"), "corrected");
  EXPECT_EQ(Label(aer[0], "device"), "mlx5_0");
  EXPECT_EQ(Attribute(aer[0], "root_port"), "0000:17:01.0");
  EXPECT_EQ(Attribute(aer[0], "first_error"), "RxErr");
  EXPECT_EQ(aer[0].time_unix_nano, clock_.NowNanos());
  EXPECT_EQ(em.Get("railwatch_kmsg_records_total"), 8u);
}

TEST_F(KmsgCollectorTest, RootPortMessagesNameTheNicBelowIt) {
  file_.Append(3, 1'000'000,
               "pcieport 0000:17:01.0: DPC: containment event, status:0x1f01 source:0x0000",
               "0000:17:01.0");
  file_.Append(3, 1'000'000, "infiniband mlx5_0: Fatal error (1) on MAD QP (1)");
  KmsgCollector c(Options(), clock_);
  RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  std::vector<EventRecord> dpc = em.EventsOfKind("kernel.pcie_dpc");
  ASSERT_EQ(dpc.size(), 1u);
  EXPECT_EQ(Label(dpc[0], "pci"), "0000:17:01.0");
  EXPECT_EQ(Label(dpc[0], "device"), "mlx5_0");
  EXPECT_EQ(Attribute(dpc[0], "nic_pci"), "0000:18:00.0");
  std::vector<EventRecord> fatal = em.EventsOfKind("kernel.rdma_fatal");
  ASSERT_EQ(fatal.size(), 1u);
  EXPECT_EQ(Label(fatal[0], "pci"), "0000:18:00.0");  // from class/infiniband/mlx5_0/device
  EXPECT_EQ(Label(fatal[0], "interface"), "ens1f0np0");
}

TEST_F(KmsgCollectorTest, ResumesWhereItStoppedAfterARestart) {
  HealthReport(10'000'000);
  {
    KmsgCollector c(Options(), clock_);
    RecordingEmitter em;
    ASSERT_TRUE(c.Collect(em).ok());
    EXPECT_EQ(em.EventsOfKind("kernel.nic_health").size(), 1u);
  }  // the agent stops: its position is saved
  std::string state;
  std::getline(std::ifstream(dir_.path() + "/state/kmsg.state"), state, '\0');
  EXPECT_THAT(state, ::testing::HasSubstr("next_seq\t3"));
  // Written while the agent was down.
  HealthReport(20'000'000, "0000:28:00.0");
  KmsgCollector c(Options(), clock_);
  RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  std::vector<EventRecord> health = em.EventsOfKind("kernel.nic_health");
  ASSERT_EQ(health.size(), 1u);
  EXPECT_EQ(Label(health[0], "pci"), "0000:28:00.0");
  EXPECT_EQ(c.stats().records, 3u);  // only the new ones were read
  EXPECT_EQ(c.stats().lost, 0u);
}

TEST_F(KmsgCollectorTest, AReplacedFileIsReadAgainFromItsStart) {
  HealthReport(10'000'000);
  KmsgCollector c(Options(), clock_);
  RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  // The simulator starts again: a new file, sequence numbers from 0.
  fs::remove(file_.path());
  KmsgFile fresh(file_.path());
  fresh.Append(4, 1'000'000,
               "mlx5_core 0000:18:00.0: mlx5_pcie_event:299:(pid 1): Detected insufficient power "
               "on the PCIe slot (27W).",
               "0000:18:00.0");
  ASSERT_TRUE(c.Collect(em).ok());
  std::vector<EventRecord> power = em.EventsOfKind("kernel.pcie_power");
  ASSERT_EQ(power.size(), 1u);
  EXPECT_EQ(Attribute(power[0], "power_w"), "27");
  EXPECT_EQ(c.stats().skipped_read, 0u);
}

TEST_F(KmsgCollectorTest, FirstStartReadsBackTheLookbackOnly) {
  // An hour of insufficient-power messages, one a minute.
  for (int minute = 0; minute <= 60; ++minute) {
    file_.Append(4, int64_t{minute} * 60'000'000,
                 "mlx5_core 0000:18:00.0: Detected insufficient power on the PCIe slot (27W).");
  }
  KmsgCollector::Options o = Options();
  o.lookback = absl::Minutes(10);
  KmsgCollector c(o, clock_);
  RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  EXPECT_EQ(em.EventsOfKind("kernel.pcie_power").size(), 11u);  // minutes 50 to 60
  EXPECT_EQ(c.stats().skipped_lookback, 50u);
  EXPECT_EQ(em.Get("railwatch_kmsg_skipped_records_total{reason=\"lookback\"}"), 50u);
}

TEST_F(KmsgCollectorTest, BoundsPerCycleLeaveTheRestForTheNext) {
  for (int i = 0; i < 25; ++i) {
    file_.Append(4, 1'000'000 + i,
                 "mlx5_core 0000:18:00.0: Detected insufficient power on the PCIe slot (27W).");
  }
  KmsgCollector::Options o = Options();
  o.max_events = 10;
  KmsgCollector c(o, clock_);
  RecordingEmitter em;
  std::vector<size_t> per_cycle;
  for (int cycle = 0; cycle < 4; ++cycle) {
    const size_t before = em.events.size();
    ASSERT_TRUE(c.Collect(em).ok());
    per_cycle.push_back(em.events.size() - before);
  }
  EXPECT_THAT(per_cycle, ::testing::ElementsAre(10u, 10u, 5u, 0u));
  EXPECT_EQ(c.stats().limited_events, 2u);
  EXPECT_EQ(em.Get("railwatch_kmsg_limited_cycles_total{limit=\"events\"}"), 2u);

  KmsgCollector::Options r = Options();
  r.state_dir.clear();
  r.max_records = 7;
  KmsgCollector d(r, clock_);
  RecordingEmitter em2;
  ASSERT_TRUE(d.Collect(em2).ok());
  EXPECT_EQ(d.stats().records, 7u);
  EXPECT_EQ(d.stats().limited_records, 1u);
  ASSERT_TRUE(d.Collect(em2).ok());
  EXPECT_EQ(d.stats().records, 14u);
}

TEST_F(KmsgCollectorTest, LostUserAndMalformedRecordsAreCounted) {
  file_.Append(4, 1'000'000,
               "mlx5_core 0000:18:00.0: Detected insufficient power on the PCIe slot (27W).");
  file_.SkipSequence(3);  // overwritten before they were read
  file_.Append(4, 2'000'000, "railwatch-test: mlx5_core 0000:18:00.0: device's health compromised",
               "", /*facility=*/1);
  {
    std::ofstream out(file_.path(), std::ios::app);
    out << "this is not a record\n";
  }
  file_.Append(4, 3'000'000, "mlx5_core 0000:18:00.0: PCIe Bus Error: severity=Sometimes");
  KmsgCollector c(Options(), clock_);
  RecordingEmitter em;
  ASSERT_TRUE(c.Collect(em).ok());
  EXPECT_EQ(c.stats().lost, 3u);
  EXPECT_EQ(c.stats().skipped_user, 1u);
  EXPECT_EQ(em.EventsOfKind("kernel.nic_health").size(), 0u);  // a process cannot fake one
  EXPECT_EQ(em.Get("railwatch_kmsg_parse_problems_total"), 2u);
  EXPECT_EQ(em.Get("railwatch_kmsg_lost_records_total"), 3u);
  EXPECT_EQ(em.events.size(), 1u);
}

TEST_F(KmsgCollectorTest, AFileNotWrittenYetIsWaitedFor) {
  KmsgCollector::Options o = Options();
  o.path = dir_.path() + "/later";
  KmsgCollector c(o, clock_);
  RecordingEmitter em;
  EXPECT_TRUE(c.Collect(em).ok());
  EXPECT_EQ(em.Get("railwatch_kmsg_records_total"), 0u);
  KmsgFile later(o.path);
  later.Append(4, 1'000'000,
               "mlx5_core 0000:18:00.0: Detected insufficient power on the PCIe slot (27W).");
  EXPECT_TRUE(c.Collect(em).ok());
  EXPECT_EQ(em.EventsOfKind("kernel.pcie_power").size(), 1u);
}

TEST(KmsgFlag, AutoOffAndPaths) {
  EXPECT_EQ(*KmsgPathFromFlag("off", true), "");
  EXPECT_EQ(*KmsgPathFromFlag("auto", false), "");  // a simulated tree is not this kernel
  EXPECT_EQ(*KmsgPathFromFlag("/tmp/sim/gpu-node-001/kmsg", false), "/tmp/sim/gpu-node-001/kmsg");
  EXPECT_FALSE(KmsgPathFromFlag("", true).ok());
}

TEST(KmsgPosition, RoundTripAndBadFiles) {
  KmsgPosition p{"/dev/kmsg", "e405ce98-a14c-48dd-a70d-81b5cee08530", 346, 0, 0};
  absl::StatusOr<KmsgPosition> back = ParseKmsgPosition(FormatKmsgPosition(p));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, p);
  EXPECT_FALSE(ParseKmsgPosition("# something else\n").ok());
  EXPECT_FALSE(ParseKmsgPosition("# railwatch kmsg state v1\nnext_seq\tx\n").ok());
}

}  // namespace kmsg_collector_test
}  // namespace railwatch
