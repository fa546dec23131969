#include "sim/inspector_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/nccl_log_writer.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {
namespace fs = std::filesystem;

namespace {

// Launch jitter of a healthy rank: a few milliseconds at most.
constexpr double kJitterSeconds = 0.002;
// The data's time varies a little from one collective to the next.
constexpr double kDataNoise = 0.02;

}  // namespace

InspectorRecords::InspectorRecords(std::string root, std::vector<SimJob> jobs, int gpus_per_host,
                                   absl::Duration step, double comm_fraction, double link_gbps,
                                   uint64_t seed, const NcclLogs& logs)
    : root_(std::move(root)),
      sim_jobs_(std::move(jobs)),
      gpus_(gpus_per_host),
      step_(step),
      comm_fraction_(comm_fraction),
      link_gbps_(link_gbps),
      logs_(logs),
      rng_(seed ^ 0x696e7370ULL) {}

InspectorRecords::~InspectorRecords() {
  for (Job& j : jobs_) {
    for (Rank& r : j.ranks) {
      if (r.fd >= 0) ::close(r.fd);
    }
  }
}

std::string InspectorRecords::Dir(const std::string& root, const std::string& host) {
  return (fs::path(root) / host / "nccl" / "inspector").string();
}

absl::Status InspectorRecords::Create(absl::Time now) {
  jobs_.resize(sim_jobs_.size());
  for (size_t j = 0; j < sim_jobs_.size(); ++j) {
    const SimJob& sj = sim_jobs_[j];
    Job& job = jobs_[j];
    job.next_step = now;
    for (int h = sj.first_host; h <= sj.last_host; ++h) {
      const std::string host = SysfsFabric::HostName(h);
      const std::string dir = Dir(root_, host);
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) return absl::UnavailableError(absl::StrCat(dir, ": ", ec.message()));
      for (int k = 0; k < gpus_; ++k) {
        Rank& r = job.ranks.emplace_back();
        r.pid = logs_.Pid(static_cast<int>(j), h, k);
        const std::string path = absl::StrCat(dir, "/", host, "-pid", r.pid, ".log");
        r.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (r.fd < 0) return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
      }
    }
  }
  return absl::OkStatus();
}

void InspectorRecords::SetSlowRank(int job, int host, int local_rank, double factor) {
  const int rank = (host - sim_jobs_[job].first_host) * gpus_ + local_rank;
  jobs_[job].ranks[rank].late_factor = factor;
}

void InspectorRecords::SetHungRank(int job, int host, int local_rank) {
  Job& j = jobs_[job];
  if (j.hung < 0) j.hung = (host - sim_jobs_[job].first_host) * gpus_ + local_rank;
}

std::vector<int64_t> InspectorRecords::LaunchCounts(int job) const {
  const Job& j = jobs_[job];
  std::vector<int64_t> counts(j.ranks.size(), j.sequence);
  if (j.hung >= 0) {
    for (size_t r = 0; r < counts.size(); ++r) {
      if (static_cast<int>(r) != j.hung) ++counts[r];
    }
  }
  return counts;
}

absl::Status InspectorRecords::Tick(absl::Time now, const std::vector<double>& pace) {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    Job& job = jobs_[j];
    const double p = j < pace.size() ? pace[j] : 1.0;
    if (p <= 0) {
      job.next_step = std::max(job.next_step, now);  // stalled: nothing completes
      continue;
    }
    // Steps that ended by now (at their healthy length: a slowed step's records come a little
    // early); a slow tick may hold several.
    while (job.next_step + step_ <= now) {
      if (absl::Status s = WriteStep(j, job.next_step, p); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status InspectorRecords::WriteStep(size_t j, absl::Time start, double pace) {
  Job& job = jobs_[j];
  const SimJob& sj = sim_jobs_[j];
  const int n = static_cast<int>(job.ranks.size());
  const double step_s = absl::ToDoubleSeconds(step_);
  const double compute_s = step_s * (1 - comm_fraction_);
  // The data's time of one collective at full pace, and its size: a bus bandwidth of the job's
  // share of line rate (busbw = size x 2(n-1)/n / time, NCCL's AllReduce).
  const double data_s = step_s * comm_fraction_ / kCollectivesPerStep;
  const double bus_factor = n > 1 ? 2.0 * (n - 1) / n : 1.0;
  const double busbw_healthy = link_gbps_ / 8 * 1e9 * sj.util;
  const auto size = static_cast<uint64_t>(
      std::max(1.0, std::round(busbw_healthy * data_s / bus_factor / (1 << 20)))) << 20;
  std::uniform_real_distribution<double> jitter(0, kJitterSeconds);
  std::normal_distribution<double> noise(1.0, kDataNoise);
  std::vector<double> launch(n);
  double t = absl::ToDoubleSeconds(start - absl::UnixEpoch());
  for (int c = 0; c < kCollectivesPerStep; ++c) {
    // Each rank computes its share of the step before the collective; a slow one longer.
    double last = 0;
    for (int r = 0; r < n; ++r) {
      launch[r] = jitter(rng_) + job.ranks[r].late_factor * compute_s / kCollectivesPerStep;
      last = std::max(last, launch[r]);
    }
    const double data = data_s / pace * std::max(0.5, noise(rng_));
    t += compute_s / kCollectivesPerStep + last + data;
    const auto done_us = static_cast<int64_t>(t * 1e6);
    for (int r = 0; r < n; ++r) {
      const double exec_s = data + last - launch[r];
      const double algbw = static_cast<double>(size) / exec_s / 1e9;
      const int host = sj.first_host + r / gpus_;
      line_ = absl::StrFormat(
          "{\"header\":{\"id\":\"%s\",\"rank\":%d,\"n_ranks\":%d,\"nnodes\":%d},"
          "\"metadata\":{\"inspector_output_format_version\":\"v4.0\",\"git_rev\":\"\","
          "\"rec_mechanism\":\"nccl_profiler_interface\",\"dump_timestamp_us\":%d,"
          "\"hostname\":\"%s\",\"pid\":%d},"
          "\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":%d,\"coll_msg_size_bytes\":%d,"
          "\"coll_exec_time_us\":%d,\"coll_timing_source\":\"kernel_gpu\","
          "\"coll_algobw_gbs\":%.6f,\"coll_busbw_gbs\":%.6f}}\n",
          logs_.CommId(static_cast<int>(j)), r, n, sj.last_host - sj.first_host + 1, done_us,
          SysfsFabric::HostName(host), job.ranks[r].pid, job.sequence, size,
          static_cast<int64_t>(exec_s * 1e6), algbw, algbw * bus_factor);
      // One write per record: a reader never sees half a line.
      if (::write(job.ranks[r].fd, line_.data(), line_.size()) !=
          static_cast<ssize_t>(line_.size())) {
        return absl::UnavailableError(
            absl::StrCat("Inspector records of job ", sj.name, ": ", std::strerror(errno)));
      }
    }
    ++job.sequence;
  }
  job.next_step = start + absl::Seconds(t - absl::ToDoubleSeconds(start - absl::UnixEpoch()));
  return absl::OkStatus();
}

}  // namespace railwatch::sim
