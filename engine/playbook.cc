#include "engine/playbook.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "common/vocabulary.h"
#include "common/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace fs = std::filesystem;

bool LoadResult::ok() const {
  return std::none_of(problems.begin(), problems.end(), [](const LoadProblem& p) {
    return p.level == LoadProblem::Level::kError;
  });
}

namespace {

// A playbook as read, before conditions are parsed: where its condition is, for messages.
struct PendingPlaybook {
  Playbook pb;
  std::string file;
  YAML::Node condition_node;
  bool condition_appended = false;
};

struct PendingMacro {
  std::string name, text, file;
  YAML::Mark mark;
};

// Everything read from every file, in order; conditions are parsed at the end so that lists
// and macros may be defined in any file.
struct Collected {
  std::vector<PendingPlaybook> playbooks;
  std::map<std::string, std::vector<std::string>, std::less<>> lists;
  std::vector<PendingMacro> macros;
  absl::flat_hash_set<std::string> macro_names;
};

// The keys an override may name (those ReadPlaybookFields reads).
const absl::flat_hash_set<std::string>& OverridableKeys() {
  static const auto* k = new absl::flat_hash_set<std::string>{
      "desc", "condition", "for", "keep_firing_for", "severity", "culprit", "group_by",
      "blast_radius", "explains", "summary", "summary_quiet", "runbook", "tags", "enabled"};
  return *k;
}

// Reads the items of one rules file through common/yaml_reader.h; unknown keys are warnings
// (the item still loads), as in Falco.
class ItemLoader {
 public:
  ItemLoader(const std::string& file, Collected& collected)
      : file_(file), problems_(file), c_(collected) {}

  const YamlProblems& problems() const { return problems_; }

  void LoadText(const std::string& text) {
    for (const YAML::Node& doc : ParseYamlDocuments(text, problems_)) LoadDocument(doc);
  }

 private:
  // Whether the item being read has had an error.
  bool ItemFailed() const { return problems_.error_count() != item_errors_; }

  void LoadExplains(YamlMap& item, std::vector<ExplainRule>& out) {
    const YAML::Node list = item.List("explains");
    if (!list.IsDefined()) return;
    static const absl::flat_hash_set<std::string> kRelations = {
        "same_node", "same_host", "same_link", "same_rail", "same_leaf", "same_job", "fabric"};
    for (const YAML::Node& e : list) {
      YamlMap entry(e, "an `explains` entry", problems_,
                    "(playbooks, relation, hops, equal, lead)");
      if (!entry.ok()) continue;
      ExplainRule rule;
      const YAML::Mark m = e.Mark();
      rule.source = absl::StrCat(file_, ":", m.line + 1, ":", m.column + 1);
      std::string one;
      if (entry.String("playbook", one)) rule.playbooks.push_back(one);
      entry.StringList("playbooks", rule.playbooks);
      if (rule.playbooks.empty()) {
        problems_.Error(e, "missing-key", "an `explains` entry needs `playbooks`");
      }
      if (entry.String("relation", rule.relation) && !kRelations.contains(rule.relation)) {
        problems_.Error(entry.Get("relation"), "bad-relation",
                        absl::StrCat("relation `", rule.relation,
                                     "` is not one of same_node, same_host, same_link, "
                                     "same_rail, same_leaf, same_job, fabric"));
      }
      int64_t hops = 0;
      if (entry.Int("hops", hops, 0)) {
        rule.hops = static_cast<int>(std::min<int64_t>(hops, std::numeric_limits<int>::max()));
      }
      entry.StringList("equal", rule.equal);
      entry.Duration("lead", rule.lead, /*positive=*/false);
      entry.Finish(YamlMap::Unknown::kWarning);
      out.push_back(std::move(rule));
    }
  }

