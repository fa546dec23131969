#include "common/yaml_reader.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"

namespace railwatch {

std::string LoadProblem::ToString() const {
  std::string where = file;
  if (line > 0) absl::StrAppend(&where, ":", line, ":", column);
  return absl::StrCat(where, ": ", level == Level::kError ? "error" : "warning", "[", code,
                      "]: ", message);
}

void YamlProblems::Add(LoadProblem::Level level, const YAML::Mark& at, std::string_view code,
                       std::string message) {
  LoadProblem p;
  p.level = level;
  p.file = file_;
  if (!at.is_null()) {
    p.line = at.line + 1;
    p.column = at.column + 1;
  }
  p.code = std::string(code);
  p.message = std::move(message);
  problems_.push_back(std::move(p));
}

void YamlProblems::Error(const YAML::Mark& at, std::string_view code, std::string message) {
  Add(LoadProblem::Level::kError, at, code, std::move(message));
}
void YamlProblems::Error(const YAML::Node& at, std::string_view code, std::string message) {
  Add(LoadProblem::Level::kError, at.Mark(), code, std::move(message));
}
void YamlProblems::Warning(const YAML::Node& at, std::string_view code, std::string message) {
  Add(LoadProblem::Level::kWarning, at.Mark(), code, std::move(message));
}

bool YamlProblems::has_errors() const {
  return std::any_of(problems_.begin(), problems_.end(), [](const LoadProblem& p) {
    return p.level == LoadProblem::Level::kError;
  });
}

absl::Status YamlProblems::ToStatus() const {
  if (!has_errors()) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const LoadProblem& p : problems_) lines.push_back(p.ToString());
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

YAML::Node ParseYaml(const std::string& text, YamlProblems& problems) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    problems.Error(e.mark, "yaml-syntax", e.msg);
    return YAML::Node(YAML::NodeType::Undefined);
  }
}

YamlMap::YamlMap(const YAML::Node& node, std::string what, YamlProblems& problems,
                 std::string_view expected)
    : node_(node), what_(std::move(what)), problems_(problems) {
  ok_ = node.IsMap();
  if (!ok_) {
    problems_.Error(node, "bad-type",
                    absl::StrCat(what_, " must be a mapping",
                                 expected.empty() ? "" : absl::StrCat(" ", std::string(expected))));
  }
}

YAML::Node YamlMap::Get(std::string_view key) {
  Known(key);
  if (!ok_) return YAML::Node(YAML::NodeType::Undefined);
  for (const auto& kv : node_) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool YamlMap::Require(std::string_view key, std::string_view message) {
  if (Get(key).IsDefined()) return true;
  if (ok_) problems_.Error(node_, "missing-key", std::string(message));
  return false;
}

bool YamlMap::String(std::string_view key, std::string& out) {
  const YAML::Node n = Get(key);
  if (!n.IsDefined()) return false;
  if (!n.IsScalar()) {
    problems_.Error(n, "bad-type", absl::StrCat("`", std::string(key), "` must be a single value"));
    return false;
  }
  out = n.Scalar();
  return true;
}

bool YamlMap::Duration(std::string_view key, absl::Duration& out, bool positive) {
  std::string text;
  if (!String(key, text)) return false;
  absl::StatusOr<absl::Duration> d = ParseDuration(text);
  if (!d.ok() || (positive && *d <= absl::ZeroDuration()) || *d < absl::ZeroDuration()) {
    problems_.Error(Get(key), "bad-value",
                    absl::StrCat(std::string(key), " `", text, "` is not a ", positive ? "positive " : "",
                                 "duration (1s, 500ms)"));
    return false;
  }
  out = *d;
  return true;
}

bool YamlMap::Bool(std::string_view key, bool& out) {
  std::string text;
  if (!String(key, text)) return false;
  if (text == "true" || text == "yes" || text == "on") {
    out = true;
  } else if (text == "false" || text == "no" || text == "off") {
    out = false;
  } else {
    problems_.Error(Get(key), "bad-value", absl::StrCat(std::string(key), " `", text, "` is not true or false"));
    return false;
  }
  return true;
}

bool YamlMap::Int(std::string_view key, int64_t& out) {
  std::string text;
  if (!String(key, text)) return false;
  int64_t v;
  if (!absl::SimpleAtoi(text, &v)) {
    problems_.Error(Get(key), "bad-value", absl::StrCat(std::string(key), " `", text, "` is not a whole number"));
    return false;
  }
  out = v;
  return true;
}

void YamlMap::Known(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

void YamlMap::Finish() {
  if (!ok_) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string hint = ClosestWord(key, known_);
    std::vector<std::string> sorted = known_;
    std::sort(sorted.begin(), sorted.end());
    problems_.Error(kv.first, "unknown-key",
                    absl::StrCat("unknown key `", key, "` in ", what_,
                                 hint.empty() ? absl::StrCat(" (known: ", absl::StrJoin(sorted, ", "), ")")
                                              : absl::StrCat(" (did you mean `", hint, "`?)")));
  }
}

}  // namespace railwatch
