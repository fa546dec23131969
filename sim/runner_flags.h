#pragma once

// The flags of `railwatch-sim run` and `score`. They are parsed here, not by absl: the
// simulator's own absl flags (--hosts, --duration ...) live in the same binary and must not
// be taken for a subcommand's.

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace railwatch::sim {

class FlagSet {
 public:
  void String(std::string name, std::string* target, std::string help) {
    flags_.push_back({std::move(name), Type::kString, target, std::move(help)});
  }
  void Bool(std::string name, bool* target, std::string help) {
    flags_.push_back({std::move(name), Type::kBool, target, std::move(help)});
  }
  void Int(std::string name, int* target, std::string help) {
    flags_.push_back({std::move(name), Type::kInt, target, std::move(help)});
  }

  // --name=value, --name value, --flag, --noflag, -name ...; "--" ends the flags. The rest go to
  // `positional`. An unknown flag or a bad value: InvalidArgument with the closest flag name.
  // --help / -h: Cancelled.
  absl::Status Parse(const std::vector<std::string>& args, std::vector<std::string>* positional);
  // One line per flag: --name=<default>  help.
  std::string Help() const;

 private:
  enum class Type { kString, kBool, kInt };
  struct Flag {
    std::string name;
    Type type;
    void* target;
    std::string help;
  };
  const Flag* Find(const std::string& name) const;

  std::vector<Flag> flags_;
};

}  // namespace railwatch::sim
