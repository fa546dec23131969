// What saving and restoring the engine's diagnoses costs (engine/diagnosis_state.h): the
// state file of N active diagnoses, each with the engine's evidence caps filled (16 series,
// 8 events, 32 folded symptoms; evidence is saved without its points, as the engine does),
// written atomically (serialise, write, fsync, rename, fsync the directory) as after every
// fire/resolve and every 10 s while any is active, and read back as at a start. Prints FIGURE
// lines (medians).
//
//   state_save_bench [--diagnoses=500] [--repeats=15] [--dir=/tmp]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/program.h"
#include "engine/diagnosis_state.h"

ABSL_FLAG(int, diagnoses, 500, "active diagnoses in the state");
ABSL_FLAG(int, repeats, 15, "saves and restores measured (the median is printed)");
ABSL_FLAG(std::string, dir, "/tmp", "where the state file is written");

namespace railwatch {
namespace {

void AddLabels(google::protobuf::RepeatedPtrField<v1::Label>* out, int host, int nic) {
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"device", absl::StrCat("mlx5_", nic)},
           {"host", absl::StrCat("gpu-node-", host)},
           {"interface", absl::StrCat("eth", nic)},
           {"priority", "3"},
           {"rail", absl::StrCat(nic)}}) {
    v1::Label* l = out->Add();
    l->set_name(k);
    l->set_value(v);
  }
}

EngineState MakeState(int n) {
  EngineState s;
  const int64_t now = 1'800'000'000'000'000'000;
  s.saved_at_unix_nano = now;
  for (int i = 0; i < n; ++i) {
    SavedDiagnosis& d = s.diagnoses.emplace_back();
    d.key = absl::StrCat("node=\"gpu-node-", i, "/mlx5_0\"");
    d.labels = {{"host", absl::StrCat("gpu-node-", i)}, {"device", "mlx5_0"}, {"rail", "0"}};
    d.last_true_unix_nano = now;
    v1::Diagnosis& p = d.diagnosis;
    p.set_id(absl::StrCat("0000", i));
    p.set_playbook("pfc_storm");
    p.set_state(v1::DIAGNOSIS_STATE_FIRING);
    p.set_summary(absl::StrCat("PFC storm from gpu-node-", i, " mlx5_0 (rail 0, leaf-r0)"));
    p.set_description(std::string(400, 'd'));
    p.set_runbook_text(std::string(3000, 'r'));
    for (int c = 0; c < 6; ++c) p.add_commands(std::string(80, 'c'));
    AddLabels(p.mutable_culprit(), i, 0);
    p.set_active_since_unix_nano(now - 60'000'000'000);
    p.set_fired_at_unix_nano(now - 60'000'000'000);
    for (int e = 0; e < 16; ++e) {
      v1::Evidence* ev = p.add_evidence();
      ev->set_kind("series");
      ev->set_series(absl::StrCat("fabric_pfc_pause_frames_total{host=\"gpu-node-", i, "\"}"));
      AddLabels(ev->mutable_labels(), i, e);
      ev->set_summary("rate over 3s = 6000");
    }
    for (int e = 0; e < 8; ++e) {
      v1::Evidence* ev = p.add_evidence();
      ev->set_kind("event");
      ev->set_raw(std::string(200, 'l'));
    }
    for (int y = 0; y < 32; ++y) {
      d.symptoms.push_back({"pfc_pause_relay", absl::StrCat("switch=\"leaf-", y, "\""),
                            {{"switch", absl::StrCat("leaf-", y)}}, 1234.5,
                            "fabric_pfc_pause_frames_total{switch=\"leaf\"}", "", now, now});
    }
  }
  return s;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Main() {
  const int n = absl::GetFlag(FLAGS_diagnoses);
  const EngineState state = MakeState(n);
  const std::string path = absl::StrCat(absl::GetFlag(FLAGS_dir), "/railwatch-state-bench-",
                                        ::getpid(), ".json");
  std::vector<double> save_ms, restore_ms;
  for (int r = 0; r < absl::GetFlag(FLAGS_repeats); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (absl::Status s = WriteStateFile(path, state); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    absl::StatusOr<EngineState> back = ReadStateFile(path);
    auto t2 = std::chrono::steady_clock::now();
    if (!back.ok() || static_cast<int>(back->diagnoses.size()) != n) {
      std::fprintf(stderr, "restore failed: %s\n", std::string(back.status().message()).c_str());
      return 1;
    }
    save_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    restore_ms.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  const auto bytes = std::filesystem::file_size(path);
  std::filesystem::remove(path);
  std::printf("FIGURE state_file_bytes_%d %ju bytes\n", n, static_cast<uintmax_t>(bytes));
  std::printf("FIGURE state_save_ms_%d %.1f ms\n", n, Median(save_ms));
  std::printf("FIGURE state_restore_ms_%d %.1f ms\n", n, Median(restore_ms));
  return 0;
}

}  // namespace
}  // namespace railwatch

int main(int argc, char** argv) {
  railwatch::ParseProgramFlags(
      argc, argv,
      {.name = "state_save_bench",
       .summary = "what saving and restoring the engine's active diagnoses costs; prints FIGURE lines (medians).",
       .usage = "Usage: state_save_bench [--diagnoses=500] [--repeats=15] [--dir=/tmp]",
       .groups = {
          {"Benchmark", {"diagnoses", "repeats", "dir"}},
       }});
  return railwatch::Main();
}
