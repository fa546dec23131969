#include "daemon/auth_access.h"

#include <openssl/sha.h>

#include <cctype>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "common/yaml_reader.h"

namespace railwatch {
namespace {

std::optional<Role> ParseRole(const std::string& text) {
  if (text == "read-only") return Role::kReadOnly;
  if (text == "admin") return Role::kAdmin;
  if (text == "none") return Role::kNone;
  return std::nullopt;
}

bool IsSha256Hex(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The text under `key`, or "" with error[missing-key] at the entry when it is absent or empty.
std::string Required(YamlMap& entry, const char* key, YamlProblems& problems) {
  std::string value;
  const bool read = entry.String(key, value);
  if (!read && entry.Get(key).IsDefined()) return "";  // not text: error[bad-type] said so
  if (value.empty()) problems.Error(entry.node(), "missing-key", absl::StrCat("missing ", key));
  return value;
}

Role EntryRole(YamlMap& entry, bool allow_none, YamlProblems& problems) {
  const std::string text = Required(entry, "role", problems);
  if (text.empty()) return Role::kNone;
  std::optional<Role> role = ParseRole(text);
  if (!role || (*role == Role::kNone && !allow_none)) {
    problems.Error(entry.Get("role"), "bad-value",
                   absl::StrCat("role \"", text, "\": expected read-only or admin"));
    return Role::kNone;
  }
  return *role;
}

// A token in clear is refused with its own message (and never repeated in it).
void RefuseClearToken(YamlMap& entry, YamlProblems& problems) {
  if (const YAML::Node clear = entry.Get("token"); clear.IsDefined()) {
    for (const auto& kv : entry.node()) {
      if (kv.first.IsScalar() && kv.first.Scalar() == "token") {
        problems.Error(kv.first, "secret-in-clear",
                       "a token in clear: write its SHA-256 instead (sha256: <printf %s TOKEN | "
                       "sha256sum>), so that the file holds no secret");
      }
    }
  }
}

void ParseTokens(const YAML::Node& list, AccessFile& file, YamlProblems& problems) {
  if (!list.IsSequence()) {
    problems.Error(list, "bad-type", "tokens: expected a list of {name, role, sha256}");
    return;
  }
  std::set<std::string> names, hashes;
  for (const YAML::Node& node : list) {
    YamlMap entry(node, "a token", problems, "{name, role, sha256}");
    if (!entry.ok()) continue;
    AccessFile::Token token;
    token.name = Required(entry, "name", problems);
    token.role = EntryRole(entry, /*allow_none=*/false, problems);
    token.sha256 = absl::AsciiStrToLower(Required(entry, "sha256", problems));
    if (!token.sha256.empty() && !IsSha256Hex(token.sha256)) {
      problems.Error(entry.Get("sha256"), "bad-value",
                     "sha256: expected 64 hex digits (printf %s TOKEN | sha256sum)");
    }
    if (!token.name.empty() && !names.insert(token.name).second) {
      problems.Error(node, "duplicate", absl::StrCat("token name \"", token.name, "\" given twice"));
    }
    if (!token.sha256.empty() && !hashes.insert(token.sha256).second) {
      problems.Error(node, "duplicate", absl::StrCat("token \"", token.name,
                                                    "\" has the same sha256 as an earlier one"));
    }
    RefuseClearToken(entry, problems);
    entry.Finish();
    file.tokens.push_back(std::move(token));
  }
}

void ParseCertificates(const YAML::Node& list, AccessFile& file, YamlProblems& problems) {
  if (!list.IsSequence()) {
    problems.Error(list, "bad-type", "certificates: expected a list of {identity, role}");
    return;
  }
  std::set<std::string> identities;
  for (const YAML::Node& node : list) {
    YamlMap entry(node, "a certificate", problems, "{identity, role}");
    if (!entry.ok()) continue;
    AccessFile::Certificate cert;
    cert.identity = Required(entry, "identity", problems);
    cert.role = EntryRole(entry, /*allow_none=*/true, problems);
    if (!cert.identity.empty() && !identities.insert(cert.identity).second) {
      problems.Error(node, "duplicate",
                     absl::StrCat("identity \"", cert.identity, "\" given twice"));
    }
    entry.Finish();
    file.certificates.push_back(std::move(cert));
  }
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kReadOnly:
      return "read-only";
    case Role::kAdmin:
      return "admin";
    case Role::kNone:
      break;
  }
  return "none";
}

std::string Sha256Hex(std::string_view text) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * sizeof(digest));
  for (unsigned char b : digest) {
    hex.push_back(kHex[b >> 4]);
    hex.push_back(kHex[b & 15]);
  }
  return hex;
}

absl::StatusOr<AccessFile> ParseAccessFile(const std::string& path, const std::string& text) {
  YamlProblems problems(path);
  AccessFile file;
  const YAML::Node root = ParseYaml(text, problems);
  if (!root.IsDefined()) return problems.ToStatus();
  if (root.IsNull()) return file;  // an empty file: nobody has a token
  YamlMap top(root, "the access file", problems,
              "with tokens, certificates, default_certificate_role");
  if (!top.ok()) return problems.ToStatus();
  if (const YAML::Node tokens = top.Get("tokens"); tokens.IsDefined() && !tokens.IsNull()) {
    ParseTokens(tokens, file, problems);
  }
  if (const YAML::Node certs = top.Get("certificates"); certs.IsDefined() && !certs.IsNull()) {
    ParseCertificates(certs, file, problems);
  }
  if (const YAML::Node role = top.Get("default_certificate_role"); role.IsDefined()) {
    std::optional<Role> r = role.IsScalar() ? ParseRole(role.Scalar()) : std::nullopt;
    if (!r || *r == Role::kAdmin) {
      problems.Error(role, "bad-value",
                     "default_certificate_role: expected none or read-only (grant "
                     "admin to named identities under certificates)");
    } else {
      file.default_certificate_role = *r;
    }
  }
  top.Finish();
  if (absl::Status s = problems.ToStatus(); !s.ok()) return s;
  return file;
}

absl::StatusOr<AccessFile> LoadAccessFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseAccessFile(path, *text);
}

}  // namespace railwatch
