#pragma once

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace railwatch {

// Which netdevs the ethtool and link collectors watch. With no pattern: every netdev that has
// a device behind it (<root>/class/net/<if>/device: a PCI or other bus function, not a veth,
// bridge or tunnel) and every netdev that backs an RDMA port (the netdev of GID 0 in
// <root>/class/infiniband/<dev>/ports/<port>/gid_attrs/ndevs/0, which covers RoCE bonds), but
// never lo. With a pattern: exactly the netdevs whose whole name matches it (ECMAScript
// regex: "eth[0-3]", "ens1f0np0|ens2f0np0").
//
// Immutable after Create(), so the collectors and the netlink thread can share it.
class NetdevSelector {
 public:
  struct Options {
    std::string sysfs_root = "/sys";
    std::string pattern;
  };

  static absl::StatusOr<NetdevSelector> Create(Options options);

  // The selected netdevs under <root>/class/net now, sorted by name.
  std::vector<std::string> List() const;
  // Whether `netdev` is selected; reads sysfs unless a pattern decides.
  bool Selected(const std::string& netdev) const;

  const std::string& sysfs_root() const { return options_.sysfs_root; }

 private:
  NetdevSelector(Options options, std::shared_ptr<const std::regex> regex)
      : options_(std::move(options)), regex_(std::move(regex)) {}
  bool SelectedBy(const std::string& netdev, const std::vector<std::string>& rdma_netdevs) const;
  std::vector<std::string> RdmaNetdevs() const;

  Options options_;
  std::shared_ptr<const std::regex> regex_;  // null: the default policy
};

}  // namespace railwatch
