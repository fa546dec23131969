#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collectors/ethtool_backend.h"

namespace railwatch {

// What `ethtool -S <netdev>` printed, as names and values in output order.
struct EthtoolStatsText {
  std::vector<std::string> names;
  std::vector<uint64_t> values;
  // "line N: ..." (or "<source>:N: ..." when the parser was given a source) for each line that
  // was neither a statistic nor a caption; those lines are skipped and the rest is kept.
  std::vector<std::string> problems;
};

// Parses `ethtool -S` output as real systems and committed test data show it: an optional
// "NIC statistics:" header (or any other caption: a line ending in ':'), indentation of
// spaces, tabs or none, CRLF, a last line without newline, bnxt per-ring names
// ("[3]: rx_ucast_packets: 12" is the statistic "[3]: rx_ucast_packets") and other names that
// contain ':' ("rxq0: rx_bytes: 5"): the value is whatever follows the last ':'. `source`
// (a file name) prefixes the problems as "<source>:N:".
EthtoolStatsText ParseEthtoolStats(absl::string_view text, absl::string_view source = {});

// An EthtoolBackend that serves `ethtool -S` dumps instead of asking the kernel: each netdev
// is a driver name plus a dump, which may be replaced between cycles to make counters move,
// change the set of statistics, or make the netdev disappear.
class DumpEthtoolBackend final : public EthtoolBackend {
 public:
  DumpEthtoolBackend();
  ~DumpEthtoolBackend() override;
  // Serves `dump` as the statistics of `netdev`; replaces what it served before.
  void Set(const std::string& netdev, const std::string& driver, absl::string_view dump);
  // Reads the dump from a file.
  absl::Status SetFromFile(const std::string& netdev, const std::string& driver,
                           const std::string& path);
  void Remove(const std::string& netdev);

  absl::StatusOr<std::unique_ptr<EthtoolDevice>> Open(const std::string& netdev) override;

 private:
  struct Entry;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
};

}  // namespace railwatch
