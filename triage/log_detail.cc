#include "triage/log_detail.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace railwatch::triage {
namespace {

// "mlx5_1" or a placeholder the engineer fills in.
std::string DevOr(absl::string_view dev) {
  return dev.empty() ? std::string("<dev>") : std::string(dev);
}

}  // namespace

std::string IbStatusMeaning(int64_t status, int64_t vendor_err) {
  switch (status) {
    case 12: {
      std::string s =
          "Transport retry counter exceeded: the NIC resent until it gave up because the peer "
          "never acknowledged. The path to the peer lost packets or went down: a link flap or "
          "a bad cable/optic at either end or on a switch port between, a RoCE lossless class "
          "that drops (PFC off or on another priority than the traffic, ECN/buffer "
          "misconfiguration, NCCL_IB_TC unset), or the peer's NIC or process died first.";
      if (vendor_err == 0x81) {
        absl::StrAppend(&s,
                        " Vendor error 0x81 is the mlx5 syndrome that accompanies this "
                        "retry-exceeded case.");
      }
      return s;
    }
    case 13:
      return "Receiver-not-ready retries exhausted: the peer did not post receive buffers in "
             "time, so the peer process is stalled or gone.";
    case 5:
      return "The work request was flushed because its queue pair was already in the error "
             "state. This is a consequence, not the cause: find the first non-flush error on "
             "this host or on the peer (often a status 12 there, or the peer process exiting).";
    case 4:
    case 8:
      return "Local protection/access error: the NIC could not access this work request's "
             "local buffer. That is a memory-registration problem, usually not the network: "
             "GPUDirect RDMA support missing or mismatched (nvidia-peermem or dma-buf), the "
             "buffer freed or deregistered while in flight, or IOMMU/ACS blocking "
             "peer-to-peer DMA.";
    case 10:
      return "Remote access error: the peer rejected the RDMA access (stale or invalid rkey): "
             "the peer deregistered the buffer, or restarted.";
    case 9:
    case 11:
      return "The peer's NIC rejected the request (remote invalid request/operation error): "
             "often the peer's queue pair had already failed. Read the peer's log.";
    case 19:
      return "The NIC reported a fatal error: look for mlx5 health or firmware messages in "
             "dmesg; the NIC may need a reset.";
    case 20:
      return "The peer did not respond in time (response timeout): peer NIC or path trouble.";
    default:
      return "See the status name: errors with a remote side point at the peer or the path, "
             "local ones at this host's NIC, driver or memory registration.";
  }
}

std::vector<std::string> IbStatusNext(int64_t status, absl::string_view host, absl::string_view dev,
                                      const std::vector<std::string>& gids,
                                      absl::string_view candidates, absl::string_view peer) {
  std::vector<std::string> next;
  if (!host.empty()) next.push_back(absl::StrCat("on ", host, ":"));
  std::string on = host.empty() ? "" : "  ";
  if (status == 4 || status == 8) {
    next.push_back(absl::StrCat(on, "lsmod | grep -E 'nvidia_peermem|nv_peer_mem'",
                                "   # is GPUDirect RDMA support loaded?"));
    next.push_back(absl::StrCat(on, "dmesg -T | grep -iE 'iommu|DMAR|AMD-Vi|mlx5'",
                                "   # IOMMU faults or NIC errors at that time"));
    next.push_back(
        "then rerun with NCCL_NET_GDR_LEVEL=LOC   # if it passes, GPUDirect RDMA is the "
        "problem, not the fabric");
    return next;
  }
  if (status == 5) {
    next.push_back(
        "grep -nE 'Got completion|NCCL WARN' <logs of every rank>   # the first "
        "non-flush error is the cause");
  }
  if (!gids.empty()) {
    next.push_back(absl::StrCat(on, "show_gids | grep -E '", absl::StrJoin(gids, "|"),
                                "'   # which NIC, port and netdev own the failing GIDs"));
  } else if (dev.empty()) {
    next.push_back(
        absl::StrCat(on, "rdma link show   # port states",
                     candidates.empty() ? "" : absl::StrCat("; NCCL used ", candidates)));
  }
  next.push_back(
      absl::StrCat(on, "ibv_devinfo -d ", DevOr(dev), "   # port state, link layer, active MTU"));
  next.push_back(absl::StrCat(on, "rdma statistic show link ", DevOr(dev),
                              "/1   # local_ack_timeout_err, out_of_sequence, packet_seq_err"));
  next.push_back(absl::StrCat(
      on, "ethtool -S <netdev> | grep -E 'prio[0-7]_pause|discard|out_of_buffer|link_down'",
      "   # PFC pauses and drops (RoCE; netdev from `rdma link show`)"));
  next.push_back(absl::StrCat(on, "dmesg -T | grep -iE 'mlx5|link (is )?(up|down)'",
                              "   # link flaps and NIC resets"));
  if (!peer.empty()) {
    next.push_back(
        absl::StrCat("on the peer ", peer, ": the same, and its own NCCL log at that time"));
  }
  return next;
}

