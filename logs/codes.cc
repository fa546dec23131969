#include "logs/codes.h"

#include <array>
#include <string_view>

#include "absl/strings/match.h"

namespace railwatch::logs {
namespace {

// In enum order (rdma-core include/infiniband/verbs.h).
constexpr std::array<std::string_view, 24> kWcStatus = {
    "IBV_WC_SUCCESS",
    "IBV_WC_LOC_LEN_ERR",
    "IBV_WC_LOC_QP_OP_ERR",
    "IBV_WC_LOC_EEC_OP_ERR",
    "IBV_WC_LOC_PROT_ERR",
    "IBV_WC_WR_FLUSH_ERR",
    "IBV_WC_MW_BIND_ERR",
    "IBV_WC_BAD_RESP_ERR",
    "IBV_WC_LOC_ACCESS_ERR",
    "IBV_WC_REM_INV_REQ_ERR",
    "IBV_WC_REM_ACCESS_ERR",
    "IBV_WC_REM_OP_ERR",
    "IBV_WC_RETRY_EXC_ERR",
    "IBV_WC_RNR_RETRY_EXC_ERR",
    "IBV_WC_LOC_RDD_VIOL_ERR",
    "IBV_WC_REM_INV_RD_REQ_ERR",
    "IBV_WC_REM_ABORT_ERR",
    "IBV_WC_INV_EECN_ERR",
    "IBV_WC_INV_EEC_STATE_ERR",
    "IBV_WC_FATAL_ERR",
    "IBV_WC_RESP_TIMEOUT_ERR",
    "IBV_WC_GENERAL_ERR",
    "IBV_WC_TM_ERR",
    "IBV_WC_TM_RNDV_INCOMPLETE",
};

// In ncclResult_t order (nccl.h).
constexpr std::array<std::string_view, 8> kNcclResult = {
    "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
    "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress",
};

struct Errno {
  int64_t number;
  std::string_view name;
  std::string_view text;  // glibc strerror()
};

// The errors that verbs, socket and bootstrap failures actually print.
constexpr Errno kErrnos[] = {
    {1, "EPERM", "Operation not permitted"},
    {2, "ENOENT", "No such file or directory"},
    {4, "EINTR", "Interrupted system call"},
    {5, "EIO", "Input/output error"},
    {11, "EAGAIN", "Resource temporarily unavailable"},
    {12, "ENOMEM", "Cannot allocate memory"},
    {13, "EACCES", "Permission denied"},
    {14, "EFAULT", "Bad address"},
    {16, "EBUSY", "Device or resource busy"},
    {19, "ENODEV", "No such device"},
    {22, "EINVAL", "Invalid argument"},
    {24, "EMFILE", "Too many open files"},
    {28, "ENOSPC", "No space left on device"},
    {32, "EPIPE", "Broken pipe"},
    {95, "EOPNOTSUPP", "Operation not supported"},
    {98, "EADDRINUSE", "Address already in use"},
    {99, "EADDRNOTAVAIL", "Cannot assign requested address"},
    {100, "ENETDOWN", "Network is down"},
    {101, "ENETUNREACH", "Network is unreachable"},
    {103, "ECONNABORTED", "Software caused connection abort"},
    {104, "ECONNRESET", "Connection reset by peer"},
    {107, "ENOTCONN", "Transport endpoint is not connected"},
    {110, "ETIMEDOUT", "Connection timed out"},
    {111, "ECONNREFUSED", "Connection refused"},
    {113, "EHOSTUNREACH", "No route to host"},
};

absl::string_view ToAbsl(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

absl::string_view IbvWcStatusName(int64_t status) {
  if (status < 0 || status >= static_cast<int64_t>(kWcStatus.size())) return "";
  return ToAbsl(kWcStatus[status]);
}

int64_t IbvWcStatusFromName(absl::string_view name) {
  for (size_t i = 0; i < kWcStatus.size(); ++i) {
    if (ToAbsl(kWcStatus[i]) == name) return static_cast<int64_t>(i);
  }
  return -1;
}

absl::string_view NcclResultName(int64_t code) {
  if (code < 0 || code >= static_cast<int64_t>(kNcclResult.size())) return "";
  return ToAbsl(kNcclResult[code]);
}

absl::string_view ErrnoName(int64_t err) {
  for (const Errno& e : kErrnos) {
    if (e.number == err) return ToAbsl(e.name);
  }
  return "";
}

int64_t ErrnoFromText(absl::string_view text) {
  for (const Errno& e : kErrnos) {
    if (absl::StartsWithIgnoreCase(text, ToAbsl(e.text))) return e.number;
  }
  return -1;
}

}  // namespace railwatch::logs
