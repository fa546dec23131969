#include "jobs/slurm_watch.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "common/run_program.h"

namespace railwatch {

absl::StatusOr<SlurmWatchOptions> SlurmWatchOptionsFromFlag(const std::string& flag) {
  SlurmWatchOptions options;
  if (flag == "off" || flag.empty()) {
    options.command.clear();
    return options;
  }
  if (flag == "squeue") return options;
  if (absl::StartsWith(flag, "squeue:") && flag.size() > 7) {
    options.command = {flag.substr(7), "--json"};
    return options;
  }
  if (absl::StartsWith(flag, "slurmrestd:")) {
    absl::StatusOr<SlurmRestOptions> rest = SlurmRestOptionsFromUrl(flag.substr(11));
    if (!rest.ok()) return rest.status();
    options.command.clear();
    options.rest = *std::move(rest);
    return options;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--slurm=", flag, ": want off, squeue, squeue:PATH or slurmrestd:URL (http://HOST:PORT, "
      "unix:/PATH/TO/SOCKET)"));
}

std::vector<JobInfo> RunningSlurmJobs(const std::vector<jobs::SlurmJob>& jobs) {
  std::vector<JobInfo> out;
  for (const jobs::SlurmJob& j : jobs) {
    // COMPLETING: its nodes are still being cleaned; the job's work is over.
    if (j.state != "RUNNING" && j.state != "SUSPENDED") continue;
    if (j.nodes.empty()) continue;
    JobInfo info;
    info.name = absl::StrCat("slurm-", j.id);
    info.hosts = j.nodes;
    const uint32_t nodes = static_cast<uint32_t>(j.nodes.size());
    if (j.gpus_per_node > 0) {
      info.gpus = static_cast<uint32_t>(j.gpus_per_node) * nodes;
    } else if (j.gpus_total > 0) {
      info.gpus = static_cast<uint32_t>(j.gpus_total);
    }
    info.ranks = info.gpus;
    info.detail = j.name;
    if (!j.user.empty()) absl::StrAppend(&info.detail, " by ", j.user);
    if (!j.partition.empty()) absl::StrAppend(&info.detail, " in ", j.partition);
    out.push_back(std::move(info));
  }
  return out;
}

SlurmWatch::SlurmWatch(SlurmWatchOptions options, JobRegistry& registry)
    : options_(std::move(options)), registry_(registry) {
  if (options_.rest) {
    options_.rest->timeout = options_.timeout;
    rest_ = std::make_unique<SlurmRestClient>(*options_.rest);
  }
}

SlurmWatch::~SlurmWatch() { Stop(); }

absl::StatusOr<jobs::SlurmJobsResult> SlurmWatch::Ask() {
  if (rest_ != nullptr) {
    const std::string before = rest_->api_version();
    absl::StatusOr<jobs::SlurmJobsResult> read = rest_->Jobs();
    if (const std::string now = rest_->api_version(); !now.empty() && now != before) {
      spdlog::info("slurm: slurmrestd {} asked for /slurm/{}/jobs{}", options_.rest->url, now,
                   options_.rest->api_version.empty() ? " (discovered from its OpenAPI paths)"
                                                      : "");
    }
    return read;
  }
  absl::StatusOr<ProgramOutput> run = RunProgram(options_.command, options_.timeout);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    const std::string said(absl::StripAsciiWhitespace(run->err.substr(0, 300)));
    return absl::UnavailableError(absl::StrCat(
        options_.command[0],
        run->signal != 0 ? absl::StrCat(" killed by signal ", run->signal)
                         : absl::StrCat(" exited ", run->exit_code),
        said.empty() ? "" : ": ", said));
  }
  if (run->truncated) {
    return absl::ResourceExhaustedError(absl::StrCat(
        options_.command[0], " --json printed more than 16 MiB: not read (so many jobs? "
        "docs/JOBS.md)"));
  }
  return jobs::ParseSqueueJson(run->out, options_.command[0]);
}

absl::Status SlurmWatch::RunOnce() {
  absl::Status status = [&]() -> absl::Status {
    absl::StatusOr<jobs::SlurmJobsResult> asked = Ask();
    if (!asked.ok()) return asked.status();
    jobs::SlurmJobsResult& read = *asked;
    // Slurm's warnings do not make a poll fail (an empty queue with a warning is still empty);
    // its errors, or a document that could not be read, do: the last known jobs stay.
    for (const jobs::SlurmProblem& p : read.problems) {
      if (absl::StartsWith(p.message, "Slurm error") ||
          (read.format.empty() && read.jobs.empty())) {
        return absl::DataLossError(p.ToString());
      }
    }
    for (const jobs::SlurmProblem& p : read.problems) spdlog::warn("slurm: {}", p.ToString());
    std::vector<JobInfo> running = RunningSlurmJobs(read.jobs);
    const size_t count = running.size();
    if (registry_.SetScheduled("slurm", std::move(running))) {
      spdlog::info("slurm: {} running job(s)", count);
    }
    absl::MutexLock lock(&mu_);
    stats_.jobs = count;
    return absl::OkStatus();
  }();
  absl::MutexLock lock(&mu_);
  ++stats_.polls;
  if (rest_ != nullptr) stats_.api_version = rest_->api_version();
  stats_.last_error = std::string(status.message());
  if (!status.ok()) {
    ++stats_.failures;
    ++stats_.failures_by_code[absl::StatusCodeToString(status.code())];
    if (!failing_) {
      spdlog::warn("slurm: {} (the last known jobs are kept; asked again every {})",
                   status.message(), absl::FormatDuration(options_.interval));
    }
  } else if (failing_) {
    spdlog::info("slurm: answering again");
  }
  failing_ = !status.ok();
  return status;
}

void SlurmWatch::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] {
    do {
      (void)RunOnce();
    } while (!stop_.WaitForNotificationWithTimeout(options_.interval));
  });
}

void SlurmWatch::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

SlurmWatch::Stats SlurmWatch::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace railwatch
