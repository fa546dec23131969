#pragma once

// The kubelet's pod-resources API (gRPC, v1, proto/kubelet/podresources/v1/api.proto) over its
// Unix socket: which devices each pod on this node holds. docs/JOBS.md, "Kubernetes".
//
// The socket is the kubelet's (default /var/lib/kubelet/pod-resources/kubelet.sock, mode 0600
// or 0660 root:<kubelet's group>): connecting needs write access to it, so the agent runs as
// root or in that group. The kubelet answers List from its own state, without the API server.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/kubelet.h"

namespace v1 {
class PodResources;
}  // namespace v1

namespace railwatch::jobs {

inline constexpr char kDefaultKubeletSocket[] = "/var/lib/kubelet/pod-resources/kubelet.sock";

// "/path/kubelet.sock", "unix:///path/kubelet.sock" or "unix:/path" -> "/path/kubelet.sock".
std::string KubeletSocketPath(const std::string& spec);

// One pod of the API's answer in railwatch's terms (devices, DRA devices, NUMA nodes).
KubePod PodFromProto(const ::v1::PodResources& pod);

// List on the socket, all within `timeout`. Errors say what to do:
//   NotFound          no socket at the path (no kubelet here, or another --root-dir)
//   PermissionDenied  the socket is there but this process may not connect (root or the
//                     kubelet's group)
//   DeadlineExceeded  no answer within `timeout`
//   Unimplemented     a kubelet without the v1 API (before 1.20)
//   Unavailable, ...  gRPC's own, with its message
// Answers up to 16 MiB are read (the kubelet's own limit for this API).
absl::StatusOr<std::vector<KubePod>> ListPodResources(const std::string& socket,
                                                      absl::Duration timeout);

}  // namespace railwatch::jobs
