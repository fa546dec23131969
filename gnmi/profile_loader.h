#pragma once

// The YAML side of gnmi/profile.h: what a profile file holds after validation. Internal to
// railwatch_gnmi_profile.

#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "gnmi/path_pattern.h"
#include "gnmi/profile.h"

namespace railwatch {

// One mapping of the profile, after validation.
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
  std::vector<std::string> warnings;
};

// Reads the profile `text` of `file` (used in messages and to find included profiles beside
// it) into `out`. Each error is appended to `errors` as "file:line:column: error[code]:
// message", each warning to out.warnings; `out` is only usable when no error was added.
void LoadProfileData(std::string_view text, const std::string& file,
                     std::vector<std::string>& errors, ProfileData& out);

}  // namespace railwatch
