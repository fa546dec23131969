// Path strings in the gNMI path conventions (openconfig/reference rpc/gnmi/gnmi-path-strings):
// "/a/b[k=v]/c", an optional "origin:" before the first "/", `]` and `\` escaped with `\` in key
// values. Names escape `/`, `[`, `]` and `\` so that any elem survives a round trip.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/labels.h"

// Reading the deprecated fields (Path.element, Update.value, float_val, decimal_val) is the point:
// old targets still send them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "gnmi/decode.h"

namespace railwatch {
namespace {

void AppendEscaped(std::string& out, std::string_view s, std::string_view specials) {
  for (char c : s) {
    if (c == '\\' || specials.find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
}

void AppendElem(std::string& out, std::string_view name,
                const std::vector<std::pair<std::string, std::string>>& sorted_keys) {
  out.push_back('/');
  AppendEscaped(out, name, "/[]");
  for (const auto& [k, v] : sorted_keys) {
    out.push_back('[');
    AppendEscaped(out, k, "=]");
    out.push_back('=');
    AppendEscaped(out, v, "]");
    out.push_back(']');
  }
}

absl::Status ErrorAt(size_t column, std::string_view what, std::string_view text) {
  return absl::InvalidArgumentError(
      absl::StrCat("gNMI path \"", AsAbsl(text), "\", column ", column, ": ", AsAbsl(what)));
}

}  // namespace

std::string GnmiPathString(const std::vector<GnmiPathElem>& elems) {
  if (elems.empty()) return "/";
  std::string out;
  for (const GnmiPathElem& e : elems) AppendElem(out, e.name, e.keys);
  return out;
}

std::string GnmiPathString(const ::gnmi::Path& path) {
  std::string out;
  if (!path.origin().empty()) absl::StrAppend(&out, path.origin(), ":");
  std::vector<std::pair<std::string, std::string>> keys;
  for (const ::gnmi::PathElem& e : path.elem()) {
    keys.assign(e.key().begin(), e.key().end());
    std::sort(keys.begin(), keys.end());
    AppendElem(out, e.name(), keys);
  }
  // The deprecated string form: each element is already a path segment as the target wrote it.
  if (path.elem_size() == 0) {
    for (const std::string& s : path.element()) absl::StrAppend(&out, "/", s);
  }
  if (path.elem_size() == 0 && path.element_size() == 0) out.push_back('/');
  return out;
}

absl::StatusOr<::gnmi::Path> ParseGnmiPath(std::string_view text) {
  ::gnmi::Path path;
  size_t pos = 0;
  // "origin:/..." : the origin is what stands before ":/" when no "/" or "[" comes earlier.
  // "openconfig-interfaces:interfaces/..." (a module prefix, no leading "/") has no origin.
  size_t colon_slash = text.find(":/");
  if (colon_slash != std::string_view::npos &&
      text.substr(0, colon_slash).find_first_of("/[") == std::string_view::npos) {
    path.set_origin(std::string(text.substr(0, colon_slash)));
    pos = colon_slash + 1;
  }
  const size_t n = text.size();
  while (pos < n) {
    if (text[pos] == '/') {
      ++pos;
      if (pos == n) break;  // a trailing "/" ends the path
      if (text[pos] == '/') return ErrorAt(pos + 1, "empty element name", text);
    }
    ::gnmi::PathElem* elem = path.add_elem();
    std::string name;
    while (pos < n && text[pos] != '/' && text[pos] != '[') {
      if (text[pos] == ']') return ErrorAt(pos + 1, "']' without '['", text);
      if (text[pos] == '\\') {
        if (pos + 1 == n) return ErrorAt(pos + 1, "'\\' at the end", text);
        ++pos;
      }
      name.push_back(text[pos++]);
    }
    if (name.empty()) return ErrorAt(pos + 1, "element without a name", text);
    elem->set_name(std::move(name));
    while (pos < n && text[pos] == '[') {
      const size_t open = pos++;
      std::string key;
      while (pos < n && text[pos] != '=' && text[pos] != ']') {
        if (text[pos] == '\\' && pos + 1 < n) ++pos;
        key.push_back(text[pos++]);
      }
      if (pos == n || text[pos] != '=') {
        return ErrorAt(pos + 1, absl::StrCat("key at column ", open + 1, " has no '='"), text);
      }
      if (key.empty()) return ErrorAt(pos + 1, "empty key name", text);
      ++pos;  // '='
      std::string value;
      bool closed = false;
      while (pos < n) {
        char c = text[pos];
        if (c == '\\' && pos + 1 < n) {
          value.push_back(text[pos + 1]);
          pos += 2;
          continue;
        }
        ++pos;
        if (c == ']') {
          closed = true;
          break;
        }
        value.push_back(c);
      }
      if (!closed) {
        return ErrorAt(open + 1, "'[' is never closed", text);
      }
      (*elem->mutable_key())[key] = std::move(value);
    }
    if (pos < n && text[pos] != '/') return ErrorAt(pos + 1, "expected '/' or '['", text);
  }
  return path;
}

std::optional<double> GnmiScalarAsDouble(const GnmiScalar& v) {
  if (const auto* u = std::get_if<uint64_t>(&v)) return static_cast<double>(*u);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  if (const auto* s = std::get_if<std::string>(&v)) {
    if (s->empty()) return std::nullopt;
    const char* begin = s->data();
    const char* end = begin + s->size();
    if (*begin == '+') ++begin;  // from_chars refuses a leading '+'
    double d = 0;
    auto [ptr, ec] = std::from_chars(begin, end, d);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    return d;
  }
  return std::nullopt;
}

std::optional<uint64_t> GnmiScalarAsUint(const GnmiScalar& v) {
  if (const auto* u = std::get_if<uint64_t>(&v)) return *u;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    if (*i < 0) return std::nullopt;
    return static_cast<uint64_t>(*i);
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (const auto* s = std::get_if<std::string>(&v)) {
    // Exact for counters above 2^53, which a detour through double would round.
    uint64_t u = 0;
    auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), u);
    if (ec == std::errc() && ptr == s->data() + s->size() && !s->empty()) return u;
  }
  std::optional<double> d = GnmiScalarAsDouble(v);
  if (!d || !std::isfinite(*d) || *d < 0 || *d >= 18446744073709551616.0 ||
      std::floor(*d) != *d) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(*d);
}

}  // namespace railwatch

#pragma GCC diagnostic pop