  // Reads the keys `item` has into pp; `required` for a definition, not for an override.
  void ReadPlaybookFields(YamlMap& item, PendingPlaybook& pp, bool required) {
    Playbook& pb = pp.pb;
    auto text = [&](std::string_view key, std::string& out) {
      return required ? item.RequiredString(key, out) : item.String(key, out);
    };
    if (text("desc", pb.desc)) {
      // Folded YAML scalars (desc: >) end with a newline.
      pb.desc = std::string(absl::StripTrailingAsciiWhitespace(pb.desc));
    }
    if (text("condition", pb.condition_text)) pp.condition_node = item.Get("condition");
    item.Duration("for", pb.for_duration, /*positive=*/false);
    item.Duration("keep_firing_for", pb.keep_firing_for, /*positive=*/false);
    std::string severity;
    if (item.String("severity", severity)) {
      if (severity == "critical") pb.severity = v1::SEVERITY_CRITICAL;
      else if (severity == "warning") pb.severity = v1::SEVERITY_WARNING;
      else if (severity == "info") pb.severity = v1::SEVERITY_INFO;
      else problems_.Error(item.Get("severity"), "bad-severity",
                           absl::StrCat("severity `", severity,
                                        "` is not one of critical, warning, info"));
    }
    item.StringList("culprit", pb.culprit);
    item.StringList("group_by", pb.group_by);
    if (item.String("blast_radius", pb.blast_radius)) {
      static const absl::flat_hash_set<std::string> kScopes = {"host", "leaf", "rail", "job",
                                                               "fabric"};
      if (!kScopes.contains(pb.blast_radius)) {
        problems_.Error(item.Get("blast_radius"), "bad-blast-radius",
                        absl::StrCat("blast_radius `", pb.blast_radius,
                                     "` is not one of host, leaf, rail, job, fabric"));
      }
    }
    LoadExplains(item, pb.explains);
    item.String("summary", pb.summary);
    item.String("summary_quiet", pb.summary_quiet);
    if (text("runbook", pb.runbook) && !absl::StrContains(pb.runbook, "://")) {
      fs::path p = fs::path(file_).parent_path() / pb.runbook;
      std::error_code ec;
      fs::path abs = fs::weakly_canonical(p, ec);
      if (ec || !fs::exists(abs)) {
        problems_.Warning(item.Get("runbook"), "missing-runbook",
                          absl::StrCat("runbook `", pb.runbook, "` not found (looked at ",
                                       p.string(), ")"));
        pb.runbook = p.string();
      } else {
        pb.runbook = abs.string();
      }
    }
    item.StringList("tags", pb.tags);
    item.Bool("enabled", pb.enabled);
  }

  PendingPlaybook* Find(const std::string& name) {
    for (PendingPlaybook& pp : c_.playbooks) {
      if (pp.pb.name == name) return &pp;
    }
    return nullptr;
  }

