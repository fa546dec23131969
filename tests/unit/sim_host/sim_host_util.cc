#include "unit/sim_host/sim_host_util.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "collectors/ethtool_dump.h"
#include "collectors/pread_file.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "unit/sim_kinds_truth.h"

namespace railwatch::sim::testing {

HostSim::HostSim(SysfsFabric::Options o)
    : root_(dir_.path() + "/sys"), truth_(dir_.path() + "/truth.jsonl") {
  o.root = root_;
  o.ground_truth_file = truth_;
  GiveKindsTruth(o);
  fabric_ = std::make_unique<SysfsFabric>(std::move(o));
  absl::Status s = fabric_->Create(t0);
  EXPECT_TRUE(s.ok()) << s;
}

HostSim::~HostSim() = default;

void HostSim::RunTo(absl::Duration offset) {
  while (now_ + kTick <= offset) {
    now_ += kTick;
    absl::Status s = fabric_->Tick(t0 + now_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

std::string HostSim::Host(int h) const { return fabric_->HostRoot(SysfsFabric::HostName(h)); }

uint64_t HostSim::Sysfs(int h, int nic, const std::string& counter) const {
  const std::string path =
      absl::StrCat(Host(h), "/class/infiniband/mlx5_", nic, "/ports/1/", counter);
  absl::StatusOr<PreadFile> f = PreadFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return 0;
  absl::StatusOr<std::optional<uint64_t>> v = f->ReadCounter();
  EXPECT_TRUE(v.ok() && v->has_value()) << path;
  return v.ok() && v->has_value() ? **v : 0;
}

std::map<std::string, uint64_t> HostSim::Ethtool(int h, int nic) const {
  absl::StatusOr<std::string> text =
      ReadFile(absl::StrCat(Host(h), "/ethtool/", SysfsFabric::NetdevName(nic), "/stats"));
  std::map<std::string, uint64_t> out;
  if (!text.ok()) return out;
  EthtoolStatsText stats = ParseEthtoolStats(*text);
  EXPECT_TRUE(stats.problems.empty()) << stats.problems.front();
  for (size_t i = 0; i < stats.names.size(); ++i) out[stats.names[i]] = stats.values[i];
  return out;
}

uint64_t HostSim::Ethtool(int h, int nic, const std::string& stat) const {
  std::map<std::string, uint64_t> all = Ethtool(h, nic);
  auto it = all.find(stat);
  EXPECT_NE(it, all.end()) << stat;
  return it == all.end() ? 0 : it->second;
}

std::vector<nlohmann::json> HostSim::Truth() const {
  std::vector<nlohmann::json> out;
  std::ifstream in(truth_);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

SysfsFabric::Options OneJob(int hosts, int nics, double util) {
  SysfsFabric::Options o;
  o.hosts = hosts;
  o.nics_per_host = nics;
  o.jobs = {{"train", 1, hosts, util}};
  o.bursty = false;
  // Every tick, so that tests read current values.
  o.ethtool_interval = absl::ZeroDuration();
  o.cold_flush_interval = absl::ZeroDuration();
  return o;
}

}  // namespace railwatch::sim::testing
