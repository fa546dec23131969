// Notifications -> leaves. The scalar path (one update, one typed value) reuses the scratch leaf
// and its strings: at steady state it allocates nothing. JSON blobs go through nlohmann's DOM,
// which allocates; they carry many leaves each, so the cost is shared.

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "common/logging.h"
#include "gnmi/decode.h"
#include "nlohmann/json.hpp"

// Reading the deprecated fields (Path.element, Update.value, float_val, decimal_val) is the point:
// old targets still send them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace railwatch {

const std::vector<std::string_view> kGnmiListKeyNames = {
    "name",        "index",           "id",           "interface-id", "identifier",
    "ip",          "address",         "prefix",       "neighbor-address",
    "peer-address", "afi-safi-name",  "vlan-id",      "sequence-id",  "queue",
    "priority",    "instance",        "mac-address",  "port-id",      "chassis-id",
    "type",        "subinterface",    "severity",     "lane-number"};

namespace {

bool IsYangIdentifier(std::string_view s) {
  if (s.empty()) return false;
  char c = s[0];
  if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) return false;
  for (char ch : s) {
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.')) {
      return false;
    }
  }
  return true;
}

bool IsListKeyName(std::string_view name) {
  return std::find(kGnmiListKeyNames.begin(), kGnmiListKeyNames.end(), name) !=
         kGnmiListKeyNames.end();
}

