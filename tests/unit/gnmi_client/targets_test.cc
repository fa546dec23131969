// The targets file: defaults, per-target overrides, secrets from files, and every problem
// reported with file:line:column.
#include <filesystem>
#include <fstream>

#include "gnmi/targets.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace targets_test {

class TargetsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("railwatch_targets_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(TargetsFileTest, DefaultsApplyAndTargetsOverrideThem) {
  Write("pw", "hunter2\n");
  Write("ca.pem", "CA PEM");
  const std::string path = Write("targets.yaml", R"(defaults:
  profile: openconfig
  sample_interval: 500ms
  username: admin
  password_file: pw
  tls:
    ca: ca.pem
    server_name: leaf-1.example
targets:
  - name: leaf-r0
    address: 127.0.0.1:50051
    profile: sonic
  - name: leaf-r1
    address: 127.0.0.1:50052
    sample_interval: 2s
)");
  auto targets = LoadGnmiTargetsFile(path);
  ASSERT_TRUE(targets.ok()) << targets.status();
  ASSERT_EQ(targets->size(), 2u);
  const GnmiTargetConfig& a = (*targets)[0];
  EXPECT_EQ(a.name, "leaf-r0");
  EXPECT_EQ(a.address, "127.0.0.1:50051");
  EXPECT_EQ(a.profile, "sonic");
  EXPECT_EQ(a.sample_interval, absl::Milliseconds(500));
  EXPECT_EQ(a.username, "admin");
  EXPECT_EQ(a.password, "hunter2");  // the file's newline is not part of it
  ASSERT_TRUE(a.tls.has_value());
  EXPECT_EQ(a.tls->ca_pem, "CA PEM");
  EXPECT_EQ(a.tls->server_name, "leaf-1.example");
  EXPECT_EQ(a.origin, path + ":10");
  const GnmiTargetConfig& b = (*targets)[1];
  EXPECT_EQ(b.profile, "openconfig");
  EXPECT_EQ(b.sample_interval, absl::Seconds(2));
}

TEST_F(TargetsFileTest, EveryProblemIsReportedWithItsLine) {
  const std::string path = Write("bad.yaml", R"(defaults:
  sample_interval: soon
targets:
  - name: leaf-r0
    address: 127.0.0.1
  - name: leaf-r0
    address: 127.0.0.1:1
    colour: blue
  - address: 127.0.0.1:2
    password_file: /nonexistent/railwatch-pw
)");
  auto targets = LoadGnmiTargetsFile(path);
  ASSERT_FALSE(targets.ok());
  const std::string m(targets.status().message());
  EXPECT_NE(m.find(path + ":2:20: error[bad-value]: sample_interval `soon`"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":5:14: error[bad-value]: address `127.0.0.1` has no port"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":6:11: error[duplicate]: duplicate target name `leaf-r0`"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":8:5: error[unknown-key]: unknown key `colour` in a target"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":9:5: error[missing-key]: target without `name`"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":10:20: error[unreadable]:"), std::string::npos) << m;  // unreadable password file
  // The secret's value never appears; the file name does.
  EXPECT_NE(m.find("/nonexistent/railwatch-pw"), std::string::npos) << m;
}

TEST_F(TargetsFileTest, SyntaxErrorsAndEmptyListsAreErrors) {
  auto broken = LoadGnmiTargetsString("targets: [\n  {name: a", "broken.yaml");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(std::string(broken.status().message()).find("broken.yaml:"), std::string::npos);
  EXPECT_NE(std::string(broken.status().message()).find("error[yaml-syntax]"), std::string::npos);
  // A misspelt key names the one it was meant to be.
  auto typo = LoadGnmiTargetsString("targets:\n  - name: a\n    address: h:1\n    profle: x\n",
                                    "typo.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(std::string(typo.status().message())
                .find("typo.yaml:4:5: error[unknown-key]: unknown key `profle` in a target "
                      "(did you mean `profile`?)"),
            std::string::npos)
      << typo.status();
  auto empty = LoadGnmiTargetsString("targets: []\n", "empty.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(std::string(empty.status().message()).find("non-empty"), std::string::npos);
  auto missing = LoadGnmiTargetsFile((dir_ / "absent.yaml").string());
  EXPECT_FALSE(missing.ok());
}

TEST_F(TargetsFileTest, MutualTlsNeedsCertAndKeyTogether) {
  Write("agent.pem", "CERT");
  auto t = LoadGnmiTargetsFile(Write("t.yaml", R"(targets:
  - name: a
    address: h:1
    tls: {cert: agent.pem}
)"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(std::string(t.status().message()).find("t.yaml:4:10: error[bad-value]: `cert` and `key` go together"),
            std::string::npos)
      << t.status();
}

}  // namespace
}  // namespace railwatch
