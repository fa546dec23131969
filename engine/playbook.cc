#include "engine/playbook.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "common/vocabulary.h"
#include "engine/yaml_documents.h"
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
  YAML::Mark condition_mark;
  bool condition_one_line = true;
  int condition_quote = 0;
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

const absl::flat_hash_set<std::string>& KnownPlaybookKeys() {
  static const auto* k = new absl::flat_hash_set<std::string>{
      "playbook", "desc", "condition", "for", "keep_firing_for", "severity", "culprit",
      "group_by", "blast_radius", "explains", "summary", "summary_quiet", "runbook", "tags",
      "enabled", "override"};
  return *k;
}

class ItemLoader {
 public:
  ItemLoader(const std::string& file, LoadResult& out, Collected& collected)
      : file_(file), out_(out), c_(collected) {}

  void Problem(const YAML::Node& at, std::string code, std::string message,
               LoadProblem::Level level = LoadProblem::Level::kError) {
    YAML::Mark m = at.Mark();
    int line = m.line >= 0 ? m.line + 1 : 0;
    int col = m.column >= 0 ? m.column + 1 : 0;
    out_.problems.push_back({level, file_, line, col, std::move(code), std::move(message)});
    if (level == LoadProblem::Level::kError) failed_ = true;
  }

  bool GetString(const YAML::Node& item, const char* key, std::string& out, bool required) {
    YAML::Node n = item[key];
    if (!n) {
      if (required) Problem(item, "missing-key", absl::StrCat("\"", key, "\" is required"));
      return false;
    }
    if (!n.IsScalar()) {
      Problem(n, "bad-type", absl::StrCat("\"", key, "\" must be a string"));
      return false;
    }
    out = n.Scalar();
    return true;
  }

  bool GetDuration(const YAML::Node& item, const char* key, absl::Duration& out) {
    std::string text;
    if (!GetString(item, key, text, false)) return false;
    absl::StatusOr<absl::Duration> d = ParseDuration(text);
    if (!d.ok() || *d < absl::ZeroDuration()) {
      Problem(item[key], "bad-duration",
              absl::StrCat("\"", key, "\": ", d.ok() ? "must not be negative" : d.status().message()));
      return false;
    }
    out = *d;
    return true;
  }

  bool GetStringList(const YAML::Node& item, const char* key, std::vector<std::string>& out) {
    YAML::Node n = item[key];
    if (!n) return false;
    if (!n.IsSequence()) {
      Problem(n, "bad-type", absl::StrCat("\"", key, "\" must be a list of strings"));
      return false;
    }
    for (const YAML::Node& e : n) {
      if (!e.IsScalar()) {
        Problem(e, "bad-type", absl::StrCat("\"", key, "\" entries must be strings"));
        continue;
      }
      out.push_back(e.Scalar());
    }
    return true;
  }

  void WarnUnknownKeys(const YAML::Node& item, const absl::flat_hash_set<std::string>& known) {
    for (const auto& kv : item) {
      const std::string key = kv.first.Scalar();
      if (!known.contains(key)) {
        Problem(kv.first, "unknown-key", absl::StrCat("unknown key \"", key, "\" (ignored)"),
                LoadProblem::Level::kWarning);
      }
    }
  }

