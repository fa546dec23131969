#include "gnmi/profile_loader.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace fs = std::filesystem;
namespace {

// Include chains longer than this are a cycle or a mistake.
constexpr int kMaxIncludeDepth = 4;

bool IsLabelName(std::string_view s) {
  if (s.empty() || !(absl::ascii_isalpha(s[0]) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// Reads one profile file, collecting every problem with file:line:column.
class ProfileLoader {
 public:
  ProfileLoader(std::string file, std::vector<std::string>& errors,
                std::vector<std::string>& warnings, int depth)
      : file_(std::move(file)), errors_(errors), warnings_(warnings), depth_(depth) {}

  void Load(std::string_view text, ProfileData& out) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      At(e.mark, 0, "bad-yaml", e.msg);
      return;
    }
    if (!root.IsMap()) {
      Error(root, "bad-document",
            "a gNMI profile is a mapping with name, encoding, subscriptions and mappings");
      return;
    }
    static const absl::flat_hash_set<std::string> kKnown = {
        "name", "description", "include", "encoding", "subscriptions", "mappings"};
    WarnUnknownKeys(root, kKnown);
    if (GetString(root, "name", out.name, true) && !IsProfileName(out.name)) {
      Error(root["name"], "bad-name",
            "a profile name is lower-case letters, digits and '-' (\"arista-eos\")");
    }
    GetString(root, "description", out.description, false);
    bool encoding_set = false;
    std::string encoding;
    if (GetString(root, "encoding", encoding, false)) {
      encoding_set = true;
      if (!ParseEncoding(encoding, out.encoding)) {
        Error(root["encoding"], "bad-encoding",
              absl::StrCat("encoding \"", encoding,
                           "\" is not one of json, json_ietf, proto, ascii, bytes"));
      }
    }
    LoadSubscriptions(root["subscriptions"], out);
    LoadMappings(root, out);
    if (YAML::Node inc = root["include"]) {
      std::vector<YAML::Node> names;
      if (inc.IsSequence()) {
        for (const YAML::Node& n : inc) names.push_back(n);
      } else {
        names.push_back(inc);
      }
      for (const YAML::Node& n : names) Include(n, encoding_set, out);
    }
  }

 private:
  void At(const YAML::Mark& m, int extra_col, std::string_view code, std::string_view message,
          bool warning = false) {
    std::string where = file_;
    if (m.line >= 0) absl::StrAppend(&where, ":", m.line + 1, ":", m.column + 1 + extra_col);
    std::string line = absl::StrCat(where, ": ", warning ? "warning" : "error", "[", AsAbsl(code),
                                    "]: ", AsAbsl(message));
    (warning ? warnings_ : errors_).push_back(std::move(line));
  }
  void Error(const YAML::Node& at, std::string_view code, std::string_view message) {
    At(at.Mark(), 0, code, message);
  }
  void Warn(const YAML::Node& at, std::string_view code, std::string_view message) {
    At(at.Mark(), 0, code, message, true);
  }

  static bool IsProfileName(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-';
    });
  }

  static bool ParseEncoding(std::string_view s, ::gnmi::Encoding& out) {
    static const std::pair<std::string_view, ::gnmi::Encoding> kEncodings[] = {
        {"json", ::gnmi::JSON},
        {"json_ietf", ::gnmi::JSON_IETF},
        {"proto", ::gnmi::PROTO},
        {"ascii", ::gnmi::ASCII},
        {"bytes", ::gnmi::BYTES}};
    for (const auto& [name, value] : kEncodings) {
      if (name == s) {
        out = value;
        return true;
      }
    }
    return false;
  }

  void WarnUnknownKeys(const YAML::Node& map, const absl::flat_hash_set<std::string>& known) {
    for (const auto& kv : map) {
      const std::string key = kv.first.Scalar();
      if (!known.contains(key)) {
        Warn(kv.first, "unknown-key", absl::StrCat("unknown key \"", key, "\" (ignored)"));
      }
    }
  }

