#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "common/labels.h"
#include "store/event_store.h"
#include "topology/topology.h"

namespace railwatch {

// Which jobs run where: static jobs from the topology file's `jobs:` section, jobs learnt
// from NCCL communicator events (nccl.comm_init / nccl.comm_info, keyed by commId) that agents
// tail, jobs a scheduler reports (Slurm), and jobs whose pods the host agents' kubelets report
// (kubernetes.pods events). Thread-safe: ingest threads Observe(), the rules engine reads.
struct JobInfo {
  std::string name;                 // topology name, or "nccl-<commId>" for learnt jobs
  std::vector<std::string> hosts;   // sorted, unique
  uint32_t gpus = 0;                // ranks for NCCL jobs; hosts x gpus_per_host for static ones
  uint32_t ranks = 0;
  std::string source;               // "topology", "nccl", a scheduler's ("slurm"), "kubernetes"
  int64_t last_seen_unix_nano = 0;  // learnt jobs: newest event
  std::string detail;               // a scheduler's words: "model_pretrain by alice in gpu_p2"
};

class JobRegistry {
 public:
  JobRegistry() = default;
  // Replaces the static jobs.
  void SetStatic(const std::vector<TopologyJob>& jobs);
  // Replaces every job a scheduler reported under `source` ("slurm"): a job it no longer lists
  // (ended, cancelled) leaves with this call. Like static jobs, they cover the learnt NCCL jobs
  // on their hosts. Returns true when what the registry knows changed.
  bool SetScheduled(const std::string& source, std::vector<JobInfo> jobs);
  // Learns from an NCCL communicator event or a host's kubernetes.pods event (others are
  // ignored). Returns true when it changed what the registry knows.
  bool Observe(const StoredEvent& event);
  // Where rank `rank` of the communicator whose commId is `comm` (hex, "0x" or not, as NCCL RAS
  // prints its hash) runs, as the job's NCCL logs said: its host and local rank (its place among
  // the communicator's ranks on that host, in rank order: NCCL's localRank). False when no log
  // placed it. (topology/job_ranks.cc)
  bool RankHost(std::string_view comm, int rank, std::string* host, int* local_rank) const;
  // The GPU (cudaDev) of that rank, as its Init line said; -1 when unknown. FabricMap::Enrich
  // asks it for every NCCL rank series, so it is a hash lookup (commId as the logs print it).
  int RankGpu(std::string_view comm, int rank) const;
  // A RAS rank_behind for `key` (comm/rank) at `now`: false when one was made within `every`
  // (every agent of a job asks RAS and reports the same ranks; once is enough).
  bool NoteRankBehind(const std::string& key, int64_t now_unix_nano, int64_t every_nanos) const;
  // One host's job pods, as its agent read them from the kubelet (a kubernetes.pods event's
  // `jobs`, jobs::EncodeHostJobs): they replace what that host reported before; an empty `jobs`
  // takes the host out. Jobs are merged by name across hosts (hosts joined, GPUs summed) under
  // the source "kubernetes". A report older than the host's last one (a replayed spool) is
  // ignored. Returns true when what the registry knows changed (the generation moves only then).
  bool SetHostPods(const std::string& host, int64_t time_unix_nano, std::string_view jobs);
  // Jobs with at least one rank on one of `hosts`, by name.
  std::vector<JobInfo> JobsOnHosts(const std::vector<std::string>& hosts) const;
  // Jobs running on `host`, by name (usually one).
  std::vector<std::string> JobsOfHost(std::string_view host) const;
  std::vector<JobInfo> All() const;
  // The first of JobsOfHost(host) into *job, without building the list (FabricMap::Enrich runs
  // per element per tick). False when no job runs there.
  bool FirstJobOfHost(std::string_view host, std::string* job) const;
  // Changes whenever which jobs run on which hosts may have changed (FirstJobOfHost may answer
  // otherwise), so the rules engine can keep topology() labels between ticks. No lock.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  // A job learnt from NCCL events, keyed by commId (by host + comm pointer without one).
  struct Learnt {
    std::string name;
    absl::flat_hash_map<int, std::string> rank_hosts;
    absl::flat_hash_map<int, int> rank_gpus;  // cudaDev of the Init line, where it said
    uint32_t nranks = 0;
    int64_t last_seen_unix_nano = 0;
  };
  // One host's share of a Kubernetes job.
  struct HostPods {
    std::string job;
    std::vector<std::string> pods;
    uint32_t gpus = 0;
    uint32_t rdma = 0;
  };
  struct KubeHost {
    int64_t time_unix_nano = 0;
    std::vector<HostPods> jobs;
  };
  bool SetScheduledLocked(const std::string& source, std::vector<JobInfo> jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PublishLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  const Learnt* FindLearntLocked(std::string_view comm) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RebuildHostIndexLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // What readers see: static jobs and the learnt jobs that no static job covers, by name.
  absl::flat_hash_map<std::string, JobInfo> jobs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Learnt> learnt_ ABSL_GUARDED_BY(mu_);
  // "host\0comm" -> learnt key: comm_info lines carry no commId, the comm pointer links them.
  absl::flat_hash_map<std::string, std::string> comm_keys_ ABSL_GUARDED_BY(mu_);
  // host -> names of the jobs in jobs_ with a rank there, sorted.
  absl::flat_hash_map<std::string, std::vector<std::string>> host_jobs_ ABSL_GUARDED_BY(mu_);
  // host -> its job pods as its kubelet last reported them.
  absl::flat_hash_map<std::string, KubeHost> kube_hosts_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
  // NoteRankBehind: when each comm/rank's last rank_behind was made.
  mutable absl::flat_hash_map<std::string, int64_t> rank_behind_at_ ABSL_GUARDED_BY(mu_);
};

// The culprit's reach: hosts it stalls, jobs that run there and the GPUs they hold.
struct JobImpact {
  std::string job;
  uint32_t gpus = 0;
  uint32_t ranks = 0;
  std::vector<std::string> hosts;      // this job's hosts inside the scope
  std::vector<std::string> job_hosts;  // all of this job's hosts
};
struct BlastRadius {
  std::string scope;               // "host", "leaf", "rail", "job", "fabric"
  std::vector<std::string> hosts;  // hosts inside the scope, sorted
  std::vector<JobImpact> jobs;     // by name
  uint32_t gpus = 0;               // sum over jobs (a collective waits for its slowest rank)
};

// What the rules engine asks of the topology: which labels an element gets (topology()), what
// is at the other end of a cable (peer()), how far apart two nodes are, and the blast radius.
//
// Node names: a NIC is "host/device" (gpu-node-117/mlx5_3), a switch is its name. Link ids are
// the two ends sorted and joined with " <-> ": "gpu-node-117/mlx5_3 <-> leaf-r3/Ethernet12" or
// "leaf-r3/Ethernet256 <-> spine-0/Ethernet0".
//
// Either pointer may be null (no topology file, no jobs): then only what the labels already
// say is used.
class FabricMap {
 public:
  FabricMap(std::shared_ptr<const Topology> topology, const JobRegistry* jobs);
  ~FabricMap();
  FabricMap(const FabricMap&) = delete;
  FabricMap& operator=(const FabricMap&) = delete;

