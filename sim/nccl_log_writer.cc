#include "sim/nccl_log_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {
namespace fs = std::filesystem;
namespace {

constexpr char kNcclVersion[] = "2.23.4+cuda12.6";

// The PCI bus of GPU k: beside its NIC (SysfsFabric puts mlx5_k at bus 0x18 + 0x10 k), as NCCL
// prints busId (hex, no domain, function 0).
std::string GpuBusId(int k) { return absl::StrFormat("%x000", 0x19 + k * 0x10); }

// glog/c10's time as PyTorch 2.x prints it: "E1121 16:40:12.123456789" (month unpadded).
std::string C10Time(absl::Time t) {
  const absl::TimeZone utc = absl::UTCTimeZone();
  const absl::CivilSecond c = absl::ToCivilSecond(t, utc);
  const int64_t nanos = absl::ToInt64Nanoseconds(t - absl::FromCivil(c, utc));
  return absl::StrFormat("E%d%02d %02d:%02d:%02d.%09d", c.month(), c.day(), c.hour(), c.minute(),
                         c.second(), nanos);
}

}  // namespace

std::string HostAddress(int host) {
  return absl::StrFormat("10.0.%d.%d", host / 250, host % 250 + 1);
}

std::string NicAddress(int host, int nic) {
  return absl::StrFormat("10.%d.%d.%d", 100 + nic, host / 250, host % 250 + 1);
}

NcclLogs::NcclLogs(std::string root, std::vector<SimJob> jobs, int nics_per_host, uint64_t seed)
    : root_(std::move(root)), jobs_(std::move(jobs)), nics_(nics_per_host), rng_(seed ^ 0x6e63636cULL) {}

NcclLogs::~NcclLogs() {
  for (JobLog& j : logs_) {
    for (HostLog& h : j.hosts) {
      if (h.fd >= 0) ::close(h.fd);
    }
  }
}

std::string NcclLogs::LogPath(const std::string& root, const std::string& host,
                              const std::string& job) {
  return (fs::path(root) / host / "nccl" / (job + ".log")).string();
}

int NcclLogs::Rank(const SimJob& job, int host, int local_rank) const {
  return (host - job.first_host) * nics_ + local_rank;
}

