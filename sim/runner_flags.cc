#include "sim/runner_flags.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "sim/scenario.h"

namespace railwatch::sim {

const FlagSet::Flag* FlagSet::Find(const std::string& name) const {
  for (const Flag& f : flags_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

absl::Status FlagSet::Parse(const std::vector<std::string>& args,
                            std::vector<std::string>* positional) {
  for (size_t i = 0; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      break;
    }
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) {
      positional->push_back(args[i]);
      continue;
    }
    if (arg == "help" || arg == "h" || arg == "helpfull") return absl::CancelledError("help");
    const size_t eq = arg.find('=');
    std::string name(arg.substr(0, eq));
    std::optional<std::string> value;
    if (eq != absl::string_view::npos) value = std::string(arg.substr(eq + 1));
    const Flag* flag = Find(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no") && !value) {
      flag = Find(name.substr(2));
      negated = flag != nullptr && flag->type == Type::kBool;
      if (!negated) flag = nullptr;
    }
    if (flag == nullptr) {
      std::vector<std::string> names;
      for (const Flag& f : flags_) names.push_back(f.name);
      const std::string hint = ClosestWord(name, names);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name,
                       hint.empty() ? "" : absl::StrCat(" (did you mean --", hint, "?)")));
    }
    if (flag->type == Type::kBool) {
      bool v = !negated;
      if (value && !absl::SimpleAtob(*value, &v)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, "=", *value, ": want true or false"));
      }
      *static_cast<bool*>(flag->target) = v;
      continue;
    }
    if (!value) {
      if (i + 1 == args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " wants a value"));
      }
      value = args[++i];
    }
    if (flag->type == Type::kInt) {
      if (!absl::SimpleAtoi(*value, static_cast<int*>(flag->target))) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, "=", *value, ": want a whole number"));
      }
    } else {
      *static_cast<std::string*>(flag->target) = *value;
    }
  }
  return absl::OkStatus();
}

std::string FlagSet::Help() const {
  std::string out;
  for (const Flag& f : flags_) {
    std::string def;
    if (f.type == Type::kBool) def = *static_cast<bool*>(f.target) ? "true" : "false";
    if (f.type == Type::kInt) def = absl::StrCat(*static_cast<int*>(f.target));
    if (f.type == Type::kString) def = *static_cast<std::string*>(f.target);
    absl::StrAppend(&out, "  --", f.name, def.empty() ? "" : absl::StrCat("=", def), "\n      ",
                    f.help, "\n");
  }
  return out;
}

}  // namespace railwatch::sim
