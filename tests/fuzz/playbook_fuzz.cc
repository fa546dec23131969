// libFuzzer target for the playbook loader: any text as a playbook file (YAML, items, the
// condition language, overrides). Must not crash, throw or hang; every problem names a file (a
// problem in the text's own file has a line within it, or 0 for the whole file); a load
// without errors yields named playbooks. Seeds: rules/ and tests/fixtures/rules/tiny.yaml.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/playbook.h"
#include "tests/fuzz/fuzz_support.h"

using railwatch::fuzz::Check;
using railwatch::fuzz::SilenceLogs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SilenceLogs();
  const std::string text(reinterpret_cast<const char*>(data), size);
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  railwatch::LoadResult result;
  railwatch::LoadPlaybooksFromString(text, "fuzz.yaml", result);
  for (const railwatch::LoadProblem& p : result.problems) {
    Check(!p.file.empty());  // the file, or a runbook it names
    if (p.file == "fuzz.yaml") Check(p.line >= 0 && p.line <= lines + 1);
    Check(!p.code.empty());
    Check(!p.ToString().empty());
  }
  if (result.ok()) {
    for (const railwatch::Playbook& playbook : result.playbooks) Check(!playbook.name.empty());
  }
  return 0;
}