// `*` matches any run of characters (SONiC's "Ethernet*"); everything else literally.
bool GlobMatch(std::string_view pattern, std::string_view s) {
  size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = i;
    } else if (p < pattern.size() && pattern[p] == s[i]) {
      ++p;
      ++i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// Resizes `v`; removed items wait in `spare` with their string buffers and come back first, so
// that a leaf shallower (or with fewer keys) than the last one costs no allocation.
template <typename T>
void ResizeKeepingBuffers(std::vector<T>& v, size_t n, std::vector<T>& spare) {
  while (v.size() > n) {
    spare.push_back(std::move(v.back()));
    v.pop_back();
  }
  while (v.size() < n) {
    if (spare.empty()) {
      v.emplace_back();
    } else {
      v.push_back(std::move(spare.back()));
      spare.pop_back();
    }
  }
}

void SetKeys(GnmiPathElem& out, const ::gnmi::PathElem& in,
             std::vector<std::pair<std::string, std::string>>& spare) {
  ResizeKeepingBuffers(out.keys, in.key_size(), spare);
  // Assigned in sorted order rather than sorted after: each slot then keeps the same key from
  // one update to the next, and its strings their buffers (a protobuf map's order varies).
  using Entry = google::protobuf::Map<std::string, std::string>::value_type;
  constexpr size_t kInline = 8;
  if (in.key_size() <= static_cast<int>(kInline)) {
    std::array<const Entry*, kInline> sorted;
    size_t n = 0;
    for (const Entry& e : in.key()) sorted[n++] = &e;
    std::sort(sorted.begin(), sorted.begin() + n,
              [](const Entry* a, const Entry* b) { return a->first < b->first; });
    for (size_t i = 0; i < n; ++i) {
      out.keys[i].first.assign(sorted[i]->first);
      out.keys[i].second.assign(sorted[i]->second);
    }
    return;
  }
  size_t i = 0;
  for (const auto& [k, v] : in.key()) {
    out.keys[i].first.assign(k);
    out.keys[i].second.assign(v);
    ++i;
  }
  std::sort(out.keys.begin(), out.keys.end());
}

std::string JsonKeyText(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

}  // namespace

std::string_view StripGnmiModulePrefix(std::string_view name) {
  size_t colon = name.find(':');
  if (colon == std::string_view::npos) return name;
  std::string_view module = name.substr(0, colon);
  std::string_view rest = name.substr(colon + 1);
  if (IsYangIdentifier(module) && IsYangIdentifier(rest)) return rest;
  return name;
}

void GnmiDecoder::ResizeElems(size_t n) {
  ResizeKeepingBuffers(scratch_.elems, n, spare_elems_);
}

void GnmiDecoder::Emit(GnmiLeafVisitor& visitor) {
  if (scratch_.deleted) {
    ++stats_.deletes;
  } else {
    ++stats_.leaves;
  }
  visitor.OnLeaf(scratch_);
}

size_t GnmiDecoder::SetPath(const ::gnmi::Path& prefix, const ::gnmi::Path& path) {
  scratch_.origin = path.origin().empty() ? std::string_view(prefix.origin())
                                          : std::string_view(path.origin());
  scratch_.target = path.target().empty() ? std::string_view(prefix.target())
                                          : std::string_view(path.target());
  size_t depth = 0;
  for (const ::gnmi::Path* p : {&prefix, &path}) {
    if (p->elem_size() > 0) {
      ResizeElems(depth + p->elem_size());
      for (const ::gnmi::PathElem& e : p->elem()) {
        GnmiPathElem& out = scratch_.elems[depth++];
        out.name.assign(StripGnmiModulePrefix(e.name()));
        SetKeys(out, e, spare_keys_);
      }
    } else {
      // The deprecated string form: each element may carry keys ("interface[name=Ethernet1]").
      for (const std::string& element : p->element()) {
        absl::StatusOr<::gnmi::Path> parsed = ParseGnmiPath(element);
        if (!parsed.ok()) {
          ResizeElems(depth + 1);
          scratch_.elems[depth].name.assign(element);
          scratch_.elems[depth++].keys.clear();
          continue;
        }
        ResizeElems(depth + parsed->elem_size());
        for (const ::gnmi::PathElem& e : parsed->elem()) {
          GnmiPathElem& out = scratch_.elems[depth++];
          out.name.assign(StripGnmiModulePrefix(e.name()));
          SetKeys(out, e, spare_keys_);
        }
      }
    }
  }
  ResizeElems(depth);
  return depth;
}

void GnmiDecoder::Decode(const ::gnmi::Notification& n, GnmiLeafVisitor& visitor) {
  ++stats_.notifications;
  scratch_.time_unix_nano = n.timestamp();
  scratch_.deleted = false;
  for (const ::gnmi::Update& u : n.update()) {
    size_t depth = SetPath(n.prefix(), u.path());
    if (u.has_val()) {
      DecodeTyped(u.val(), depth, visitor);
      continue;
    }
    if (!u.has_value()) {
      ++stats_.errors;  // an update without a value says nothing
      continue;
    }
    const ::gnmi::Value& value = u.value();
    switch (value.type()) {
      case ::gnmi::JSON:
      case ::gnmi::JSON_IETF:
        DecodeJson(value.value(), depth, visitor);
        break;
      case ::gnmi::BYTES:
      case ::gnmi::ASCII:
        if (auto* s = std::get_if<std::string>(&scratch_.value)) {
          s->assign(value.value());
        } else {
          scratch_.value = value.value();
        }
        Emit(visitor);
        break;
      default:
        ++stats_.errors;  // PROTO: opaque without the target's schema
        break;
    }
  }
  scratch_.deleted = true;
  for (const ::gnmi::Path& d : n.delete_()) {
    SetPath(n.prefix(), d);
    scratch_.value = std::monostate();
    Emit(visitor);
  }
  scratch_.deleted = false;
}

void GnmiDecoder::DecodeTyped(const ::gnmi::TypedValue& v, size_t depth,
                              GnmiLeafVisitor& visitor) {
  auto set_string = [this](const std::string& s) {
    if (auto* held = std::get_if<std::string>(&scratch_.value)) {
      held->assign(s);  // keeps the held buffer
    } else {
      scratch_.value = s;
    }
  };
  switch (v.value_case()) {
    case ::gnmi::TypedValue::kStringVal:
      set_string(v.string_val());
      break;
    case ::gnmi::TypedValue::kAsciiVal:
      set_string(v.ascii_val());
      break;
    case ::gnmi::TypedValue::kBytesVal:
      set_string(v.bytes_val());
      break;
    case ::gnmi::TypedValue::kIntVal:
      scratch_.value = static_cast<int64_t>(v.int_val());
      break;
    case ::gnmi::TypedValue::kUintVal:
      scratch_.value = static_cast<uint64_t>(v.uint_val());
      break;
    case ::gnmi::TypedValue::kBoolVal:
      scratch_.value = v.bool_val();
      break;
    case ::gnmi::TypedValue::kDoubleVal:
      scratch_.value = v.double_val();
      break;
    case ::gnmi::TypedValue::kFloatVal:
      scratch_.value = static_cast<double>(v.float_val());
      break;
    case ::gnmi::TypedValue::kDecimalVal:
      scratch_.value = static_cast<double>(v.decimal_val().digits()) /
                       std::pow(10.0, static_cast<double>(v.decimal_val().precision()));
      break;
    case ::gnmi::TypedValue::kLeaflistVal:
      // One leaf per element, all on the update's path, in the target's order.
      for (const ::gnmi::TypedValue& element : v.leaflist_val().element()) {
        ResizeElems(depth);
        DecodeTyped(element, depth, visitor);
      }
      return;
    case ::gnmi::TypedValue::kJsonVal:
      DecodeJson(v.json_val(), depth, visitor);
      return;
    case ::gnmi::TypedValue::kJsonIetfVal:
      DecodeJson(v.json_ietf_val(), depth, visitor);
      return;
    default:  // any_val, proto_bytes, or nothing set
      ++stats_.errors;
      return;
  }
  Emit(visitor);
}

// Walks a parsed blob, extending scratch_.elems as it goes down.
struct GnmiDecoder::Walker {
  GnmiDecoder& d;
  GnmiLeafVisitor& visitor;

  GnmiPathElem& ElemAt(size_t i, std::string_view name) {
    d.ResizeElems(i + 1);
    GnmiPathElem& e = d.scratch_.elems[i];
    e.name.assign(StripGnmiModulePrefix(name));
    e.keys.clear();
    return e;
  }

  void Scalar(const nlohmann::json& j, size_t depth) {
    d.ResizeElems(depth);
    GnmiScalar& value = d.scratch_.value;
    if (j.is_string()) {
      value = j.get_ref<const std::string&>();
    } else if (j.is_boolean()) {
      value = j.get<bool>();
    } else if (j.is_number_unsigned()) {
      value = j.get<uint64_t>();
    } else if (j.is_number_integer()) {
      value = j.get<int64_t>();
    } else if (j.is_number_float()) {
      value = j.get<double>();
    } else {
      return;  // null: an empty leaf (YANG "empty" is [null]); nothing to report
    }
    d.Emit(visitor);
  }

  // `j` is the content of the elem at depth-1 (or of the path when depth is the path's).
  void Walk(const nlohmann::json& j, size_t depth) {
    if (j.is_object()) {
      for (const auto& [name, member] : j.items()) Member(name, member, depth);
    } else if (j.is_array()) {
      // A bare array is a list or leaf-list whose elem is the path's last one.
      for (const nlohmann::json& entry : j) {
        if (entry.is_object() && depth > 0) {
          ListEntry(entry, depth - 1);
        } else {
          Walk(entry, depth);
        }
      }
    } else {
      Scalar(j, depth);
    }
  }

  void Member(const std::string& name, const nlohmann::json& member, size_t depth) {
    if (member.is_array()) {
      for (const nlohmann::json& entry : member) {
        ElemAt(depth, name);
        if (entry.is_object()) {
          ListEntry(entry, depth);
        } else {
          Walk(entry, depth + 1);
        }
      }
      return;
    }
    ElemAt(depth, name);
    Walk(member, depth + 1);
  }

  // Sets the keys of the list elem at `depth` from the entry's key leaves, then walks it.
  void ListEntry(const nlohmann::json& entry, size_t depth) {
    std::vector<std::pair<std::string, std::string>> keys;
    for (const auto& [name, member] : entry.items()) {
      if (member.is_primitive() && !member.is_null() &&
          IsListKeyName(StripGnmiModulePrefix(name))) {
        keys.emplace_back(std::string(StripGnmiModulePrefix(name)), JsonKeyText(member));
      }
    }
    std::sort(keys.begin(), keys.end());
    for (const auto& [name, member] : entry.items()) {
      d.ResizeElems(depth + 1);
      d.scratch_.elems[depth].keys = keys;  // deeper members may have reset it
      Member(name, member, depth + 1);
    }
  }
};

void GnmiDecoder::DecodeJson(std::string_view blob, size_t depth, GnmiLeafVisitor& visitor) {
  nlohmann::json j = nlohmann::json::parse(blob.begin(), blob.end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    ++stats_.errors;
    SPDLOG_DEBUG("gNMI: a JSON value of {} bytes does not parse; skipped", blob.size());
    return;
  }
  Walker walker{*this, visitor};
  // {"openconfig-interfaces:config": {...}} for the path .../config is that elem's content.
  if (depth > 0 && j.is_object() && j.size() == 1 &&
      StripGnmiModulePrefix(j.begin().key()) == scratch_.elems[depth - 1].name) {
    nlohmann::json inner = std::move(j.begin().value());
    j = std::move(inner);
  }
  if (depth > 0 && j.is_object() &&
      scratch_.elems[depth - 1].name.find('*') != std::string::npos) {
    // COUNTERS/Ethernet* answers {"Ethernet0": {...}, ...}: each port fills the wildcard.
    const std::string pattern = scratch_.elems[depth - 1].name;
    const auto pattern_keys = scratch_.elems[depth - 1].keys;
    for (const auto& [name, member] : j.items()) {
      ResizeElems(depth);
      if (GlobMatch(pattern, name)) {
        scratch_.elems[depth - 1].name.assign(name);
        scratch_.elems[depth - 1].keys = pattern_keys;
        walker.Walk(member, depth);
      } else {
        scratch_.elems[depth - 1].name.assign(pattern);
        scratch_.elems[depth - 1].keys = pattern_keys;
        walker.Member(name, member, depth);
      }
    }
    return;
  }
  walker.Walk(j, depth);
}

}  // namespace railwatch

#pragma GCC diagnostic pop
