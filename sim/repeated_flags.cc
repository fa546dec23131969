#include "sim/repeated_flags.h"

#include <algorithm>
#include <map>
#include <string_view>

namespace railwatch::sim {

std::vector<std::string> JoinRepeatedFlags(int argc, char** argv,
                                           const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::map<std::string, size_t> joined;  // flag name -> its index in `out`
  for (int i = 0; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (i == 0 || arg == "--") {
      if (arg == "--") {
        for (; i < argc; ++i) out.emplace_back(argv[i]);
        break;
      }
      out.emplace_back(arg);
      continue;
    }
    std::string_view body = arg;
    if (body.starts_with("--")) {
      body.remove_prefix(2);
    } else if (body.starts_with("-")) {
      body.remove_prefix(1);
    } else {
      out.emplace_back(arg);
      continue;
    }
    const size_t eq = body.find('=');
    const std::string name(body.substr(0, eq));
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      out.emplace_back(arg);
      continue;
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(body.substr(eq + 1));
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      out.emplace_back(arg);  // let the flag parser report the missing value
      continue;
    }
    auto [it, first] = joined.try_emplace(name, out.size());
    if (first) {
      out.push_back("--" + name + "=" + value);
    } else if (!value.empty()) {
      std::string& so_far = out[it->second];
      if (so_far.back() != '=') so_far += ',';
      so_far += value;
    }
  }
  return out;
}

}  // namespace railwatch::sim
