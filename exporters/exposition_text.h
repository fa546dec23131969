#pragma once

#include <string>
#include <string_view>

#include "common/labels.h"

namespace railwatch {

// Pieces of the Prometheus text format (version 0.0.4), appended to a caller's buffer so that
// a scrape reuses one allocation. Output is byte-identical to prometheus-cpp 1.0's
// TextSerializer for the same family (tests/unit/exposition_text_test.cc holds them together).

// A sample value: %.16g in the C locale, "Nan", "+Inf", "-Inf".
void AppendSampleValue(std::string& out, double value);

// A label value with \, " and newline escaped.
void AppendEscapedLabelValue(std::string& out, std::string_view value);

// name{a="1",b="2"} value\n (just `name value` without labels).
void AppendSampleLine(std::string& out, std::string_view name, const Labels& labels, double value);

// The same line written at `out`, which has room for SampleLineBound(name, labels) bytes;
// returns the end of what was written. For a buffer that grows without zero-filling.
size_t SampleLineBound(std::string_view name, const Labels& labels);
char* WriteSampleLine(char* out, std::string_view name, const Labels& labels, double value);

// "# HELP name help\n# TYPE name type\n"; no HELP line when help is empty. Help text has \ and
// newline escaped as the format asks (prometheus-cpp writes it raw, which breaks the
// exposition when a help text holds a newline).
void AppendFamilyHeader(std::string& out, std::string_view name, std::string_view help,
                        std::string_view type);

}  // namespace railwatch
