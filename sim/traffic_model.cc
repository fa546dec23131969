#include "sim/traffic_model.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text.h"
#include "sim/spec_parsing.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

absl::StatusOr<SimJob> ParseJob(absl::string_view spec) {
  constexpr absl::string_view kForm = "NAME:FIRST-LAST[:UTIL], e.g. llama-70b:1-32:0.8";
  std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
  std::vector<absl::string_view> range;
  if (parts.size() >= 2) range = absl::StrSplit(parts[1], '-');
  SimJob job;
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || range.size() != 2 ||
      !absl::SimpleAtoi(range[0], &job.first_host) || !absl::SimpleAtoi(range[1], &job.last_host) ||
      (parts.size() == 3 && !absl::SimpleAtod(parts[2], &job.util))) {
    return SpecError("job", spec, "not NAME:FIRST-LAST[:UTIL]", kForm);
  }
  job.name = std::string(parts[0]);
  if (job.first_host < 1 || job.last_host < job.first_host) {
    return SpecError("job", spec, "hosts are 1-based and FIRST <= LAST", kForm);
  }
  if (!(job.util > 0 && job.util <= 1)) return SpecError("job", spec, "UTIL is a share of line rate in (0, 1]", kForm);
  return job;
}

// leaf-r<rail> (one leaf per rail) or leaf-g<group>-r<rail> (rail groups, --hosts_per_leaf).
bool ParseLeafName(absl::string_view name, int& group, int& rail) {
  group = 0;
  bool ok = absl::ConsumePrefix(&name, "leaf-");
  if (ok && absl::ConsumePrefix(&name, "g")) {
    const size_t dash = name.find("-r");
    ok = dash != absl::string_view::npos && absl::SimpleAtoi(name.substr(0, dash), &group) &&
         group >= 0;
    if (ok) name.remove_prefix(dash + 1);
  }
  return ok && absl::ConsumePrefix(&name, "r") && absl::SimpleAtoi(name, &rail) && rail >= 0;
}

absl::Status ValidateTrafficFaults(int hosts, int nics_per_host, const std::vector<SimJob>& jobs,
                                   const std::vector<NicDegrade>& degrades,
                                   const std::vector<EcnMisconfig>& misconfigs) {
  std::set<std::string> names;
  std::vector<std::string> job_of(hosts + 1);
  for (const SimJob& j : jobs) {
    if (!names.insert(j.name).second) {
      return absl::InvalidArgumentError(absl::StrCat("job \"", j.name, "\" is given twice"));
    }
    if (j.last_host > hosts) {
      return absl::InvalidArgumentError(absl::StrCat("job \"", j.name, "\" runs on hosts ",
                                                     j.first_host, "-", j.last_host, ", but only ",
                                                     hosts, " are simulated"));
    }
    for (int h = j.first_host; h <= j.last_host; ++h) {
      if (!job_of[h].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(SysfsFabric::HostName(h), " is in job \"",
                                                       job_of[h], "\" and in job \"", j.name, "\""));
      }
      job_of[h] = j.name;
    }
  }
  for (const NicDegrade& d : degrades) {
    int h = 0, k = -1;
    absl::string_view host = d.host, device = d.device;
    if (!absl::ConsumePrefix(&host, "gpu-node-") || !absl::SimpleAtoi(host, &h) ||
        SysfsFabric::HostName(h) != d.host || h < 1 || h > hosts ||
        !absl::ConsumePrefix(&device, "mlx5_") || !absl::SimpleAtoi(device, &k) || k < 0 ||
        k >= nics_per_host) {
      return absl::InvalidArgumentError(
          absl::StrCat("degrade target ", d.host, "/", d.device, " is not a simulated NIC"));
    }
  }
  for (const EcnMisconfig& m : misconfigs) {
    if (m.rail >= nics_per_host) {
      return absl::InvalidArgumentError(absl::StrCat("ECN misconfiguration target ", m.switch_name,
                                                     " is not a simulated leaf (leaf-r0 .. leaf-r",
                                                     nics_per_host - 1, ")"));
    }
  }
  return absl::OkStatus();
}

double EcnMarkingShare(double offset_kb) { return std::exp(-offset_kb / kEcnQueueHeadroomKb); }

double ThroughputUnderMarking(double marking_share) {
  return 1 - (1 - kUnmarkedThroughput) * (1 - std::clamp(marking_share, 0.0, 1.0));
}

double CongestionPauseRate(double marking_share, double load) {
  return kCongestionPauseRate * (1 - std::clamp(marking_share, 0.0, 1.0)) *
         std::clamp(load / kCongestedLoad, 0.0, 1.0);
}

std::string RateText(double gbps) {
  const double lane = gbps / 4;
  const char* name = lane == 100 ? " NDR" : lane == 50 ? " HDR" : lane == 25 ? " EDR" : "";
  return absl::StrFormat("%g Gb/sec (4X%s)\n", gbps, name);
}

uint64_t DrawCount(std::mt19937_64& rng, double expected) {
  if (expected <= 0) return 0;
  if (expected < 50) return std::poisson_distribution<uint64_t>(expected)(rng);
  const double whole = std::floor(expected);
  std::uniform_real_distribution<double> u(0, 1);
  return static_cast<uint64_t>(whole) + (u(rng) < expected - whole ? 1 : 0);
}

}  // namespace railwatch::sim
