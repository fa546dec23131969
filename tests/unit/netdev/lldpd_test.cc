// The host agent's LLDP collector against Debian's real lldpd: a "switch" namespace and a
// "host" namespace joined by a veth pair, an lldpd in each (the switch's named leaf-r1), the
// collector asking the host's lldpd through lldpcli. Moving the host's cable to another switch
// port shows as the new neighbour, and the daemon's map (daemon/topology_watch.h, fed the
// collector's series as ingest would store them) follows the cable. Everything lives in
// namespaces the test makes and deletes; no frame leaves them. Needs root, iproute2 and lldpd
// (scripts/install-deps).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectors/lldp_collector.h"
#include "common/clock.h"
#include "common/vocabulary.h"
#include "daemon/topology_watch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "unit/netdev/netns.h"

namespace railwatch::testing {
namespace {

using ::testing::HasSubstr;

// One lldpd in a namespace, in the foreground (-d), with its own control socket; killed and
// waited for when the object goes.
class Lldpd {
 public:
  static absl::StatusOr<std::unique_ptr<Lldpd>> Start(const TestNetns& netns,
                                                      const std::string& dir,
                                                      const std::string& name) {
    auto d = std::unique_ptr<Lldpd>(new Lldpd());
    d->socket_ = absl::StrCat(dir, "/", name, ".socket");
    d->log_ = absl::StrCat(dir, "/", name, ".log");
    const std::string pidfile = absl::StrCat(dir, "/", name, ".pid");
    std::vector<std::string> argv = {"ip", "netns", "exec",     netns.name(), "lldpd",
                                     "-d", "-u",    d->socket_, "-p",         pidfile};
    d->pid_ = fork();
    if (d->pid_ < 0) return absl::InternalError("fork");
    if (d->pid_ == 0) {
      const int fd = open(d->log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
      }
      std::vector<char*> args;
      for (std::string& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      execvp("ip", args.data());
      _exit(127);
    }
    // Up once its socket answers.
    for (int i = 0; i < 100; ++i) {
      if (d->Cli({"show", "configuration"}).ok()) return d;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return absl::UnavailableError(
        absl::StrCat("lldpd in ", netns.name(), " did not start: ", d->Log()));
  }
  ~Lldpd() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status;
      waitpid(pid_, &status, 0);
    }
  }
  absl::StatusOr<std::string> Cli(std::vector<std::string> args) const {
    std::vector<std::string> argv = {"lldpcli", "-u", socket_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv);
  }
  const std::string& socket() const { return socket_; }
  std::string Log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  Lldpd() = default;
  pid_t pid_ = -1;
  std::string socket_, log_;
};

class LldpdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / absl::StrCat("railwatch-lldpd-", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // lldpd's unprivileged half chroots here; systemd-tmpfiles makes it on a booted system.
    std::filesystem::create_directories("/run/lldpd");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// What ingest does with a host agent's series: the agent's host label added, stored.
class StoreEmitter final : public Emitter {
 public:
  StoreEmitter(SeriesStore& store, std::string host) : store_(store), host_(std::move(host)) {}
  uint32_t DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                        uint32_t width_bits) override {
    labels.push_back({"host", host_});
    NormalizeLabels(labels);
    refs_.push_back(store_.Intern(name, labels, TraitsOf(name, kind, width_bits)));
    return static_cast<uint32_t>(refs_.size() - 1);
  }
  void Counter(uint32_t id, uint64_t value, int64_t t) override {
    store_.Append(refs_[id], t, static_cast<double>(value));
  }
  void Gauge(uint32_t id, double value, int64_t t) override { store_.Append(refs_[id], t, value); }
  void Event(EventRecord) override {}

 private:
  SeriesStore& store_;
  std::string host_;
  std::vector<SeriesRef> refs_;
};

// Both at once: the test's view (RecordingEmitter) and the daemon's store.
class TeeEmitter final : public Emitter {
 public:
  TeeEmitter(Emitter& a, Emitter& b) : a_(a), b_(b) {}
  uint32_t DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                        uint32_t width_bits) override {
    const uint32_t id = a_.DefineSeries(name, kind, labels, width_bits);
    const uint32_t other = b_.DefineSeries(name, kind, std::move(labels), width_bits);
    if (other != id) ids_[id] = other;
    return id;
  }
  void Counter(uint32_t id, uint64_t v, int64_t t) override {
    a_.Counter(id, v, t);
    b_.Counter(Other(id), v, t);
  }
  void Gauge(uint32_t id, double v, int64_t t) override {
    a_.Gauge(id, v, t);
    b_.Gauge(Other(id), v, t);
  }
  void Event(EventRecord e) override {
    b_.Event(e);
    a_.Event(std::move(e));
  }

