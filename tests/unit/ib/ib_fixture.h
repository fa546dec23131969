#pragma once

// Reading the real InfiniBand captures in tests/fixtures/ib (copied byte for byte from
// ../shared/realworld; CATALOGUE.md sections I-O say what each holds).

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace railwatch::ib::ib_fixture {

inline std::string ReadIbFixture(const std::string& name) {
  std::ifstream in(std::string(RAILWATCH_SOURCE_DIR) + "/tests/fixtures/ib/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace railwatch::ib::ib_fixture
