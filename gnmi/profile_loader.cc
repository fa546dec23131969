#include "gnmi/profile_loader.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "common/yaml_reader.h"
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

// Reads one profile file through common/yaml_reader.h, collecting every problem; unknown
// keys are warnings (the profile still loads).
class ProfileLoader {
 public:
  ProfileLoader(YamlProblems& problems, int depth) : problems_(problems), depth_(depth) {}

  void Load(std::string_view text, ProfileData& out) {
    const YAML::Node root = ParseYaml(std::string(text), problems_);
    if (!root.IsDefined()) return;
    YamlMap map(root, "a gNMI profile", problems_,
                "with name, encoding, subscriptions and mappings");
    if (!map.ok()) return;
    if (map.RequiredString("name", out.name) && !IsProfileName(out.name)) {
      problems_.Error(map.Get("name"), "bad-name",
                      "a profile name is lower-case letters, digits and '-' (\"arista-eos\")");
    }
    map.String("description", out.description);
    std::string encoding;
    const bool encoding_set = map.String("encoding", encoding);
    if (encoding_set && !ParseEncoding(encoding, out.encoding)) {
      problems_.Error(map.Get("encoding"), "bad-encoding",
                      absl::StrCat("encoding `", encoding,
                                   "` is not one of json, json_ietf, proto, ascii, bytes"));
    }
    LoadSubscriptions(map, out);
    LoadMappings(map, out);
    std::vector<std::string> includes;
    if (map.StringList("include", includes, /*one_is_a_list=*/true)) {
      const YAML::Node inc = map.Get("include");
      if (inc.IsScalar()) Include(inc, encoding_set, out);
      for (const YAML::Node& n : inc.IsSequence() ? inc : YAML::Node()) {
        if (n.IsScalar()) Include(n, encoding_set, out);  // the others: error[bad-type]
      }
    }
    map.Finish(YamlMap::Unknown::kWarning);
  }

 private:
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

  // Parses the `path` of `map`; a bad pattern is reported at its character.
  std::optional<GnmiPathPattern> GetPattern(YamlMap& map) {
    std::string text;
    if (!map.RequiredString("path", text)) return std::nullopt;
    GnmiPathPattern::Error err;
    absl::StatusOr<GnmiPathPattern> p = GnmiPathPattern::Parse(text, &err);
    if (p.ok()) return std::move(*p);
    problems_.Error(MarkInScalar(map.Get("path"), err.offset), "bad-path", err.message);
    return std::nullopt;
  }

  void LoadSubscriptions(YamlMap& profile, ProfileData& out) {
    const YAML::Node list = profile.List("subscriptions");
    if (!list.IsDefined()) return;
    absl::flat_hash_set<std::string> names;
    for (const YAML::Node& node : list) {
      YamlMap item(node, "a subscription", problems_, "(name, path, mode, sample_interval, ...)");
      if (!item.ok()) continue;
      GnmiSubscriptionSpec spec;
      if (item.RequiredString("name", spec.name) && !names.insert(spec.name).second) {
        problems_.Error(item.Get("name"), "duplicate-subscription",
                        absl::StrCat("subscription `", spec.name, "` is defined twice"));
      }
      if (std::optional<GnmiPathPattern> p = GetPattern(item)) {
        if (p->has_captures() || p->has_multi_wildcard()) {
          problems_.Error(item.Get("path"), "bad-path",
                          "a subscription path is a gNMI path: \"*\" wildcards, no {captures} "
                          "or \"**\"");
        } else {
          spec.path = p->ToGnmiPath();
        }
      }
      std::string text;
      if (item.String("target", text)) spec.path.set_target(text);
      if (item.String("origin", text)) spec.path.set_origin(text);
      std::string mode = "sample";
      item.String("mode", mode);
      if (mode == "sample")
        spec.mode = ::gnmi::SAMPLE;
      else if (mode == "on_change")
        spec.mode = ::gnmi::ON_CHANGE;
      else if (mode == "target_defined")
        spec.mode = ::gnmi::TARGET_DEFINED;
      else
        problems_.Error(item.Get("mode"), "bad-mode",
                        absl::StrCat("mode `", mode,
                                     "` is not one of sample, on_change, target_defined"));
      item.Duration("sample_interval", spec.sample_interval, /*positive=*/false);
      item.Duration("heartbeat_interval", spec.heartbeat_interval, /*positive=*/false);
      item.Bool("suppress_redundant", spec.suppress_redundant);
      std::string optional;
      if (item.String("optional", optional)) {
        if (optional == "true" || optional == "yes" || optional == "on") {
          spec.optional = true;
        } else if (optional == "false" || optional == "no" || optional == "off") {
          spec.optional = false;
        } else if (IsProfileName(optional)) {
          spec.optional = true;
          spec.optional_group = optional;
        } else {
          problems_.Error(item.Get("optional"), "bad-value",
                          absl::StrCat("optional `", optional,
                                       "` is not true, false or a group name (lower-case "
                                       "letters, digits and '-')"));
        }
      }
      item.Finish(YamlMap::Unknown::kWarning);
      out.subscriptions.push_back(std::move(spec));
    }
  }

