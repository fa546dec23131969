#include "common/labels.h"

#include <algorithm>
#include <cstdint>

namespace railwatch {

void NormalizeLabels(Labels& labels) {
  std::stable_sort(labels.begin(), labels.end(),
                   [](const Label& a, const Label& b) { return a.name < b.name; });
  labels.erase(std::unique(labels.begin(), labels.end(),
                           [](const Label& a, const Label& b) { return a.name == b.name; }),
               labels.end());
}

const std::string* FindLabel(const Labels& labels, std::string_view name) {
  for (const Label& l : labels) {
    if (l.name == name) return &l.value;
  }
  return nullptr;
}

namespace {
void AppendEscaped(std::string& out, std::string_view value) {
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}
}  // namespace

std::string FormatLabels(const Labels& labels) {
  std::string out;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].name;
    out += "=\"";
    AppendEscaped(out, labels[i].value);
    out += '"';
  }
  return out;
}

std::string FormatSeries(std::string_view name, const Labels& labels) {
  std::string out(name);
  if (!labels.empty()) {
    out += '{';
    out += FormatLabels(labels);
    out += '}';
  }
  return out;
}

uint64_t SeriesFingerprint(std::string_view name, const Labels& labels) {
  uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;  // separator that cannot occur in names
    h *= 1099511628211ull;
  };
  mix(name);
  for (const Label& l : labels) {
    mix(l.name);
    mix(l.value);
  }
  return h;
}

}  // namespace railwatch
