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
  EXPECT_THAT(m, HasSubstr("access.yaml:2:21: error[bad-value]: role \"root\": expected read-only or admin"));
  EXPECT_THAT(m, HasSubstr("access.yaml:3:36: error[bad-value]: sha256: expected 64 hex digits"));
  EXPECT_THAT(m, HasSubstr("access.yaml:4:28: error[secret-in-clear]: a token in clear: write its SHA-256 instead"));
  EXPECT_THAT(m, ::testing::Not(HasSubstr("hunter2")));
  EXPECT_THAT(m, HasSubstr("access.yaml:4:5: error[missing-key]: missing sha256"));
  EXPECT_THAT(m, HasSubstr("access.yaml:5:5: error[duplicate]: token name \"a\" given twice"));
  EXPECT_THAT(m, HasSubstr("same sha256 as an earlier one"));
  EXPECT_THAT(m, HasSubstr("access.yaml:7:5: error[missing-key]: missing identity"));
  EXPECT_THAT(m, HasSubstr("access.yaml:8:27: error[bad-value]: default_certificate_role: expected none or "
                           "read-only"));
  EXPECT_THAT(m, HasSubstr("access.yaml:9:1: error[unknown-key]: unknown key `extra` in the access file"));
  // The clear token is refused once, not also as an unknown key.
  EXPECT_THAT(m, ::testing::Not(HasSubstr("unknown key `token`")));
  // A misspelt key names the one it was meant to be.
  absl::StatusOr<AccessFile> typo = ParseAccessFile(
      "access.yaml", "certificates:\n  - {identity: a, role: admin}\ndefault_certficate_role: none\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(),
              HasSubstr("access.yaml:3:1: error[unknown-key]: unknown key `default_certficate_role` "
                        "in the access file (did you mean `default_certificate_role`?)"));
}

TEST(AuthAccessTest, MalformedYamlIsAClearError) {
  absl::StatusOr<AccessFile> f = ParseAccessFile("access.yaml", "tokens: [\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("access.yaml:"));
  f = ParseAccessFile("access.yaml", "- just\n- a list\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("access.yaml:1:1: error[bad-type]: the access file must be a mapping"));
  f = ParseAccessFile("access.yaml", "tokens: {name: a}\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.status().message(), HasSubstr("tokens: expected a list"));
}

}  // namespace
}  // namespace railwatch
