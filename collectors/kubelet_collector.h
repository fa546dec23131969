#pragma once

// The host agent asks the kubelet which pods on this host hold GPUs and RDMA devices, and tells
// the daemon which jobs they belong to (docs/JOBS.md, "Kubernetes"). The daemon's JobRegistry
// merges every host's report into jobs with their hosts and GPUs (source "kubernetes").
//
// How: List on the kubelet's pod-resources socket (jobs/kubelet_client.h) every `interval`,
// each bounded by `timeout`, on a thread of its own: a stuck kubelet never holds the agent's
// poll loop. The pods become the host's jobs by jobs::HostJobsFromPods (a pod with neither a GPU
// nor an RDMA device is no job; its job from its name, jobs::KubeJobName).
//
// What: an event `kubernetes.pods` when the host's jobs change (also to none: pods that left),
// at the first answer, and again every `resend` while they stay the same (so that a restarted
// daemon learns them). Attributes: jobs (jobs::EncodeHostJobs), pods, gpus, rdma (the host's
// totals), socket, reason ("changed" or "refresh"). A failed query keeps what was sent: a
// restarting kubelet is not pods leaving.
//
// Series: railwatch_kubelet_queries_total{result} (ok, no_socket, denied, timeout, failed) and
// railwatch_kubelet_up. With `optional` (--kubelet=auto) a missing socket is no kubelet here,
// not a failure: nothing is counted or sent until the socket appears.

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "common/clock.h"
#include "jobs/kubelet.h"
#include "jobs/kubelet_client.h"

namespace railwatch {

class KubeletCollector final : public Collector {
 public:
  using Lister = std::function<absl::StatusOr<std::vector<jobs::KubePod>>(const std::string& socket,
                                                                          absl::Duration timeout)>;
  struct Options {
    std::string socket = jobs::kDefaultKubeletSocket;
    absl::Duration interval = absl::Seconds(10);
    absl::Duration timeout = absl::Seconds(2);
    absl::Duration resend = absl::Minutes(5);
    // --kubelet=auto: a missing socket is no kubelet on this host (nothing counted).
    bool optional = false;
    // Query on a thread of its own every interval (false: only when QueryOnce is called).
    bool background = true;
    // The query (tests); empty: jobs::ListPodResources.
    Lister lister;
  };

  KubeletCollector(Options options, const Clock& clock);
  ~KubeletCollector() override;

  std::string_view name() const override { return "kubelet"; }
  // Sends what the query thread learnt since the last cycle; starts the thread on first use.
  absl::Status Collect(Emitter& emitter) override;

  // One query on the calling thread (tests; the thread calls it every interval).
  void QueryOnce();

 private:
  enum Result { kOk, kNoSocket, kDenied, kTimeout, kFailed, kResults };
  static constexpr const char* kResultNames[kResults] = {"ok", "no_socket", "denied", "timeout",
                                                         "failed"};
  void Run();

  Options options_;
  const Clock& clock_;
  absl::Mutex mu_;
  bool active_ ABSL_GUARDED_BY(mu_) = false;  // asked at least once (series defined from then)
  uint64_t results_[kResults] ABSL_GUARDED_BY(mu_) = {};
  bool up_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);  // logged when it changes
  bool sent_ ABSL_GUARDED_BY(mu_) = false;
  std::string last_jobs_ ABSL_GUARDED_BY(mu_);  // the last sent `jobs`
  absl::Time last_sent_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::vector<EventRecord> pending_ ABSL_GUARDED_BY(mu_);
  uint32_t series_[kResults] = {};  // poll thread only
  uint32_t up_series_ = 0;
  bool defined_ = false;
  std::thread thread_;
  absl::Notification stop_;
};

}  // namespace railwatch