  void LoadMappings(YamlMap& profile, ProfileData& out) {
    if (!profile.Get("mappings").IsDefined()) {
      problems_.Error(profile.node(), "missing-key", "`mappings` is required in a gNMI profile");
      return;
    }
    const YAML::Node list = profile.List("mappings");
    if (!list.IsDefined()) return;
    for (const YAML::Node& node : list) {
      YamlMap item(node, "a mapping", problems_, "(path, series, labels, values, scale, ...)");
      if (!item.ok()) continue;
      if (std::optional<GnmiProfileMapping> m = LoadMapping(item)) {
        out.mappings.push_back(std::move(*m));
      }
    }
  }

  std::optional<GnmiProfileMapping> LoadMapping(YamlMap& item) {
    const size_t errors_before = problems_.error_count();
    GnmiProfileMapping m;
    std::optional<GnmiPathPattern> pattern = GetPattern(item);
    std::string series;
    if (item.String("join", m.rule.join_label)) {
      LoadJoin(item, pattern, m);
      item.Finish(YamlMap::Unknown::kWarning);
      if (problems_.error_count() != errors_before || !pattern.has_value()) return std::nullopt;
      m.pattern = std::move(*pattern);
      return m;
    }
    if (item.RequiredString("series", series)) {
      m.metric = FindMetric(series);
      if (m.metric == nullptr) {
        problems_.Error(item.Get("series"), "unknown-series",
                        absl::StrCat("`", series,
                                     "` is not a canonical series (common/vocabulary.cc, "
                                     "docs/METRICS.md)"));
      } else {
        m.rule.kind = m.metric->kind;
      }
    }
    absl::flat_hash_set<std::string> label_names;
    if (pattern.has_value()) {
      for (const std::string& name : pattern->capture_names()) {
        CheckLabelName(item.Get("path"), name);
        label_names.insert(name);
      }
    }
    if (const YAML::Node labels = item.Get("labels"); labels.IsDefined()) {
      YamlMap map(labels, "`labels`", problems_, "of label name to value");
      for (const auto& kv : map.ok() ? labels : YAML::Node()) {
        const std::string name = kv.first.Scalar();
        std::string value;
        if (!CheckLabelName(kv.first, name) || !map.String(name, value)) continue;
        if (!label_names.insert(name).second) {
          problems_.Error(kv.first, "duplicate-label",
                          absl::StrCat("label `", name, "` is also captured by the path"));
          continue;
        }
        m.fixed_labels.push_back({name, value});
      }
    }
    const bool attribute = item.Get("value_label").IsDefined();
    if (const YAML::Node values = item.Get("values"); values.IsDefined()) {
      YamlMap map(values, "`values`", problems_,
                  attribute ? "of text to label value" : "of text to number");
      for (const auto& kv : map.ok() ? values : YAML::Node()) {
        if (attribute) {
          std::string text;
          if (map.String(kv.first.Scalar(), text)) m.rule.texts[kv.first.Scalar()] = text;
          continue;
        }
        double v = 0;
        if (map.Double(kv.first.Scalar(), v)) m.rule.values[kv.first.Scalar()] = v;
      }
    }
    item.StringList("absent", m.rule.absent, /*one_is_a_list=*/true);
    if (item.Double("scale", m.rule.scale) && !(m.rule.scale > 0)) {
      problems_.Error(item.Get("scale"), "bad-value", "`scale` must be above 0");
    }
    item.String("event", m.rule.event_kind);
    if (item.String("value_label", m.rule.value_label)) {
      const YAML::Node n = item.Get("value_label");
      if (CheckLabelName(n, m.rule.value_label) && !label_names.insert(m.rule.value_label).second) {
        problems_.Error(n, "duplicate-label",
                        absl::StrCat("label `", m.rule.value_label, "` is also set by the mapping"));
      }
      if (m.metric != nullptr && m.metric->kind != MetricKind::kGauge) {
        problems_.Error(n, "bad-value-label",
                        absl::StrCat("`value_label` makes an info series (value 1): `",
                                     AsAbsl(m.metric->name), "` is a counter"));
      }
      if (item.Get("scale").IsDefined()) {
        problems_.Error(n, "bad-value-label", "`value_label` takes the value as text: no scale");
      }
    }
    item.Finish(YamlMap::Unknown::kWarning);
    if (problems_.error_count() != errors_before || !pattern.has_value() || m.metric == nullptr) {
      return std::nullopt;
    }
    m.pattern = std::move(*pattern);
    NormalizeLabels(m.fixed_labels);
    return m;
  }

