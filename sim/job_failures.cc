#include "sim/job_failures.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "sim/host_faults.h"
#include "sim/nccl_log_writer.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

JobFailures::JobFailures(std::vector<SimJob> jobs, std::vector<int> job_of_host, NcclLogs* logs,
                         std::string ground_truth_file)
    : jobs_(std::move(jobs)),
      job_of_host_(std::move(job_of_host)),
      logs_(logs),
      ground_truth_file_(std::move(ground_truth_file)),
      stalled_(jobs_.size(), false) {}

absl::Status JobFailures::Independent(absl::Time now, const NcclError& e) {
  Pending p;
  p.due = now;
  p.kind = e.kind;
  p.host = SimHostIndex(e.host, static_cast<int>(job_of_host_.size()) - 1);
  p.job = p.host > 0 ? job_of_host_[p.host] : -1;
  if (p.job < 0)
    return absl::InvalidArgumentError(absl::StrCat("--nccl_error: ", e.host, " runs no job"));
  if (p.kind == "ib_completion") p.local_rank = 0;  // the rank on GPU 0 and its NIC, mlx5_0
  pending_.push_back(p);
  return Tick(now);
}

void JobFailures::NicGone(absl::Time now, int host, int nic, const std::string& cause) {
  const int job = job_of_host_[host];
  if (job < 0) return;  // nobody used it
  pending_.push_back(
      {now + kNicGoneDelay, "ib_completion", job, host, nic, cause, host, nic, false, false});
}

void JobFailures::JobStalled(absl::Time now, int job, int host, int nic, const std::string& cause) {
  stalled_[job] = true;
  pending_.push_back(
      {now + NcclLogs::kCollectiveTimeout, "timeout", job, 0, -1, cause, host, nic, false, true});
}

void JobFailures::JobResumed(int job) { stalled_[job] = false; }

absl::Status JobFailures::Tick(absl::Time now) {
  for (Pending& p : pending_) {
    if (p.done || now < p.due) continue;
    p.done = true;
    if (p.stall) {
      // The collective finished after all when the deadlock cleared in time.
      if (!stalled_[p.job]) continue;
      for (int h = jobs_[p.job].first_host; h <= jobs_[p.job].last_host; ++h) {
        if (absl::Status s = Write(now, p, h); !s.ok()) return s;
      }
      continue;
    }
    if (absl::Status s = Write(now, p, p.host); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status JobFailures::Write(absl::Time now, const Pending& p, int host) {
  if (logs_ == nullptr) return absl::OkStatus();
  const SimJob& job = jobs_[p.job];
  const std::string host_name = SysfsFabric::HostName(host);
  if (p.kind == "timeout") {
    if (absl::Status s = logs_->WriteWatchdogTimeout(p.job, host, now); !s.ok()) return s;
  } else {
    if (absl::Status s = logs_->WriteIbCompletionError(p.job, host, p.local_rank); !s.ok())
      return s;
  }
  std::string cause;
  if (!p.caused_by.empty()) {
    cause = absl::StrFormat(
        ", \"caused_by\": \"%s\", \"cause_host\": \"%s\", \"cause_device\": \"mlx5_%d\"",
        p.caused_by, SysfsFabric::HostName(p.cause_host), p.cause_nic);
  }
  spdlog::info("NCCL error on {} (job {}): {}{}", host_name, job.name, p.kind,
               p.caused_by.empty() ? "" : absl::StrCat(", caused by ", p.caused_by));
  return AppendGroundTruth(
      ground_truth_file_,
      absl::StrFormat(
          "{\"fault\": \"nccl_error\", \"host\": \"%s\", \"job\": %s, \"error\": \"%s\"%s, "
          "\"injected_at_unix_nano\": %d}",
          host_name, JsonString(job.name), p.kind, cause, absl::ToUnixNanos(now)));
}

}  // namespace railwatch::sim
