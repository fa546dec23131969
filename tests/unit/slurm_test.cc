// Slurm's job output as real clusters printed it (tests/fixtures/slurm, from ../shared/realworld;
// CATALOGUE.md section S says what each holds), read by jobs/slurm.h. No real capture of
// squeue --json at data_parser v0.0.40+ (Slurm 23.11, 24.05) was found: that shape is tested on
// small documents written here, marked as such.
#include "jobs/slurm.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "support/ttar.h"

namespace railwatch::slurm_test {

using ::railwatch::jobs::ExpandHostlist;
using ::railwatch::jobs::GpusFromGres;
using ::railwatch::jobs::GpusFromTres;
using ::railwatch::jobs::ParseScontrolShowJob;
using ::railwatch::jobs::ParseSqueueJson;
using ::railwatch::jobs::ParseSqueueTable;
using ::railwatch::jobs::SlurmGpus;
using ::railwatch::jobs::SlurmJob;
using ::railwatch::jobs::SlurmJobsResult;
using ::railwatch::jobs::SlurmProblem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

std::string SlurmFixture(const std::string& name) {
  const std::string text = railwatch::testing::ReadFixture("slurm/" + name);
  EXPECT_FALSE(text.empty()) << name;
  return text;
}

// A job's identity in one line: id|name|user|account|partition|state.
std::string Identity(const SlurmJob& j) {
  return absl::StrJoin({j.id, j.name, j.user, j.account, j.partition, j.state}, "|");
}

// Its nodes and GPUs: "node_count: node,node; per node/total type".
std::string Placement(const SlurmJob& j) {
  return absl::StrCat(j.node_count, ": ", absl::StrJoin(j.nodes, ","), "; ", j.gpus_per_node, "/",
                      j.gpus_total, j.gpu_type.empty() ? "" : " ", j.gpu_type);
}

// Which printer and release a JSON document names: "data_parser/v0.0.39 23.02.6".
std::string Printer(const SlurmJobsResult& r) {
  return absl::StrCat(r.format, " ", r.slurm_release);
}

// Its times: submit start end.
std::string Times(const SlurmJob& j) {
  return absl::StrCat(j.submit_unix, " ", j.start_unix, " ", j.end_unix);
}

std::vector<std::string> ProblemTexts(const SlurmJobsResult& r) {
  std::vector<std::string> out;
  for (const SlurmProblem& p : r.problems) out.push_back(p.ToString());
  return out;
}

const SlurmJob* JobWithId(const SlurmJobsResult& r, const std::string& id) {
  for (const SlurmJob& j : r.jobs) {
    if (j.id == id) return &j;
  }
  ADD_FAILURE() << "no job " << id;
  return nullptr;
}

std::vector<std::string> Expanded(const std::string& expr, size_t max_names) {
  absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expr, max_names);
  EXPECT_TRUE(names.ok()) << expr << ": " << names.status();
  return names.ok() ? *names : std::vector<std::string>{};
}

std::vector<std::string> Expanded(const std::string& expr) {
  return Expanded(expr, jobs::kMaxHostlistNames);
}

std::string HostlistError(const std::string& expr, size_t max_names = jobs::kMaxHostlistNames) {
  absl::StatusOr<std::vector<std::string>> names = ExpandHostlist(expr, max_names);
  EXPECT_FALSE(names.ok()) << expr;
  return names.ok() ? "" : std::string(names.status().message());
}

// ---- Hostlist expressions ----

TEST(SlurmHostlist, RangesListsAndPlainNames) {
  EXPECT_THAT(Expanded("gpu01"), ElementsAre("gpu01"));
  EXPECT_THAT(Expanded("n[1-3,7]"), ElementsAre("n1", "n2", "n3", "n7"));
  EXPECT_THAT(Expanded("a, b\tc"), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Expanded(""), IsEmpty());
  EXPECT_THAT(Expanded("  "), IsEmpty());
  EXPECT_THAT(Expanded("[1-2]"), ElementsAre("1", "2"));
}

