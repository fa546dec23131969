#include "common/program.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/version.h"

namespace railwatch {
namespace {

constexpr size_t kWidth = 100;
constexpr absl::string_view kIndent = "      ";

// Abseil's own flags (--flagfile, --fromenv, --helpfull ...) are Abseil's to describe.
bool IsOwnFlag(const absl::CommandLineFlag& flag) {
  return !flag.IsRetired() && !absl::StrContains(flag.Filename(), "absl/");
}

std::string ValuePlaceholder(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<std::string>()) return "=STRING";
  if (flag.IsOfType<absl::Duration>()) return "=DURATION";
  if (flag.IsOfType<double>() || flag.IsOfType<float>()) return "=NUMBER";
  if (flag.IsOfType<std::vector<std::string>>()) return "=A,B,...";
  if (flag.IsOfType<int>() || flag.IsOfType<int64_t>() || flag.IsOfType<uint64_t>() ||
      flag.IsOfType<uint32_t>() || flag.IsOfType<int32_t>()) {
    return "=N";
  }
  return "=VALUE";
}

std::string DefaultText(const absl::CommandLineFlag& flag) {
  const std::string value = flag.DefaultValue();
  if (flag.IsOfType<std::string>()) return value.empty() ? "none" : absl::StrCat("\"", value, "\"");
  if (flag.IsOfType<std::vector<std::string>>() && value.empty()) return "none";
  return value;
}

// Words of `text` filled into lines of at most kWidth columns after kIndent.
void AppendWrapped(std::string& out, absl::string_view text) {
  std::string line(kIndent);
  for (absl::string_view word : absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (line.size() > kIndent.size() && line.size() + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, line, "\n");
      line = std::string(kIndent);
    }
    if (line.size() > kIndent.size()) line += ' ';
    absl::StrAppend(&line, word);
  }
  if (line.size() > kIndent.size()) absl::StrAppend(&out, line, "\n");
}

void AppendFlag(std::string& out, const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) {
    absl::StrAppend(&out, "  --[no]", flag.Name(), "  (default ", flag.DefaultValue(), ")\n");
  } else {
    absl::StrAppend(&out, "  --", flag.Name(), ValuePlaceholder(flag), "  (default ",
                    DefaultText(flag), ")\n");
  }
  AppendWrapped(out, flag.Help());
}

}  // namespace

std::vector<std::string> ProgramFlagNames() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOwnFlag(*flag)) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ProgramHelp(const ProgramInfo& info) {
  std::string out = absl::StrCat(info.name, " ", kVersion, ": ", info.summary, "\n\n", info.usage,
                                 "\n");
  std::set<std::string, std::less<>> shown;
  for (const FlagGroup& group : info.groups) {
    std::string section;
    for (const std::string& name : group.flags) {
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag == nullptr || !shown.insert(name).second) continue;
      AppendFlag(section, *flag);
    }
    if (!section.empty()) absl::StrAppend(&out, "\n", group.title, ":\n", section);
  }
  std::string other;
  for (const std::string& name : ProgramFlagNames()) {
    if (shown.contains(name)) continue;
    AppendFlag(other, *absl::FindCommandLineFlag(name));
  }
  if (!other.empty()) absl::StrAppend(&out, "\nOther flags:\n", other);
  absl::StrAppend(&out,
                  "\nEvery flag is --name=value (booleans also --name and --noname); "
                  "--flagfile=FILE reads flags from a file; --helpfull lists Abseil's own flags "
                  "too; --version prints the version.\n");
  if (!info.epilogue.empty()) absl::StrAppend(&out, info.epilogue, "\n");
  return out;
}

std::vector<char*> ParseProgramFlags(int argc, char** argv, const ProgramInfo& info) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      const std::string help = ProgramHelp(info);
      fwrite(help.data(), 1, help.size(), stdout);
      std::exit(0);
    }
  }
  absl::SetProgramUsageMessage(absl::StrCat(info.summary, "\n", info.usage));
  absl::FlagsUsageConfig usage;
  usage.version_string = [name = info.name] { return absl::StrCat(name, " ", kVersion, "\n"); };
  absl::SetFlagsUsageConfig(usage);
  return absl::ParseCommandLine(argc, argv);
}

void ApplyProcessDefaults() {
#ifdef NDEBUG
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
}

}  // namespace railwatch
