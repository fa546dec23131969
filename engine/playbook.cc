#include "engine/playbook.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace fs = std::filesystem;

std::string LoadProblem::ToString() const {
  std::string where = file;
  if (line > 0) absl::StrAppend(&where, ":", line, ":", column);
  return absl::StrCat(where, ": ", level == Level::kError ? "error" : "warning", "[", code,
                      "]: ", message);
}

bool LoadResult::ok() const {
  return std::none_of(problems.begin(), problems.end(), [](const LoadProblem& p) {
    return p.level == LoadProblem::Level::kError;
  });
}

namespace {

class ItemLoader {
 public:
  ItemLoader(const std::string& file, LoadResult& out) : file_(file), out_(out) {}

  void Problem(const YAML::Node& at, std::string code, std::string message,
               LoadProblem::Level level = LoadProblem::Level::kError) {
    YAML::Mark m = at.Mark();
    int line = m.line >= 0 ? m.line + 1 : 0;
    int col = m.column >= 0 ? m.column + 1 : 0;
    out_.problems.push_back({level, file_, line, col, std::move(code), std::move(message)});
    if (level == LoadProblem::Level::kError) failed_ = true;
  }
  void ProblemAt(const YAML::Mark& m, int extra_col, std::string code, std::string message) {
    out_.problems.push_back({LoadProblem::Level::kError, file_, m.line + 1,
                             m.column + 1 + extra_col, std::move(code), std::move(message)});
    failed_ = true;
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

  void GetDuration(const YAML::Node& item, const char* key, absl::Duration& out) {
    std::string text;
    if (!GetString(item, key, text, false)) return;
    absl::StatusOr<absl::Duration> d = ParseDuration(text);
    if (!d.ok() || *d < absl::ZeroDuration()) {
      Problem(item[key], "bad-duration",
              absl::StrCat("\"", key, "\": ", d.ok() ? "must not be negative" : d.status().message()));
      return;
    }
    out = *d;
  }

  void GetStringList(const YAML::Node& item, const char* key, std::vector<std::string>& out) {
    YAML::Node n = item[key];
    if (!n) return;
    if (!n.IsSequence()) {
      Problem(n, "bad-type", absl::StrCat("\"", key, "\" must be a list of strings"));
      return;
    }
    for (const YAML::Node& e : n) {
      if (!e.IsScalar()) {
        Problem(e, "bad-type", absl::StrCat("\"", key, "\" entries must be strings"));
        continue;
      }
      out.push_back(e.Scalar());
    }
  }

  void LoadPlaybook(const YAML::Node& item) {
    static const absl::flat_hash_set<std::string> kKnown = {
        "playbook", "desc", "condition", "for", "keep_firing_for", "severity", "culprit",
        "summary", "runbook", "tags", "enabled"};
    for (const auto& kv : item) {
      const std::string key = kv.first.Scalar();
      if (!kKnown.contains(key)) {
        Problem(kv.first, "unknown-key", absl::StrCat("unknown key \"", key, "\" (ignored)"),
                LoadProblem::Level::kWarning);
      }
    }
    Playbook pb;
    YAML::Mark mark = item.Mark();
    pb.source = absl::StrCat(file_, ":", mark.line + 1, ":", mark.column + 1);
    GetString(item, "playbook", pb.name, true);
    if (GetString(item, "desc", pb.desc, true)) {
      // Folded YAML scalars (desc: >) end with a newline.
      pb.desc = std::string(absl::StripTrailingAsciiWhitespace(pb.desc));
    }
    if (GetString(item, "condition", pb.condition_text, true)) {
      ConditionError err;
      absl::StatusOr<std::unique_ptr<Condition>> cond = ParseCondition(pb.condition_text, &err);
      if (cond.ok()) {
        pb.condition = std::move(*cond);
      } else {
        YAML::Node n = item["condition"];
        // Plain and quoted scalars on one line: point at the offending character.
        const bool one_line = pb.condition_text.find('\n') == std::string::npos;
        const int quote = n.Tag() == "!" ? 1 : 0;
        ProblemAt(n.Mark(), one_line ? static_cast<int>(err.offset) + quote : 0,
                  "bad-condition", err.message);
      }
    }
    GetDuration(item, "for", pb.for_duration);
    GetDuration(item, "keep_firing_for", pb.keep_firing_for);
    std::string severity = "warning";
    GetString(item, "severity", severity, false);
    if (severity == "critical") pb.severity = v1::SEVERITY_CRITICAL;
    else if (severity == "warning") pb.severity = v1::SEVERITY_WARNING;
    else if (severity == "info") pb.severity = v1::SEVERITY_INFO;
    else Problem(item["severity"], "bad-severity",
                 absl::StrCat("severity \"", severity, "\" is not one of critical, warning, info"));
    GetStringList(item, "culprit", pb.culprit);
    GetString(item, "summary", pb.summary, false);
    if (GetString(item, "runbook", pb.runbook, true) &&
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
    if (!pb.name.empty() && !names_.insert(pb.name).second) {
      Problem(item["playbook"], "duplicate-playbook",
              absl::StrCat("playbook \"", pb.name, "\" is defined twice"));
    }
    if (!failed_) out_.playbooks.push_back(std::move(pb));
  }

  void LoadDocument(const YAML::Node& root) {
    if (root.IsNull()) return;
    if (!root.IsSequence()) {
      Problem(root, "bad-document", "a rules file is a list of items (\"- playbook: ...\")");
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
      } else {
        Problem(item, "unknown-item", "item has no \"playbook\" key");
      }
    }
  }

  absl::flat_hash_set<std::string>& names() { return names_; }

 private:
  std::string file_;
  LoadResult& out_;
  bool failed_ = false;
  absl::flat_hash_set<std::string> names_;
};

void CheckDuplicatesAcrossFiles(LoadResult& out) {
  absl::flat_hash_set<std::string> seen;
  std::vector<Playbook> kept;
  for (Playbook& pb : out.playbooks) {
    if (!seen.insert(pb.name).second) {
      out.problems.push_back({LoadProblem::Level::kError, pb.source, 0, 0, "duplicate-playbook",
                              absl::StrCat("playbook \"", pb.name, "\" is already defined")});
      continue;
    }
    kept.push_back(std::move(pb));
  }
  out.playbooks = std::move(kept);
}

}  // namespace

void LoadPlaybooksFromString(const std::string& text, const std::string& file, LoadResult& out) {
  ItemLoader loader(file, out);
  try {
    for (const YAML::Node& doc : YAML::LoadAll(text)) loader.LoadDocument(doc);
  } catch (const YAML::Exception& e) {
    out.problems.push_back({LoadProblem::Level::kError, file, e.mark.line + 1, e.mark.column + 1,
                            "yaml-syntax", e.msg});
  }
}

LoadResult LoadPlaybooks(const std::vector<std::string>& paths) {
  LoadResult out;
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
      LoadPlaybooksFromString(*text, file, out);
    }
  }
  CheckDuplicatesAcrossFiles(out);
  return out;
}

}  // namespace railwatch