  void LoadExplains(const YAML::Node& n, std::vector<ExplainRule>& out) {
    if (!n.IsSequence()) {
      Problem(n, "bad-type", "\"explains\" must be a list of {playbooks, relation, ...}");
      return;
    }
    static const absl::flat_hash_set<std::string> kKeys = {"playbooks", "playbook", "relation",
                                                           "hops", "equal", "lead"};
    static const absl::flat_hash_set<std::string> kRelations = {
        "same_node", "same_host", "same_link", "same_rail", "same_leaf", "same_job", "fabric"};
    for (const YAML::Node& e : n) {
      if (!e.IsMap()) {
        Problem(e, "bad-type", "each \"explains\" entry must be a mapping");
        continue;
      }
      WarnUnknownKeys(e, kKeys);
      ExplainRule rule;
      YAML::Mark m = e.Mark();
      rule.source = absl::StrCat(file_, ":", m.line + 1, ":", m.column + 1);
      std::string one;
      if (GetString(e, "playbook", one, false)) rule.playbooks.push_back(one);
      GetStringList(e, "playbooks", rule.playbooks);
      if (rule.playbooks.empty()) {
        Problem(e, "missing-key", "an \"explains\" entry needs \"playbooks\"");
      }
      if (GetString(e, "relation", rule.relation, false) &&
          !kRelations.contains(rule.relation)) {
        Problem(e["relation"], "bad-relation",
                absl::StrCat("relation \"", rule.relation,
                             "\" is not one of same_node, same_host, same_link, same_rail, "
                             "same_leaf, same_job, fabric"));
      }
      if (YAML::Node h = e["hops"]) {
        try {
          rule.hops = h.as<int>();
          if (rule.hops < 0) throw YAML::Exception(h.Mark(), "negative");
        } catch (const YAML::Exception&) {
          Problem(h, "bad-type", "\"hops\" must be a whole number >= 0");
        }
      }
      GetStringList(e, "equal", rule.equal);
      GetDuration(e, "lead", rule.lead);
      out.push_back(std::move(rule));
    }
  }

  // Reads the keys `item` has into pp; `required` for a definition, not for an override.
  void ReadPlaybookFields(const YAML::Node& item, PendingPlaybook& pp, bool required) {
    Playbook& pb = pp.pb;
    if (GetString(item, "desc", pb.desc, required)) {
      // Folded YAML scalars (desc: >) end with a newline.
      pb.desc = std::string(absl::StripTrailingAsciiWhitespace(pb.desc));
    }
    if (GetString(item, "condition", pb.condition_text, required)) {
      YAML::Node n = item["condition"];
      pp.condition_mark = n.Mark();
      pp.condition_one_line = pb.condition_text.find('\n') == std::string::npos;
      pp.condition_quote = n.Tag() == "!" ? 1 : 0;
    }
    GetDuration(item, "for", pb.for_duration);
    GetDuration(item, "keep_firing_for", pb.keep_firing_for);
    std::string severity;
    if (GetString(item, "severity", severity, false)) {
      if (severity == "critical") pb.severity = v1::SEVERITY_CRITICAL;
      else if (severity == "warning") pb.severity = v1::SEVERITY_WARNING;
      else if (severity == "info") pb.severity = v1::SEVERITY_INFO;
      else Problem(item["severity"], "bad-severity",
                   absl::StrCat("severity \"", severity, "\" is not one of critical, warning, info"));
    }
    GetStringList(item, "culprit", pb.culprit);
    GetStringList(item, "group_by", pb.group_by);
    if (GetString(item, "blast_radius", pb.blast_radius, false)) {
      static const absl::flat_hash_set<std::string> kScopes = {"host", "leaf", "rail", "job",
                                                               "fabric"};
      if (!kScopes.contains(pb.blast_radius)) {
        Problem(item["blast_radius"], "bad-blast-radius",
                absl::StrCat("blast_radius \"", pb.blast_radius,
                             "\" is not one of host, leaf, rail, job, fabric"));
      }
    }
    if (YAML::Node n = item["explains"]) LoadExplains(n, pb.explains);
    GetString(item, "summary", pb.summary, false);
    GetString(item, "summary_quiet", pb.summary_quiet, false);
    if (GetString(item, "runbook", pb.runbook, required) &&
        !absl::StrContains(pb.runbook, "://")) {
      fs::path p = fs::path(file_).parent_path() / pb.runbook;
      std::error_code ec;
      fs::path abs = fs::weakly_canonical(p, ec);
      if (ec || !fs::exists(abs)) {
        Problem(item["runbook"], "missing-runbook",
                absl::StrCat("runbook \"", pb.runbook, "\" not found (looked at ", p.string(), ")"),
                LoadProblem::Level::kWarning);
        pb.runbook = p.string();
      } else {
        pb.runbook = abs.string();
      }
    }
    GetStringList(item, "tags", pb.tags);
    if (YAML::Node en = item["enabled"]) {
      try {
        pb.enabled = en.as<bool>();
      } catch (const YAML::Exception&) {
        Problem(en, "bad-type", "\"enabled\" must be true or false");
      }
    }
  }

  PendingPlaybook* Find(const std::string& name) {
    for (PendingPlaybook& pp : c_.playbooks) {
      if (pp.pb.name == name) return &pp;
    }
    return nullptr;
  }