TEST(SlurmHostlist, ZeroPaddingIsKept) {
  EXPECT_THAT(Expanded("d[001-003]"), ElementsAre("d001", "d002", "d003"));
  EXPECT_THAT(Expanded("d[08-10]"), ElementsAre("d08", "d09", "d10"));
  EXPECT_THAT(Expanded("n[8-10]"), ElementsAre("n8", "n9", "n10"));
  EXPECT_THAT(Expanded("c[002,004,010]"), ElementsAre("c002", "c004", "c010"));
}

TEST(SlurmHostlist, SeveralGroupsSuffixAndProducts) {
  const std::vector<std::string> names = Expanded("d[001-032],f[001-004,006-024]");
  ASSERT_THAT(names, SizeIs(55));
  EXPECT_EQ(names[0], "d001");
  EXPECT_EQ(names[31], "d032");
  EXPECT_EQ(names[32], "f001");
  EXPECT_EQ(names[35], "f004");
  EXPECT_EQ(names[36], "f006");  // f005 is not in the list
  EXPECT_EQ(names[54], "f024");
  EXPECT_THAT(Expanded("gpu[1-2]-ib"), ElementsAre("gpu1-ib", "gpu2-ib"));
  EXPECT_THAT(Expanded("rack[1-2]-n[01-02]"),
              ElementsAre("rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"));
  EXPECT_THAT(Expanded("node1[0-2].example.com"),
              ElementsAre("node10.example.com", "node11.example.com", "node12.example.com"));
}

TEST(SlurmHostlist, ErrorsNameTheirColumn) {
  EXPECT_EQ(HostlistError("d[001-032"), "column 2: '[' without ']'");
  EXPECT_EQ(HostlistError("d001]"), "column 5: ']' without '['");
  EXPECT_EQ(HostlistError("d[3-1]"), "column 3: the range 3-1 goes down");
  EXPECT_EQ(HostlistError("d[1-a]"), "column 5: expected a number, found 'a'");
  EXPECT_EQ(HostlistError("d[]"), "column 3: expected a number, found ']'");
  EXPECT_EQ(HostlistError("a,d[1-2[3]]"), "column 8: '[' inside '[...]'");
  EXPECT_THAT(HostlistError("d[1-2;4]"), HasSubstr("column 6: unexpected ';'"));
  EXPECT_EQ(HostlistError("d[1-"), "column 5: the expression ends inside '[...]'");
  EXPECT_EQ(HostlistError("d[1234567890123456789]"), "column 3: a number of more than 18 digits");
}

TEST(SlurmHostlist, ExpansionIsBounded) {
  // A typo must not allocate gigabytes: the count is known before a name is made.
  EXPECT_EQ(HostlistError("n[1-999999999]"),
            "column 1: the hostlist expands to more than 1000000 names");
  EXPECT_EQ(HostlistError("r[1-1000]-n[1-1000]-g[1-2]"),
            "column 1: the hostlist expands to more than 1000000 names");
  EXPECT_THAT(Expanded("n[1-10]", 10), SizeIs(10));
  EXPECT_EQ(HostlistError("a[1-5],b[1-6]", 10),
            "column 8: the hostlist expands to more than 10 names");
  EXPECT_THAT(Expanded("n[1-1000000]"), SizeIs(1000000));
}

// The NODELIST column of a real sinfo table: each row's node count is its expansion's size.
TEST(SlurmHostlist, SinfoNodeListsExpandToTheirNodeCounts) {
  const std::string text =
      SlurmFixture("slurm_02_sinfo_default_hostlist_ranges_drng_fail_maint.txt");
  int rows = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_EQ(words.size(), 6u) << line;
    if (words[0] == "PARTITION") continue;
    ++rows;
    EXPECT_THAT(Expanded(words[5]), SizeIs(std::stoul(words[3]))) << line;
  }
  EXPECT_EQ(rows, 9);
  EXPECT_THAT(Expanded("c[020-022]"), ElementsAre("c020", "c021", "c022"));
  const std::vector<std::string> gpu_drng = Expanded("c[002,004,008-010,012,016,024-028]");
  EXPECT_THAT(gpu_drng, SizeIs(12));
  EXPECT_EQ(gpu_drng[2], "c008");
  EXPECT_EQ(gpu_drng.back(), "c028");
}

