#include "cli/rules.h"

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "common/text.h"
#include "common/yaml_reader.h"
#include "engine/playbook.h"
#include "engine/rule_test.h"
#include "engine/diagnosis_text.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr char kUsage[] =
    "usage: railwatch rules validate [PATH...]\n"
    "       railwatch rules list [PATH...] [--json]\n"
    "       railwatch rules describe NAME [PATH...] [--json]\n"
    "       railwatch rules test FILE_OR_DIR...\n"
    "PATH: a rules file or a directory of them (default: the shipped rules)\n";

// Files LoadPlaybooks reads for `paths`: a directory's *.yaml / *.yml, a file as given.
std::vector<std::string> RuleFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
        files.push_back(entry.path().string());
      }
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

// LoadResult carries playbooks only; lists and macros are counted from the items themselves
// (an override of a shipped list is the same list). Files that do not parse were already
// reported by the loader.
struct ItemNames {
  std::set<std::string> lists, macros;
};
ItemNames NamedItems(const std::vector<std::string>& paths) {
  ItemNames names;
  for (const std::string& file : RuleFiles(paths)) {
    absl::StatusOr<std::string> text = ReadFile(file);
    if (!text.ok()) continue;
    YamlProblems reported_by_the_loader(file);
    for (const YAML::Node& doc : ParseYamlDocuments(*text, reported_by_the_loader)) {
      if (!doc.IsSequence()) continue;
      for (const YAML::Node& item : doc) {
        if (!item.IsMap()) continue;
        if (YAML::Node n = item["list"]; n && n.IsScalar()) names.lists.insert(n.Scalar());
        if (YAML::Node n = item["macro"]; n && n.IsScalar()) names.macros.insert(n.Scalar());
      }
    }
  }
  return names;
}

struct Loaded {
  std::vector<std::string> paths;
  LoadResult result;
  size_t errors = 0, warnings = 0;
};

Loaded Load(std::vector<std::string> paths, const RulesCommand& cmd) {
  Loaded l;
  if (paths.empty()) {
    // As railwatchd's --rules: comma-separated.
    for (absl::string_view p : absl::StrSplit(cmd.default_rules, ',', absl::SkipEmpty())) {
      paths.emplace_back(p);
    }
  }
  l.paths = paths;
  l.result = LoadPlaybooks(paths);
  for (const LoadProblem& p : l.result.problems) {
    ++(p.level == LoadProblem::Level::kError ? l.errors : l.warnings);
  }
  return l;
}

