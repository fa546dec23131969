#include "collectors/lldp_neighbors.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_error.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace {

using Json = nlohmann::json;

// source:line:column of byte `offset` of `text`.
std::string Position(absl::string_view source, absl::string_view text, size_t offset) {
  return absl::StrCat(source, ":", TextPosition(std::string_view(text.data(), text.size()), offset));
}

// The text of a leaf in either JSON shape: "x", {"value": "x"}, [{"value": "x"}], a number or a
// bool; "" for anything else.
std::string Scalar(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return std::to_string(j.get<long long>());
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_array()) return j.empty() ? "" : Scalar(j.front());
  if (j.is_object()) {
    auto v = j.find("value");
    if (v != j.end()) return Scalar(*v);
  }
  return "";
}

// Every text of a leaf that may be a list: "a", ["a", "b"], [{"value": "a"}, ...].
std::vector<std::string> Scalars(const Json& j) {
  std::vector<std::string> out;
  if (j.is_array()) {
    for (const Json& e : j) {
      std::string s = Scalar(e);
      if (!s.empty()) out.push_back(std::move(s));
    }
  } else if (std::string s = Scalar(j); !s.empty()) {
    out.push_back(std::move(s));
  }
  return out;
}

// The one object of a json0 level ([{...}]) or json level ({...}); null when neither.
const Json* Object(const Json& j) {
  if (j.is_object()) return &j;
  if (j.is_array() && !j.empty() && j.front().is_object()) return &j.front();
  return nullptr;
}

