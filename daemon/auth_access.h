#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace railwatch {

// What a Query API caller may do. Every Query RPC needs kReadOnly; ForgetAgent needs kAdmin.
enum class Role { kNone = 0, kReadOnly = 1, kAdmin = 2 };

// "none", "read-only", "admin".
const char* RoleName(Role role);

// The Query API's access file (railwatchd --query_tokens, docs/SECURITY.md):
//
//   tokens:                        # bearer tokens, by their SHA-256: the file holds no secret
//     - name: grafana-bridge       # shown in logs and errors instead of the token
//       role: read-only            # read-only | admin
//       sha256: 9f86d08...         # `printf %s "$TOKEN" | sha256sum`
//   certificates:                  # client certificates verified against --tls_client_ca
//     - identity: sre-cli          # its subject CN or one of its SANs (DNS, URI, e-mail, IP)
//       role: admin
//   default_certificate_role: read-only   # any other verified certificate: none | read-only
struct AccessFile {
  struct Token {
    std::string name;
    Role role = Role::kNone;
    std::string sha256;  // 64 lowercase hex digits
  };
  struct Certificate {
    std::string identity;
    Role role = Role::kNone;
  };
  std::vector<Token> tokens;
  std::vector<Certificate> certificates;
  Role default_certificate_role = Role::kReadOnly;
};

// Parses an access file's text; `path` is for messages. Every problem is reported, one per
// line, as path:line:column: message.
absl::StatusOr<AccessFile> ParseAccessFile(const std::string& path, const std::string& text);
absl::StatusOr<AccessFile> LoadAccessFile(const std::string& path);

// Lowercase hex SHA-256 of `text`.
std::string Sha256Hex(std::string_view text);

}  // namespace railwatch
