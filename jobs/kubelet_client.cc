// The pod-resources API's client (jobs/kubelet_client.h).

#include "jobs/kubelet_client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "kubelet/podresources/v1/api.grpc.pb.h"

namespace railwatch::jobs {

// The kubelet serves this API with a 16 MiB limit (podresources.DefaultMaxMsgSize); a client
// with gRPC's default 4 MiB would fail on a node with thousands of devices.
constexpr int kMaxAnswerBytes = 16 * 1024 * 1024;

std::string KubeletSocketPath(const std::string& spec) {
  std::string path = spec;
  if (absl::StartsWith(path, "unix://")) {
    path = path.substr(7);
  } else if (absl::StartsWith(path, "unix:")) {
    path = path.substr(5);
  }
  return path;
}

KubePod PodFromProto(const ::v1::PodResources& pod) {
  KubePod out;
  out.ns = pod.namespace_();
  out.name = pod.name();
  for (const ::v1::ContainerResources& c : pod.containers()) {
    KubeContainer container;
    container.name = c.name();
    for (const ::v1::ContainerDevices& d : c.devices()) {
      KubeDevice device;
      device.resource_name = d.resource_name();
      device.device_ids.assign(d.device_ids().begin(), d.device_ids().end());
      for (const ::v1::NUMANode& n : d.topology().nodes()) device.numa_nodes.push_back(n.id());
      container.devices.push_back(std::move(device));
    }
    for (const ::v1::DynamicResource& dra : c.dynamic_resources()) {
      for (const ::v1::ClaimResource& r : dra.claim_resources()) {
        KubeDevice device;
        device.dynamic = true;
        device.resource_name = r.driver_name();
        device.device_ids.push_back(r.pool_name().empty()
                                        ? r.device_name()
                                        : absl::StrCat(r.pool_name(), "/", r.device_name()));
        container.devices.push_back(std::move(device));
      }
    }
    out.containers.push_back(std::move(container));
  }
  return out;
}

absl::StatusOr<std::vector<KubePod>> ListPodResources(const std::string& socket,
                                                      absl::Duration timeout) {
  const std::string path = KubeletSocketPath(socket);
  // The socket's own errors first: gRPC would only say "failed to connect".
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == EACCES) {
      return absl::PermissionDeniedError(absl::StrCat(
          "cannot reach the kubelet's pod-resources socket ", path,
          ": permission denied on its directory (run the agent as root or in the kubelet's "
          "group)"));
    }
    return absl::NotFoundError(
        absl::StrCat("no kubelet pod-resources socket at ", path, " (", std::strerror(err),
                     "): no kubelet on this host, or its --root-dir is not /var/lib/kubelet"));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a socket"));
  }
  if (access(path.c_str(), W_OK) != 0 && errno == EACCES) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot connect to the kubelet's pod-resources socket ", path,
        ": permission denied (connecting needs write access to it: run the agent as root or "
        "in the kubelet's group)"));
  }

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxAnswerBytes);
  auto channel = grpc::CreateCustomChannel(
      path.front() == '/' ? absl::StrCat("unix://", path) : absl::StrCat("unix:", path),
      grpc::InsecureChannelCredentials(), args);
  auto stub = ::v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  ::v1::ListPodResourcesRequest request;
  ::v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    const std::string& message = status.error_message();
    switch (status.error_code()) {
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        return absl::DeadlineExceededError(absl::StrCat("the kubelet at ", path,
                                                        " did not answer List within ",
                                                        absl::FormatDuration(timeout)));
      case grpc::StatusCode::UNIMPLEMENTED:
        return absl::UnimplementedError(absl::StrCat(
            path,
            " does not serve v1.PodResourcesLister/List (a kubelet before 1.20, or not a "
            "kubelet): ",
            message));
      default:
        if (absl::StrContains(message, "Permission denied")) {
          return absl::PermissionDeniedError(absl::StrCat(
              "cannot connect to the kubelet's pod-resources socket ", path,
              ": permission denied (run the agent as root or in the kubelet's group)"));
        }
        return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                            absl::StrCat("kubelet pod-resources List on ", path, ": ", message));
    }
  }
  std::vector<KubePod> pods;
  pods.reserve(static_cast<size_t>(response.pod_resources_size()));
  for (const ::v1::PodResources& p : response.pod_resources()) pods.push_back(PodFromProto(p));
  return pods;
}

}  // namespace railwatch::jobs
