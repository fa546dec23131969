#include "exporters/exposition_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace railwatch {

void AppendSampleValue(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "Nan";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Inf" : "+Inf";
    return;
  }
  char buf[32];
  std::to_chars_result r;
  // Counters are whole numbers: below 1e15 %.16g prints them as integers, and integer
  // formatting is several times cheaper than the general floating-point path.
  if (value == std::trunc(value) && std::fabs(value) < 1e15 &&
      !(value == 0 && std::signbit(value))) {
    r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value));
  } else {
    r = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general, 16);
  }
  out.append(buf, r.ptr);
}

namespace {

// Appends `text` with backslash and newline escaped, and `"` too when `quote`.
void AppendEscaped(std::string& out, std::string_view text, bool quote) {
  size_t clean = 0;  // start of the run not yet copied
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c != '\\' && c != '\n' && !(quote && c == '"')) continue;
    out.append(text.data() + clean, i - clean);
    out += '\\';
    out += c == '\n' ? 'n' : c;
    clean = i + 1;
  }
  out.append(text.data() + clean, text.size() - clean);
}

}  // namespace

void AppendEscapedLabelValue(std::string& out, std::string_view value) {
  AppendEscaped(out, value, /*quote=*/true);
}

void AppendSampleLine(std::string& out, std::string_view name, const Labels& labels,
                      double value) {
  out.append(name);
  if (!labels.empty()) {
    out += '{';
    bool first = true;
    for (const Label& l : labels) {
      if (!first) out += ',';
      first = false;
      out.append(l.name);
      out += "=\"";
      AppendEscapedLabelValue(out, l.value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  AppendSampleValue(out, value);
  out += '\n';
}

void AppendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type) {
  if (!help.empty()) {
    out += "# HELP ";
    out.append(name);
    out += ' ';
    AppendEscaped(out, help, /*quote=*/false);
    out += '\n';
  }
  out += "# TYPE ";
  out.append(name);
  out += ' ';
  out.append(type);
  out += '\n';
}

}  // namespace railwatch
