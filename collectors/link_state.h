#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "collectors/collector.h"

namespace railwatch {

// What one RTM_NEWLINK message (a notification or a dump entry) says about a link.
struct LinkSnapshot {
  int ifindex = 0;
  std::string name;
  uint32_t flags = 0;                          // IFF_*; IFF_LOWER_UP is the carrier
  uint8_t operstate = 0;                       // IF_OPER_* (RFC 2863)
  std::optional<uint32_t> carrier_changes;     // IFLA_CARRIER_CHANGES
  std::optional<uint32_t> carrier_up_count;    // IFLA_CARRIER_UP_COUNT (Linux 4.16+)
  std::optional<uint32_t> carrier_down_count;  // IFLA_CARRIER_DOWN_COUNT
};

// Turns a stream of link messages into carrier events: "link.carrier_down" and
// "link.carrier_up" with label interface and attributes ifindex, operstate, flags,
// admin_up and the kernel's carrier counters. No sockets or threads here, so every case can be
// tested with made-up messages.
//
// The first message about a link only records its state. After that, a change of
// IFF_LOWER_UP is one event. Changes the messages did not show (the kernel's linkwatch merged
// a fast down+up into one notification, or the socket overran and messages were lost) are
// recovered from the carrier counters: when the up/down counts (or carrier_changes) advanced
// by a number that agrees with the old and new states, that many alternating events are
// emitted, the ones not seen directly marked inferred="true". When the counters do not agree
// (an admin down on a driver that keeps its carrier), the observed change alone is reported.
class LinkStateTracker {
 public:
  // `selected` decides once per link (and again on rename) whether it produces events.
  explicit LinkStateTracker(std::function<bool(const std::string&)> selected);

  // Appends the events `link` implies to `out`, timestamped `time_unix_nano`.
  void OnNewLink(const LinkSnapshot& link, int64_t time_unix_nano, std::vector<EventRecord>& out);
  void OnDelLink(int ifindex);

  // A full dump replaces what is known: links that the dump between BeginDump() and EndDump()
  // did not mention are forgotten. Messages in between go through OnNewLink as usual.
  void BeginDump();
  void EndDump();
  // The dump failed: keep everything known.
  void AbortDump() { in_dump_ = false; }

  size_t links() const { return links_.size(); }

  // At most this many events come from one message; a larger jump in the counters (a long
  // overrun) yields the observed change only, with attribute missed_transitions.
  static constexpr uint32_t kMaxInferredEvents = 64;

 private:
  struct State {
    std::string name;
    bool selected = false;
    bool carrier = false;
    bool seen_in_dump = false;
    LinkSnapshot last;
  };

  std::function<bool(const std::string&)> selected_;
  absl::flat_hash_map<int, State> links_;
  bool in_dump_ = false;
};

// "up", "down", "lowerlayerdown" ... for an IF_OPER_* value.
const char* OperstateName(uint8_t operstate);

}  // namespace railwatch
