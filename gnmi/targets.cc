#include "gnmi/targets.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/labels.h"
#include "common/text.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace {

// Collects every problem of one file, each with file:line:column, so that a user fixes them
// all in one go.
class TargetsLoader {
 public:
  TargetsLoader(std::string_view file_name, std::filesystem::path base_dir)
      : file_(file_name), base_dir_(std::move(base_dir)) {}

  std::vector<GnmiTargetConfig> Load(std::string_view yaml) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::Exception& e) {
      ProblemAt(e.mark, e.msg);
      return {};
    }
    if (!root.IsMap()) {
      Problem(root, "expected a mapping with `targets:` (and optionally `defaults:`)");
      return {};
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>("");
      if (key != "defaults" && key != "targets") Problem(kv.first, "unknown key `" + key + "`");
    }
    GnmiTargetConfig defaults;
    if (YAML::Node d = root["defaults"]; d) {
      if (!d.IsMap()) {
        Problem(d, "`defaults` must be a mapping");
      } else {
        ReadSettings(d, defaults, /*is_target=*/false);
      }
    }
    YAML::Node list = root["targets"];
    if (!list || !list.IsSequence() || list.size() == 0) {
      Problem(list ? list : root, "`targets` must be a non-empty list");
      return {};
    }
    std::vector<GnmiTargetConfig> out;
    std::set<std::string> names;
    for (const YAML::Node& item : list) {
      if (!item.IsMap()) {
        Problem(item, "a target must be a mapping with `name` and `address`");
        continue;
      }
      GnmiTargetConfig t = defaults;
      t.origin = absl::StrCat(file_, ":", item.Mark().line + 1);
      ReadSettings(item, t, /*is_target=*/true);
      if (t.name.empty()) Problem(item, "target without `name`");
      if (t.address.empty()) Problem(item, "target without `address` (host:port)");
      if (!t.name.empty() && !names.insert(t.name).second) {
        Problem(item["name"], "duplicate target name `" + t.name + "`");
      }
      out.push_back(std::move(t));
    }
    return out;
  }

  const std::vector<std::string>& problems() const { return problems_; }

 private:
  void Problem(const YAML::Node& at, const std::string& message) { ProblemAt(at.Mark(), message); }
  void ProblemAt(const YAML::Mark& m, const std::string& message) {
    if (m.is_null()) {
      problems_.push_back(absl::StrCat(file_, ": ", message));
    } else {
      problems_.push_back(absl::StrCat(file_, ":", m.line + 1, ":", m.column + 1, ": ", message));
    }
  }

  bool Scalar(const YAML::Node& n, std::string& out) {
    if (!n.IsScalar()) {
      Problem(n, "expected a single value");
      return false;
    }
    out = n.Scalar();
    return true;
  }

  std::filesystem::path Resolve(const std::string& p) const {
    std::filesystem::path path(p);
    return path.is_absolute() ? path : base_dir_ / path;
  }

  // Reads a file named at `n`, reporting a problem at `n` when it cannot be read.
  bool ReadNamedFile(const YAML::Node& n, std::string& file, std::string& contents) {
    if (!Scalar(n, file)) return false;
    absl::StatusOr<std::string> text = ReadFile(Resolve(file).string());
    if (!text.ok()) {
      Problem(n, std::string(text.status().message()));
      return false;
    }
    contents = *std::move(text);
    return true;
  }

  void ReadTls(const YAML::Node& n, GnmiTlsConfig& tls) {
    if (!n.IsMap()) {
      Problem(n, "`tls` must be a mapping (ca, cert, key, server_name)");
      return;
    }
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>("");
      if (key == "ca") {
        ReadNamedFile(kv.second, tls.ca_file, tls.ca_pem);
      } else if (key == "cert") {
        ReadNamedFile(kv.second, tls.cert_file, tls.cert_pem);
      } else if (key == "key") {
        ReadNamedFile(kv.second, tls.key_file, tls.key_pem);
      } else if (key == "server_name") {
        Scalar(kv.second, tls.server_name);
      } else {
        Problem(kv.first, "unknown tls key `" + key + "` (ca, cert, key, server_name)");
      }
    }
    if (tls.cert_file.empty() != tls.key_file.empty()) {
      Problem(n, "`cert` and `key` go together (client certificate for mTLS)");
    }
  }

  void ReadSettings(const YAML::Node& map, GnmiTargetConfig& t, bool is_target) {
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>("");
      const YAML::Node& v = kv.second;
      if (is_target && key == "name") {
        Scalar(v, t.name);
      } else if (is_target && key == "address") {
        if (Scalar(v, t.address) && t.address.find(':') == std::string::npos) {
          Problem(v, "address `" + t.address + "` has no port (host:port)");
        }
      } else if (key == "profile") {
        Scalar(v, t.profile);
      } else if (key == "sample_interval") {
        std::string text;
        if (!Scalar(v, text)) continue;
        absl::StatusOr<absl::Duration> d = ParseDuration(text);
        if (!d.ok() || *d <= absl::ZeroDuration()) {
          Problem(v, "sample_interval `" + text + "` is not a positive duration (1s, 500ms)");
        } else {
          t.sample_interval = *d;
        }
      } else if (key == "username") {
        Scalar(v, t.username);
      } else if (key == "password") {
        Scalar(v, t.password);
      } else if (key == "password_file") {
        std::string file;
        if (ReadNamedFile(v, file, t.password)) {
          // Editors and `echo` leave a newline that is not part of the password.
          t.password = std::string(absl::StripTrailingAsciiWhitespace(t.password));
        }
      } else if (key == "tls") {
        GnmiTlsConfig tls = t.tls.value_or(GnmiTlsConfig{});
        ReadTls(v, tls);
        t.tls = std::move(tls);
      } else {
        Problem(kv.first, "unknown key `" + key + "`");
      }
    }
  }

  std::string file_;
  std::filesystem::path base_dir_;
  std::vector<std::string> problems_;
};

absl::StatusOr<std::vector<GnmiTargetConfig>> Load(std::string_view yaml,
                                                   std::string_view file_name,
                                                   std::filesystem::path base_dir) {
  TargetsLoader loader(file_name, std::move(base_dir));
  std::vector<GnmiTargetConfig> targets = loader.Load(yaml);
  if (!loader.problems().empty()) {
    return absl::InvalidArgumentError(absl::StrJoin(loader.problems(), "\n"));
  }
  return targets;
}

}  // namespace

absl::StatusOr<std::vector<GnmiTargetConfig>> LoadGnmiTargetsFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return Load(*text, path, std::filesystem::path(path).parent_path());
}

absl::StatusOr<std::vector<GnmiTargetConfig>> LoadGnmiTargetsString(std::string_view yaml,
                                                                    std::string_view file_name) {
  return Load(yaml, file_name, std::filesystem::current_path());
}

}  // namespace railwatch
