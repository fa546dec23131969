#include "gnmi_test_util.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace railwatch::testing {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(RAILWATCH_FIXTURES_DIR) + "/gnmi/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

DecodedFixture DecodeFixture(const std::string& name, GnmiTextFormat format) {
  DecodedFixture out;
  absl::StatusOr<GnmiCapture> capture = ReadGnmiCapture(ReadFixture(name), name, format);
  EXPECT_TRUE(capture.ok()) << capture.status();
  if (!capture.ok()) return out;
  out.capture = *std::move(capture);
  GnmiDecoder decoder;
  for (const auto& n : out.capture.notifications) decoder.Decode(n, out.leaves);
  out.stats = decoder.stats();
  return out;
}

}  // namespace railwatch::testing
