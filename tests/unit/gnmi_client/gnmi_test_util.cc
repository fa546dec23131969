#include "gnmi_test_util.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"

namespace railwatch::testing {
namespace {

bool Includes(const Labels& labels, const Labels& subset) {
  return std::all_of(subset.begin(), subset.end(), [&](const Label& l) {
    const std::string* v = FindLabel(labels, l.name);
    return v != nullptr && *v == l.value;
  });
}

int CountEntries(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

}  // namespace

uint32_t PointLog::DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                                uint32_t) {
  NormalizeLabels(labels);
  for (size_t i = 0; i < definitions.size(); ++i) {
    if (definitions[i].name == name && definitions[i].labels == labels) {
      return static_cast<uint32_t>(i);
    }
  }
  definitions.push_back({std::string(name), kind, std::move(labels)});
  return static_cast<uint32_t>(definitions.size() - 1);
}

std::vector<uint32_t> PointLog::SeriesOf(std::string_view name, const Labels& subset) const {
  std::vector<uint32_t> ids;
  for (size_t i = 0; i < definitions.size(); ++i) {
    if (definitions[i].name == name && Includes(definitions[i].labels, subset)) {
      ids.push_back(static_cast<uint32_t>(i));
    }
  }
  return ids;
}

std::vector<PointLog::Point> PointLog::Of(std::string_view name, const Labels& subset) const {
  const std::vector<uint32_t> ids = SeriesOf(name, subset);
  std::vector<Point> out;
  for (const Point& p : points) {
    if (std::find(ids.begin(), ids.end(), p.id) != ids.end()) out.push_back(p);
  }
  return out;
}

std::vector<GnmiProfile> ShippedProfiles() {
  absl::StatusOr<std::vector<GnmiProfile>> profiles =
      LoadGnmiProfiles(RAILWATCH_SOURCE_DIR "/profiles/gnmi");
  EXPECT_TRUE(profiles.ok()) << profiles.status();
  return profiles.ok() ? *std::move(profiles) : std::vector<GnmiProfile>{};
}

GnmiChannelOptions FastChannel() {
  GnmiChannelOptions o;
  o.backoff.initial = absl::Milliseconds(10);
  o.backoff.max = absl::Milliseconds(100);
  return o;
}

GnmiTargetConfig TestTarget(const std::string& name, const std::string& address) {
  GnmiTargetConfig t;
  t.name = name;
  t.address = address;
  t.profile = "openconfig";
  t.origin = "test";
  return t;
}

bool CollectUntil(GnmiSwitchCollector& collector, PointLog& log,
                  const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    collector.Collect(log).IgnoreError();
    if (done()) return true;
    if (absl::Now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int ThreadCount() { return CountEntries("/proc/self/task"); }
int OpenFdCount() { return CountEntries("/proc/self/fd"); }

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      long kb = 0;
      std::string digits;
      for (char c : line) {
        if (c >= '0' && c <= '9') digits += c;
      }
      if (absl::SimpleAtoi(digits, &kb)) return kb;
    }
  }
  return -1;
}

}  // namespace railwatch::testing