std::string Plural(size_t n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

int Validate(const RulesCommand& cmd, std::ostream& out) {
  Loaded l = Load({cmd.args.begin() + 1, cmd.args.end()}, cmd);
  for (const LoadProblem& p : l.result.problems) out << p.ToString() << "\n";
  if (l.errors > 0) {
    out << Plural(l.errors, "error", "errors") << ", " << Plural(l.warnings, "warning", "warnings")
        << " in " << absl::StrJoin(l.paths, ", ") << "\n";
    return kExitInvalid;
  }
  ItemNames items = NamedItems(l.paths);
  out << Plural(l.result.playbooks.size(), "playbook", "playbooks") << ", "
      << Plural(items.lists.size(), "list", "lists") << ", "
      << Plural(items.macros.size(), "macro", "macros") << " OK";
  if (l.warnings > 0) out << " (" << Plural(l.warnings, "warning", "warnings") << ")";
  out << "\n";
  return kExitOk;
}

void PrintProblems(const Loaded& l, std::ostream& err) {
  for (const LoadProblem& p : l.result.problems) {
    if (p.level == LoadProblem::Level::kError) err << p.ToString() << "\n";
  }
}

int List(const RulesCommand& cmd, std::ostream& out, std::ostream& err) {
  Loaded l = Load({cmd.args.begin() + 1, cmd.args.end()}, cmd);
  PrintProblems(l, err);
  if (cmd.json) {
    Json all = Json::array();
    for (const Playbook& pb : l.result.playbooks) {
      all.push_back({{"name", pb.name},
                     {"severity", SeverityName(pb.severity)},
                     {"for", HumanDuration(pb.for_duration)},
                     {"keep_firing_for", HumanDuration(pb.keep_firing_for)},
                     {"enabled", pb.enabled},
                     {"tags", pb.tags},
                     {"source", pb.source}});
    }
    out << all.dump(2) << "\n";
  } else {
    Table t({"PLAYBOOK", "SEVERITY", "FOR", "ENABLED", "TAGS", "SOURCE"});
    for (const Playbook& pb : l.result.playbooks) {
      t.Add({pb.name, SeverityName(pb.severity), HumanDuration(pb.for_duration),
             pb.enabled ? "yes" : "no", absl::StrJoin(pb.tags, ","), pb.source});
    }
    out << t.Render();
  }
  return l.errors > 0 ? kExitInvalid : kExitOk;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string ExplainText(const ExplainRule& r) {
  std::string text = absl::StrCat(absl::StrJoin(r.playbooks, ", "), " (", r.relation);
  if (r.relation == "fabric") absl::StrAppend(&text, ", hops ", r.hops);
  if (!r.equal.empty()) absl::StrAppend(&text, ", equal [", absl::StrJoin(r.equal, ", "), "]");
  absl::StrAppend(&text, ", lead ", HumanDuration(r.lead), ")");
  return text;
}

Json ExplainJson(const ExplainRule& r) {
  return {{"playbooks", r.playbooks}, {"relation", r.relation},        {"hops", r.hops},
          {"equal", r.equal},         {"lead", HumanDuration(r.lead)}, {"source", r.source}};
}

int Describe(const RulesCommand& cmd, std::ostream& out, std::ostream& err) {
  if (cmd.args.size() < 2) {
    err << kUsage;
    return kExitUsage;
  }
  const std::string& name = cmd.args[1];
  Loaded l = Load({cmd.args.begin() + 2, cmd.args.end()}, cmd);
  PrintProblems(l, err);
  const Playbook* pb = nullptr;
  std::vector<std::string> names;
  for (const Playbook& p : l.result.playbooks) {
    names.push_back(p.name);
    if (p.name == name) pb = &p;
  }
  if (pb == nullptr) {
    err << "railwatch: no playbook \"" << name << "\" in " << absl::StrJoin(l.paths, ", ")
        << " (playbooks: " << (names.empty() ? "none" : absl::StrJoin(Sorted(names), ", "))
        << ")\n";
    return l.errors > 0 ? kExitInvalid : kExitNotFound;
  }
  std::vector<std::string> metrics, kinds;
  std::string canonical;
  if (pb->condition) {
    pb->condition->CollectMetricNames(metrics);
    pb->condition->CollectEventKinds(kinds);
    canonical = pb->condition->ToString();
  }
  metrics = Sorted(metrics);
  kinds = Sorted(kinds);
  for (std::string& k : kinds) {
    if (k.empty()) k = "(every kind)";
  }
  if (cmd.json) {
    Json j = {{"name", pb->name},
              {"severity", SeverityName(pb->severity)},
              {"enabled", pb->enabled},
              {"source", pb->source},
              {"desc", pb->desc},
              {"condition", pb->condition_text},
              {"canonical_condition", canonical},
              {"metrics", metrics},
              {"event_kinds", kinds},
              {"for", HumanDuration(pb->for_duration)},
              {"keep_firing_for", HumanDuration(pb->keep_firing_for)},
              {"culprit", pb->culprit},
              {"group_by", pb->group_by},
              {"blast_radius", pb->blast_radius},
              {"explains", Json::array()},
              {"summary", pb->summary},
              {"runbook", pb->runbook},
              {"tags", pb->tags}};
    for (const ExplainRule& r : pb->explains) j["explains"].push_back(ExplainJson(r));
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  auto list = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("-") : absl::StrJoin(v, ", ");
  };
  auto indented = [](const std::string& text) {
    std::string out;
    for (char c : text) {
      out += c;
      if (c == '\n') out += "    ";
    }
    return out;
  };
  out << pb->name << " (" << SeverityName(pb->severity) << (pb->enabled ? "" : ", disabled")
      << ")\n";
  out << "  source           " << pb->source << "\n";
  out << "  desc\n    " << indented(pb->desc) << "\n";
  out << "  condition\n    "
      << indented(std::string(absl::StripTrailingAsciiWhitespace(pb->condition_text))) << "\n";
  out << "  canonical\n    " << canonical << "\n";
  out << "  reads metrics    " << list(metrics) << "\n";
  out << "  reads events     " << list(kinds) << "\n";
  out << "  for              " << HumanDuration(pb->for_duration) << "\n";
  out << "  keep_firing_for  " << HumanDuration(pb->keep_firing_for) << "\n";
  out << "  culprit          " << (pb->culprit.empty() ? "(every label)" : list(pb->culprit))
      << "\n";
  out << "  group_by         " << (pb->group_by.empty() ? "(culprit)" : list(pb->group_by)) << "\n";
  out << "  blast_radius     " << pb->blast_radius << "\n";
  if (pb->explains.empty()) out << "  explains         -\n";
  for (size_t i = 0; i < pb->explains.size(); ++i) {
    out << (i == 0 ? "  explains         " : "                   ") << ExplainText(pb->explains[i])
        << "\n";
  }
  out << "  summary          " << (pb->summary.empty() ? "-" : pb->summary) << "\n";
  out << "  runbook          " << (pb->runbook.empty() ? "-" : pb->runbook) << "\n";
  out << "  tags             " << list(pb->tags) << "\n";
  return kExitOk;
}

int Test(const RulesCommand& cmd, std::ostream& out, std::ostream& err) {
  if (cmd.args.size() < 2) {
    err << kUsage;
    return kExitUsage;
  }
  std::vector<LoadProblem> problems;
  std::vector<std::string> files =
      FindRuleTestFiles({cmd.args.begin() + 1, cmd.args.end()}, problems);
  for (const LoadProblem& p : problems) out << p.ToString() << "\n";
  int tests = 0, failed = 0, bad_files = 0;
  for (const std::string& file : files) {
    RuleTestReport r = RunRuleTestFile(file);
    tests += r.tests;
    failed += r.failed_tests;
    if (!r.ok()) ++bad_files;
    for (const LoadProblem& p : r.problems) out << p.ToString() << "\n";
    if (!r.problems.empty()) {
      out << "FAILED " << file << ": not run (" << Plural(r.problems.size(), "problem", "problems")
          << ")\n";
      continue;
    }
    if (r.failed_tests == 0) {
      out << "ok " << file << ": " << Plural(r.tests, "test", "tests") << "\n";
      continue;
    }
    out << "FAILED " << file << ": " << r.failed_tests << " of " << Plural(r.tests, "test", "tests")
        << " failed\n";
    for (const std::string& f : r.failures) out << f;
  }
  if (files.size() > 1) {
    out << Plural(files.size(), "file", "files") << ", " << Plural(tests, "test", "tests") << ", "
        << failed << " failed\n";
  }
  return problems.empty() && bad_files == 0 ? kExitOk : kExitInvalid;
}

}  // namespace

int RunRules(const RulesCommand& cmd, std::ostream& out, std::ostream& err) {
  const std::string sub = cmd.args.empty() ? "" : cmd.args[0];
  const bool reads_rules =
      sub == "validate" || sub == "list" || (sub == "describe" && cmd.args.size() >= 2);
  const size_t first_path = sub == "describe" ? 2 : 1;
  if (reads_rules && cmd.args.size() <= first_path && cmd.default_rules.empty()) {
    err << "railwatch: no rules path given and no default rules directory built in\n" << kUsage;
    return kExitUsage;
  }
  if (sub == "validate") return Validate(cmd, out);
  if (sub == "list") return List(cmd, out, err);
  if (sub == "describe") return Describe(cmd, out, err);
  if (sub == "test") return Test(cmd, out, err);
  err << kUsage;
  return kExitUsage;
}

}  // namespace railwatch
