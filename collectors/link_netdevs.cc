#include "collectors/link_netdevs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/text.h"

namespace railwatch {
namespace fs = std::filesystem;

absl::StatusOr<NetdevSelector> NetdevSelector::Create(Options options) {
  std::shared_ptr<const std::regex> regex;
  if (!options.pattern.empty()) {
    // std::regex reports a bad pattern only by throwing; this is the one place it can.
    try {
      regex = std::make_shared<const std::regex>(options.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad netdev pattern \"", options.pattern, "\": ", e.what()));
    }
  }
  return NetdevSelector(std::move(options), std::move(regex));
}

std::vector<std::string> NetdevSelector::RdmaNetdevs() const {
  std::vector<std::string> out;
  const fs::path class_dir = fs::path(options_.sysfs_root) / "class" / "infiniband";
  std::error_code ec;
  for (fs::directory_iterator dev(class_dir, ec), end; !ec && dev != end; dev.increment(ec)) {
    std::error_code port_ec;
    for (fs::directory_iterator port(dev->path() / "ports", port_ec), port_end;
         !port_ec && port != port_end; port.increment(port_ec)) {
      // GID 0 is the port's default GID, bound to the netdev that carries its RoCE traffic;
      // IB ports have no ndevs and are skipped.
      absl::StatusOr<std::string> ndev =
          ReadFile((port->path() / "gid_attrs" / "ndevs" / "0").string());
      if (!ndev.ok()) continue;
      std::string name(FirstLine(*ndev));
      if (!name.empty()) out.push_back(std::move(name));
    }
  }
  return out;
}

bool NetdevSelector::SelectedBy(const std::string& netdev,
                                const std::vector<std::string>& rdma_netdevs) const {
  if (regex_ != nullptr) return std::regex_match(netdev, *regex_);
  if (netdev == "lo") return false;
  std::error_code ec;
  if (fs::exists(fs::path(options_.sysfs_root) / "class" / "net" / netdev / "device", ec)) {
    return true;
  }
  return std::find(rdma_netdevs.begin(), rdma_netdevs.end(), netdev) != rdma_netdevs.end();
}

bool NetdevSelector::Selected(const std::string& netdev) const {
  if (regex_ != nullptr) return std::regex_match(netdev, *regex_);
  return SelectedBy(netdev, RdmaNetdevs());
}

std::vector<std::string> NetdevSelector::List() const {
  std::vector<std::string> out;
  const std::vector<std::string> rdma =
      regex_ == nullptr ? RdmaNetdevs() : std::vector<std::string>();
  const fs::path class_dir = fs::path(options_.sysfs_root) / "class" / "net";
  std::error_code ec;
  for (fs::directory_iterator it(class_dir, ec), end; !ec && it != end; it.increment(ec)) {
    // Skips files such as bonding_masters that live beside the netdev links.
    std::error_code dir_ec;
    if (!fs::is_directory(it->path(), dir_ec)) continue;
    std::string name = it->path().filename().string();
    if (SelectedBy(name, rdma)) out.push_back(std::move(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace railwatch
