#include "daemon/auth_access.h"

#include <openssl/sha.h>

#include <cctype>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace {

// Collects problems as path:line:column: message.
class Problems {
 public:
  explicit Problems(const std::string& path) : path_(path) {}
  void Add(const YAML::Mark& mark, const std::string& message) {
    lines_.push_back(absl::StrCat(path_, ":", mark.line + 1, ":", mark.column + 1, ": ", message));
  }
  bool empty() const { return lines_.empty(); }
  std::string Joined() const { return absl::StrJoin(lines_, "\n"); }

 private:
  const std::string& path_;
  std::vector<std::string> lines_;
};

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

// The scalar under `key` of a map entry, or "" with a problem when it is missing or not text.
std::string Scalar(const YAML::Node& entry, const char* key, Problems& problems) {
  const YAML::Node value = entry[key];
  if (!value || !value.IsScalar() || value.Scalar().empty()) {
    problems.Add(entry.Mark(), absl::StrCat("missing ", key));
    return "";
  }
  return value.Scalar();
}

Role EntryRole(const YAML::Node& entry, bool allow_none, Problems& problems) {
  const std::string text = Scalar(entry, "role", problems);
  if (text.empty()) return Role::kNone;
  std::optional<Role> role = ParseRole(text);
  if (!role || (*role == Role::kNone && !allow_none)) {
    problems.Add(entry["role"].Mark(),
                 absl::StrCat("role \"", text, "\": expected read-only or admin"));
    return Role::kNone;
  }
  return *role;
}

void CheckKeys(const YAML::Node& map, const std::set<std::string>& known, Problems& problems) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (known.contains(key)) continue;
    if (key == "token") {
      problems.Add(kv.first.Mark(),
                   "a token in clear: write its SHA-256 instead (sha256: <printf %s TOKEN | "
                   "sha256sum>), so that the file holds no secret");
    } else {
      problems.Add(kv.first.Mark(), absl::StrCat("unknown key \"", key, "\"; expected ",
                                                 absl::StrJoin(known, ", ")));
    }
  }
}

void ParseTokens(const YAML::Node& list, AccessFile& file, Problems& problems) {
  if (!list.IsSequence()) {
    problems.Add(list.Mark(), "tokens: expected a list of {name, role, sha256}");
    return;
  }
  std::set<std::string> names, hashes;
  for (const YAML::Node& entry : list) {
    if (!entry.IsMap()) {
      problems.Add(entry.Mark(), "expected {name, role, sha256}");
      continue;
    }
    CheckKeys(entry, {"name", "role", "sha256"}, problems);
    AccessFile::Token token;
    token.name = Scalar(entry, "name", problems);
    token.role = EntryRole(entry, /*allow_none=*/false, problems);
    token.sha256 = absl::AsciiStrToLower(Scalar(entry, "sha256", problems));
    if (!token.sha256.empty() && !IsSha256Hex(token.sha256)) {
      problems.Add(entry["sha256"].Mark(),
                   "sha256: expected 64 hex digits (printf %s TOKEN | sha256sum)");
    }
    if (!token.name.empty() && !names.insert(token.name).second) {
      problems.Add(entry.Mark(), absl::StrCat("token name \"", token.name, "\" given twice"));
    }
    if (!token.sha256.empty() && !hashes.insert(token.sha256).second) {
      problems.Add(entry.Mark(), absl::StrCat("token \"", token.name,
                                              "\" has the same sha256 as an earlier one"));
    }
    file.tokens.push_back(std::move(token));
  }
}

void ParseCertificates(const YAML::Node& list, AccessFile& file, Problems& problems) {
  if (!list.IsSequence()) {
    problems.Add(list.Mark(), "certificates: expected a list of {identity, role}");
    return;
  }
  std::set<std::string> identities;
  for (const YAML::Node& entry : list) {
    if (!entry.IsMap()) {
      problems.Add(entry.Mark(), "expected {identity, role}");
      continue;
    }
    CheckKeys(entry, {"identity", "role"}, problems);
    AccessFile::Certificate cert;
    cert.identity = Scalar(entry, "identity", problems);
    cert.role = EntryRole(entry, /*allow_none=*/true, problems);
    if (!cert.identity.empty() && !identities.insert(cert.identity).second) {
      problems.Add(entry.Mark(), absl::StrCat("identity \"", cert.identity, "\" given twice"));
    }
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
  Problems problems(path);
  AccessFile file;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    problems.Add(e.mark, e.msg);
    return absl::InvalidArgumentError(problems.Joined());
  }
  if (root.IsNull()) return file;  // an empty file: nobody has a token
  if (!root.IsMap()) {
    problems.Add(root.Mark(), "expected a map with tokens, certificates, default_certificate_role");
    return absl::InvalidArgumentError(problems.Joined());
  }
  try {
    CheckKeys(root, {"tokens", "certificates", "default_certificate_role"}, problems);
    if (const YAML::Node tokens = root["tokens"]; tokens && !tokens.IsNull()) {
      ParseTokens(tokens, file, problems);
    }
    if (const YAML::Node certs = root["certificates"]; certs && !certs.IsNull()) {
      ParseCertificates(certs, file, problems);
    }
    if (const YAML::Node role = root["default_certificate_role"]; role) {
      std::optional<Role> r = role.IsScalar() ? ParseRole(role.Scalar()) : std::nullopt;
      if (!r || *r == Role::kAdmin) {
        problems.Add(role.Mark(),
                     "default_certificate_role: expected none or read-only (grant "
                     "admin to named identities under certificates)");
      } else {
        file.default_certificate_role = *r;
      }
    }
  } catch (const YAML::Exception& e) {
    problems.Add(e.mark, e.msg);
  }
  if (!problems.empty()) return absl::InvalidArgumentError(problems.Joined());
  return file;
}

absl::StatusOr<AccessFile> LoadAccessFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseAccessFile(path, *text);
}

}  // namespace railwatch
