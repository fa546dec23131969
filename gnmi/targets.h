#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace railwatch {

// TLS toward a gNMI target. The PEM contents are read when the targets file is loaded, so a
// missing or unreadable file is a load error with the line that names it, not a silent
// reconnect loop later.
struct GnmiTlsConfig {
  std::string ca_file;
  std::string ca_pem;    // roots that verify the target; empty: the system roots
  std::string cert_file;
  std::string cert_pem;  // client certificate chain (mTLS); empty: no client certificate
  std::string key_file;
  std::string key_pem;
  std::string server_name;  // overrides the name checked against the target's certificate
};

// One switch to subscribe to, with the defaults of the targets file applied.
struct GnmiTargetConfig {
  std::string name;     // the `switch` label
  std::string address;  // host:port
  std::string profile = "openconfig";
  absl::Duration sample_interval = absl::Seconds(1);
  std::string username;
  std::string password;  // never logged
  std::optional<GnmiTlsConfig> tls;
  // Where the target was defined, for messages ("targets.yaml:12").
  std::string origin;
};

// Reads a targets file (format in docs/SWITCH_AGENT.md). Every problem is reported with
// file:line:column, one per line of the status message; relative password and certificate
// paths are taken relative to the file's directory.
absl::StatusOr<std::vector<GnmiTargetConfig>> LoadGnmiTargetsFile(const std::string& path);
absl::StatusOr<std::vector<GnmiTargetConfig>> LoadGnmiTargetsString(std::string_view yaml,
                                                                    std::string_view file_name);

}  // namespace railwatch