std::string CallFailedMeaning(absl::string_view call, absl::string_view errno_name,
                            absl::string_view curr_state, absl::string_view next_state) {
  if (errno_name == "ENODEV") {
    return "The NIC disappeared under NCCL: a reset, a driver reload, a PCIe error or a "
           "hot-unplug.";
  }
  if (call == "ibv_modify_qp") {
    if (errno_name == "ETIMEDOUT" || (curr_state == "INIT" && next_state == "RTR")) {
      return "The queue pair could not move to RTR: the NIC could not resolve a path to the "
             "remote GID. The GID index NCCL uses (NCCL_IB_GID_INDEX) points at the wrong "
             "address family, RoCE version or an empty entry, or the peer is unreachable on "
             "that subnet or VLAN.";
    }
    return "The NIC rejected the queue-pair attributes: typically a GID index that is empty or "
           "only IPv6 link-local, an MTU the port does not support, or a port that is down.";
  }
  if (call == "ibv_create_cq" || call == "ibv_create_qp") {
    return "Creating a completion/queue pair failed: out of NIC or pinned-memory resources. "
           "Most often the locked-memory limit (ulimit -l) is too low, e.g. in a container.";
  }
  if (absl::StartsWith(call, "ibv_reg_mr") || absl::StartsWith(call, "ibv_reg_dmabuf_mr")) {
    return "Memory registration failed: the locked-memory limit, or GPUDirect RDMA support "
           "(nvidia-peermem or dma-buf) missing.";
  }
  return "A verbs or driver call failed; its error text says how.";
}

std::vector<std::string> CallFailedNext(absl::string_view call, absl::string_view errno_name,
                                        absl::string_view dev, absl::string_view port) {
  std::vector<std::string> next;
  if (errno_name == "ENODEV") {
    next.push_back("dmesg -T | grep -iE 'mlx5|pcie|aer'   # reset or PCIe error at that time");
    next.push_back("ibv_devices; rdma link show   # is the device back?");
    return next;
  }
  if (call == "ibv_modify_qp") {
    next.push_back(absl::StrCat("show_gids ", DevOr(dev),
                                "   # compare with NCCL_IB_GID_INDEX (RoCE v2, IPv4-mapped)"));
    next.push_back(absl::StrCat("ibv_devinfo -v -d ", DevOr(dev),
                                " | grep -iE 'state|mtu|link_layer|GID'   # the port's state, MTU "
                                "and GID table"));
    next.push_back("env | grep NCCL_IB   # NCCL_IB_GID_INDEX, NCCL_IB_HCA, NCCL_IB_TC");
    return next;
  }
  next.push_back("ulimit -l   # want 'unlimited' for RDMA (container: --ulimit memlock=-1)");
  next.push_back(absl::StrCat("ibv_devinfo -v -d ", DevOr(dev),
                              " | grep -E 'max_(cq|qp|mr)'   # device limits"));
  if (absl::StartsWith(call, "ibv_reg")) {
    next.push_back("lsmod | grep -E 'nvidia_peermem|nv_peer_mem'   # GPUDirect RDMA");
  }
  return next;
}

std::string AsyncEventMeaning(absl::string_view event) {
  if (absl::StrContains(event, "port error")) {
    return "The NIC port went down (IBV_EVENT_PORT_ERR): a link flap, or a cable, optic or "
           "switch-port failure.";
  }
  if (absl::StrContains(event, "catastrophic") || absl::StrContains(event, "fatal")) {
    return "The NIC hit a catastrophic error and stopped: look at dmesg for mlx5 health "
           "reports; the device needs a reset.";
  }
  return "The NIC reported an asynchronous event; see its name.";
}

}  // namespace railwatch::triage
