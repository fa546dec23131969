#pragma once

// One reader for the YAML configuration files: their problems in one format
// (file:line:column: error[code]: message, every problem of a file at once, the rest of the
// file still read) and typed getters on a mapping that report a key nobody asked for as
// error[unknown-key] with the nearest known key suggested.
//
// Used by the gNMI targets file (gnmi/targets.cc) and the Query API's access file
// (daemon/auth_access.cc); playbooks and rule tests use LoadProblem.
// The other loaders are still to move onto it (issue 20 item 3, docs/ARCHITECTURE.md
// "How to add ... a configuration file").

#include <cstdint>
#include <string>
#include <string_view>
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
  void Warning(const YAML::Node& at, std::string_view code, std::string message);

  const std::vector<LoadProblem>& problems() const { return problems_; }
  bool has_errors() const;
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

// The keys of one mapping, read by type. Each getter marks its key known; Finish() reports
// every other key as error[unknown-key] ("did you mean" the nearest known one). A value of
// the wrong shape is error[bad-type], one that does not read as its type error[bad-value];
// the getter then leaves `out` as it was and returns false, as it does for an absent key.
class YamlMap {
 public:
  // `what` names the mapping in messages: "a target", "`tls`". A node that is not a mapping
  // is error[bad-type] at it ("<what> must be a mapping ..." + `expected`).
  YamlMap(const YAML::Node& node, std::string what, YamlProblems& problems,
          std::string_view expected = "");
  bool ok() const { return ok_; }
  const YAML::Node& node() const { return node_; }

  // The value at `key` (undefined when absent), marked known.
  YAML::Node Get(std::string_view key);
  // Absent keys are no problem; Require reports one as error[missing-key] at the mapping.
  bool Require(std::string_view key, std::string_view message);

  bool String(std::string_view key, std::string& out);
  // A duration as the rest of railwatch writes them (1s, 500ms, 5m); `positive`: above zero.
  bool Duration(std::string_view key, absl::Duration& out, bool positive = true);
  bool Bool(std::string_view key, bool& out);
  bool Int(std::string_view key, int64_t& out);

  // Marks `key` known without reading it (read elsewhere, or ignored on purpose).
  void Known(std::string_view key);
  void Finish();

 private:
  YAML::Node node_;
  std::string what_;
  YamlProblems& problems_;
  bool ok_ = false;
  std::vector<std::string> known_;
};

}  // namespace railwatch
