#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <optional>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "gnmi/gnmi.pb.h"

namespace railwatch {

// One element of a leaf's path: a name and its list keys, sorted by key name.
struct GnmiPathElem {
  std::string name;
  std::vector<std::pair<std::string, std::string>> keys;
};

// A scalar as a target sent it. Strings stay strings ("527" inside a SONiC json_ietf blob,
// "UP" for oper-status); the path profile decides what they mean.
using GnmiScalar = std::variant<std::monostate, uint64_t, int64_t, double, bool, std::string>;

// One leaf of a notification: prefix + update path, extended by the members of a JSON blob
// ("COUNTERS/Ethernet68" + {"SAI_PORT_STAT_PFC_3_RX_PKTS": "7"} is the leaf
// /COUNTERS/Ethernet68/SAI_PORT_STAT_PFC_3_RX_PKTS). Module prefixes are stripped from names
// ("openconfig-interfaces:interfaces" is "interfaces"); `origin` and `target` come from the
// prefix or the path, whichever sets them.
struct GnmiLeaf {
  std::string_view origin;
  std::string_view target;
  std::vector<GnmiPathElem> elems;
  GnmiScalar value;           // monostate when deleted
  bool deleted = false;
  int64_t time_unix_nano = 0;  // the notification's timestamp
};

// Receives the leaves of a notification one by one. The leaf is only valid during the call:
// the decoder reuses its storage, so a steady stream decodes without allocating.
class GnmiLeafVisitor {
 public:
  virtual ~GnmiLeafVisitor() = default;
  virtual void OnLeaf(const GnmiLeaf& leaf) = 0;
};

struct GnmiDecodeStats {
  uint64_t notifications = 0;
  uint64_t leaves = 0;
  uint64_t deletes = 0;
  // A json_val/json_ietf_val that did not parse, a TypedValue with no value, an any_val or
  // proto_bytes (opaque to us). Counted and skipped; the rest of the notification goes on.
  uint64_t errors = 0;
};

// Decodes notifications into leaves. Not thread-safe (it keeps scratch storage); one per
// stream.
class GnmiDecoder {
 public:
  // Visits every leaf of `n`: each update (scalars, leaf-lists as one leaf per element, JSON
  // blobs flattened), then each delete (value monostate, deleted = true).
  //
  // JSON blobs (json_val, json_ietf_val, and Value{JSON|JSON_IETF}) are flattened by these
  // rules, which need no schema:
  //  - an object member appends an elem named by the member, module prefix stripped;
  //  - an object with one member named like the path's last elem is that elem's content
  //    (SONiC's translib answers .../config with {"openconfig-interfaces:config": {...}});
  //  - when the path's last elem has a `*` (SONiC COUNTERS/Ethernet*), top-level members whose
  //    names match it as a glob take its place instead of being appended;
  //  - an array of objects is a YANG list: each entry's scalar members named like list keys
  //    (kGnmiListKeyNames: name, index, id, interface-id, ...) become the keys of the list's
  //    elem; all scalar members are leaves as well (the key leaves too, as a target sends them);
  //  - an array of scalars is a leaf-list: one leaf per element on the same path;
  //  - null and {} hold no leaves.
  // A module prefix is stripped only when both sides of the ':' are YANG identifiers (letter
  // or '_' first), so SONiC's queue keys "Ethernet68:3" stay whole.
  void Decode(const ::gnmi::Notification& n, GnmiLeafVisitor& visitor);
  const GnmiDecodeStats& stats() const { return stats_; }

 private:
  struct Walker;
  size_t SetPath(const ::gnmi::Path& prefix, const ::gnmi::Path& path);
  void DecodeTyped(const ::gnmi::TypedValue& v, size_t depth, GnmiLeafVisitor& visitor);
  void DecodeJson(std::string_view blob, size_t depth, GnmiLeafVisitor& visitor);
  // Resizes scratch_.elems, parking removed elems in spare_elems_ so that their strings keep
  // their buffers for the next leaf.
  void ResizeElems(size_t n);
  void Emit(GnmiLeafVisitor& visitor);

  GnmiDecodeStats stats_;
  GnmiLeaf scratch_;
  std::vector<GnmiPathElem> spare_elems_;
  std::vector<std::pair<std::string, std::string>> spare_keys_;
};

// Names of list keys recognised in JSON list entries (see GnmiDecoder::Decode).
extern const std::vector<std::string_view> kGnmiListKeyNames;

// "openconfig-interfaces:interfaces" -> "interfaces"; "Ethernet68:3" stays as it is.
std::string_view StripGnmiModulePrefix(std::string_view name);

// "/interfaces/interface[name=Ethernet1]/state/counters/in-octets" (keys sorted, `]` and `\`
// in key values escaped as the gNMI path conventions say).
std::string GnmiPathString(const std::vector<GnmiPathElem>& elems);
std::string GnmiPathString(const ::gnmi::Path& path);

// Parses the string form above (with an optional "origin:" before the first "/") into a
// gnmi::Path. Errors name the column.
absl::StatusOr<::gnmi::Path> ParseGnmiPath(std::string_view text);

// A scalar as a number: unsigned, signed and floating values as they are, numeric strings
// parsed ("527", "-3", "1.5e3"), bools as 0/1. nullopt for anything else.
std::optional<double> GnmiScalarAsDouble(const GnmiScalar& v);
std::optional<uint64_t> GnmiScalarAsUint(const GnmiScalar& v);

}  // namespace railwatch
