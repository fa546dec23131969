#include "tests/unit/logs/log_test_util.h"

#include <fstream>

#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch::logs::testing {

std::vector<const LogEvent*> Parsed::OfKind(std::string_view kind) const {
  std::vector<const LogEvent*> out;
  for (const LogEvent& e : events) {
    if (e.kind == kind) out.push_back(&e);
  }
  return out;
}

const LogEvent& Parsed::One(std::string_view kind) const {
  static const LogEvent kNone;
  std::vector<const LogEvent*> found = OfKind(kind);
  EXPECT_EQ(found.size(), 1u) << "events of kind " << kind;
  return found.size() == 1 ? *found[0] : kNone;
}

Parsed ParseFixture(const std::string& name, const Clock& clock) {
  std::string path = railwatch::testing::FixturePath("logs/" + name);
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  LogParser parser(name, clock);
  Parsed p;
  std::string line;
  while (std::getline(in, line)) parser.Feed(line, p.events);
  parser.Finish(p.events);
  p.stats = parser.stats();
  return p;
}

Parsed ParseLines(const std::vector<std::string>& lines, const Clock& clock) {
  LogParser parser("inline.log", clock);
  Parsed p;
  for (const std::string& line : lines) parser.Feed(line, p.events);
  parser.Finish(p.events);
  p.stats = parser.stats();
  return p;
}

std::string F(const LogEvent& e, std::string_view key) {
  const std::string* v = e.Get(key);
  return v ? *v : "<absent>";
}

}  // namespace railwatch::logs::testing