 private:
  uint32_t Other(uint32_t id) const {
    auto it = ids_.find(id);
    return it == ids_.end() ? id : it->second;
  }
  Emitter& a_;
  Emitter& b_;
  std::map<uint32_t, uint32_t> ids_;
};

// The switch port a collector's neighbours put behind `interface`, "" when none.
std::string PortBehind(const RecordingEmitter& e, const std::string& interface) {
  std::string found;
  for (const std::string& name : e.names) {
    if (name.find("interface=\"" + interface + "\"") == std::string::npos) continue;
    const size_t at = name.find("neighbor_port=\"");
    if (at == std::string::npos) continue;
    const size_t end = name.find('"', at + 15);
    found = name.substr(at + 15, end - at - 15);  // the newest definition wins
  }
  return found;
}

TEST_F(LldpdTest, HostLearnsItsSwitchPortAndSeesTheCableMove) {
  absl::StatusOr<std::unique_ptr<TestNetns>> sw = TestNetns::Create();
  ASSERT_TRUE(sw.ok()) << sw.status();
  absl::StatusOr<std::unique_ptr<TestNetns>> host = TestNetns::Create();
  ASSERT_TRUE(host.ok()) << host.status();
  // The veth pair is made inside the switch namespace with its peer in the host's: no
  // interface of the machine's own is ever named.
  auto cable = [&](const std::string& switch_port) {
    ASSERT_TRUE((*sw)
                    ->Ip({"link", "add", switch_port, "type", "veth", "peer", "name", "eth0",
                          "netns", (*host)->name()})
                    .ok());
    ASSERT_TRUE((*sw)->Ip({"link", "set", switch_port, "up"}).ok());
    ASSERT_TRUE((*host)->Ip({"link", "set", "eth0", "up"}).ok());
  };
  cable("swp1");

  absl::StatusOr<std::unique_ptr<Lldpd>> sw_lldpd = Lldpd::Start(**sw, dir_.string(), "switch");
  ASSERT_TRUE(sw_lldpd.ok()) << sw_lldpd.status();
  absl::StatusOr<std::unique_ptr<Lldpd>> host_lldpd = Lldpd::Start(**host, dir_.string(), "host");
  ASSERT_TRUE(host_lldpd.ok()) << host_lldpd.status();
  for (const Lldpd* d : {sw_lldpd->get(), host_lldpd->get()}) {
    ASSERT_TRUE(d->Cli({"configure", "lldp", "tx-interval", "1"}).ok());
    ASSERT_TRUE(d->Cli({"configure", "lldp", "portidsubtype", "ifname"}).ok());
  }
  ASSERT_TRUE((*sw_lldpd)->Cli({"configure", "system", "hostname", "leaf-r1"}).ok());

  // The agent's collector, asking the host's lldpd through lldpcli (its socket given by a
  // wrapper, as --lldp_source=lldpcli:PROGRAM would).
  const std::string wrapper = (dir_ / "lldpcli").string();
  std::ofstream(wrapper) << "#!/bin/sh\nexec lldpcli -u '" << (*host_lldpd)->socket()
                         << "' \"$@\"\n";
  chmod(wrapper.c_str(), 0755);
  FakeClock clock;
  LldpCollector collector({absl::Seconds(1)}, LldpcliSource(wrapper), clock);
  RecordingEmitter e;
  // The daemon's side: its store, fed as ingest would, with the host's RDMA NIC behind eth0
  // (this kernel has no RDMA: its identity series is written by hand), and its map.
  SeriesStore store(SeriesStore::Options{.capacity = 600});
  StoreEmitter to_store(store, "gpu-h1");
  TeeEmitter both(e, to_store);
  JobRegistry jobs;
  FabricMap fabric(nullptr, &jobs);
  TopologyWatch watch({}, nullptr, store, fabric, clock);
  const uint32_t nic = to_store.DefineSeries(
      "fabric_rdma_port_info", MetricKind::kGauge,
      {{"device", "mlx5_0"}, {"port", "1"}, {"netdev", "eth0"}, {"link_layer", "Ethernet"}}, 0);
  auto wait_for_port = [&](const std::string& port) {
    for (int i = 0; i < 150 && PortBehind(e, "eth0") != port; ++i) {
      clock.Advance(absl::Seconds(1));
      to_store.Gauge(nic, 1, clock.NowNanos());
      ASSERT_TRUE(collector.Collect(both).ok());
      absl::SleepFor(absl::Milliseconds(200));
    }
    ASSERT_EQ(PortBehind(e, "eth0"), port)
        << "host lldpd says: " << (*host_lldpd)->Cli({"show", "neighbors"}).value_or("?")
        << "\nswitch lldpd log: " << (*sw_lldpd)->Log();
  };
  wait_for_port("swp1");
  EXPECT_EQ(collector.stats().read_errors, 0u);
  // The daemon places the NIC from the host's end alone (no agent reaches this "switch").
  auto leaf_port = [&] {
    Labels l = {{"device", "mlx5_0"}, {"host", "gpu-h1"}};
    fabric.Enrich(l);
    const std::string* leaf = FindLabel(l, "leaf");
    const std::string* port = FindLabel(l, "leaf_port");
    return leaf != nullptr && port != nullptr ? absl::StrCat(*leaf, "/", *port) : "-";
  };
  EXPECT_TRUE(watch.RunOnce());
  EXPECT_EQ(leaf_port(), "leaf-r1/swp1");
  EXPECT_EQ(watch.view().provenance.at("gpu-h1/mlx5_0"), Provenance::kHostEnd);
  bool named = false;
  for (const std::string& name : e.names)
    named |= absl::StrContains(name, "neighbor_system=\"leaf-r1\"");
  EXPECT_TRUE(named) << ::testing::PrintToString(e.names);

  // The cable moves from swp1 to swp2.
  ASSERT_TRUE((*sw)->Ip({"link", "del", "swp1"}).ok());
  cable("swp2");
  wait_for_port("swp2");
  EXPECT_EQ(collector.stats().neighbors, 1u);
  EXPECT_TRUE(watch.RunOnce());  // the map changed, without a restart
  EXPECT_EQ(leaf_port(), "leaf-r1/swp2");
  const size_t moved =
      e.EventsOfKind("lldp.neighbor_changed").size() + e.EventsOfKind("lldp.neighbor_lost").size();
  EXPECT_GE(moved, 1u) << "the move must show as an event";
}

}  // namespace
}  // namespace railwatch::testing
