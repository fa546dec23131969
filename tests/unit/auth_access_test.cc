// The Query API's access file (daemon/auth_access.h): tokens by SHA-256 with roles,
// certificate identities, and every problem reported as file:line:column.
#include "daemon/auth_access.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace auth_access_test {

using ::testing::HasSubstr;

TEST(AuthAccessTest, Sha256OfTheToken) {
  // FIPS 180-2's example.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(AuthAccessTest, ParsesTokensCertificatesAndTheDefault) {
  const std::string hash = Sha256Hex("s3cret");
  absl::StatusOr<AccessFile> f =
      ParseAccessFile("access.yaml",
                      "tokens:\n"
                      "  - name: grafana\n    role: read-only\n    sha256: " +
                          hash +
                          "\n"
                          "  - {name: oncall, role: admin, sha256: " +
                          Sha256Hex("other") +
                          "}\n"
                          "certificates:\n  - {identity: sre-cli, role: admin}\n"
                          "  - {identity: spiffe://cluster/agent, role: none}\n"
                          "default_certificate_role: none\n");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->tokens.size(), 2u);
  EXPECT_EQ(f->tokens[0].name, "grafana");
  EXPECT_EQ(f->tokens[0].role, Role::kReadOnly);
  EXPECT_EQ(f->tokens[0].sha256, hash);
  EXPECT_EQ(f->tokens[1].role, Role::kAdmin);
  ASSERT_EQ(f->certificates.size(), 2u);
  EXPECT_EQ(f->certificates[0].identity, "sre-cli");
  EXPECT_EQ(f->certificates[0].role, Role::kAdmin);
  EXPECT_EQ(f->certificates[1].role, Role::kNone);
  EXPECT_EQ(f->default_certificate_role, Role::kNone);
}

TEST(AuthAccessTest, AnEmptyFileHasNoTokensAndReadOnlyCertificates) {
  absl::StatusOr<AccessFile> f = ParseAccessFile("access.yaml", "");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->tokens.empty());
  EXPECT_EQ(f->default_certificate_role, Role::kReadOnly);
}

TEST(AuthAccessTest, UppercaseHashesAreAccepted) {
  std::string upper = Sha256Hex("x");
  for (char& c : upper) c = static_cast<char>(std::toupper(c));
  absl::StatusOr<AccessFile> f =
      ParseAccessFile("a.yaml", "tokens:\n  - {name: a, role: admin, sha256: " + upper + "}\n");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->tokens[0].sha256, Sha256Hex("x"));
}

TEST(AuthAccessTest, EveryProblemHasItsLine) {
  absl::StatusOr<AccessFile> f =
      ParseAccessFile("access.yaml",
                      "tokens:\n"
                      "  - {name: a, role: root, sha256: " +
                          Sha256Hex("1") +
                          "}\n"                                           // line 2
                          "  - {name: b, role: admin, sha256: abc}\n"     // line 3
                          "  - {name: c, role: admin, token: hunter2}\n"  // line 4
                          "  - {name: a, role: admin, sha256: " +
                          Sha256Hex("1") +
                          "}\n"                                 // line 5
                          "certificates:\n  - {role: admin}\n"  // line 7
                          "default_certificate_role: admin\n"   // line 8
                          "extra: 1\n");                        // line 9
  ASSERT_FALSE(f.ok());
  const std::string m(f.status().message());
  EXPECT_THAT(m, HasSubstr("access.yaml:2:21: role \"root\": expected read-only or admin"));
  EXPECT_THAT(m, HasSubstr("access.yaml:3:36: sha256: expected 64 hex digits"));
  EXPECT_THAT(m, HasSubstr("access.yaml:4:28: a token in clear: write its SHA-256 instead"));
  EXPECT_THAT(m, ::testing::Not(HasSubstr("hunter2")));
  EXPECT_THAT(m, HasSubstr("access.yaml:4:5: missing sha256"));
  EXPECT_THAT(m, HasSubstr("access.yaml:5:5: token name \"a\" given twice"));
  EXPECT_THAT(m, HasSubstr("same sha256 as an earlier one"));
  EXPECT_THAT(m, HasSubstr("access.yaml:7:5: missing identity"));
  EXPECT_THAT(m, HasSubstr("access.yaml:8:27: default_certificate_role: expected none or "
                           "read-only"));
  EXPECT_THAT(m, HasSubstr("access.yaml:9:1: unknown key \"extra\""));
}

TEST(AuthAccessTest, MalformedYamlIsAClearError) {
  absl::StatusOr<AccessFile> f = ParseAccessFile("access.yaml", "tokens: [\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("access.yaml:"));
  f = ParseAccessFile("access.yaml", "- just\n- a list\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("access.yaml:1:1: expected a map"));
  f = ParseAccessFile("access.yaml", "tokens: {name: a}\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("tokens: expected a list"));
}

}  // namespace
}  // namespace railwatch