  bool GetString(const YAML::Node& map, const char* key, std::string& out, bool required) {
    YAML::Node n = map[key];
    if (!n) {
      if (required) Error(map, "missing-key", absl::StrCat("\"", key, "\" is required"));
      return false;
    }
    if (!n.IsScalar()) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be a string"));
      return false;
    }
    out = n.Scalar();
    return true;
  }

  bool GetNumber(const YAML::Node& n, const char* what, double& out) {
    if (!n.IsScalar() || !absl::SimpleAtod(n.Scalar(), &out)) {
      Error(n, "bad-number", absl::StrCat(what, " must be a number"));
      return false;
    }
    return true;
  }

  bool GetBool(const YAML::Node& map, const char* key, bool& out) {
    YAML::Node n = map[key];
    if (!n) return false;
    try {
      out = n.as<bool>();
      return true;
    } catch (const YAML::Exception&) {
      Error(n, "bad-type", absl::StrCat("\"", key, "\" must be true or false"));
      return false;
    }
  }

  void GetDuration(const YAML::Node& map, const char* key, absl::Duration& out) {
    std::string text;
    if (!GetString(map, key, text, false)) return;
    absl::StatusOr<absl::Duration> d = ParseDuration(text);
    if (!d.ok() || *d < absl::ZeroDuration()) {
      Error(map[key], "bad-duration",
            absl::StrCat("\"", key, "\": ",
                         d.ok() ? "must not be negative" : std::string(d.status().message())));
      return;
    }
    out = *d;
  }

  // Parses the `path` scalar of `map`; a bad pattern is reported at its character.
  std::optional<GnmiPathPattern> GetPattern(const YAML::Node& map) {
    std::string text;
    if (!GetString(map, "path", text, true)) return std::nullopt;
    GnmiPathPattern::Error err;
    absl::StatusOr<GnmiPathPattern> p = GnmiPathPattern::Parse(text, &err);
    if (p.ok()) return std::move(*p);
    YAML::Node n = map["path"];
    // Plain and quoted scalars on one line: point at the offending character.
    const int quote = n.Tag() == "!" ? 1 : 0;
    At(n.Mark(), static_cast<int>(err.offset) + quote, "bad-path", err.message);
    return std::nullopt;
  }

  void LoadSubscriptions(const YAML::Node& list, ProfileData& out) {
    if (!list) return;
    if (!list.IsSequence()) {
      Error(list, "bad-type", "\"subscriptions\" must be a list");
      return;
    }
    static const absl::flat_hash_set<std::string> kKnown = {"name",
                                                            "path",
                                                            "target",
                                                            "origin",
                                                            "mode",
                                                            "sample_interval",
                                                            "heartbeat_interval",
                                                            "suppress_redundant"};
    absl::flat_hash_set<std::string> names;
    for (const YAML::Node& item : list) {
      if (!item.IsMap()) {
        Error(item, "bad-item", "each subscription must be a mapping");
        continue;
      }
      WarnUnknownKeys(item, kKnown);
      GnmiSubscriptionSpec spec;
      if (GetString(item, "name", spec.name, true) && !names.insert(spec.name).second) {
        Error(item["name"], "duplicate-subscription",
              absl::StrCat("subscription \"", spec.name, "\" is defined twice"));
      }
      if (std::optional<GnmiPathPattern> p = GetPattern(item)) {
        if (p->has_captures() || p->has_multi_wildcard()) {
          Error(item["path"], "bad-path",
                "a subscription path is a gNMI path: \"*\" wildcards, no {captures} or \"**\"");
        } else {
          spec.path = p->ToGnmiPath();
        }
      }
      std::string text;
      if (GetString(item, "target", text, false)) spec.path.set_target(text);
      if (GetString(item, "origin", text, false)) spec.path.set_origin(text);
      std::string mode = "sample";
      GetString(item, "mode", mode, false);
      if (mode == "sample")
        spec.mode = ::gnmi::SAMPLE;
      else if (mode == "on_change")
        spec.mode = ::gnmi::ON_CHANGE;
      else if (mode == "target_defined")
        spec.mode = ::gnmi::TARGET_DEFINED;
      else
        Error(item["mode"], "bad-mode",
              absl::StrCat("mode \"", mode,
                           "\" is not one of sample, on_change, "
                           "target_defined"));
      GetDuration(item, "sample_interval", spec.sample_interval);
      GetDuration(item, "heartbeat_interval", spec.heartbeat_interval);
      GetBool(item, "suppress_redundant", spec.suppress_redundant);
      out.subscriptions.push_back(std::move(spec));
    }
  }

  void LoadMappings(const YAML::Node& root, ProfileData& out) {
    YAML::Node list = root["mappings"];
    if (!list) {
      Error(root, "missing-key", "\"mappings\" is required");
      return;
    }
    if (!list.IsSequence()) {
      Error(list, "bad-type", "\"mappings\" must be a list");
      return;
    }
    for (const YAML::Node& item : list) {
      if (!item.IsMap()) {
        Error(item, "bad-item", "each mapping must be a mapping of path, series ...");
        continue;
      }
      if (std::optional<GnmiProfileMapping> m = LoadMapping(item))
        out.mappings.push_back(std::move(*m));
    }
  }

  std::optional<GnmiProfileMapping> LoadMapping(const YAML::Node& item) {
    static const absl::flat_hash_set<std::string> kKnown = {
        "path", "series", "labels", "values", "scale", "event", "value_label"};
    WarnUnknownKeys(item, kKnown);
    const size_t errors_before = errors_.size();
    GnmiProfileMapping m;
    std::optional<GnmiPathPattern> pattern = GetPattern(item);
    std::string series;
    if (GetString(item, "series", series, true)) {
      m.metric = FindMetric(series);
      if (m.metric == nullptr) {
        Error(item["series"], "unknown-series",
              absl::StrCat("\"", series,
                           "\" is not a canonical series (common/vocabulary.cc, "
                           "docs/METRICS.md)"));
      } else {
        m.rule.kind = m.metric->kind;
      }
    }
    absl::flat_hash_set<std::string> label_names;
    if (pattern.has_value()) {
      for (const std::string& name : pattern->capture_names()) {
        CheckLabelName(item["path"], name);
        label_names.insert(name);
      }
    }
    if (YAML::Node labels = item["labels"]) {
      if (!labels.IsMap()) {
        Error(labels, "bad-type", "\"labels\" must be a mapping of label name to value");
      } else {
        for (const auto& kv : labels) {
          const std::string name = kv.first.Scalar();
          if (!CheckLabelName(kv.first, name)) continue;
          if (!kv.second.IsScalar()) {
            Error(kv.second, "bad-type", absl::StrCat("label \"", name, "\" must be a string"));
            continue;
          }
          if (!label_names.insert(name).second) {
            Error(kv.first, "duplicate-label",
                  absl::StrCat("label \"", name, "\" is also captured by the path"));
            continue;
          }
          m.fixed_labels.push_back({name, kv.second.Scalar()});
        }
      }
    }
    if (YAML::Node values = item["values"]) {
      if (!values.IsMap()) {
        Error(values, "bad-type", "\"values\" must be a mapping of string to number");
      } else {
        for (const auto& kv : values) {
          double v = 0;
          if (GetNumber(kv.second, "a value", v)) m.rule.values[kv.first.Scalar()] = v;
        }
      }
    }
    if (YAML::Node scale = item["scale"]) {
      if (GetNumber(scale, "\"scale\"", m.rule.scale) && !(m.rule.scale > 0)) {
        Error(scale, "bad-number", "\"scale\" must be above 0");
      }
    }
    GetString(item, "event", m.rule.event_kind, false);
    if (GetString(item, "value_label", m.rule.value_label, false)) {
      YAML::Node n = item["value_label"];
      if (CheckLabelName(n, m.rule.value_label) && !label_names.insert(m.rule.value_label).second) {
        Error(n, "duplicate-label",
              absl::StrCat("label \"", m.rule.value_label, "\" is also set by the mapping"));
      }
      if (m.metric != nullptr && m.metric->kind != MetricKind::kGauge) {
        Error(n, "bad-value-label",
              absl::StrCat("\"value_label\" makes an info series (value 1): \"",
                           AsAbsl(m.metric->name), "\" is a counter"));
      }
      if (item["values"] || item["scale"]) {
        Error(n, "bad-value-label", "\"value_label\" takes the value as text: no values/scale");
      }
    }
    if (errors_.size() != errors_before || !pattern.has_value() || m.metric == nullptr) {
      return std::nullopt;
    }
    m.pattern = std::move(*pattern);
    NormalizeLabels(m.fixed_labels);
    return m;
  }

  bool CheckLabelName(const YAML::Node& at, const std::string& name) {
    if (!IsLabelName(name)) {
      Error(at, "bad-label",
            absl::StrCat("\"", name, "\" is not a label name ([A-Za-z_][A-Za-z0-9_]*)"));
      return false;
    }
    if (name == "switch" || name == "host") {
      Error(at, "bad-label",
            absl::StrCat("label \"", name, "\" is set by the agent, not by a profile"));
      return false;
    }
    return true;
  }

  // `include: openconfig` loads openconfig.yaml beside this file; its subscriptions (those
  // whose name this profile does not use) and mappings come after this profile's own.
  void Include(const YAML::Node& n, bool encoding_set, ProfileData& out) {
    if (!n.IsScalar() || !IsProfileName(n.Scalar())) {
      Error(n, "bad-include", "\"include\" names a profile (\"openconfig\") or a list of them");
      return;
    }
    if (depth_ >= kMaxIncludeDepth) {
      Error(n, "bad-include", "includes nest too deep (a cycle?)");
      return;
    }
    const std::string path =
        (fs::path(file_).parent_path() / absl::StrCat(n.Scalar(), ".yaml")).string();
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      Error(n, "bad-include", absl::StrCat("cannot read ", path, ": ", text.status().message()));
      return;
    }
    ProfileData base;
    const size_t errors_before = errors_.size();
    ProfileLoader(path, errors_, warnings_, depth_ + 1).Load(*text, base);
    if (errors_.size() != errors_before) {
      Error(n, "bad-include", absl::StrCat("included profile ", path, " has errors (above)"));
      return;
    }
    if (!encoding_set) out.encoding = base.encoding;
    absl::flat_hash_set<std::string> own;
    for (const GnmiSubscriptionSpec& s : out.subscriptions) own.insert(s.name);
    for (GnmiSubscriptionSpec& s : base.subscriptions) {
      if (!own.contains(s.name)) out.subscriptions.push_back(std::move(s));
    }
    for (GnmiProfileMapping& m : base.mappings) out.mappings.push_back(std::move(m));
  }

  std::string file_;
  std::vector<std::string>& errors_;
  std::vector<std::string>& warnings_;
  int depth_;
};

}  // namespace

void LoadProfileData(std::string_view text, const std::string& file,
                     std::vector<std::string>& errors, ProfileData& out) {
  ProfileLoader(file, errors, out.warnings, 0).Load(text, out);
}

}  // namespace railwatch
