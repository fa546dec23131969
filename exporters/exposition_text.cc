#include "exporters/exposition_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace railwatch {

namespace {

// The longest %.16g: sign, 17 digits with the point, "e-308".
constexpr size_t kMaxValueChars = 32;

char* WriteSampleValue(char* out, double value) {
  if (std::isnan(value)) return std::copy_n("Nan", 3, out);
  if (std::isinf(value)) return std::copy_n(value < 0 ? "-Inf" : "+Inf", 4, out);
  // Counters are whole numbers: below 1e15 %.16g prints them as integers, and integer
  // formatting is several times cheaper than the general floating-point path.
  if (value == std::trunc(value) && std::fabs(value) < 1e15 &&
      !(value == 0 && std::signbit(value))) {
    return std::to_chars(out, out + kMaxValueChars, static_cast<int64_t>(value)).ptr;
  }
  return std::to_chars(out, out + kMaxValueChars, value, std::chars_format::general, 16).ptr;
}

// Writes `text` with backslash and newline escaped, and `"` too when `quote`; `out` has room
// for twice the text.
char* WriteEscaped(char* out, std::string_view text, bool quote) {
  for (const char c : text) {
    if (c == '\\' || c == '\n' || (quote && c == '"')) {
      *out++ = '\\';
      *out++ = c == '\n' ? 'n' : c;
    } else {
      *out++ = c;
    }
  }
  return out;
}

char* WriteText(char* out, std::string_view text) {
  return std::copy_n(text.data(), text.size(), out);
}

// Appends what `write` writes in at most `bound` bytes.
template <typename Write>
void AppendWritten(std::string& out, size_t bound, Write&& write) {
  const size_t size = out.size();
  out.resize(size + bound);
  out.resize(static_cast<size_t>(write(out.data() + size) - out.data()));
}

}  // namespace

void AppendSampleValue(std::string& out, double value) {
  AppendWritten(out, kMaxValueChars, [&](char* p) { return WriteSampleValue(p, value); });
}

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  AppendWritten(out, 2 * value.size(), [&](char* p) { return WriteEscaped(p, value, true); });
}

size_t SampleLineBound(std::string_view name, const Labels& labels) {
  size_t bound = name.size() + 3 + kMaxValueChars;  // {} and the space, the value, \n
  for (const Label& l : labels) bound += l.name.size() + 2 * l.value.size() + 4;  // ,="
  return bound;
}

char* WriteSampleLine(char* out, std::string_view name, const Labels& labels, double value) {
  out = WriteText(out, name);
  if (!labels.empty()) {
    char separator = '{';
    for (const Label& l : labels) {
      *out++ = separator;
      separator = ',';
      out = WriteText(out, l.name);
      *out++ = '=';
      *out++ = '"';
      out = WriteEscaped(out, l.value, /*quote=*/true);
      *out++ = '"';
    }
    *out++ = '}';
  }
  *out++ = ' ';
  out = WriteSampleValue(out, value);
  *out++ = '\n';
  return out;
}

void AppendSampleLine(std::string& out, std::string_view name, const Labels& labels, double value) {
  AppendWritten(out, SampleLineBound(name, labels),
                [&](char* p) { return WriteSampleLine(p, name, labels, value); });
}

void AppendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type) {
  if (!help.empty()) {
    out += "# HELP ";
    out.append(name);
    out += ' ';
    AppendWritten(out, 2 * help.size(), [&](char* p) { return WriteEscaped(p, help, false); });
    out += '\n';
  }
  out += "# TYPE ";
  out.append(name);
  out += ' ';
  out.append(type);
  out += '\n';
}

}  // namespace railwatch