// slurmrestd v0.0.41 /partitions (24.05): a 973-node GPU partition's hostlist and its TRES.
TEST(SlurmHostlist, RestdPartitionsHostlistsAndGpus) {
  const nlohmann::json doc = nlohmann::json::parse(
      SlurmFixture("slurm_04_v24.05_slurmrestd_v0.0.41_partitions_hostlist_gres_gpu_tres.json"));
  ASSERT_TRUE(doc.contains("partitions"));
  int gpu_partitions = 0;
  for (const nlohmann::json& p : doc["partitions"]) {
    const std::string expr = p["nodes"]["configured"].get<std::string>();
    const std::vector<std::string> names = Expanded(expr);
    EXPECT_EQ(names.size(), p["nodes"]["total"].get<size_t>()) << expr;
    const SlurmGpus gpus = GpusFromTres(p["tres"]["configured"].get<std::string>());
    if (expr == "fs-mbz-gpu-[001-973]") {
      ++gpu_partitions;
      ASSERT_THAT(names, SizeIs(973));
      EXPECT_EQ(names.front(), "fs-mbz-gpu-001");
      EXPECT_EQ(names.back(), "fs-mbz-gpu-973");
      EXPECT_EQ(gpus.count, 7784);  // gres\/gpu=7784 in the raw text
    } else {
      EXPECT_EQ(expr, "fs-mbz-cpu-[001-008]");
      EXPECT_EQ(gpus.count, -1);
    }
  }
  EXPECT_EQ(gpu_partitions, 3);
}

// ---- TRES and GRES ----

// sacct -P AllocTRES with MIG profiles (and an H100) as GRES types.
TEST(SlurmGres, SacctTresWithMigTypes) {
  const std::string text =
      SlurmFixture("slurm_10_sacct_parsable_alloctres_mig_gres_steps_truncated.txt");
  std::vector<std::pair<std::string, SlurmGpus>> rows;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    const std::pair<std::string, std::string> cells = absl::StrSplit(line, '|');
    if (cells.first == "JobID") continue;
    rows.emplace_back(cells.first, GpusFromTres(cells.second));
  }
  ASSERT_THAT(rows, SizeIs(5));
  EXPECT_EQ(rows[0].first, "8117657");
  EXPECT_EQ(rows[0].second.count, 1);
  EXPECT_EQ(rows[0].second.type, "a100_3g.20gb");
  EXPECT_EQ(rows[1].first, "8117657.batch");
  EXPECT_EQ(rows[1].second.type, "a100_3g.20gb");
  EXPECT_EQ(rows[3].first, "8117678");
  EXPECT_EQ(rows[3].second.count, 1);
  EXPECT_EQ(rows[3].second.type, "h100");
}

TEST(SlurmGres, RequestsAndPerNodeDetail) {
  EXPECT_EQ(GpusFromGres("gres:gpu:8").count, 8);
  EXPECT_EQ(GpusFromGres("gres/gpu:8").count, 8);
  const SlurmGpus typed = GpusFromGres("gres/gpu:h100:4");
  EXPECT_EQ(typed.count, 4);
  EXPECT_EQ(typed.type, "h100");
  const SlurmGpus detail = GpusFromGres("gpu:8(IDX:0-7)");
  EXPECT_EQ(detail.count, 8);
  EXPECT_EQ(detail.indexes, "0-7");
  const SlurmGpus null_type = GpusFromGres("gpu:(null):8(IDX:0-7)");
  EXPECT_EQ(null_type.count, 8);
  EXPECT_EQ(null_type.type, "");
  const SlurmGpus listed = GpusFromGres("gpu:a100:3(IDX:0,2-3),shard:0(0/8)");
  EXPECT_EQ(listed.count, 3);
  EXPECT_EQ(listed.type, "a100");
  EXPECT_EQ(listed.indexes, "0,2-3");
  const SlurmGpus old_idx = GpusFromGres("gpu(IDX:0-1)");
  EXPECT_EQ(old_idx.count, 2);
  EXPECT_EQ(old_idx.indexes, "0-1");
  EXPECT_EQ(GpusFromGres("gpu:tesla:2(IDX:N/A)").indexes, "");
  EXPECT_EQ(GpusFromGres("").count, -1);
  EXPECT_EQ(GpusFromGres("(null)").count, -1);
  EXPECT_EQ(GpusFromGres("gres/shard:2").count, -1);
  EXPECT_EQ(GpusFromTres("cpu=16,mem=120000M,node=1,billing=80,gres/gpu=8").count, 8);
  EXPECT_EQ(GpusFromTres("cpu=1,mem=62.50G,node=1,billing=1").count, -1);
}