  // Replaces the topology while the map is in use (discovery found a change, docs/TOPOLOGY.md):
  // a call already running finishes on the map it started with.
  void Set(std::shared_ptr<const Topology> topology);

  // topology(): adds labels, never overwriting one the element has:
  //  - host + device, or host + interface (a netdev): the NIC. Adds device, netdev, rail,
  //    leaf (its switch), leaf_port, node ("host/device"), link (when the NIC's switch port is
  //    known), job (first job of the host, by name).
  //  - host + local_rank (an NCCL rank, fabric_nccl_* series), no device: gpu = the cudaDev
  //    of its NCCL Init line (JobRegistry::RankGpu, by comm and rank), else its local rank; the
  //    NIC that GPU uses in a rail-optimised fabric, the host's k-th NIC by rail; then as above.
  //  - host alone: node = host, job.
  //  - switch (+ interface): node = switch, role (from the file). With an interface whose far
  //    end is known: a NIC there adds peer_host, peer_device, rail, leaf (= switch), link, job
  //    (the peer host's); a switch there adds peer_switch, peer_port, link, and leaf (whichever
  //    end has role "leaf"). Without an interface, a leaf switch gets leaf = switch.
  // Returns false when the topology knew nothing about the element (labels still may gain
  // node).
  bool Enrich(Labels& labels) const;

  // peer(): replaces the element's identity with the far end of its cable, then Enrich()es:
  //  - a switch port facing a NIC becomes {host, device, interface = netdev};
  //  - a switch port facing a switch becomes {switch = peer, interface = peer_port};
  //  - a NIC (host + device or interface) becomes {switch = leaf, interface = leaf_port}.
  // Other labels (priority, queue ...) are kept; direction rx and tx are swapped (what one end
  // receives the other sent). Returns false, leaving labels untouched, when the far end is
  // unknown.
  bool ToPeer(Labels& labels) const;

  // Hops between two nodes over NIC-leaf and switch-switch cables; 0 for the same node, -1
  // when either is unknown or they are not connected.
  int HopDistance(std::string_view node_a, std::string_view node_b) const;

  // scope: "host" (the culprit's host, or the hosts whose NICs plug into the culprit switch
  // port), "leaf" (every host with a NIC on the culprit's leaf; a spine: every host on the
  // leaves linked to it), "rail" (every host with a NIC on the culprit's rail), "job" (the
  // hosts of the culprit host's jobs), "fabric" (every host). `culprit` is an enriched label
  // set. Jobs are those with a rank inside the scope.
  BlastRadius Blast(const Labels& culprit, std::string_view scope) const;

  // The topology now (null: none); kept alive by the caller's copy across a Set().
  std::shared_ptr<const Topology> topology() const;
  // Changes with every Set(): what topology() and peer() make of labels may have changed.
  uint64_t generation() const;
  const JobRegistry* jobs() const { return jobs_; }

 private:
  struct Index;
  struct State {
    std::shared_ptr<const Topology> topology;
    std::shared_ptr<const Index> index;
    uint64_t generation = 0;
  };
  static std::shared_ptr<const Index> BuildIndex(const Topology* topology);

  const JobRegistry* jobs_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<std::shared_ptr<const State>> state_;
};

}  // namespace railwatch
