#include "collectors/ethtool_dump.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "common/text.h"

namespace railwatch {

EthtoolStatsText ParseEthtoolStats(absl::string_view text, absl::string_view source) {
  EthtoolStatsText out;
  const auto where = [source](size_t line_number) {
    return source.empty() ? absl::StrCat("line ", line_number, ": ")
                          : absl::StrCat(source, ":", line_number, ": ");
  };
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    absl::string_view line = text.substr(0, nl);
    text = nl == absl::string_view::npos ? absl::string_view() : text.substr(nl + 1);
    ++line_number;
    line = absl::StripAsciiWhitespace(line);  // indentation, and the '\r' of CRLF files
    if (line.empty()) continue;
    const size_t colon = line.rfind(':');
    if (colon == absl::string_view::npos) {
      out.problems.push_back(absl::StrCat(where(line_number), "no ':' in \"", line, "\""));
      continue;
    }
    absl::string_view name = absl::StripTrailingAsciiWhitespace(line.substr(0, colon));
    absl::string_view value_text = absl::StripLeadingAsciiWhitespace(line.substr(colon + 1));
    if (value_text.empty()) continue;  // a caption: "NIC statistics:", "Standard stats for x:"
    uint64_t value;
    if (name.empty() || !absl::SimpleAtoi(value_text, &value) ||
        !absl::ascii_isdigit(static_cast<unsigned char>(value_text[0]))) {
      out.problems.push_back(
          absl::StrCat(where(line_number), "\"", line, "\" is not \"name: counter\""));
      continue;
    }
    out.names.emplace_back(name);
    out.values.push_back(value);
  }
  return out;
}

struct DumpEthtoolBackend::Entry {
  std::string driver;
  EthtoolStatsText stats;
  bool removed = false;
};

namespace {

class DumpDevice final : public EthtoolDevice {
 public:
  DumpDevice(std::shared_ptr<const void> keep_alive, const std::string& netdev,
             const std::string& driver, std::vector<std::string> names,
             const std::vector<uint64_t>* live_values, const bool* removed)
      : keep_alive_(std::move(keep_alive)),
        netdev_(netdev),
        driver_(driver),
        names_(std::move(names)),
        live_values_(live_values),
        removed_(removed) {
    values_.resize(names_.size());
  }

  const std::string& driver() const override { return driver_; }
  const std::vector<std::string>& stat_names() const override { return names_; }

  absl::StatusOr<std::span<const uint64_t>> Read() override {
    if (*removed_) return absl::NotFoundError(absl::StrCat(netdev_, ": no longer served"));
    if (live_values_->size() != names_.size()) {
      return absl::FailedPreconditionError(absl::StrCat(netdev_, ": statistics count changed from ",
                                                        names_.size(), " to ",
                                                        live_values_->size()));
    }
    // Copied, so that a Set() between cycles cannot change a span a caller still holds.
    std::copy(live_values_->begin(), live_values_->end(), values_.begin());
    return std::span<const uint64_t>(values_);
  }

 private:
  std::shared_ptr<const void> keep_alive_;
  std::string netdev_;
  std::string driver_;
  std::vector<std::string> names_;
  const std::vector<uint64_t>* live_values_;
  const bool* removed_;
  std::vector<uint64_t> values_;
};

}  // namespace

DumpEthtoolBackend::DumpEthtoolBackend() = default;
DumpEthtoolBackend::~DumpEthtoolBackend() = default;

void DumpEthtoolBackend::Set(const std::string& netdev, const std::string& driver,
                             absl::string_view dump) {
  EthtoolStatsText stats = ParseEthtoolStats(dump);
  for (const std::string& p : stats.problems) spdlog::warn("ethtool dump for {}: {}", netdev, p);
  std::shared_ptr<Entry>& entry = entries_[netdev];
  if (entry == nullptr || entry->removed) entry = std::make_shared<Entry>();
  // Updated in place: devices opened earlier see new values, or a changed count.
  entry->driver = driver;
  entry->stats = std::move(stats);
}

absl::Status DumpEthtoolBackend::SetFromFile(const std::string& netdev, const std::string& driver,
                                             const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  Set(netdev, driver, *text);
  return absl::OkStatus();
}

void DumpEthtoolBackend::Remove(const std::string& netdev) {
  auto it = entries_.find(netdev);
  if (it == entries_.end()) return;
  it->second->removed = true;
  entries_.erase(it);
}

absl::StatusOr<std::unique_ptr<EthtoolDevice>> DumpEthtoolBackend::Open(const std::string& netdev) {
  auto it = entries_.find(netdev);
  if (it == entries_.end()) return absl::NotFoundError(absl::StrCat(netdev, ": no dump"));
  const std::shared_ptr<Entry>& entry = it->second;
  if (entry->stats.names.empty()) {
    return absl::UnimplementedError(absl::StrCat(netdev, ": no statistics"));
  }
  return std::make_unique<DumpDevice>(entry, netdev, entry->driver, entry->stats.names,
                                      &entry->stats.values, &entry->removed);
}

}  // namespace railwatch