  // An override item: `override: {key: append|replace}`, or an item with only `enabled`.
  void ApplyOverride(const YAML::Node& node, YamlMap& item, const std::string& name) {
    PendingPlaybook* target = Find(name);
    if (target == nullptr) {
      problems_.Error(item.Get("playbook"), "unknown-override",
                      absl::StrCat("override of playbook `", name,
                                   "`, which no earlier file defines (overrides must come after "
                                   "the definition: list the shipped rules first)"));
      return;
    }
    std::map<std::string, std::string> how;
    if (const YAML::Node o = item.Get("override"); o.IsDefined()) {
      if (!o.IsMap()) {
        problems_.Error(o, "bad-type", "`override` maps keys to append or replace");
        return;
      }
      static const absl::flat_hash_set<std::string> kAppendable = {"condition", "tags",
                                                                   "culprit", "explains"};
      for (const auto& kv : o) {
        const std::string key = kv.first.Scalar();
        const std::string mode = kv.second.IsScalar() ? kv.second.Scalar() : "";
        if (!OverridableKeys().contains(key)) {
          problems_.Error(kv.first, "bad-override", absl::StrCat("cannot override `", key, "`"));
        } else if (mode != "append" && mode != "replace") {
          problems_.Error(kv.second, "bad-override", "override mode must be append or replace");
        } else if (mode == "append" && !kAppendable.contains(key)) {
          problems_.Error(kv.second, "bad-override",
                          absl::StrCat("`", key, "` can only be replaced (append works for "
                                       "condition, tags, culprit, explains)"));
        } else if (!node[key]) {
          problems_.Error(kv.first, "missing-key",
                          absl::StrCat("override names `", key, "` but the item does not set it"));
        } else {
          how[key] = mode;
        }
      }
    } else {
      how["enabled"] = "replace";
    }
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (key != "playbook" && key != "override" && !how.contains(key)) {
        problems_.Warning(kv.first, "unknown-key",
                          absl::StrCat("`", key, "` is not listed under override: (ignored)"));
      }
    }
    if (ItemFailed()) return;
    PendingPlaybook patch;
    patch.pb.runbook = target->pb.runbook;
    ReadPlaybookFields(item, patch, false);
    if (ItemFailed()) return;
    Playbook& pb = target->pb;
    for (const auto& [key, mode] : how) {
      const bool append = mode == "append";
      if (key == "condition") {
        pb.condition_text = append ? absl::StrCat("(", pb.condition_text, ")\n",
                                                  patch.pb.condition_text)
                                   : patch.pb.condition_text;
        if (append) {
          target->condition_appended = true;
        } else {
          target->file = file_;
          target->condition_node = patch.condition_node;
        }
      } else if (key == "tags" || key == "culprit") {
        auto& dst = key == "tags" ? pb.tags : pb.culprit;
        auto& src = key == "tags" ? patch.pb.tags : patch.pb.culprit;
        if (!append) dst.clear();
        dst.insert(dst.end(), src.begin(), src.end());
      } else if (key == "explains") {
        if (!append) pb.explains.clear();
        pb.explains.insert(pb.explains.end(), patch.pb.explains.begin(),
                           patch.pb.explains.end());
      } else if (key == "desc") pb.desc = patch.pb.desc;
      else if (key == "for") pb.for_duration = patch.pb.for_duration;
      else if (key == "keep_firing_for") pb.keep_firing_for = patch.pb.keep_firing_for;
      else if (key == "severity") pb.severity = patch.pb.severity;
      else if (key == "group_by") pb.group_by = patch.pb.group_by;
      else if (key == "blast_radius") pb.blast_radius = patch.pb.blast_radius;
      else if (key == "summary") pb.summary = patch.pb.summary;
      else if (key == "summary_quiet") pb.summary_quiet = patch.pb.summary_quiet;
      else if (key == "runbook") pb.runbook = patch.pb.runbook;
      else if (key == "enabled") pb.enabled = patch.pb.enabled;
    }
  }

  void LoadPlaybook(const YAML::Node& node) {
    YamlMap item(node, "a playbook", problems_);
    std::string name;
    if (!item.RequiredString("playbook", name)) return;
    const bool is_override = node["override"] || (node.size() == 2 && node["enabled"]);
    if (is_override) {
      ApplyOverride(node, item, name);
      return;
    }
    PendingPlaybook pp;
    pp.file = file_;
    pp.pb.name = name;
    const YAML::Mark mark = node.Mark();
    pp.pb.source = absl::StrCat(file_, ":", mark.line + 1, ":", mark.column + 1);
    ReadPlaybookFields(item, pp, true);
    item.Finish(YamlMap::Unknown::kWarning);
    if (Find(name) != nullptr) {
      problems_.Error(item.Get("playbook"), "duplicate-playbook",
                      absl::StrCat("playbook `", name, "` is already defined (use override: to "
                                   "change a shipped playbook)"));
    }
    if (!ItemFailed()) c_.playbooks.push_back(std::move(pp));
  }

