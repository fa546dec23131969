#pragma once

// What the fuzz targets share.

#include "common/logging.h"

namespace railwatch::fuzz {

// A property that does not hold is a crash, which libFuzzer reports with the input.
inline void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Logging off for the life of the process: the targets feed bad input on purpose, and the
// warnings it earns would cost more time than the code under test.
inline void SilenceLogs() {
  static const bool done = [] {
    spdlog::set_level(spdlog::level::off);
    return true;
  }();
  (void)done;
}

}  // namespace railwatch::fuzz
