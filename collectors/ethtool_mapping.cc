#include "collectors/ethtool_mapping.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace railwatch {
namespace {

struct ParsedStat {
  std::string prefix;
  std::string suffix;
  std::string placeholder;
};

// "rx_prio{priority}_pause" -> {"rx_prio", "_pause", "priority"}.
std::optional<ParsedStat> ParseStat(std::string_view stat, std::string* error) {
  const size_t open = stat.find('{');
  if (open == std::string_view::npos) {
    if (stat.find('}') != std::string_view::npos) {
      *error = "'}' without '{'";
      return std::nullopt;
    }
    return ParsedStat{std::string(stat), "", ""};
  }
  const size_t close = stat.find('}', open);
  if (close == std::string_view::npos) {
    *error = "'{' without '}'";
    return std::nullopt;
  }
  std::string_view rest = stat.substr(close + 1);
  if (rest.find('{') != std::string_view::npos || rest.find('}') != std::string_view::npos) {
    *error = "more than one placeholder";
    return std::nullopt;
  }
  std::string_view placeholder = stat.substr(open + 1, close - open - 1);
  if (placeholder != "priority" && placeholder != "queue") {
    *error = absl::StrCat("unknown placeholder {", AsAbsl(placeholder), "} (priority or queue)");
    return std::nullopt;
  }
  return ParsedStat{std::string(stat.substr(0, open)), std::string(rest), std::string(placeholder)};
}

// The number a placeholder stands for: one or two digits, no leading zero. Two digits at most
// keeps a misbehaving driver from creating more than 100 series per source.
std::optional<std::string_view> PlaceholderValue(std::string_view name, const std::string& prefix,
                                                 const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size()) return std::nullopt;
  if (!name.starts_with(prefix) || !name.ends_with(suffix)) return std::nullopt;
  std::string_view digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 2 || (digits.size() == 2 && digits[0] == '0')) return std::nullopt;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  return digits;
}

}  // namespace

absl::Status EthtoolMapping::Validate(std::span<const MetricSpec> specs) {
  std::vector<std::string> problems;
  for (const MetricSpec& spec : specs) {
    for (const EthtoolSource& source : spec.ethtool) {
      std::string error;
      const bool parsed = ParseStat(source.stat, &error).has_value();
      if (source.driver.empty()) {
        error = "empty driver";
      } else if (parsed && !source.direction.empty() && source.direction != "rx" &&
                 source.direction != "tx") {
        error = "direction must be rx or tx";
      }
      if (!error.empty()) {
        problems.push_back(absl::StrCat(AsAbsl(spec.name), " <- ", AsAbsl(source.driver), " \"",
                                        AsAbsl(source.stat), "\": ", error));
      }
    }
  }
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
}

EthtoolMapping::EthtoolMapping(std::span<const MetricSpec> specs) {
  size_t count = 0;
  for (const MetricSpec& spec : specs) count += spec.ethtool.size();
  // Reserved up front: DriverPatterns keeps pointers into patterns_.
  patterns_.reserve(count);
  size_t order = 0;
  for (const MetricSpec& spec : specs) {
    for (const EthtoolSource& source : spec.ethtool) {
      std::string error;
      std::optional<ParsedStat> parsed = ParseStat(source.stat, &error);
      ++order;
      if (!parsed) continue;
      patterns_.push_back({&spec, order, std::move(parsed->prefix), std::move(parsed->suffix),
                           std::move(parsed->placeholder), std::string(source.direction)});
      const Pattern* p = &patterns_.back();
      DriverPatterns& driver = by_driver_[std::string(source.driver)];
      if (p->placeholder.empty()) {
        driver.exact[p->prefix].push_back(p);
      } else {
        driver.with_placeholder.push_back(p);
      }
    }
  }
}

const EthtoolMapping& EthtoolMapping::Canonical() {
  static const EthtoolMapping* mapping = new EthtoolMapping(CanonicalMetrics());
  return *mapping;
}

std::vector<EthtoolMapping::Target> EthtoolMapping::Map(
    std::string_view driver, std::span<const std::string> stat_names) const {
  std::vector<Target> out;
  auto d = by_driver_.find(AsAbsl(driver));
  if (d == by_driver_.end()) return out;
  const DriverPatterns& patterns = d->second;

  struct Candidate {
    size_t order;
    size_t stat_index;
    const Pattern* pattern;
    std::string value;  // the placeholder's number
  };
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < stat_names.size(); ++i) {
    const std::string& name = stat_names[i];
    if (auto it = patterns.exact.find(name); it != patterns.exact.end()) {
      for (const Pattern* p : it->second) candidates.push_back({p->order, i, p, ""});
    }
    for (const Pattern* p : patterns.with_placeholder) {
      if (std::optional<std::string_view> v = PlaceholderValue(name, p->prefix, p->suffix)) {
        candidates.push_back({p->order, i, p, std::string(*v)});
      }
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.order, a.stat_index) < std::tie(b.order, b.stat_index);
  });

  absl::flat_hash_set<std::string> taken;  // metric name + labels
  for (Candidate& c : candidates) {
    Labels labels;
    if (!c.pattern->placeholder.empty()) labels.push_back({c.pattern->placeholder, c.value});
    if (!c.pattern->direction.empty()) labels.push_back({"direction", c.pattern->direction});
    NormalizeLabels(labels);
    if (!taken.insert(FormatSeries(c.pattern->spec->name, labels)).second) continue;
    out.push_back({c.stat_index, c.pattern->spec, std::move(labels)});
  }
  std::sort(out.begin(), out.end(),
            [](const Target& a, const Target& b) { return a.stat_index < b.stat_index; });
  return out;
}

}  // namespace railwatch
