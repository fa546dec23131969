#pragma once

// The YAML side of gnmi/profile.h: what a profile file holds after validation. Internal to
// railwatch_gnmi_profile.

#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/yaml_reader.h"
#include "gnmi/path_pattern.h"
#include "gnmi/profile.h"

namespace railwatch {

// One mapping of the profile, after validation. A join mapping (`join:`) has no metric.
struct GnmiProfileMapping {
  GnmiPathPattern pattern;
  const MetricSpec* metric = nullptr;
  Labels fixed_labels;
  GnmiValueRule rule;
};

// What a profile file says, after validation (and its includes, merged).
struct ProfileData {
  std::string name;
  std::string description;
  ::gnmi::Encoding encoding = ::gnmi::JSON_IETF;
  std::vector<GnmiSubscriptionSpec> subscriptions;
  std::vector<GnmiProfileMapping> mappings;
  std::vector<std::string> join_labels;  // sorted, unique; filled once the includes merged
  std::vector<std::string> warnings;  // file:line:column: warning[code]: message
};

// Reads the profile `text` of problems.file() (named in messages; included profiles are found
// beside it) into `out`, every problem (those of included profiles too) into `problems`;
// `out` is only usable when no error was added.
void LoadProfileData(std::string_view text, YamlProblems& problems, ProfileData& out);

}  // namespace railwatch
