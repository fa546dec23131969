#include "jobs/slurm_watch.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch {
namespace slurm_watch_test {

using ::railwatch::testing::ReadFixture;
using ::railwatch::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Captured from Debian 12's Slurm 22.05.8 (slurmctld and slurmd on loopback, one node "vm" with
// gres gpu:8, `sbatch --gres=gpu:8 -J model_pretrain --wrap "sleep 60"`, then `squeue --json`):
// openapi v0.0.38, job_state a string, times plain integers.
constexpr char kDebianCapture[] = "slurm/squeue_json_v0.0.38_22.05.8_debian_loopback_running_gpu8.json";

TEST(SlurmWatch, TheRunningJobOfARealSqueueBecomesARegistryJob) {
  jobs::SlurmJobsResult read = jobs::ParseSqueueJson(ReadFixture(kDebianCapture), "squeue");
  EXPECT_TRUE(read.problems.empty());
  EXPECT_EQ(read.format, "openapi/v0.0.38");
  std::vector<JobInfo> running = RunningSlurmJobs(read.jobs);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].name, "slurm-1");
  EXPECT_THAT(running[0].hosts, ElementsAre("vm"));
  EXPECT_EQ(running[0].gpus, 8u);
  EXPECT_EQ(running[0].detail, "model_pretrain by root in gpu");

  // Pending and finished jobs hold no nodes' GPUs.
  std::vector<jobs::SlurmJob> others = read.jobs;
  others[0].state = "PENDING";
  others[0].nodes.clear();
  EXPECT_TRUE(RunningSlurmJobs(others).empty());
  others = read.jobs;
  others[0].state = "COMPLETED";
  EXPECT_TRUE(RunningSlurmJobs(others).empty());
}

TEST(SlurmWatch, FlagForms) {
  EXPECT_TRUE(SlurmWatchOptionsFromFlag("off")->command.empty());
  EXPECT_THAT(SlurmWatchOptionsFromFlag("squeue")->command, ElementsAre("squeue", "--json"));
  EXPECT_THAT(SlurmWatchOptionsFromFlag("squeue:/opt/slurm/bin/squeue")->command,
              ElementsAre("/opt/slurm/bin/squeue", "--json"));
  EXPECT_THAT(SlurmWatchOptionsFromFlag("sacct").status().message(), HasSubstr("squeue:PATH"));
}

// A stand-in squeue (a script printing what the test puts in a file): a job starts, ends, and
// a failing squeue keeps the last known jobs.
TEST(SlurmWatch, JobsComeAndGoWithThePollsAndAFailureKeepsThem) {
  TempDir dir;
  const std::string answer = dir.path() + "/answer.json";
  const std::string script = dir.path() + "/squeue";
  std::ofstream(script) << "#!/bin/sh\n"
                        << "[ \"$1\" = --json ] || { echo \"want --json, got $1\" >&2; exit 2; }\n"
                        << "[ -f " << answer << " ] || { echo 'slurm_load_jobs error: Unable to "
                        << "contact slurm controller' >&2; exit 1; }\n"
                        << "cat " << answer << "\n";
  chmod(script.c_str(), 0755);
  JobRegistry registry;
  SlurmWatchOptions options = *SlurmWatchOptionsFromFlag("squeue:" + script);
  SlurmWatch watch(options, registry);

  std::ofstream(answer) << ReadFixture(kDebianCapture);
  ASSERT_TRUE(watch.RunOnce().ok());
  EXPECT_THAT(registry.JobsOfHost("vm"), ElementsAre("slurm-1"));

  // slurmctld goes away: the job is not taken away for that.
  std::filesystem::remove(answer);
  absl::Status failed = watch.RunOnce();
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("Unable to contact slurm controller"));
  EXPECT_THAT(registry.JobsOfHost("vm"), ElementsAre("slurm-1"));

  // The job ended: the next poll lists none, and it leaves.
  std::ofstream(answer) << R"({"meta": {}, "errors": [], "jobs": []})";
  ASSERT_TRUE(watch.RunOnce().ok());
  EXPECT_TRUE(registry.JobsOfHost("vm").empty());
  EXPECT_EQ(watch.stats().polls, 3u);
  EXPECT_EQ(watch.stats().failures, 1u);

  // Not squeue's JSON at all: an error, and nothing changes.
  std::ofstream(answer) << "squeue: error: Invalid user\n";
  EXPECT_FALSE(watch.RunOnce().ok());
}

}  // namespace slurm_watch_test
}  // namespace railwatch
