#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

struct ibv_context;

namespace railwatch {

// RDMA devices and port attributes through rdma-core (libibverbs), for kernels with RDMA.
//
// On a kernel without RDMA support ibv_get_device_list() fails with ENOSYS; ListVerbsDevices()
// then returns Unavailable and the collector reads sysfs instead, without a warning: that is
// the normal state of a machine without RDMA, not a fault.
absl::StatusOr<std::vector<std::string>> ListVerbsDevices();

struct VerbsPortAttributes {
  int state = 0;           // enum ibv_port_state: 4 = ACTIVE
  int physical_state = 0;  // 5 = LinkUp
  int active_speed = 0;
  int active_width = 0;
  std::string link_layer;  // "InfiniBand" or "Ethernet", as sysfs spells it
};

// An open verbs context on one device: ibv_query_port() answers from the driver without
// parsing text, and keeps answering while sysfs files are being re-created.
class VerbsDevice {
 public:
  static absl::StatusOr<std::unique_ptr<VerbsDevice>> Open(const std::string& name);
  ~VerbsDevice();
  VerbsDevice(const VerbsDevice&) = delete;
  VerbsDevice& operator=(const VerbsDevice&) = delete;

  absl::StatusOr<VerbsPortAttributes> QueryPort(int port) const;
  const std::string& name() const { return name_; }

 private:
  VerbsDevice(std::string name, ibv_context* context)
      : name_(std::move(name)), context_(context) {}
  std::string name_;
  ibv_context* context_;
};

}  // namespace railwatch