// ---- squeue --json ----

// Slurm 21.08.5, openapi v0.0.37: one RUNNING job, one PENDING job without nodes.
TEST(SlurmSqueueJson, V0037RunningAndPending) {
  const SlurmJobsResult r = ParseSqueueJson(
      SlurmFixture("slurm_06_v21.08.5_squeue_json_openapi_v0.0.37_running_pending.json"),
      "slurm_06.json");
  EXPECT_THAT(ProblemTexts(r), IsEmpty());
  EXPECT_EQ(Printer(r), "openapi/v0.0.37 21.08.5");
  ASSERT_THAT(r.jobs, SizeIs(2));
  const SlurmJob& running = r.jobs[0];
  EXPECT_EQ(Identity(running), "26515966|job_name|bkd|account1|hw-l|RUNNING");
  EXPECT_THAT(running.state_flags, IsEmpty());
  // tres_alloc_str "cpu=1,mem=62.50G,node=1,billing=1" names no GPU: unknown, not zero.
  EXPECT_EQ(Placement(running), "1: cs75; -1/-1");
  EXPECT_EQ(Times(running), "1684114900 1684114921 1686633833");
  const SlurmJob& pending = r.jobs[1];
  EXPECT_EQ(Identity(pending), "58948420|some job name|bkd|account1|hw-m|PENDING");
  EXPECT_EQ(pending.node_list, "");
  // Kept without nodes; node_count is wrapped {set, infinite, number} in this 21.08 job.
  EXPECT_EQ(Placement(pending), "1: ; -1/-1");
  EXPECT_EQ(Times(pending), "1729715848 0 0");
}

// Slurm 23.02.6, data_parser v0.0.39: meta.plugins/meta.Slurm, a string job_state, one 8-GPU
// job with its GPU indexes in gres_detail.
TEST(SlurmSqueueJson, V0039EightGpuJob) {
  const SlurmJobsResult r = ParseSqueueJson(
      SlurmFixture("slurm_11_v23.02.6_squeue_u_json_data_parser_v0.0.39_gpu8_job_jean_zay.json"),
      "slurm_11.json");
  EXPECT_THAT(ProblemTexts(r), IsEmpty());
  EXPECT_EQ(Printer(r), "data_parser/v0.0.39 23.02.6");
  ASSERT_THAT(r.jobs, SizeIs(1));
  const SlurmJob& j = r.jobs[0];
  EXPECT_EQ(Identity(j), "1618871|model_pretrain|www26kf|dmn@v100|gpu_p2|RUNNING");
  EXPECT_EQ(Placement(j), "1: data-center-ia830; 8/8");
  EXPECT_THAT(j.gpu_indexes_by_node, ElementsAre(Pair("data-center-ia830", "0-7")));
  EXPECT_EQ(Times(j), "1701982989 1701983394 1702343394");
}

