#pragma once

// Reading the real InfiniBand captures in tests/fixtures/ib (copied byte for byte from
// ../shared/realworld; CATALOGUE.md sections I-O say what each holds).

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ib/ib_records.h"

namespace railwatch::ib::ib_fixture {

inline std::string ReadIbFixture(const std::string& name) {
  std::ifstream in(std::string(RAILWATCH_SOURCE_DIR) + "/tests/fixtures/ib/" + name,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Counter `name` of `port`; fails the test when it was not printed.
inline const IbCounter& CounterOf(const IbPortCounters& port, const std::string& name) {
  static const IbCounter kNone;
  auto it = port.counters.find(name);
  if (it == port.counters.end()) {
    ADD_FAILURE() << name << " not printed";
    return kNone;
  }
  return it->second;
}

// The text with every line ending in CR LF, as a Windows editor or a PuTTY log leaves it.
inline std::string Crlf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out.push_back('\r');
    out.push_back(c);
  }
  return out;
}

// The 1-based line of byte `offset` of `text`.
inline int LineOf(const std::string& text, size_t offset) {
  int line = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) line += text[i] == '\n';
  return line;
}

// All problems, one per line, for a failure message.
inline std::string ProblemsText(const std::vector<IbProblem>& problems) {
  std::string all;
  for (const IbProblem& p : problems) all += p.ToString() + "\n";
  return all;
}

// Where each problem is (source:line:column), in order.
inline std::vector<std::string> ProblemPlaces(const std::vector<IbProblem>& problems) {
  std::vector<std::string> places;
  for (const IbProblem& p : problems) places.push_back(p.where);
  return places;
}

}  // namespace railwatch::ib::ib_fixture