absl::Status NcclLogs::Append(HostLog& log, const std::string& text, const std::string& job) {
  // One write per block: a tailer never sees half a line.
  if (::write(log.fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    return absl::UnavailableError(absl::StrCat("NCCL log of job ", job, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status NcclLogs::Create(absl::Time now) {
  start_ = now;
  logs_.resize(jobs_.size());
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const SimJob& job = jobs_[j];
    JobLog& log = logs_[j];
    log.comm_id = absl::StrFormat("0x%016x", rng_());
    log.hosts.resize(job.last_host - job.first_host + 1);
    for (int h = job.first_host; h <= job.last_host; ++h) {
      HostLog& hl = log.hosts[h - job.first_host];
      // torchrun starts the host's ranks one after the other.
      const int pid = 2000 + static_cast<int>(rng_() % 400000);
      for (int k = 0; k < nics_; ++k) {
        hl.ranks.push_back({pid + k * 3, pid + k * 3 + 90 + k,
                            absl::StrFormat("0x55%010x", rng_() & 0xffffffffffULL)});
      }
      const std::string path = LogPath(root_, SysfsFabric::HostName(h), job.name);
      std::error_code ec;
      fs::create_directories(fs::path(path).parent_path(), ec);
      if (ec) return absl::UnavailableError(absl::StrCat(path, ": ", ec.message()));
      hl.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
      if (hl.fd < 0) return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno)));
      if (absl::Status s = Append(hl, InitLines(job, log, h), job.name); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

std::string NcclLogs::InitLines(const SimJob& job, const JobLog& j, int host) const {
  const std::string host_name = SysfsFabric::HostName(host);
  const HostLog& hl = j.hosts[host - job.first_host];
  const int nranks = (job.last_host - job.first_host + 1) * nics_;
  const int nnodes = job.last_host - job.first_host + 1;
  std::string devices;
  for (int k = 0; k < nics_; ++k) absl::StrAppend(&devices, "[", k, "]mlx5_", k, ":1/RoCE ");
  std::string out;
  auto prefix = [&](int k, int tid) {
    return absl::StrFormat("%s:%d:%d [%d] NCCL INFO ", host_name, hl.ranks[k].pid, tid, k);
  };
  for (int k = 0; k < nics_; ++k) {
    const int pid = hl.ranks[k].pid;
    absl::StrAppend(&out, prefix(k, pid), "Bootstrap: Using eth0:", HostAddress(host), "<0>\n",
                    prefix(k, pid), "cudaDriverVersion 12060\n", prefix(k, pid), "NCCL version ",
                    kNcclVersion, "\n");
  }
  for (int k = 0; k < nics_; ++k) {
    const int tid = hl.ranks[k].pid + 7;
    absl::StrAppend(&out, prefix(k, tid),
                    "NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.\n",
                    prefix(k, tid), "NET/IB : Using ", devices, "[RO]; OOB eth0:", HostAddress(host),
                    "<0>\n", prefix(k, tid), "Using network IB\n");
    absl::StrAppend(&out, prefix(k, tid), "ncclCommInitRank comm ", hl.ranks[k].comm, " rank ",
                    Rank(job, host, k), " nranks ", nranks, " cudaDev ", k, " nvmlDev ", k,
                    " busId ", GpuBusId(k), " commId ", j.comm_id, " - Init START\n");
  }
  for (int k = 0; k < nics_; ++k) {
    const int tid = hl.ranks[k].pid + 7;
    const int rank = Rank(job, host, k);
    absl::StrAppend(&out, prefix(k, tid), "comm ", hl.ranks[k].comm, " rank ", rank, " nRanks ",
                    nranks, " nNodes ", nnodes, " localRanks ", nics_, " localRank ", k,
                    " MNNVL 0\n");
    if (nnodes > 1) {
      // The inter-node ring of rail k: the same GPU of the previous and next host.
      const int prev = (rank - nics_ + nranks) % nranks, next = (rank + nics_) % nranks;
      absl::StrAppend(&out, prefix(k, tid), "Channel 00/0 : ", prev, "[", k, "] -> ", rank, "[",
                      k, "] [receive] via NET/IB/", k, "/GDRDMA\n", prefix(k, tid),
                      "Channel 00/0 : ", rank, "[", k, "] -> ", next, "[", k,
                      "] [send] via NET/IB/", k, "/GDRDMA\n");
    }
    absl::StrAppend(&out, prefix(k, tid), "Connected all rings, use ring PXN 0 GDR 1\n");
  }
  for (int k = 0; k < nics_; ++k) {
    const int tid = hl.ranks[k].pid + 7;
    const int rank = Rank(job, host, k);
    absl::StrAppend(&out, prefix(k, tid), "ncclCommInitRank comm ", hl.ranks[k].comm, " rank ",
                    rank, " nranks ", nranks, " cudaDev ", k, " nvmlDev ", k, " busId ",
                    GpuBusId(k), " commId ", j.comm_id, " - Init COMPLETE\n", prefix(k, tid),
                    "Init timings - ncclCommInitRank: rank ", rank, " nranks ", nranks,
                    absl::StrFormat(" total %.2f (kernels 0.21, alloc 0.94, bootstrap 0.08, "
                                    "allgathers 0.02, topo 0.17, graphs 0.01, connections "
                                    "%.2f, rest 0.01)\n",
                                    1.44 + 0.01 * (rank % 7), 0.01 * (rank % 7)));
  }
  return out;
}

absl::Status NcclLogs::WriteWatchdogTimeout(int job_index, int host, absl::Time now) {
  const SimJob& job = jobs_[job_index];
  HostLog& hl = logs_[job_index].hosts[host - job.first_host];
  // Work items are numbered from the job's start, one collective per training step.
  const int64_t seq = 1200 + absl::ToInt64Milliseconds(now - start_) / 500;
  std::string out;
  for (int k = 0; k < nics_; ++k) {
    const int rank = Rank(job, host, k);
    const absl::Time t = now + absl::Microseconds(37 * k + 11);
    absl::StrAppend(
        &out, "[rank", rank, "]:[", C10Time(t), " ProcessGroupNCCL.cpp:616] [Rank ", rank,
        "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=", seq,
        ", OpType=ALLREDUCE, NumelIn=16777216, NumelOut=16777216, Timeout(ms)=",
        absl::ToInt64Milliseconds(kCollectiveTimeout), ") ran for ",
        absl::ToInt64Milliseconds(kCollectiveTimeout) + 17 + k, " milliseconds before timing out.\n");
    absl::StrAppend(&out, "[rank", rank, "]:[", C10Time(t + absl::Microseconds(420)),
                    " ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank ", rank,
                    "] Exception (either an error or timeout) detected by watchdog at work: ", seq,
                    ", last enqueued NCCL work: ", seq + 2, ", last completed NCCL work: ", seq - 1,
                    ".\n");
  }
  return Append(hl, out, job.name);
}

absl::Status NcclLogs::WriteIbCompletionError(int job_index, int host, int k) {
  const SimJob& job = jobs_[job_index];
  HostLog& hl = logs_[job_index].hosts[host - job.first_host];
  const int nnodes = job.last_host - job.first_host + 1;
  // Its ring neighbours on rail k (itself in a one-host job: the loopback QP fails the same way).
  const int next = job.first_host + (host - job.first_host + 1) % nnodes;
  const int prev = job.first_host + (host - job.first_host + nnodes - 1) % nnodes;
  const std::string prefix = absl::StrFormat("%s:%d:%d [%d] ", SysfsFabric::HostName(host),
                                             hl.ranks[k].pid, hl.ranks[k].proxy_tid, k);
  std::string out;
  int opcode = 0;
  for (auto [peer, direction] : {std::pair{next, "Send"}, std::pair{prev, "Recv"}}) {
    absl::StrAppend(&out, "\n", prefix, "transport/net_ib.cc:2348 NCCL WARN NET/IB : Got completion from peer ",
                    NicAddress(peer, k), "<", 40000 + (peer * 37 + k * 101) % 20000,
                    "> with status=12 opcode=", opcode, " len=0 vendor err 129 (", direction,
                    ") localGid ::ffff:", NicAddress(host, k), " remoteGids::ffff:",
                    NicAddress(peer, k), " hca mlx5_", k, "\n");
    absl::StrAppend(&out, prefix, "NCCL INFO transport/net.cc:1343 -> 6\n", prefix,
                    "NCCL INFO proxy.cc:733 -> 6\n", prefix,
                    "NCCL INFO proxy.cc:909 -> 6 [Progress Thread]\n");
    opcode = 32616;
  }
  return Append(hl, out, job.name);
}

}  // namespace railwatch::sim