  // The mode `override:` gives `key` ("append", "replace"), "" without one.
  std::string OverrideMode(YamlMap& item, std::string_view key) {
    const YAML::Node o = item.Get("override");
    if (!o.IsDefined()) return "";
    YamlMap how(o, "`override`", problems_, "(items: append|replace)");
    std::string mode;
    if (how.String(key, mode) && mode != "append" && mode != "replace") {
      problems_.Error(how.Get(key), "bad-override", "override mode must be append or replace");
    }
    how.Finish(YamlMap::Unknown::kWarning);
    return mode.empty() ? "replace" : mode;
  }

  void LoadList(const YAML::Node& node) {
    YamlMap item(node, "a list", problems_);
    std::string name;
    item.RequiredString("list", name);
    std::vector<std::string> items;
    if (!item.Get("items").IsDefined()) {
      problems_.Error(node, "missing-key", "`items` is required in a list");
    }
    item.StringList("items", items);
    const std::string mode = OverrideMode(item, "items");
    item.Finish(YamlMap::Unknown::kWarning);
    if (ItemFailed()) return;
    auto it = c_.lists.find(name);
    if (it != c_.lists.end() && mode.empty()) {
      problems_.Error(item.Get("list"), "duplicate-list",
                      absl::StrCat("list `", name, "` is already defined (use override: {items: "
                                   "append|replace})"));
      return;
    }
    if (it != c_.lists.end() && mode == "append") {
      it->second.insert(it->second.end(), items.begin(), items.end());
    } else {
      c_.lists[name] = std::move(items);
    }
  }

  void LoadMacro(const YAML::Node& node) {
    YamlMap item(node, "a macro", problems_);
    PendingMacro m;
    item.RequiredString("macro", m.name);
    item.RequiredString("condition", m.text);
    const std::string mode = OverrideMode(item, "condition");
    item.Finish(YamlMap::Unknown::kWarning);
    if (ItemFailed()) return;
    m.file = file_;
    m.mark = item.Get("condition").Mark();
    const bool exists = c_.macro_names.contains(m.name);
    if (exists && mode.empty()) {
      problems_.Error(item.Get("macro"), "duplicate-macro",
                      absl::StrCat("macro `", m.name, "` is already defined (use override: "
                                   "{condition: append|replace})"));
      return;
    }
    if (exists) {
      for (PendingMacro& old : c_.macros) {
        if (old.name != m.name) continue;
        old.text = mode == "append" ? absl::StrCat("(", old.text, ")\n", m.text) : m.text;
      }
      return;
    }
    c_.macro_names.insert(m.name);
    c_.macros.push_back(std::move(m));
  }

  void LoadDocument(const YAML::Node& root) {
    if (root.IsNull()) return;
    if (!root.IsSequence()) {
      problems_.Error(root, "bad-type",
                      "a rules file is a list of items (\"- playbook: ...\", \"- macro: ...\", "
                      "\"- list: ...\")");
      return;
    }
    for (const YAML::Node& item : root) {
      item_errors_ = problems_.error_count();
      if (!item.IsMap()) {
        problems_.Error(item, "bad-type",
                        "an item must be a mapping (with `playbook`, `macro` or `list`)");
        continue;
      }
      if (item["playbook"]) {
        LoadPlaybook(item);
      } else if (item["macro"]) {
        LoadMacro(item);
      } else if (item["list"]) {
        LoadList(item);
      } else {
        problems_.Error(item, "unknown-item", "item has none of `playbook`, `macro`, `list`");
      }
    }
  }

  std::string file_;
  YamlProblems problems_;
  Collected& c_;
  size_t item_errors_ = 0;
};