  // An override item: `override: {key: append|replace}`, or an item with only `enabled`.
  void ApplyOverride(const YAML::Node& item, const std::string& name) {
    PendingPlaybook* target = Find(name);
    if (target == nullptr) {
      Problem(item["playbook"], "unknown-override",
              absl::StrCat("override of playbook \"", name,
                           "\", which no earlier file defines (overrides must come after the "
                           "definition: list the shipped rules first)"));
      return;
    }
    std::map<std::string, std::string> how;
    if (YAML::Node o = item["override"]) {
      if (!o.IsMap()) {
        Problem(o, "bad-type", "\"override\" maps keys to append or replace");
        return;
      }
      static const absl::flat_hash_set<std::string> kAppendable = {"condition", "tags",
                                                                   "culprit", "explains"};
      for (const auto& kv : o) {
        const std::string key = kv.first.Scalar();
        const std::string mode = kv.second.IsScalar() ? kv.second.Scalar() : "";
        if (!KnownPlaybookKeys().contains(key) || key == "playbook" || key == "override") {
          Problem(kv.first, "bad-override", absl::StrCat("cannot override \"", key, "\""));
        } else if (mode != "append" && mode != "replace") {
          Problem(kv.second, "bad-override", "override mode must be append or replace");
        } else if (mode == "append" && !kAppendable.contains(key)) {
          Problem(kv.second, "bad-override",
                  absl::StrCat("\"", key, "\" can only be replaced (append works for "
                               "condition, tags, culprit, explains)"));
        } else if (!item[key]) {
          Problem(kv.first, "missing-key",
                  absl::StrCat("override names \"", key, "\" but the item does not set it"));
        } else {
          how[key] = mode;
        }
      }
    } else {
      how["enabled"] = "replace";
    }
    for (const auto& kv : item) {
      const std::string key = kv.first.Scalar();
      if (key != "playbook" && key != "override" && !how.contains(key)) {
        Problem(kv.first, "unknown-key",
                absl::StrCat("\"", key, "\" is not listed under override: (ignored)"),
                LoadProblem::Level::kWarning);
      }
    }
    if (failed_) return;
    PendingPlaybook patch;
    patch.pb.runbook = target->pb.runbook;
    ReadPlaybookFields(item, patch, false);
    if (failed_) return;
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
          target->condition_mark = patch.condition_mark;
          target->condition_one_line = patch.condition_one_line;
          target->condition_quote = patch.condition_quote;
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

  void LoadPlaybook(const YAML::Node& item) {
    std::string name;
    if (!GetString(item, "playbook", name, true)) return;
    const bool is_override =
        item["override"] || (item.size() == 2 && item["enabled"]);
    if (is_override) {
      ApplyOverride(item, name);
      return;
    }
    WarnUnknownKeys(item, KnownPlaybookKeys());
    PendingPlaybook pp;
    pp.file = file_;
    pp.pb.name = name;
    YAML::Mark mark = item.Mark();
    pp.pb.source = absl::StrCat(file_, ":", mark.line + 1, ":", mark.column + 1);
    ReadPlaybookFields(item, pp, true);
    if (Find(name) != nullptr) {
      Problem(item["playbook"], "duplicate-playbook",
              absl::StrCat("playbook \"", name, "\" is already defined (use override: to "
                           "change a shipped playbook)"));
    }
    if (!failed_) c_.playbooks.push_back(std::move(pp));
  }

  void LoadList(const YAML::Node& item) {
    WarnUnknownKeys(item, {"list", "items", "override"});
    std::string name;
    if (!GetString(item, "list", name, true)) return;
    std::vector<std::string> items;
    if (!item["items"]) {
      Problem(item, "missing-key", "\"items\" is required");
      return;
    }
    GetStringList(item, "items", items);
    if (failed_) return;
    auto it = c_.lists.find(name);
    const bool append = item["override"] && item["override"]["items"] &&
                        item["override"]["items"].IsScalar() &&
                        item["override"]["items"].Scalar() == "append";
    if (it != c_.lists.end() && !item["override"]) {
      Problem(item["list"], "duplicate-list",
              absl::StrCat("list \"", name, "\" is already defined (use override: {items: "
                           "append|replace})"));
      return;
    }
    if (it != c_.lists.end() && append) {
      it->second.insert(it->second.end(), items.begin(), items.end());
    } else {
      c_.lists[name] = std::move(items);
    }
  }

  void LoadMacro(const YAML::Node& item) {
    WarnUnknownKeys(item, {"macro", "condition", "override"});
    PendingMacro m;
    if (!GetString(item, "macro", m.name, true)) return;
    if (!GetString(item, "condition", m.text, true)) return;
    m.file = file_;
    m.mark = item["condition"].Mark();
    const bool exists = c_.macro_names.contains(m.name);
    if (exists && !item["override"]) {
      Problem(item["macro"], "duplicate-macro",
              absl::StrCat("macro \"", m.name, "\" is already defined (use override: "
                           "{condition: append|replace})"));
      return;
    }
    if (exists) {
      for (PendingMacro& old : c_.macros) {
        if (old.name != m.name) continue;
        const bool append = item["override"]["condition"] &&
                            item["override"]["condition"].Scalar() == "append";
        old.text = append ? absl::StrCat("(", old.text, ")\n", m.text) : m.text;
      }
      return;
    }
    c_.macro_names.insert(m.name);
    c_.macros.push_back(std::move(m));
  }

  void LoadDocument(const YAML::Node& root) {
    if (root.IsNull()) return;
    if (!root.IsSequence()) {
      Problem(root, "bad-document",
              "a rules file is a list of items (\"- playbook: ...\", \"- macro: ...\", "
              "\"- list: ...\")");
      return;
    }
    for (const YAML::Node& item : root) {
      failed_ = false;
      if (!item.IsMap()) {
        Problem(item, "bad-item", "each item must be a mapping");
        continue;
      }
      if (item["playbook"]) {
        LoadPlaybook(item);
      } else if (item["macro"]) {
        LoadMacro(item);
      } else if (item["list"]) {
        LoadList(item);
      } else {
        Problem(item, "unknown-item", "item has none of \"playbook\", \"macro\", \"list\"");
      }
    }
  }

 private:
  std::string file_;
  LoadResult& out_;
  Collected& c_;
  bool failed_ = false;
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
                              absl::StrCat("macro \"", m.name, "\": ", err.message)});
    }
  }
  for (PendingPlaybook& pp : c.playbooks) {
    ConditionError err;
    absl::StatusOr<std::unique_ptr<Condition>> cond =
        ParseCondition(pp.pb.condition_text, env, &err);
    if (!cond.ok()) {
      // Plain and quoted scalars on one line: point at the offending character.
      const bool exact = pp.condition_one_line && !pp.condition_appended;
      const int col = pp.condition_mark.column + 1 +
                      (exact ? static_cast<int>(err.offset) + pp.condition_quote : 0);
      std::string msg = err.message;
      if (pp.condition_appended) {
        absl::StrAppend(&msg, " (in the condition with an override's text appended, at offset ",
                        err.offset, ")");
      }
      out.problems.push_back({LoadProblem::Level::kError, pp.file, pp.condition_mark.line + 1,
                              col, err.code.empty() ? "bad-condition" : err.code, msg});
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
  ItemLoader loader(file, out, c);
  try {
    for (const YAML::Node& doc : LoadYamlDocuments(text)) loader.LoadDocument(doc);
  } catch (const YAML::Exception& e) {
    out.problems.push_back({LoadProblem::Level::kError, file, e.mark.line + 1, e.mark.column + 1,
                            "yaml-syntax", e.msg});
  }
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
      absl::StatusOr<std::string> text = ReadFile(file);
      if (!text.ok()) {
        out.problems.push_back({LoadProblem::Level::kError, file, 0, 0, "unreadable",
                                std::string(text.status().message())});
        continue;
      }
      ItemLoader loader(file, out, c);
      try {
        for (const YAML::Node& doc : LoadYamlDocuments(*text)) loader.LoadDocument(doc);
      } catch (const YAML::Exception& e) {
        out.problems.push_back({LoadProblem::Level::kError, file, e.mark.line + 1,
                                e.mark.column + 1, "yaml-syntax", e.msg});
      }
    }
  }
  Finish(c, out, options);
  return out;
}

}  // namespace railwatch