// Written here, not captured: the v0.0.41 shape of squeue --json (Slurm 24.05) as its
// OpenAPI schema describes it. job_state an array, times and counts wrapped, versions strings,
// node names in job_resources.nodes.list only for one job, a job without "nodes" at all.
constexpr char kSqueueV0041[] = R"json({
  "jobs": [
    {
      "account": "llm",
      "gres_detail": ["gpu:h100:8(IDX:0-7)", "gpu:h100:8(IDX:0-7)"],
      "job_id": 4242,
      "job_resources": {"nodes": {"count": 2, "list": "gpu-[07-08]", "whole": true,
                                  "allocation": [{"index": 0, "name": "gpu-07"}]}},
      "job_state": ["RUNNING", "CONFIGURING"],
      "name": "pretrain 70b",
      "node_count": {"set": true, "infinite": false, "number": 2},
      "nodes": "gpu-[07-08]",
      "partition": "h100",
      "start_time": {"set": true, "infinite": false, "number": 1717000000},
      "end_time": {"set": true, "infinite": false, "number": 1717086400},
      "submit_time": {"set": true, "infinite": false, "number": 1716999000},
      "tres_alloc_str": "cpu=128,mem=1000G,node=2,billing=128,gres\/gpu=16",
      "tres_per_node": "gres\/gpu:h100:8",
      "user_name": "alice"
    },
    {
      "account": "llm",
      "gres_detail": [],
      "job_id": 4243,
      "job_resources": {},
      "job_state": ["PENDING"],
      "name": "eval",
      "node_count": {"set": true, "infinite": false, "number": 4},
      "partition": "h100",
      "start_time": {"set": false, "infinite": false, "number": 0},
      "end_time": {"set": false, "infinite": true, "number": 0},
      "tres_alloc_str": "",
      "tres_per_job": "gres\/gpu:32",
      "tres_req_str": "cpu=4,mem=16G,node=4,billing=4,gres\/gpu=32",
      "user_name": "bob"
    },
    {
      "job_id": 4244,
      "job_resources": {"nodes": {"count": 1, "list": "gpu-09"}},
      "job_state": ["RUNNING"],
      "nodes": "",
      "tres_alloc_str": "cpu=8,node=1,gres\/gpu:a100_3g.20gb=2",
      "user_name": "carol"
    }
  ],
  "last_backfill": {"set": true, "infinite": false, "number": 1717000100},
  "meta": {
    "plugin": {"type": "", "name": "", "data_parser": "data_parser\/v0.0.41",
               "accounting_storage": "accounting_storage\/slurmdbd"},
    "slurm": {"version": {"major": "24", "micro": "6", "minor": "05"}, "release": "24.05.6",
              "cluster": "c1"}
  },
  "errors": [],
  "warnings": []
})json";

TEST(SlurmSqueueJson, V0041ArraysAndWrappedNumbers) {
  const SlurmJobsResult r = ParseSqueueJson(kSqueueV0041, "inline_v0.0.41.json");
  EXPECT_THAT(ProblemTexts(r), IsEmpty());
  EXPECT_EQ(Printer(r), "data_parser/v0.0.41 24.05.6");
  ASSERT_THAT(r.jobs, SizeIs(3));
  const SlurmJob& running = r.jobs[0];
  EXPECT_EQ(Identity(running), "4242|pretrain 70b|alice|llm|h100|RUNNING");
  EXPECT_THAT(running.state_flags, ElementsAre("CONFIGURING"));
  EXPECT_EQ(Placement(running), "2: gpu-07,gpu-08; 8/16 h100");
  EXPECT_THAT(running.gpu_indexes_by_node,
              ElementsAre(Pair("gpu-07", "0-7"), Pair("gpu-08", "0-7")));
  EXPECT_EQ(Times(running), "1716999000 1717000000 1717086400");
  const SlurmJob& pending = r.jobs[1];
  EXPECT_EQ(Identity(pending), "4243|eval|bob|llm|h100|PENDING");
  // No nodes yet; its GPUs are what it asks for (tres_per_job), per node unknown.
  EXPECT_EQ(Placement(pending), "4: ; -1/32");
  EXPECT_EQ(Times(pending), "0 0 0");
  const SlurmJob& mig = r.jobs[2];
  EXPECT_EQ(Identity(mig), "4244||carol|||RUNNING");
  // Nodes from job_resources.nodes.list; a MIG profile as the GPU type.
  EXPECT_EQ(Placement(mig), "1: gpu-09; 2/2 a100_3g.20gb");
}

TEST(SlurmSqueueJson, BrokenDocumentGivesItsPosition) {
  const SlurmJobsResult r =
      ParseSqueueJson("{\n  \"jobs\": [\n    {\"job_id\": 1,,}\n  ]\n}\n", "broken.json");
  EXPECT_THAT(r.jobs, IsEmpty());
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_EQ(r.problems[0].where, "broken.json:3:18");
  EXPECT_THAT(r.problems[0].message, HasSubstr("not JSON: syntax error"));
  // Cut short: the position is just past the end.
  const SlurmJobsResult cut = ParseSqueueJson("{\"jobs\": [{\"job_id\": 1", "cut.json");
  ASSERT_THAT(cut.problems, SizeIs(1));
  EXPECT_EQ(cut.problems[0].where, "cut.json:1:23");
}