// Parses every condition with every list and macro known; moves good playbooks to `out`.
void Finish(Collected& c, LoadResult& out, const PlaybookLoadOptions& options) {
  ParseEnv env;
  env.lists = c.lists;
  if (options.check_metric_names) {
    const std::span<const std::string_view> names = SeriesNames();
    env.metric_names.assign(names.begin(), names.end());
  }
  for (const PendingMacro& m : c.macros) env.macros[m.name] = m.text;
  // A macro that does not parse is reported where it is defined, once.
  for (const PendingMacro& m : c.macros) {
    ConditionError err;
    if (!ParseCondition(m.text, env, &err).ok()) {
      out.problems.push_back({LoadProblem::Level::kError, m.file, m.mark.line + 1,
                              m.mark.column + 1, err.code.empty() ? "bad-macro" : err.code,
                              absl::StrCat("macro `", m.name, "`: ", err.message)});
    }
  }
  for (PendingPlaybook& pp : c.playbooks) {
    ConditionError err;
    absl::StatusOr<std::unique_ptr<Condition>> cond =
        ParseCondition(pp.pb.condition_text, env, &err);
    if (!cond.ok()) {
      // Plain and quoted scalars on one line: point at the offending character.
      const YAML::Mark at = pp.condition_appended ? pp.condition_node.Mark()
                                                  : MarkInScalar(pp.condition_node, err.offset);
      std::string msg = err.message;
      if (pp.condition_appended) {
        absl::StrAppend(&msg, " (in the condition with an override's text appended, at offset ",
                        err.offset, ")");
      }
      out.problems.push_back({LoadProblem::Level::kError, pp.file, at.line + 1, at.column + 1,
                              err.code.empty() ? "bad-condition" : err.code, msg});
      continue;
    }
    pp.pb.condition = std::move(*cond);
    out.playbooks.push_back(std::move(pp.pb));
  }
  // explains must name playbooks that exist (a disabled one is fine).
  absl::flat_hash_set<std::string> names;
  for (const Playbook& pb : out.playbooks) names.insert(pb.name);
  for (const PendingPlaybook& pp : c.playbooks) names.insert(pp.pb.name);
  for (const Playbook& pb : out.playbooks) {
    for (const ExplainRule& rule : pb.explains) {
      for (const std::string& s : rule.playbooks) {
        if (names.contains(s)) continue;
        LoadProblem p{LoadProblem::Level::kWarning, rule.source, 0, 0, "unknown-playbook",
                      absl::StrCat("playbook \"", pb.name, "\" explains \"", s,
                                   "\", which is not defined")};
        out.problems.push_back(std::move(p));
      }
    }
  }
}

}  // namespace

void LoadPlaybooksFromString(const std::string& text, const std::string& file, LoadResult& out,
                             const PlaybookLoadOptions& options) {
  Collected c;
  ItemLoader loader(file, c);
  loader.LoadText(text);
  const std::vector<LoadProblem>& problems = loader.problems().problems();
  out.problems.insert(out.problems.end(), problems.begin(), problems.end());
  Finish(c, out, options);
}

LoadResult LoadPlaybooks(const std::vector<std::string>& paths,
                         const PlaybookLoadOptions& options) {
  LoadResult out;
  Collected c;
  for (const std::string& path : paths) {
    std::vector<std::string> files;
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) {
          files.push_back(entry.path().string());
        }
      }
      std::sort(files.begin(), files.end());
      if (files.empty()) {
        out.problems.push_back({LoadProblem::Level::kWarning, path, 0, 0, "no-rules",
                                "directory holds no .yaml files"});
      }
    } else {
      files.push_back(path);
    }
    for (const std::string& file : files) {
      ItemLoader loader(file, c);
      if (absl::StatusOr<std::string> text = ReadFile(file); text.ok()) {
        loader.LoadText(*text);
      } else {
        out.problems.push_back({LoadProblem::Level::kError, file, 0, 0, "unreadable",
                                std::string(text.status().message())});
      }
      const std::vector<LoadProblem>& problems = loader.problems().problems();
      out.problems.insert(out.problems.end(), problems.begin(), problems.end());
    }
  }
  Finish(c, out, options);
  return out;
}

}  // namespace railwatch