  // `join: component`: the leaf's text names a value of label `component`; the labels the
  // path captures replace it wherever a series captured it. Nothing else may be set.
  void LoadJoin(YamlMap& item, const std::optional<GnmiPathPattern>& pattern,
                GnmiProfileMapping& m) {
    const YAML::Node at = item.Get("join");
    CheckLabelName(at, m.rule.join_label);
    for (std::string_view key : {"series", "labels", "values", "scale", "event", "value_label",
                                 "absent"}) {
      if (item.Get(key).IsDefined()) {
        problems_.Error(item.Get(key), "bad-join",
                        absl::StrCat("a `join` mapping makes no series: no `", AsAbsl(key), "`"));
      }
    }
    if (!pattern.has_value()) return;
    if (pattern->capture_names().empty()) {
      problems_.Error(item.Get("path"), "bad-join",
                      "a `join` path captures the labels that replace the joined one "
                      "({interface})");
    }
    for (const std::string& name : pattern->capture_names()) {
      CheckLabelName(item.Get("path"), name);
      if (name == m.rule.join_label) {
        problems_.Error(at, "bad-join",
                        absl::StrCat("label `", name, "` is both joined and captured"));
      }
    }
  }

  bool CheckLabelName(const YAML::Node& at, const std::string& name) {
    if (!IsLabelName(name)) {
      problems_.Error(at, "bad-label",
                      absl::StrCat("`", name, "` is not a label name ([A-Za-z_][A-Za-z0-9_]*)"));
      return false;
    }
    if (name == "switch" || name == "host") {
      problems_.Error(at, "bad-label",
                      absl::StrCat("label `", name, "` is set by the agent, not by a profile"));
      return false;
    }
    return true;
  }

  // `include: openconfig` loads openconfig.yaml beside this file; its subscriptions (those
  // whose name this profile does not use) and mappings come after this profile's own.
  void Include(const YAML::Node& n, bool encoding_set, ProfileData& out) {
    if (!IsProfileName(n.Scalar())) {
      problems_.Error(n, "bad-include",
                      "`include` names a profile (\"openconfig\") or a list of them");
      return;
    }
    if (depth_ >= kMaxIncludeDepth) {
      problems_.Error(n, "bad-include", "includes nest too deep (a cycle?)");
      return;
    }
    const std::string path =
        (fs::path(problems_.file()).parent_path() / absl::StrCat(n.Scalar(), ".yaml")).string();
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      problems_.Error(n, "bad-include",
                      absl::StrCat("cannot read ", path, ": ", text.status().message()));
      return;
    }
    ProfileData base;
    YamlProblems included(path);
    ProfileLoader(included, depth_ + 1).Load(*text, base);
    problems_.Append(included);
    if (included.has_errors()) {
      problems_.Error(n, "bad-include",
                      absl::StrCat("included profile ", path, " has errors (above)"));
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

  YamlProblems& problems_;
  int depth_;
};

}  // namespace

void LoadProfileData(std::string_view text, YamlProblems& problems, ProfileData& out) {
  ProfileLoader(problems, 0).Load(text, out);
  for (const GnmiProfileMapping& m : out.mappings) {
    if (!m.rule.join_label.empty()) out.join_labels.push_back(m.rule.join_label);
  }
  std::sort(out.join_labels.begin(), out.join_labels.end());
  out.join_labels.erase(std::unique(out.join_labels.begin(), out.join_labels.end()),
                        out.join_labels.end());
}

}  // namespace railwatch
