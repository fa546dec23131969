#include "collectors/verbs_devices.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace railwatch {

absl::StatusOr<std::vector<std::string>> ListVerbsDevices() {
  errno = 0;
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    const int err = errno;
    return absl::UnavailableError(
        absl::StrCat("ibv_get_device_list: ", err ? std::strerror(err) : "no RDMA support"));
  }
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.emplace_back(ibv_get_device_name(list[i]));
  ibv_free_device_list(list);
  return names;
}

absl::StatusOr<std::unique_ptr<VerbsDevice>> VerbsDevice::Open(const std::string& name) {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) return absl::UnavailableError("ibv_get_device_list failed");
  ibv_context* context = nullptr;
  int err = ENODEV;
  for (int i = 0; i < count; ++i) {
    if (name == ibv_get_device_name(list[i])) {
      context = ibv_open_device(list[i]);
      err = errno;
      break;
    }
  }
  ibv_free_device_list(list);
  if (context == nullptr) {
    return absl::UnavailableError(absl::StrCat("ibv_open_device ", name, ": ", std::strerror(err)));
  }
  return std::unique_ptr<VerbsDevice>(new VerbsDevice(name, context));
}

VerbsDevice::~VerbsDevice() { ibv_close_device(context_); }

absl::StatusOr<VerbsPortAttributes> VerbsDevice::QueryPort(int port) const {
  ibv_port_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  // ibv_query_port is a macro over ___ibv_query_port in rdma-core; it returns an errno value.
  if (int err = ibv_query_port(context_, static_cast<uint8_t>(port), &attr); err != 0) {
    return absl::UnavailableError(
        absl::StrCat("ibv_query_port ", name_, "/", port, ": ", std::strerror(err)));
  }
  VerbsPortAttributes out;
  out.state = attr.state;
  out.physical_state = attr.phys_state;
  out.active_speed = attr.active_speed;
  out.active_width = attr.active_width;
  out.link_layer = attr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
  return out;
}

}  // namespace railwatch