TEST(SlurmSqueueJson, WhatIsNotSqueueJson) {
  EXPECT_THAT(ProblemTexts(ParseSqueueJson("{\"nodes\": []}", "sinfo.json")),
              ElementsAre("sinfo.json:1:1: no \"jobs\" array: not squeue --json output"));
  EXPECT_THAT(ProblemTexts(ParseSqueueJson("squeue: error: Invalid user\n", "err.txt")),
              ElementsAre("err.txt:1:1: no JSON object: not squeue --json output"));
  EXPECT_THAT(ParseSqueueJson("", "empty.json").problems, IsEmpty());
  // A prompt line before the document is skipped.
  const SlurmJobsResult prompted = ParseSqueueJson(
      "$ squeue --json\n{\"jobs\": [{\"job_id\": 7, \"job_state\": \"PENDING\"}]}", "prompt.txt");
  EXPECT_THAT(ProblemTexts(prompted), IsEmpty());
  ASSERT_THAT(prompted.jobs, SizeIs(1));
  EXPECT_EQ(prompted.jobs[0].id, "7");
}

// Written here: a slurmrestd /jobs answer (v0.0.40 shape) with Slurm's own error and warning,
// a job whose node list is not a hostlist, a job without job_id, and one whose gres_detail does
// not match its nodes. The good jobs are kept.
TEST(SlurmSqueueJson, RestdErrorsAndBadJobsAreProblems) {
  const char* doc = R"json({
  "meta": {"plugin": {"data_parser": "data_parser\/v0.0.40"}, "slurm": {"release": "23.11.4"}},
  "errors": [{"description": "Unable to query jobs", "error_number": 2017,
              "error": "Invalid job id specified", "source": "slurm_load_jobs()"}],
  "warnings": [{"description": "a warning", "source": "x"}],
  "jobs": [
    {"job_id": 1, "nodes": "gpu[01-", "job_state": ["RUNNING"]},
    {"name": "no id"},
    {"job_id": 3, "nodes": "gpu[01-02]", "gres_detail": ["gpu:8(IDX:0-7)"],
     "tres_per_node": "gres\/gpu:8", "job_state": ["RUNNING"]}
  ]
})json";
  const SlurmJobsResult r = ParseSqueueJson(doc, "restd.json");
  EXPECT_EQ(r.format, "data_parser/v0.0.40");
  EXPECT_THAT(
      ProblemTexts(r),
      ElementsAre("restd.json:3:3: Slurm error: Unable to query jobs: Invalid job id specified "
                  "(2017)",
                  "restd.json:5:3: Slurm warning: a warning",
                  "restd.json:7:36: job 1: node list \"gpu[01-\": the expression ends inside "
                  "'[...]'",
                  "restd.json:8:5: a job without job_id: skipped",
                  "restd.json:9:42: job 3: gres_detail has 1 entries for 2 nodes: GPU indexes "
                  "per node not read"));
  ASSERT_THAT(r.jobs, SizeIs(2));
  EXPECT_EQ(r.jobs[0].id, "1");
  EXPECT_THAT(r.jobs[0].nodes, IsEmpty());
  EXPECT_EQ(r.jobs[1].id, "3");
  EXPECT_THAT(r.jobs[1].nodes, ElementsAre("gpu01", "gpu02"));
  EXPECT_EQ(r.jobs[1].gpus_per_node, 8);
  EXPECT_EQ(r.jobs[1].gpus_total, 16);
  EXPECT_THAT(r.jobs[1].gpu_indexes_by_node, IsEmpty());
}

// ---- scontrol show job and the squeue table ----