const Json* Member(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// An id: {"type": "mac", "value": "..."} (json), [{"type": ..., "value": ...}] (json0).
void ReadId(const Json* id, std::string& value, std::string& type) {
  if (id == nullptr) return;
  const Json* o = Object(*id);
  if (o == nullptr) {
    value = Scalar(*id);
    return;
  }
  if (const Json* t = Member(*o, "type")) type = Scalar(*t);
  if (const Json* v = Member(*o, "value")) value = Scalar(*v);
}

int Ttl(const Json* ttl) {
  int n = 0;
  if (ttl != nullptr && absl::SimpleAtoi(Scalar(*ttl), &n) && n > 0) return n;
  return 0;
}

// One neighbour's chassis: json0 [{"id": ..., "name": [...], ...}]; json {"<sysname>": {...}}
// or, without a system name, {"id": ..., ...}.
void ReadChassis(const Json& chassis, LldpNeighbor& n) {
  const Json* o = Object(chassis);
  if (o == nullptr) return;
  const Json* body = o;
  if (!o->contains("id") && !o->contains("name") && o->size() == 1 &&
      o->begin().value().is_object()) {
    n.system_name = o->begin().key();
    body = &o->begin().value();
  }
  ReadId(Member(*body, "id"), n.chassis_id, n.chassis_id_type);
  if (const Json* name = Member(*body, "name")) n.system_name = Scalar(*name);
  if (const Json* d = Member(*body, "descr")) n.system_description = Scalar(*d);
  if (const Json* m = Member(*body, "mgmt-ip")) n.management_addresses = Scalars(*m);
  if (n.ttl_seconds == 0) n.ttl_seconds = Ttl(Member(*body, "ttl"));
}

void ReadPort(const Json& port, LldpNeighbor& n) {
  const Json* o = Object(port);
  if (o == nullptr) return;
  ReadId(Member(*o, "id"), n.port_id, n.port_id_type);
  if (const Json* d = Member(*o, "descr")) n.port_description = Scalar(*d);
  if (int ttl = Ttl(Member(*o, "ttl")); ttl > 0) n.ttl_seconds = ttl;
}

LldpNeighbor ReadInterface(std::string name, const Json& body) {
  LldpNeighbor n;
  n.local_interface = std::move(name);
  if (const Json* v = Member(body, "via")) n.via = Scalar(*v);
  if (const Json* a = Member(body, "age")) n.age = Scalar(*a);
  if (const Json* c = Member(body, "chassis")) ReadChassis(*c, n);
  if (const Json* p = Member(body, "port")) ReadPort(*p, n);
  return n;
}

void ParseJson(absl::string_view text, size_t start, absl::string_view source,
               LldpParseResult& out) {
  Json doc;
  try {
    doc = Json::parse(text.substr(start));
  } catch (const Json::parse_error& e) {
    const JsonErrorAt error = DescribeJsonError(e);
    out.problems.push_back({Position(source, text, start + error.offset), error.message});
    return;
  }
  const Json* lldp = doc.is_object() ? Member(doc, "lldp") : nullptr;
  if (lldp == nullptr) {
    out.problems.push_back(
        {Position(source, text, start), "no \"lldp\" object: not lldpcli's JSON output"});
    return;
  }
  out.format = lldp->is_array() ? "json0" : "json";
  const Json* level = Object(*lldp);
  if (level == nullptr) return;  // lldpd with no neighbour prints {"lldp": {}} or []
  const Json* interfaces = Member(*level, "interface");
  if (interfaces == nullptr) return;
  auto add = [&](const Json& entry) {
    if (!entry.is_object()) return;
    if (const Json* name = Member(entry, "name")) {  // json0, and json of newer releases
      out.neighbors.push_back(ReadInterface(Scalar(*name), entry));
      return;
    }
    for (auto it = entry.begin(); it != entry.end(); ++it) {  // json: {"eth0": {...}}
      if (it.value().is_object()) out.neighbors.push_back(ReadInterface(it.key(), it.value()));
    }
  };
  if (interfaces->is_array()) {
    for (const Json& entry : *interfaces) add(entry);
  } else {
    add(*interfaces);
  }
  for (const LldpNeighbor& n : out.neighbors) {
    if (n.local_interface.empty()) {
      out.problems.push_back({std::string(source), "an interface without a name: skipped"});
    }
  }
  out.neighbors.erase(
      std::remove_if(out.neighbors.begin(), out.neighbors.end(),
                     [](const LldpNeighbor& n) { return n.local_interface.empty(); }),
      out.neighbors.end());
}

// The sections of a keyvalue key after the interface name (lldp.<ifname>.<section>...). An
// interface name may hold dots (eth0.100), so the name ends where a section begins.
constexpr std::array<std::string_view, 10> kSections = {
    ".via",  ".rid",       ".age",          ".chassis.", ".port.",
    ".vlan", ".lldp-med.", ".unknown-tlvs", ".ppvid",    ".pi"};

void ParseKeyValue(absl::string_view text, int first_line, absl::string_view source,
                   LldpParseResult& out) {
  out.format = "keyvalue";
  auto find = [&](const std::string& name) -> LldpNeighbor& {
    for (LldpNeighbor& n : out.neighbors) {
      if (n.local_interface == name) return n;
    }
    LldpNeighbor& n = out.neighbors.emplace_back();
    n.local_interface = name;
    return n;
  };
  std::string* last_value = nullptr;  // where an unprefixed line continues
  int line_no = first_line - 1;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    line = absl::StripSuffix(line, "\r");
    if (!absl::StartsWith(line, "lldp.")) {
      if (last_value != nullptr) absl::StrAppend(last_value, "\n", line);
      continue;
    }
    last_value = nullptr;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) {
      out.problems.push_back({absl::StrCat(source, ":", line_no, ":1"), "no '=' in the line"});
      continue;
    }
    absl::string_view key = line.substr(5, eq - 5);
    const absl::string_view value = line.substr(eq + 1);
    size_t cut = absl::string_view::npos;
    for (std::string_view s : kSections) {
      size_t at = 0;
      while ((at = key.find(absl::string_view(s.data(), s.size()), at)) !=
             absl::string_view::npos) {
        // A section ends the key or is followed by more of the path.
        const size_t end = at + s.size();
        if (s.back() == '.' || end == key.size() || key[end] == '.') break;
        ++at;
      }
      if (at != absl::string_view::npos && at > 0) cut = std::min(cut, at);
    }
    if (cut == absl::string_view::npos) {
      out.problems.push_back({absl::StrCat(source, ":", line_no, ":6"),
                              absl::StrCat("\"", key, "\": not lldp.<interface>.<field>")});
      continue;
    }
    LldpNeighbor& n = find(std::string(key.substr(0, cut)));
    const absl::string_view path = key.substr(cut + 1);
    std::string* target = nullptr;
    if (path == "via") {
      target = &n.via;
    } else if (path == "age") {
      target = &n.age;
    } else if (path == "chassis.name") {
      target = &n.system_name;
    } else if (path == "chassis.descr") {
      target = &n.system_description;
    } else if (path == "chassis.mgmt-ip") {
      target = &n.management_addresses.emplace_back();
    } else if (path == "port.descr") {
      target = &n.port_description;
    } else if (path == "chassis.ttl" || path == "port.ttl") {
      int ttl = 0;
      if (absl::SimpleAtoi(value, &ttl) && ttl > 0) n.ttl_seconds = ttl;
    } else if (absl::StartsWith(path, "chassis.")) {
      // chassis.mac=..., chassis.local=..., chassis.ip=...: the id and its type.
      const absl::string_view type = path.substr(8);
      if (type == "mac" || type == "local" || type == "ip" || type == "ifname" ||
          type == "ifalias") {
        n.chassis_id_type = std::string(type);
        target = &n.chassis_id;
      }
    } else if (absl::StartsWith(path, "port.")) {
      const absl::string_view type = path.substr(5);
      if (type == "ifname" || type == "local" || type == "mac" || type == "ip" ||
          type == "ifalias") {
        n.port_id_type = std::string(type);
        target = &n.port_id;
      }
    }
    if (target != nullptr) {
      *target = std::string(value);
      last_value = target;
    }
  }
}

}  // namespace

std::string LldpNeighbor::PortName() const {
  if (port_id_type == "mac" && !port_description.empty()) return port_description;
  return port_id.empty() ? port_description : port_id;
}

LldpParseResult ParseLldpNeighbors(std::string_view text_in, std::string_view source_in) {
  const absl::string_view text(text_in.data(), text_in.size());
  const absl::string_view source(source_in.data(), source_in.size());
  LldpParseResult out;
  // Skip what comes before the output: a shell prompt, the command line.
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == absl::string_view::npos) end = text.size();
    const absl::string_view line =
        absl::StripLeadingAsciiWhitespace(text.substr(start, end - start));
    if (absl::StartsWith(line, "{") || absl::StartsWith(line, "lldp.")) break;
    start = end + 1;
  }
  if (start >= text.size()) {
    if (!absl::StripAsciiWhitespace(text).empty()) {
      out.problems.push_back({absl::StrCat(source, ":1:1"),
                              "neither lldpcli's JSON (-f json0, -f json) nor -f keyvalue"});
    }
    return out;
  }
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(text.substr(start)), "{")) {
    ParseJson(text, start, source, out);
  } else {
    const int first_line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + start, '\n'));
    ParseKeyValue(text.substr(start), first_line, source, out);
  }
  return out;
}

}  // namespace railwatch
