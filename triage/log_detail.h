#pragma once

// Log detail for `railwatch triage`: what an IB completion status, a failed verbs call or a
// socket error means, and the commands that follow from the line's own GIDs, device and peer.
// Not a diagnosis: what is wrong and the runbook come from the playbooks the events fire
// (triage/playbook_replay.h); nothing here repeats a runbook.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace railwatch::triage {

// What an IB work-completion error with this status (and mlx5 vendor error) means.
std::string IbStatusMeaning(int64_t status, int64_t vendor_err);

// Commands for an IB completion error on `host`. `dev` is the HCA when the log names it;
// `gids` the local GIDs (RoCE); `candidates` the NET/IB devices NCCL listed for that process.
std::vector<std::string> IbStatusNext(int64_t status, absl::string_view host, absl::string_view dev,
                                      const std::vector<std::string>& gids,
                                      absl::string_view candidates, absl::string_view peer);

// A failed verbs call (ibv_modify_qp, ibv_create_cq, ibv_reg_mr ...).
std::string CallFailedMeaning(absl::string_view call, absl::string_view errno_name,
                            absl::string_view curr_state, absl::string_view next_state);
std::vector<std::string> CallFailedNext(absl::string_view call, absl::string_view errno_name,
                                        absl::string_view dev, absl::string_view port);

// An IB async event ("port error", "local catastrophic error" ...).
std::string AsyncEventMeaning(absl::string_view event);

inline constexpr absl::string_view kSocketMeaning =
    "A TCP connection between ranks failed (NCCL's socket transport or its bootstrap/proxy "
    "control path). Most often the peer process died first, and its own log holds the real "
    "error; otherwise a firewall, or NCCL_SOCKET_IFNAME picking an interface the peer cannot "
    "reach.";

inline constexpr absl::string_view kBootstrapMeaning =
    "Rendezvous failed: ranks could not reach the bootstrap root or each other over the "
    "bootstrap interface. Check that every host resolves and routes the interface NCCL chose "
    "(NCCL_SOCKET_IFNAME), that no firewall blocks the ports, and that the root rank is alive.";

// Why a device is missing is nic_gone's runbook; this is what the line itself says.
inline constexpr absl::string_view kNoDeviceMeaning =
    "NCCL found no usable RDMA device and uses TCP sockets instead (also when libibverbs is "
    "missing from the image or NCCL_IB_DISABLE=1): collectives run at a fraction of the "
    "fabric's bandwidth. Ignore this on hosts without RDMA NICs.";

inline constexpr absl::string_view kWatchdogMeaning =
    "A collective never completed on every rank of the process group. Either one rank never "
    "joined it (stuck in compute or data loading, crashed, or waiting in a different "
    "collective: a rank missing from the reporters, or one whose last completed SeqNum is "
    "lower, is the straggler), or the network stopped moving data (IB completion errors, a PFC "
    "storm or a link flap at the same time).";

}  // namespace railwatch::triage