// NVIDIA DeepOps' docs: the squeue table, then scontrol show jobid -dd with ". . ." elisions
// (NodeList= among what is elided) and a per-node GRES=gpu:1(IDX:0) line.
TEST(SlurmScontrol, DeepopsJobGresIndexes) {
  const std::string text =
      SlurmFixture("slurm_09_dgx_squeue_default_and_scontrol_show_job_dd_job_gres_idx_elided.txt");
  const SlurmJobsResult r = ParseScontrolShowJob(text, "slurm_09.txt");
  EXPECT_THAT(ProblemTexts(r), IsEmpty());
  ASSERT_THAT(r.jobs, SizeIs(1));
  const SlurmJob& j = r.jobs[0];
  EXPECT_EQ(Identity(j), "106|bash|testuser|||");  // Partition= and JobState= are elided
  EXPECT_EQ(Placement(j), "1: gpu01; 1/1");        // the node from the per-node line
  EXPECT_THAT(j.gpu_indexes_by_node, ElementsAre(Pair("gpu01", "0")));
}

TEST(SlurmSqueueTable, DeepopsDefaultTable) {
  const SlurmJobsResult r = ParseSqueueTable(
      SlurmFixture("slurm_09_dgx_squeue_default_and_scontrol_show_job_dd_job_gres_idx_elided.txt"),
      "slurm_09.txt");
  EXPECT_THAT(ProblemTexts(r), IsEmpty());
  ASSERT_THAT(r.jobs, SizeIs(1));
  EXPECT_EQ(Identity(r.jobs[0]), "106|bash|testuser||batch|RUNNING");
  EXPECT_EQ(Placement(r.jobs[0]), "1: gpu01; -1/-1");
}

TEST(SlurmSqueueTable, PendingReasonNamesAndBadLists) {
  // Written here in squeue's default format: a pending job's reason in NODELIST(REASON), a
  // name with a space (the columns are right-aligned), a broken node list.
  const std::string text =
      "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
      "               201       gpu    train    alice  R      10:00      2 gpu[01-02]\n"
      "               202       gpu  my eval      bob PD       0:00      4 (Resources)\n"
      "               203       gpu     bad      eve  R       1:00      1 gpu[9\n";
  const SlurmJobsResult r = ParseSqueueTable(text, "squeue.txt");
  EXPECT_THAT(ProblemTexts(r),
              ElementsAre("squeue.txt:4:71: node list \"gpu[9\": '[' without ']'"));
  ASSERT_THAT(r.jobs, SizeIs(3));
  EXPECT_EQ(Placement(r.jobs[0]), "2: gpu01,gpu02; -1/-1");
  EXPECT_EQ(Identity(r.jobs[1]), "202|my eval|bob||gpu|PENDING");
  EXPECT_EQ(Placement(r.jobs[1]), "4: ; -1/-1");
  EXPECT_EQ(Placement(r.jobs[2]), "1: ; -1/-1");
}

// Written here in the layout of scontrol show job -d (Slurm 23.02): two jobs, a multi-node GPU
// job with per-node GRES lines, rest-of-line keys with spaces, (null) values and a pending job.
constexpr char kScontrolTwoJobs[] =
    "JobId=301 JobName=llama train\n"
    "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
    "   Priority=1 Nice=0 Account=(null) QOS=normal\n"
    "   JobState=RUNNING Reason=None Dependency=(null)\n"
    "   SubmitTime=2024-05-01T09:59:00 EligibleTime=2024-05-01T09:59:00\n"
    "   StartTime=2024-05-01T10:00:00 EndTime=2024-05-02T10:00:00 Deadline=N/A\n"
    "   Partition=h100 AllocNode:Sid=login1:4242\n"
    "   ReqNodeList=(null) ExcNodeList=(null)\n"
    "   NodeList=gpu[01-02,04]\n"
    "   NumNodes=3 NumCPUs=96 NumTasks=24 CPUs/Task=4 ReqB:S:C:T=0:0:*:*\n"
    "   ReqTRES=cpu=96,mem=900G,node=3,billing=96,gres/gpu=24\n"
    "   AllocTRES=cpu=96,mem=900G,node=3,billing=96,gres/gpu=24\n"
    "   JOB_GRES=gpu:h100:24\n"
    "     Nodes=gpu[01-02] CPU_IDs=0-31 Mem=307200 GRES=gpu:h100:8(IDX:0-7)\n"
    "     Nodes=gpu04 CPU_IDs=0-31 Mem=307200 GRES=gpu:h100:8(IDX:0-7)\n"
    "   Command=/home/alice/run train.sh --steps 10\n"
    "   WorkDir=/home/alice/my runs\n"
    "   TresPerNode=gres/gpu:8\n"
    "\n"
    "JobId=302 JobName=eval\n"
    "   UserId=bob(1002) GroupId=bob(1002) MCS_label=N/A\n"
    "   Account=research QOS=normal\n"
    "   JobState=PENDING Reason=Resources Dependency=(null)\n"
    "   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"
    "   Partition=h100\n"
    "   NodeList=(null)\n"
    "   NumNodes=2-2 NumCPUs=2\n"
    "   ReqTRES=cpu=2,node=2,billing=2,gres/gpu=16\n"
    "   TresPerNode=gres/gpu:8\n";

