// railwatch_fuzz_replay <target> <file or directory>...: runs a fuzz target's
// LLVMFuzzerTestOneInput once on each file (directories: every file below them, in name order),
// as libFuzzer would replay them, in a build without libFuzzer (release, asan). ctest's
// fuzz_replay.<target> runs it on the target's seeds and regressions (tests/fuzz/CMakeLists.txt);
// a crash, a sanitizer report or a failed property is a failed test.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#define RAILWATCH_FUZZ_TARGET(name) \
  extern "C" int RailwatchFuzz_##name(const uint8_t* data, size_t size);
#include "replay_targets.inc"
#undef RAILWATCH_FUZZ_TARGET

namespace {

namespace fs = std::filesystem;
using TestOneInput = int (*)(const uint8_t*, size_t);

struct Target {
  std::string_view name;
  TestOneInput run;
};

constexpr Target kTargets[] = {
#define RAILWATCH_FUZZ_TARGET(name) {#name, RailwatchFuzz_##name},
#include "replay_targets.inc"
#undef RAILWATCH_FUZZ_TARGET
};

std::vector<fs::path> Inputs(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::recursive_directory_iterator(path)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s <target> <file or directory>...\n", argv[0]);
    return 2;
  }
  const std::string_view name = argv[1];
  const auto target = std::find_if(std::begin(kTargets), std::end(kTargets),
                                    [&](const Target& t) { return t.name == name; });
  if (target == std::end(kTargets)) {
    std::fprintf(stderr, "railwatch_fuzz_replay: no target %s\n", argv[1]);
    return 2;
  }
  size_t inputs = 0;
  for (int i = 2; i < argc; ++i) {
    if (!fs::exists(argv[i])) {
      std::fprintf(stderr, "railwatch_fuzz_replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
    for (const fs::path& file : Inputs(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      std::fprintf(stderr, "%s\n", file.c_str());
      target->run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  std::printf("%s: %zu inputs replayed\n", argv[1], inputs);
  return inputs > 0 ? 0 : 1;
}
