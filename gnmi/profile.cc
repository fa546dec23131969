#include "gnmi/profile.h"

#include <algorithm>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/logging.h"
#include "common/text.h"
#include "gnmi/profile_loader.h"

namespace railwatch {
namespace fs = std::filesystem;

std::string GnmiValueRule::Text(const GnmiScalar& value) const {
  std::string text;
  if (const std::string* s = std::get_if<std::string>(&value)) {
    text = *s;
  } else if (std::optional<double> d = GnmiScalarAsDouble(value)) {
    text = absl::StrCat(*d);
  }
  if (texts.empty()) return text;
  auto it = texts.find(text);
  const std::string_view bare = StripGnmiModulePrefix(text);
  if (it == texts.end()) it = texts.find(std::string(bare));
  if (it != texts.end()) return it->second;
  return std::string(bare);
}

bool GnmiValueRule::IsAbsent(const GnmiScalar& value) const {
  if (absent.empty()) return false;
  const std::string* s = std::get_if<std::string>(&value);
  return s != nullptr && std::find(absent.begin(), absent.end(), *s) != absent.end();
}

std::optional<double> GnmiValueRule::Evaluate(const GnmiScalar& value) const {
  if (!value_label.empty() || !join_label.empty()) {
    const auto* s = std::get_if<std::string>(&value);
    if (s == nullptr || s->empty()) return std::nullopt;
    return 1.0;
  }
  if (const auto* s = std::get_if<std::string>(&value); s != nullptr && !values.empty()) {
    auto it = values.find(*s);
    // An identityref in JSON_IETF carries its module ("openconfig-if-ethernet:SPEED_400GB");
    // the profile names the identity alone.
    if (it == values.end()) it = values.find(std::string(StripGnmiModulePrefix(*s)));
    if (it != values.end()) return it->second;
  }
  std::optional<double> v = GnmiScalarAsDouble(value);
  if (!v.has_value()) return std::nullopt;
  return *v * scale;
}

struct GnmiProfile::Impl : ProfileData {};

GnmiProfile::GnmiProfile() : impl_(std::make_unique<Impl>()) {}
GnmiProfile::GnmiProfile(GnmiProfile&&) noexcept = default;
GnmiProfile& GnmiProfile::operator=(GnmiProfile&&) noexcept = default;
GnmiProfile::~GnmiProfile() = default;

absl::StatusOr<GnmiProfile> GnmiProfile::LoadString(std::string_view yaml,
                                                    std::string_view file_name) {
  GnmiProfile profile;
  YamlProblems problems{std::string(file_name)};
  LoadProfileData(yaml, problems, *profile.impl_);
  for (const LoadProblem& p : problems.problems()) {
    if (p.level != LoadProblem::Level::kWarning) continue;
    profile.impl_->warnings.push_back(p.ToString());
    spdlog::warn("{}", profile.impl_->warnings.back());
  }
  // With the warnings: a misspelt key is often the cause of a "missing" error.
  if (absl::Status s = problems.ToStatus(); !s.ok()) return s;
  return profile;
}

absl::StatusOr<GnmiProfile> GnmiProfile::LoadFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return LoadString(*text, path);
}

const std::string& GnmiProfile::name() const { return impl_->name; }
const std::string& GnmiProfile::description() const { return impl_->description; }
::gnmi::Encoding GnmiProfile::encoding() const { return impl_->encoding; }
const std::vector<GnmiSubscriptionSpec>& GnmiProfile::subscriptions() const {
  return impl_->subscriptions;
}
const std::vector<std::string>& GnmiProfile::warnings() const { return impl_->warnings; }

std::vector<const MetricSpec*> GnmiProfile::series() const {
  std::vector<const MetricSpec*> out;
  for (const GnmiProfileMapping& m : impl_->mappings) {
    if (m.metric == nullptr) continue;  // a join
    if (std::find(out.begin(), out.end(), m.metric) == out.end()) out.push_back(m.metric);
  }
  return out;
}

const std::vector<std::string>& GnmiProfile::join_labels() const { return impl_->join_labels; }

bool GnmiProfile::Map(const GnmiLeaf& leaf, GnmiMappedSeries& out) const {
  for (const GnmiProfileMapping& m : impl_->mappings) {
    Labels labels = m.fixed_labels;
    if (!m.pattern.Match(leaf.elems, labels)) continue;
    NormalizeLabels(labels);
    out.metric = m.metric;
    out.labels = std::move(labels);
    out.rule = &m.rule;
    return true;
  }
  return false;
}

absl::StatusOr<std::vector<GnmiProfile>> LoadGnmiProfiles(const std::string& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  if (ec) return absl::NotFoundError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<GnmiProfile> profiles;
  std::vector<std::string> errors;
  absl::flat_hash_set<std::string> names;
  for (const fs::path& file : files) {
    absl::StatusOr<GnmiProfile> p = GnmiProfile::LoadFile(file.string());
    if (!p.ok()) {
      errors.emplace_back(p.status().message());
      continue;
    }
    if (!names.insert(p->name()).second) {
      errors.push_back(absl::StrCat(file.string(), ": error[duplicate-profile]: profile \"",
                                    p->name(), "\" is already defined in ", dir));
      continue;
    }
    profiles.push_back(std::move(*p));
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  return profiles;
}

}  // namespace railwatch
