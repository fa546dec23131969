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
#include "common/yaml_reader.h"

namespace railwatch {
namespace {

// Reads one targets file, collecting every problem (common/yaml_reader.h) so that a user
// fixes them all in one go.
class TargetsLoader {
 public:
  TargetsLoader(std::string_view file_name, std::filesystem::path base_dir)
      : problems_(std::string(file_name)), base_dir_(std::move(base_dir)) {}

  std::vector<GnmiTargetConfig> Load(std::string_view yaml) {
    const YAML::Node root = ParseYaml(std::string(yaml), problems_);
    if (!root.IsDefined()) return {};
    YamlMap top(root, "a targets file", problems_, "with `targets:` (and optionally `defaults:`)");
    if (!top.ok()) return {};
    GnmiTargetConfig defaults;
    if (YAML::Node d = top.Get("defaults"); d.IsDefined()) {
      YamlMap map(d, "`defaults`", problems_);
      if (map.ok()) ReadSettings(map, defaults);
    }
    YAML::Node list = top.Get("targets");
    top.Finish();
    if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
      problems_.Error(list.IsDefined() ? list : root, "bad-value",
                      "`targets` must be a non-empty list");
      return {};
    }
    std::vector<GnmiTargetConfig> out;
    std::set<std::string> names;
    for (const YAML::Node& item : list) {
      YamlMap target(item, "a target", problems_, "with `name` and `address`");
      if (!target.ok()) continue;
      GnmiTargetConfig t = defaults;
      t.origin = absl::StrCat(problems_.file(), ":", item.Mark().line + 1);
      target.String("name", t.name);
      if (target.String("address", t.address) && t.address.find(':') == std::string::npos) {
        problems_.Error(target.Get("address"), "bad-value",
                        "address `" + t.address + "` has no port (host:port)");
      }
      ReadSettings(target, t);
      if (t.name.empty()) problems_.Error(item, "missing-key", "target without `name`");
      if (t.address.empty()) {
        problems_.Error(item, "missing-key", "target without `address` (host:port)");
      }
      if (!t.name.empty() && !names.insert(t.name).second) {
        problems_.Error(target.Get("name"), "duplicate", "duplicate target name `" + t.name + "`");
      }
      out.push_back(std::move(t));
    }
    return out;
  }

  const YamlProblems& problems() const { return problems_; }

 private:
  std::filesystem::path Resolve(const std::string& p) const {
    std::filesystem::path path(p);
    return path.is_absolute() ? path : base_dir_ / path;
  }

  // Reads the file named at `key`, reporting a problem there when it cannot be read.
  bool ReadNamedFile(YamlMap& map, std::string_view key, std::string& file,
                     std::string& contents) {
    if (!map.String(key, file)) return false;
    absl::StatusOr<std::string> text = ReadFile(Resolve(file).string());
    if (!text.ok()) {
      problems_.Error(map.Get(key), "unreadable", std::string(text.status().message()));
      return false;
    }
    contents = *std::move(text);
    return true;
  }

  void ReadTls(const YAML::Node& n, GnmiTlsConfig& tls) {
    YamlMap map(n, "`tls`", problems_, "(ca, cert, key, server_name)");
    if (!map.ok()) return;
    ReadNamedFile(map, "ca", tls.ca_file, tls.ca_pem);
    ReadNamedFile(map, "cert", tls.cert_file, tls.cert_pem);
    ReadNamedFile(map, "key", tls.key_file, tls.key_pem);
    map.String("server_name", tls.server_name);
    map.Finish();
    if (tls.cert_file.empty() != tls.key_file.empty()) {
      problems_.Error(n, "bad-value", "`cert` and `key` go together (client certificate for mTLS)");
    }
  }

  // The settings a target and `defaults` share; reports the keys neither knows.
  void ReadSettings(YamlMap& map, GnmiTargetConfig& t) {
    map.String("profile", t.profile);
    map.Duration("sample_interval", t.sample_interval);
    map.String("username", t.username);
    map.String("password", t.password);
    std::string file;
    if (ReadNamedFile(map, "password_file", file, t.password)) {
      // Editors and `echo` leave a newline that is not part of the password.
      t.password = std::string(absl::StripTrailingAsciiWhitespace(t.password));
    }
    if (YAML::Node tls_node = map.Get("tls"); tls_node.IsDefined()) {
      GnmiTlsConfig tls = t.tls.value_or(GnmiTlsConfig{});
      ReadTls(tls_node, tls);
      t.tls = std::move(tls);
    }
    map.Finish();
  }

  YamlProblems problems_;
  std::filesystem::path base_dir_;
};

absl::StatusOr<std::vector<GnmiTargetConfig>> Load(std::string_view yaml,
                                                   std::string_view file_name,
                                                   std::filesystem::path base_dir) {
  TargetsLoader loader(file_name, std::move(base_dir));
  std::vector<GnmiTargetConfig> targets = loader.Load(yaml);
  if (absl::Status s = loader.problems().ToStatus(); !s.ok()) return s;
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
