#pragma once

// Which LogEvent fields are numbers, so that JSON writers can print `"status": 12` rather than
// `"status": "12"`. Every other field is text, even when it looks numeric: a PCI busId such as
// "8000" is hex, a version "2.22" is not a number to add.

#include <string_view>

namespace railwatch::logs {

// True for keys whose values are decimal numbers when present (pid, rank, status, vendor_err,
// seq_num, timeout_ms, busbw ...). Group fields of RAS reports ("group.0.comms") count by
// their last component.
bool IsNumericField(std::string_view key);

}  // namespace railwatch::logs