TEST(SlurmScontrol, MultiNodeGpuJobAndPendingJob) {
  const SlurmJobsResult r = ParseScontrolShowJob(kScontrolTwoJobs, "scontrol.txt");
  EXPECT_THAT(ProblemTexts(r), IsEmpty());
  ASSERT_THAT(r.jobs, SizeIs(2));
  const SlurmJob& running = *JobWithId(r, "301");
  EXPECT_EQ(Identity(running), "301|llama train|alice||h100|RUNNING");  // Account=(null)
  EXPECT_EQ(running.node_list, "gpu[01-02,04]");
  EXPECT_EQ(Placement(running), "3: gpu01,gpu02,gpu04; 8/24 h100");
  EXPECT_THAT(running.gpu_indexes_by_node,
              ElementsAre(Pair("gpu01", "0-7"), Pair("gpu02", "0-7"), Pair("gpu04", "0-7")));
  EXPECT_EQ(running.start_unix, absl::ToUnixSeconds(absl::FromCivil(
                                    absl::CivilSecond(2024, 5, 1, 10, 0, 0), absl::UTCTimeZone())));
  EXPECT_EQ(running.end_unix, running.start_unix + 86400);
  EXPECT_EQ(running.submit_unix, running.start_unix - 60);
  const SlurmJob& pending = *JobWithId(r, "302");
  EXPECT_EQ(Identity(pending), "302|eval|bob|research|h100|PENDING");
  EXPECT_EQ(Placement(pending), "2: ; 8/16");  // NodeList=(null); what it asks for
  EXPECT_EQ(Times(pending), "0 0 0");
  // The cluster's zone: the same text an hour east of UTC.
  const SlurmJobsResult cet =
      ParseScontrolShowJob(kScontrolTwoJobs, "scontrol.txt", absl::FixedTimeZone(3600));
  ASSERT_THAT(cet.jobs, SizeIs(2));
  EXPECT_EQ(cet.jobs[0].start_unix, running.start_unix - 3600);
}

TEST(SlurmScontrol, ProblemsHaveLineAndColumn) {
  const std::string text =
      "JobId=9 JobName=x\n"
      "   NodeList=gpu[02-01]\n"
      "   StartTime=yesterday\n"
      "   stray words JobState=RUNNING\n";
  const SlurmJobsResult r = ParseScontrolShowJob(text, "bad.txt");
  EXPECT_THAT(ProblemTexts(r),
              ElementsAre("bad.txt:2:17: NodeList=gpu[02-01]: the range 2-1 goes down",
                          "bad.txt:3:14: StartTime=yesterday: not a time (YYYY-MM-DDTHH:MM:SS)",
                          "bad.txt:4:4: not Key=Value: skipped up to the next key"));
  ASSERT_THAT(r.jobs, SizeIs(1));
  EXPECT_EQ(r.jobs[0].state, "RUNNING");
  EXPECT_THAT(r.jobs[0].nodes, IsEmpty());
  EXPECT_THAT(
      ProblemTexts(ParseScontrolShowJob("slurm_load_jobs error: Invalid job id\n", "err.txt")),
      ElementsAre("err.txt:1:1: no JobId= line: not scontrol show job output"));
}

}  // namespace railwatch::slurm_test
