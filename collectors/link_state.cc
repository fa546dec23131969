#include "collectors/link_state.h"

#include <net/if.h>

#include <cinttypes>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace railwatch {

namespace {
// IFF_LOWER_UP (the carrier) is in <linux/if.h> but not in glibc's <net/if.h>, and the two
// cannot be included together.
constexpr uint32_t kIffLowerUp = 0x10000;
}  // namespace

const char* OperstateName(uint8_t operstate) {
  // IF_OPER_* from <linux/if.h>, which cannot be included together with <net/if.h>.
  static constexpr const char* kNames[] = {"unknown", "notpresent", "down", "lowerlayerdown",
                                           "testing", "dormant",    "up"};
  return operstate < std::size(kNames) ? kNames[operstate] : "invalid";
}

LinkStateTracker::LinkStateTracker(std::function<bool(const std::string&)> selected)
    : selected_(std::move(selected)) {}

namespace {

// How many carrier transitions happened between `prev` and `cur`, when the kernel's counters
// say so consistently with the states at both ends; nullopt otherwise.
std::optional<uint32_t> CountedTransitions(const LinkSnapshot& prev, const LinkSnapshot& cur,
                                           bool was_up, bool is_up) {
  if (prev.carrier_up_count && cur.carrier_up_count && prev.carrier_down_count &&
      cur.carrier_down_count) {
    // Unsigned subtraction: the kernel's 32-bit counters may wrap between two messages.
    const uint32_t ups = *cur.carrier_up_count - *prev.carrier_up_count;
    const uint32_t downs = *cur.carrier_down_count - *prev.carrier_down_count;
    // Transitions alternate, so starting up, downs run one ahead of ups when it ends down.
    const int64_t expected = was_up == is_up ? 0 : (was_up ? 1 : -1);
    if (int64_t{downs} - int64_t{ups} != expected) return std::nullopt;
    return ups + downs;
  }
  if (prev.carrier_changes && cur.carrier_changes) {
    const uint32_t changes = *cur.carrier_changes - *prev.carrier_changes;
    if ((changes % 2 == 1) != (was_up != is_up)) return std::nullopt;
    return changes;
  }
  return std::nullopt;
}

void AddCounter(EventRecord& e, const char* key, const std::optional<uint32_t>& v) {
  if (v) e.attributes.emplace_back(key, absl::StrCat(*v));
}

}  // namespace

void LinkStateTracker::OnNewLink(const LinkSnapshot& link, int64_t time_unix_nano,
                                 std::vector<EventRecord>& out) {
  auto [it, inserted] = links_.try_emplace(link.ifindex);
  State& state = it->second;
  if (in_dump_) state.seen_in_dump = true;
  const bool is_up = (link.flags & kIffLowerUp) != 0;
  if (inserted || state.name != link.name) {
    state.name = link.name;
    state.selected = selected_(link.name);
  }
  if (inserted) {
    state.carrier = is_up;
    state.last = link;
    return;
  }

  const bool was_up = state.carrier;
  const uint32_t observed = was_up != is_up ? 1 : 0;
  uint32_t transitions = CountedTransitions(state.last, link, was_up, is_up).value_or(observed);
  uint32_t missed = 0;
  if (transitions > kMaxInferredEvents) {
    missed = transitions - observed;
    transitions = observed;
  }
  state.carrier = is_up;
  state.last = link;
  if (!state.selected) return;

  bool up = was_up;
  for (uint32_t i = 0; i < transitions; ++i) {
    up = !up;
    EventRecord& e = out.emplace_back();
    e.kind = up ? "link.carrier_up" : "link.carrier_down";
    e.time_unix_nano = time_unix_nano;
    e.labels = {{"interface", link.name}};
    e.attributes.emplace_back("ifindex", absl::StrCat(link.ifindex));
    e.attributes.emplace_back("operstate", OperstateName(link.operstate));
    e.attributes.emplace_back("flags", absl::StrFormat("0x%x", link.flags));
    e.attributes.emplace_back("admin_up", (link.flags & IFF_UP) ? "true" : "false");
    AddCounter(e, "carrier_changes", link.carrier_changes);
    AddCounter(e, "carrier_up_count", link.carrier_up_count);
    AddCounter(e, "carrier_down_count", link.carrier_down_count);
    // Every event but the one this message shows happened earlier, at a time the kernel did
    // not report; the time here is when the evidence arrived.
    if (i + observed < transitions) e.attributes.emplace_back("inferred", "true");
    if (missed > 0) e.attributes.emplace_back("missed_transitions", absl::StrCat(missed));
    if (in_dump_) e.attributes.emplace_back("resync", "true");
  }
}

void LinkStateTracker::OnDelLink(int ifindex) { links_.erase(ifindex); }

void LinkStateTracker::BeginDump() {
  in_dump_ = true;
  for (auto& [ifindex, state] : links_) state.seen_in_dump = false;
}

void LinkStateTracker::EndDump() {
  in_dump_ = false;
  absl::erase_if(links_, [](const auto& entry) { return !entry.second.seen_in_dump; });
}

}  // namespace railwatch
