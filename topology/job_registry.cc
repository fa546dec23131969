// JobRegistry (topology/fabric_map.h): static jobs from the topology file and jobs learnt from
// the NCCL communicator events that the log collector emits (logs/nccl_info.cc Communicator():
// nccl.comm_init carries rank, nranks, comm, cuda_dev, bus_id and, from NCCL ~2.19, comm_id;
// nccl.comm_info carries rank, nranks, nnodes, comm but never comm_id), jobs a scheduler
// reports (SetScheduled) and the job pods the host agents read from their kubelets
// (kubernetes.pods events, collectors/kubelet_collector.h).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "jobs/kubelet.h"
#include "topology/fabric_map.h"

namespace railwatch {
namespace {

constexpr char kStatic[] = "topology";
constexpr char kLearnt[] = "nccl";
constexpr char kKubernetes[] = "kubernetes";
constexpr char kKubePodsEvent[] = "kubernetes.pods";

std::string CommKey(std::string_view host, std::string_view comm) {
  std::string key(host);
  key.push_back('\0');
  key.append(comm);
  return key;
}

std::string_view StripHexPrefix(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return s;
}

// The host a rank runs on: the agent's own host label (the name every other series of that
// machine carries, so the topology knows it) before the NCCL line prefix (a pod's hostname
// under Kubernetes, a short name elsewhere); the prefix serves pasted logs that have no label.
std::string_view EventHost(const StoredEvent& e) {
  if (const std::string* h = FindLabel(e.labels, "host"); h != nullptr && !h->empty()) return *h;
  if (const std::string* h = e.Attribute("host"); h != nullptr) return *h;
  return {};
}

bool Covers(const std::vector<std::string>& sorted_outer,
            const std::vector<std::string>& sorted_inner) {
  return std::includes(sorted_outer.begin(), sorted_outer.end(), sorted_inner.begin(),
                       sorted_inner.end());
}

}  // namespace

void JobRegistry::SetStatic(const std::vector<TopologyJob>& jobs) {
  absl::MutexLock lock(&mu_);
  absl::erase_if(jobs_, [](const auto& kv) { return kv.second.source == kStatic; });
  for (const TopologyJob& j : jobs) {
    JobInfo info;
    info.name = j.name;
    info.hosts = j.hosts;
    std::sort(info.hosts.begin(), info.hosts.end());
    info.hosts.erase(std::unique(info.hosts.begin(), info.hosts.end()), info.hosts.end());
    info.gpus = static_cast<uint32_t>(info.hosts.size()) *
                static_cast<uint32_t>(std::max(j.gpus_per_host, 1));
    info.ranks = info.gpus;
    info.source = kStatic;
    jobs_[info.name] = std::move(info);  // a static job takes its name from a learnt one
  }
  for (const auto& [key, learnt] : learnt_) PublishLocked(key);
  RebuildHostIndexLocked();
}

bool JobRegistry::SetScheduled(const std::string& source, std::vector<JobInfo> jobs) {
  absl::MutexLock lock(&mu_);
  return SetScheduledLocked(source, std::move(jobs));
}

bool JobRegistry::SetHostPods(const std::string& host, int64_t time_unix_nano,
                              std::string_view text) {
  if (host.empty()) return false;
  std::vector<HostPods> reported;
  for (jobs::KubeHostJob& j : jobs::DecodeHostJobs(text)) {
    reported.push_back({std::move(j.name), std::move(j.pods), j.gpus, j.rdma});
  }
  absl::MutexLock lock(&mu_);
  auto known = kube_hosts_.find(host);
  if (known != kube_hosts_.end() && time_unix_nano < known->second.time_unix_nano) return false;
  if (reported.empty() && known == kube_hosts_.end()) return false;
  // A host that reports no pods stays, empty, so that an older report cannot bring them back.
  KubeHost& entry = kube_hosts_[host];
  entry.time_unix_nano = time_unix_nano;
  entry.jobs = std::move(reported);
  // Every host's share, merged by job name: hosts joined, GPUs and devices summed.
  struct Merged {
    JobInfo info;
    std::vector<std::string> pods;
    uint32_t rdma = 0;
  };
  std::map<std::string, Merged> merged;
  for (const auto& [name, h] : kube_hosts_) {
    for (const HostPods& share : h.jobs) {
      Merged& m = merged[share.job];
      m.info.name = share.job;
      m.info.hosts.push_back(name);
      m.info.gpus += share.gpus;
      m.info.last_seen_unix_nano = std::max(m.info.last_seen_unix_nano, h.time_unix_nano);
      m.rdma += share.rdma;
      m.pods.insert(m.pods.end(), share.pods.begin(), share.pods.end());
    }
  }
  std::vector<JobInfo> kube_jobs;
  kube_jobs.reserve(merged.size());
  for (auto& [name, m] : merged) {
    m.info.ranks = m.info.gpus;
    const size_t slash = name.find('/');
    m.info.detail =
        absl::StrCat("pods ", jobs::CompactPodNames(m.pods), " in ns ", name.substr(0, slash));
    if (m.rdma > 0) absl::StrAppend(&m.info.detail, ", ", m.rdma, " RDMA devices");
    kube_jobs.push_back(std::move(m.info));
  }
  return SetScheduledLocked(kKubernetes, std::move(kube_jobs));
}

bool JobRegistry::SetScheduledLocked(const std::string& source, std::vector<JobInfo> jobs) {
  // What this source published before, to tell whether anything changed.
  std::vector<JobInfo> before;
  for (const auto& [name, job] : jobs_) {
    if (job.source == source) before.push_back(job);
  }
  absl::erase_if(jobs_, [&](const auto& kv) { return kv.second.source == source; });
  for (JobInfo& job : jobs) {
    std::sort(job.hosts.begin(), job.hosts.end());
    job.hosts.erase(std::unique(job.hosts.begin(), job.hosts.end()), job.hosts.end());
    job.source = source;
    auto it = jobs_.find(job.name);
    if (it != jobs_.end() && it->second.source == kStatic) continue;  // the file's name wins
    jobs_[job.name] = std::move(job);
  }
  // Learnt jobs covered by a scheduled one are that job; those it no longer covers come back.
  for (const auto& [key, learnt] : learnt_) PublishLocked(key);
  std::vector<JobInfo> after;
  for (const auto& [name, job] : jobs_) {
    if (job.source == source) after.push_back(job);
  }
  const auto same = [](const JobInfo& a, const JobInfo& b) {
    return a.name == b.name && a.hosts == b.hosts && a.gpus == b.gpus && a.detail == b.detail;
  };
  const auto by_name = [](const JobInfo& a, const JobInfo& b) { return a.name < b.name; };
  std::sort(before.begin(), before.end(), by_name);
  std::sort(after.begin(), after.end(), by_name);
  const bool changed = !std::equal(before.begin(), before.end(), after.begin(), after.end(), same);
  // The same jobs again (most polls): readers' cached job labels stay valid.
  if (changed) RebuildHostIndexLocked();
  return changed;
}

bool JobRegistry::Observe(const StoredEvent& event) {
  if (event.kind == kKubePodsEvent) {
    const std::string* jobs = event.Attribute("jobs");
    if (jobs == nullptr) return false;  // not the collector's: an empty set carries jobs=""
    return SetHostPods(std::string(EventHost(event)), event.time_unix_nano, *jobs);
  }
  if (event.kind != "nccl.comm_init" && event.kind != "nccl.comm_info") return false;
  const std::string_view host = EventHost(event);
  const std::string* rank_text = event.Attribute("rank");
  int rank = -1;
  if (host.empty() || rank_text == nullptr || !absl::SimpleAtoi(*rank_text, &rank) || rank < 0) {
    return false;
  }
  uint32_t nranks = 0;
  if (const std::string* n = event.Attribute("nranks"); n != nullptr) {
    if (!absl::SimpleAtoi(*n, &nranks)) nranks = 0;
  }
  const std::string* comm = event.Attribute("comm");
  const std::string* comm_id = event.Attribute("comm_id");
  if (comm_id != nullptr && StripHexPrefix(*comm_id).empty()) comm_id = nullptr;
  if (comm == nullptr && comm_id == nullptr) return false;

  absl::MutexLock lock(&mu_);
  bool changed = false;
  std::string key;
  if (comm_id != nullptr) {
    key = absl::AsciiStrToLower(*comm_id);
    if (comm != nullptr) {
      // A comm_info line printed before the Init line that names the commId was learnt under
      // the host/comm fallback: move its ranks to the real job.
      std::string& known = comm_keys_[CommKey(host, *comm)];
      if (!known.empty() && known != key) {
        auto old = learnt_.find(known);
        if (old != learnt_.end()) {
          Learnt moved = std::move(old->second);
          learnt_.erase(old);
          auto published = jobs_.find(moved.name);
          if (published != jobs_.end() && published->second.source == kLearnt) {
            jobs_.erase(published);
          }
          Learnt& into = learnt_[key];
          for (auto& [r, h] : moved.rank_hosts) into.rank_hosts.try_emplace(r, std::move(h));
          for (const auto& [r, g] : moved.rank_gpus) into.rank_gpus.try_emplace(r, g);
          if (into.nranks == 0) into.nranks = moved.nranks;
          into.last_seen_unix_nano =
              std::max(into.last_seen_unix_nano, moved.last_seen_unix_nano);
          changed = true;
        }
      }
      known = key;
    }
  } else {
    std::string& known = comm_keys_[CommKey(host, *comm)];
    if (known.empty()) known = CommKey(host, *comm);
    key = known;
  }

  Learnt& job = learnt_[key];
  if (job.name.empty()) {
    std::string name = comm_id != nullptr
                           ? absl::StrCat("nccl-", AsAbsl(StripHexPrefix(key).substr(0, 8)))
                           : absl::StrCat("nccl-", AsAbsl(host), "-", AsAbsl(StripHexPrefix(*comm)));
    const bool taken = std::any_of(learnt_.begin(), learnt_.end(), [&](const auto& kv) {
      return kv.first != key && kv.second.name == name;
    });
    if (taken) name = absl::StrCat("nccl-", AsAbsl(StripHexPrefix(key)));
    job.name = std::move(name);
    changed = true;
  }
  auto [at, inserted] = job.rank_hosts.try_emplace(rank, host);
  if (!inserted && at->second != host) {
    at->second = std::string(host);
    changed = true;
  }
  changed = changed || inserted;
  // The rank's GPU: FabricMap::Enrich names the NIC that GPU uses (a new label: a change).
  if (const std::string* dev = event.Attribute("cuda_dev"); dev != nullptr) {
    if (int gpu = -1; absl::SimpleAtoi(*dev, &gpu) && gpu >= 0) {
      auto [g, new_gpu] = job.rank_gpus.try_emplace(rank, gpu);
      if (!new_gpu && g->second != gpu) g->second = gpu, new_gpu = true;
      changed = changed || new_gpu;
    }
  }
  if (nranks > 0 && nranks != job.nranks) {
    job.nranks = nranks;
    changed = true;
  }
  job.last_seen_unix_nano = std::max(job.last_seen_unix_nano, event.time_unix_nano);
  if (changed) {
    PublishLocked(key);
    RebuildHostIndexLocked();
  } else if (auto p = jobs_.find(job.name); p != jobs_.end() && p->second.source == kLearnt) {
    p->second.last_seen_unix_nano = job.last_seen_unix_nano;
  }
  return changed;
}

void JobRegistry::PublishLocked(const std::string& key) {
  const Learnt& learnt = learnt_.at(key);
  JobInfo info;
  info.name = learnt.name;
  for (const auto& [rank, host] : learnt.rank_hosts) info.hosts.push_back(host);
  std::sort(info.hosts.begin(), info.hosts.end());
  info.hosts.erase(std::unique(info.hosts.begin(), info.hosts.end()), info.hosts.end());
  info.ranks = learnt.nranks > 0 ? learnt.nranks
                                 : static_cast<uint32_t>(learnt.rank_hosts.size());
  info.gpus = info.ranks;
  info.source = kLearnt;
  info.last_seen_unix_nano = learnt.last_seen_unix_nano;

  // A communicator of a job the topology file or a scheduler already names is that job, not a
  // second one.
  bool covered = false;
  for (const auto& [name, job] : jobs_) {
    if (job.source != kLearnt && Covers(job.hosts, info.hosts)) covered = true;
  }
  auto it = jobs_.find(info.name);
  if (it != jobs_.end() && it->second.source != kLearnt) return;
  if (covered) {
    if (it != jobs_.end()) jobs_.erase(it);
    return;
  }
  jobs_[info.name] = std::move(info);
}

void JobRegistry::RebuildHostIndexLocked() {
  host_jobs_.clear();
  for (const auto& [name, job] : jobs_) {
    for (const std::string& host : job.hosts) host_jobs_[host].push_back(name);
  }
  for (auto& [host, names] : host_jobs_) std::sort(names.begin(), names.end());
  generation_.fetch_add(1, std::memory_order_release);
}

std::vector<JobInfo> JobRegistry::JobsOnHosts(const std::vector<std::string>& hosts) const {
  absl::MutexLock lock(&mu_);
  std::vector<const std::string*> names;
  for (const std::string& host : hosts) {
    auto it = host_jobs_.find(host);
    if (it == host_jobs_.end()) continue;
    for (const std::string& name : it->second) names.push_back(&name);
  }
  std::sort(names.begin(), names.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  names.erase(std::unique(names.begin(), names.end(),
                          [](const std::string* a, const std::string* b) { return *a == *b; }),
              names.end());
  std::vector<JobInfo> out;
  out.reserve(names.size());
  for (const std::string* name : names) out.push_back(jobs_.at(*name));
  return out;
}

std::vector<std::string> JobRegistry::JobsOfHost(std::string_view host) const {
  absl::MutexLock lock(&mu_);
  auto it = host_jobs_.find(AsAbsl(host));
  return it == host_jobs_.end() ? std::vector<std::string>{} : it->second;
}

bool JobRegistry::FirstJobOfHost(std::string_view host, std::string* job) const {
  absl::MutexLock lock(&mu_);
  auto it = host_jobs_.find(AsAbsl(host));
  if (it == host_jobs_.end() || it->second.empty()) return false;
  *job = it->second.front();
  return true;
}

std::vector<JobInfo> JobRegistry::All() const {
  absl::MutexLock lock(&mu_);
  std::vector<JobInfo> out;
  out.reserve(jobs_.size());
  for (const auto& [name, job] : jobs_) out.push_back(job);
  std::sort(out.begin(), out.end(),
            [](const JobInfo& a, const JobInfo& b) { return a.name < b.name; });
  return out;
}

}  // namespace railwatch
