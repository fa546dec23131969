#include "collectors/ethtool_dir_backend.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "collectors/ethtool_dump.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {
namespace {

// One read of a netdev's two files.
struct DirDump {
  std::string driver;
  EthtoolStatsText stats;
};

// NotFound when either file is missing (the netdev is gone, or not written yet).
absl::StatusOr<DirDump> ReadDirDump(const std::string& netdev_dir) {
  const std::string stats_path = netdev_dir + "/stats";
  absl::StatusOr<std::string> driver = ReadFile(netdev_dir + "/driver");
  if (!driver.ok()) return driver.status();
  absl::StatusOr<std::string> stats = ReadFile(stats_path);
  if (!stats.ok()) return stats.status();
  return DirDump{std::string(absl::StripAsciiWhitespace(*driver)),
                 ParseEthtoolStats(*stats, stats_path)};
}

class DirDevice final : public EthtoolDevice {
 public:
  DirDevice(std::string netdev_dir, DirDump first)
      : netdev_dir_(std::move(netdev_dir)),
        driver_(std::move(first.driver)),
        names_(std::move(first.stats.names)) {
    Report(std::move(first.stats.problems));
  }

  const std::string& driver() const override { return driver_; }
  const std::vector<std::string>& stat_names() const override { return names_; }

  absl::StatusOr<std::span<const uint64_t>> Read() override {
    absl::StatusOr<DirDump> dump = ReadDirDump(netdev_dir_);
    if (!dump.ok()) return dump.status();
    Report(std::move(dump->stats.problems));
    if (dump->driver != driver_) {
      return absl::FailedPreconditionError(
          absl::StrCat(netdev_dir_, ": driver changed from ", driver_, " to ", dump->driver));
    }
    if (dump->stats.names != names_) {
      return absl::FailedPreconditionError(
          absl::StrCat(netdev_dir_, ": statistics changed (", names_.size(), " names, now ",
                       dump->stats.names.size(), ")"));
    }
    values_ = std::move(dump->stats.values);
    return std::span<const uint64_t>(values_);
  }

 private:
  // Logs the bad lines of a dump, unless they are those of the previous read.
  void Report(std::vector<std::string> problems) {
    if (problems == reported_) return;
    for (const std::string& p : problems) spdlog::warn("ethtool dump {}", p);
    reported_ = std::move(problems);
  }

  std::string netdev_dir_;
  std::string driver_;
  std::vector<std::string> names_;
  std::vector<uint64_t> values_;
  std::vector<std::string> reported_;
};

}  // namespace

DirEthtoolBackend::DirEthtoolBackend(std::string dir) : dir_(std::move(dir)) {}

absl::StatusOr<std::unique_ptr<EthtoolDevice>> DirEthtoolBackend::Open(const std::string& netdev) {
  std::string netdev_dir = absl::StrCat(dir_, "/", netdev);
  absl::StatusOr<DirDump> dump = ReadDirDump(netdev_dir);
  if (!dump.ok()) return dump.status();
  if (dump->stats.names.empty()) {
    return absl::UnimplementedError(absl::StrCat(netdev_dir, "/stats: no statistics"));
  }
  return std::make_unique<DirDevice>(std::move(netdev_dir), *std::move(dump));
}

}  // namespace railwatch
