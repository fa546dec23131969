#pragma once

// One reader for the YAML configuration files: their problems in one format
// (file:line:column: error[code]: message, every problem of a file at once, the rest of the
// file still read) and typed getters on a mapping that report a key nobody asked for as
// error[unknown-key] with the nearest known key suggested.
//
// Used by every configuration file but the simulator's scenarios: the gNMI targets file
// (gnmi/targets.cc), the Query API's access file (daemon/auth_access.cc), playbooks
// (engine/playbook.cc), playbook tests (engine/rule_test_file.cc), gNMI profiles
// (gnmi/profile_loader.cc) and the topology file (topology/topology.cc); docs/ARCHITECTURE.md
// "How to add ... a configuration file".

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {

struct LoadProblem {
  enum class Level { kError, kWarning };
  Level level = Level::kError;
  std::string file;
  int line = 0;    // 1-based; 0 when the problem concerns the whole file
  int column = 0;  // 1-based
  std::string code;  // stable identifier, e.g. "unknown-key", "bad-value"
  std::string message;

  // file:line:column: error[code]: message
  std::string ToString() const;
};

// The problems of one file, as they are found.
class YamlProblems {
 public:
  explicit YamlProblems(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  void Error(const YAML::Mark& at, std::string_view code, std::string message);
  void Error(const YAML::Node& at, std::string_view code, std::string message);
  void Warning(const YAML::Mark& at, std::string_view code, std::string message);
  void Warning(const YAML::Node& at, std::string_view code, std::string message);
  // A problem of the whole file (no line): unreadable, empty.
  void FileError(std::string_view code, std::string message);
  // Another file's problems (an included one), as they are.
  void Append(const YamlProblems& other);

  const std::vector<LoadProblem>& problems() const { return problems_; }
  bool has_errors() const;
  // How many errors so far: a reader compares it before and after one item to know whether
  // that item was read cleanly.
  size_t error_count() const;
  // OK without errors; else InvalidArgument with every problem, one a line.
  absl::Status ToStatus() const;

 private:
  void Add(LoadProblem::Level level, const YAML::Mark& at, std::string_view code,
           std::string message);

  std::string file_;
  std::vector<LoadProblem> problems_;
};

// Parses one YAML document; a syntax error is error[yaml-syntax] at its line and column and
// the node is undefined (IsDefined() false).
YAML::Node ParseYaml(const std::string& text, YamlProblems& problems);

// Every document of a multi-document text ("---" between them); a syntax error anywhere is
// error[yaml-syntax] and no document is returned. Unlike YAML::LoadAll it ends on text that
// yaml-cpp 0.7 cannot get past (a ',' outside any collection at the top of a document, found
// by tests/fuzz/playbook_fuzz), where LoadAll returns empty documents forever.
std::vector<YAML::Node> ParseYamlDocuments(const std::string& text, YamlProblems& problems);

// Where byte `offset` of a scalar's text is in the file: exact on a one-line plain or quoted
// scalar (a quoted one starts one column after its quote), the scalar's start otherwise
// (block scalars, several lines). For problems found inside a value (a condition, a path).
YAML::Mark MarkInScalar(const YAML::Node& scalar, size_t offset);

// The keys of one mapping, read by type. Each getter marks its key known; Finish() reports
// every other key as error[unknown-key] ("did you mean" the nearest known one). A value of
// the wrong shape is error[bad-type], one that does not read as its type error[bad-value];
// the getter then leaves `out` as it was and returns false, as it does for an absent key.
// Messages quote the value with backticks: "for `5 minutes` is not a duration (0, 1s, 500ms)".
class YamlMap {
 public:
  // `what` names the mapping in messages: "a target", "`tls`". A node that is not a mapping
  // is error[bad-type] at it ("<what> must be a mapping ..." + `expected`).
  YamlMap(const YAML::Node& node, std::string what, YamlProblems& problems,
          std::string_view expected = "");
  bool ok() const { return ok_; }
  const YAML::Node& node() const { return node_; }

  // The value at `key` (undefined when absent), marked known: for nested mappings, and for
  // keys read elsewhere or ignored on purpose.
  YAML::Node Get(std::string_view key);
  // Absent keys are no problem to the getters; RequiredString reports an absent or empty
  // one as error[missing-key] at the mapping ("`name` is required in a switch").
  bool RequiredString(std::string_view key, std::string& out);

  bool String(std::string_view key, std::string& out);
  // A duration as the rest of railwatch writes them (1s, 500ms, 5m); `positive`: above zero,
  // else zero ("0" too) is fine and only a negative one is refused.
  bool Duration(std::string_view key, absl::Duration& out, bool positive = true);
  bool Bool(std::string_view key, bool& out);
  // A whole number, refused (error[bad-value]) below `min`.
  bool Int(std::string_view key, int64_t& out,
           int64_t min = std::numeric_limits<int64_t>::min());
  bool Double(std::string_view key, double& out);
  // A list of single values ([a, b]); with `one_is_a_list`, a single value is a list of one.
  // Entries that are not single values are error[bad-type] and left out.
  bool StringList(std::string_view key, std::vector<std::string>& out,
                  bool one_is_a_list = false);
  // A mapping of names to single values ({host: h1, rail: "3"}), in the order written.
  bool StringMap(std::string_view key, std::vector<std::pair<std::string, std::string>>& out);
  // The list at `key`: undefined when absent or null (`key:` with nothing), error[bad-type]
  // (and undefined) when it is not a list.
  YAML::Node List(std::string_view key);

  // Reports every key no getter asked for: error[unknown-key], or for formats that keep
  // loading past them (playbooks, gNMI profiles, as Falco does) warning[unknown-key] ending
  // "; ignored".
  enum class Unknown { kError, kWarning };
  void Finish(Unknown level = Unknown::kError);

 private:
  void Known(std::string_view key);
  void BadValue(std::string_view key, std::string_view text, std::string_view expected);

  YAML::Node node_;
  std::string what_;
  YamlProblems& problems_;
  bool ok_ = false;
  std::vector<std::string> known_;
};

}  // namespace railwatch
