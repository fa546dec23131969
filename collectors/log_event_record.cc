#include "collectors/log_event_record.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "logs/kernel_messages.h"

namespace railwatch {
namespace {

bool RecordHasAttribute(const EventRecord& r, absl::string_view key) {
  return std::any_of(r.attributes.begin(), r.attributes.end(),
                     [&](const auto& kv) { return kv.first == key; });
}

}  // namespace

EventRecord LogEventRecord(logs::LogEvent event, const std::string& log_label,
                           const std::string& path, int64_t fallback_time, bool line_known) {
  EventRecord r;
  r.kind = std::move(event.kind);
  r.time_unix_nano = event.time_unix_nano != 0 ? event.time_unix_nano : fallback_time;
  r.labels = {{"log", log_label}};
  r.attributes = std::move(event.fields);
  if (absl::StartsWith(r.kind, "kernel.")) {
    // Kernel messages are about one PCI function and the NIC behind it: those are the labels a
    // playbook groups by (logs/kernel_messages.h).
    for (std::string_view name : logs::kKernelEventLabels) {
      auto it = std::find_if(r.attributes.begin(), r.attributes.end(),
                             [&](const auto& kv) { return kv.first == name; });
      if (it == r.attributes.end()) continue;
      r.labels.push_back(Label{std::move(it->first), std::move(it->second)});
      r.attributes.erase(it);
    }
  }
  if (!RecordHasAttribute(r, "file")) r.attributes.emplace_back("file", path);
  // Only when the line number is the file's; otherwise the parser's count would pass for one.
  if (event.line > 0 && line_known && !RecordHasAttribute(r, "line")) {
    r.attributes.emplace_back("line", absl::StrCat(event.line));
  }
  r.raw = std::move(event.raw);
  return r;
}

}  // namespace railwatch
