#include "common/yaml_reader.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"

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
void YamlProblems::Warning(const YAML::Mark& at, std::string_view code, std::string message) {
  Add(LoadProblem::Level::kWarning, at, code, std::move(message));
}
void YamlProblems::Warning(const YAML::Node& at, std::string_view code, std::string message) {
  Add(LoadProblem::Level::kWarning, at.Mark(), code, std::move(message));
}
void YamlProblems::FileError(std::string_view code, std::string message) {
  Add(LoadProblem::Level::kError, YAML::Mark::null_mark(), code, std::move(message));
}
void YamlProblems::Append(const YamlProblems& other) {
  problems_.insert(problems_.end(), other.problems_.begin(), other.problems_.end());
}

size_t YamlProblems::error_count() const {
  return static_cast<size_t>(std::count_if(problems_.begin(), problems_.end(), [](const LoadProblem& p) {
    return p.level == LoadProblem::Level::kError;
  }));
}

bool YamlProblems::has_errors() const { return error_count() > 0; }

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

namespace {

// Builds nothing; remembers where the current document started (ParseYamlDocuments).
class DocumentStarts final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  YAML::Mark start = YAML::Mark::null_mark();
};

bool SameMark(const YAML::Mark& a, const YAML::Mark& b) {
  return a.pos == b.pos && a.line == b.line && a.column == b.column;
}

// The documents of `text`; throws YAML::Exception at the first syntax error. The text is read
// once through a parser that builds nothing and stops at a document that starts where the one
// before it did (every real document consumes at least one character).
std::vector<YAML::Node> LoadDocuments(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler;
  for (size_t documents = 0; documents <= text.size() + 1; ++documents) {
    const YAML::Mark previous = handler.start;
    if (!parser.HandleNextDocument(handler)) return YAML::LoadAll(text);
    if (documents > 0 && SameMark(previous, handler.start)) break;
  }
  throw YAML::ParserException(handler.start, "unexpected ',' outside a flow collection");
}

}  // namespace

std::vector<YAML::Node> ParseYamlDocuments(const std::string& text, YamlProblems& problems) {
  try {
    return LoadDocuments(text);
  } catch (const YAML::Exception& e) {
    problems.Error(e.mark, "yaml-syntax", e.msg);
    return {};
  }
}

YAML::Mark MarkInScalar(const YAML::Node& scalar, size_t offset) {
  YAML::Mark m = scalar.Mark();
  if (m.is_null() || !scalar.IsScalar() || scalar.Scalar().find('\n') != std::string::npos) {
    return m;
  }
  // yaml-cpp tags a quoted scalar "!" (a plain one "?"): its text starts after the quote.
  m.column += static_cast<int>(offset) + (scalar.Tag() == "!" ? 1 : 0);
  return m;
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

void YamlMap::BadValue(std::string_view key, std::string_view text, std::string_view expected) {
  problems_.Error(Get(key), "bad-value",
                  absl::StrCat(std::string(key), " `", std::string(text), "` is not ",
                               std::string(expected)));
}

bool YamlMap::RequiredString(std::string_view key, std::string& out) {
  std::string value;
  if (String(key, value) && !value.empty()) {
    out = std::move(value);
    return true;
  }
  const YAML::Node n = Get(key);
  if (ok_ && (!n.IsDefined() || n.IsScalar())) {  // not text: error[bad-type] said so
    problems_.Error(node_, "missing-key",
                    absl::StrCat("`", std::string(key), "` is required in ", what_));
  }
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
  absl::StatusOr<absl::Duration> d = absl::ZeroDuration();
  if (positive || text != "0") d = ParseDuration(text);
  if (!d.ok() || (positive && *d <= absl::ZeroDuration()) || *d < absl::ZeroDuration()) {
    BadValue(key, text,
             positive ? "a positive duration (1s, 500ms)" : "a duration (0, 1s, 500ms)");
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
    BadValue(key, text, "true or false");
    return false;
  }
  return true;
}

bool YamlMap::Int(std::string_view key, int64_t& out, int64_t min) {
  std::string text;
  if (!String(key, text)) return false;
  int64_t v;
  if (!absl::SimpleAtoi(text, &v) || v < min) {
    BadValue(key, text,
             min == std::numeric_limits<int64_t>::min()
                 ? std::string("a whole number")
                 : absl::StrCat("a whole number >= ", min));
    return false;
  }
  out = v;
  return true;
}

bool YamlMap::Double(std::string_view key, double& out) {
  std::string text;
  if (!String(key, text)) return false;
  double v;
  if (!absl::SimpleAtod(text, &v)) {
    BadValue(key, text, "a number");
    return false;
  }
  out = v;
  return true;
}

bool YamlMap::StringList(std::string_view key, std::vector<std::string>& out,
                         bool one_is_a_list) {
  const YAML::Node n = Get(key);
  if (!n.IsDefined()) return false;
  if (one_is_a_list && n.IsScalar()) {
    out.push_back(n.Scalar());
    return true;
  }
  if (!n.IsSequence()) {
    problems_.Error(n, "bad-type",
                    absl::StrCat("`", std::string(key), "` must be a list",
                                 one_is_a_list ? " (or a single value)" : ""));
    return false;
  }
  for (const YAML::Node& e : n) {
    if (!e.IsScalar()) {
      problems_.Error(e, "bad-type",
                      absl::StrCat("each entry of `", std::string(key), "` must be a single value"));
      continue;
    }
    out.push_back(e.Scalar());
  }
  return true;
}

bool YamlMap::StringMap(std::string_view key,
                        std::vector<std::pair<std::string, std::string>>& out) {
  const YAML::Node n = Get(key);
  if (!n.IsDefined()) return false;
  if (!n.IsMap()) {
    problems_.Error(n, "bad-type",
                    absl::StrCat("`", std::string(key), "` must be a mapping of names to values"));
    return false;
  }
  for (const auto& kv : n) {
    if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
      problems_.Error(kv.second, "bad-type",
                      absl::StrCat("each value of `", std::string(key), "` must be a single value"));
      continue;
    }
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }
  return true;
}

YAML::Node YamlMap::List(std::string_view key) {
  const YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  if (!n.IsSequence()) {
    problems_.Error(n, "bad-type", absl::StrCat("`", std::string(key), "` must be a list"));
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return n;
}

void YamlMap::Known(std::string_view key) {
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

void YamlMap::Finish(Unknown level) {
  if (!ok_) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (std::find(known_.begin(), known_.end(), key) != known_.end()) continue;
    const std::string hint = ClosestWord(key, known_);
    std::vector<std::string> sorted = known_;
    std::sort(sorted.begin(), sorted.end());
    std::string message =
        absl::StrCat("unknown key `", key, "` in ", what_,
                     hint.empty() ? absl::StrCat(" (known: ", absl::StrJoin(sorted, ", "), ")")
                                  : absl::StrCat(" (did you mean `", hint, "`?)"));
    if (level == Unknown::kWarning) {
      problems_.Warning(kv.first, "unknown-key", absl::StrCat(message, "; ignored"));
    } else {
      problems_.Error(kv.first, "unknown-key", std::move(message));
    }
  }
}

}  // namespace railwatch
