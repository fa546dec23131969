// KubeletCollector (collectors/kubelet_collector.h).

#include "collectors/kubelet_collector.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jobs/kubelet_client.h"
#include "spdlog/spdlog.h"

namespace railwatch {

KubeletCollector::KubeletCollector(Options options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  if (!options_.lister) options_.lister = jobs::ListPodResources;
}

KubeletCollector::~KubeletCollector() {
  stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void KubeletCollector::QueryOnce() {
  // The query happens outside the lock: Collect, on the agent's poll thread, takes it.
  absl::StatusOr<std::vector<jobs::KubePod>> pods =
      options_.lister(options_.socket, options_.timeout);
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (!pods.ok()) {
    const absl::Status& s = pods.status();
    // --kubelet=auto on a host without a kubelet: nothing to say, nothing counted.
    if (options_.optional && absl::IsNotFound(s) && !active_) return;
    active_ = true;
    up_ = false;
    Result r = kFailed;
    if (absl::IsNotFound(s)) {
      r = kNoSocket;
    } else if (absl::IsPermissionDenied(s)) {
      r = kDenied;
    } else if (absl::IsDeadlineExceeded(s)) {
      r = kTimeout;
    }
    ++results_[r];
    if (s != last_error_) {
      spdlog::warn("kubelet: {} (the jobs last sent are kept)", std::string(s.message()));
      last_error_ = s;
    }
    return;
  }
  active_ = true;
  if (!up_ && !last_error_.ok()) spdlog::info("kubelet: {} answers again", options_.socket);
  last_error_ = absl::OkStatus();
  up_ = true;
  ++results_[kOk];

  const std::vector<jobs::KubeHostJob> host_jobs = jobs::HostJobsFromPods(*pods);
  std::string encoded = jobs::EncodeHostJobs(host_jobs);
  const bool changed = !sent_ || encoded != last_jobs_;
  if (!changed && now - last_sent_ < options_.resend) return;
  uint64_t npods = 0, gpus = 0, rdma = 0;
  for (const jobs::KubeHostJob& j : host_jobs) {
    npods += j.pods.size();
    gpus += j.gpus;
    rdma += j.rdma;
  }
  if (changed) {
    spdlog::info("kubelet: {} job pod(s) here: {}", npods, encoded.empty() ? "none" : encoded);
  }
  EventRecord e;
  e.kind = "kubernetes.pods";
  e.time_unix_nano = absl::ToUnixNanos(now);
  e.attributes = {{"jobs", encoded},
                  {"pods", absl::StrCat(npods)},
                  {"gpus", absl::StrCat(gpus)},
                  {"rdma", absl::StrCat(rdma)},
                  {"socket", options_.socket},
                  {"reason", changed ? "changed" : "refresh"}};
  pending_.push_back(std::move(e));
  sent_ = true;
  last_jobs_ = std::move(encoded);
  last_sent_ = now;
}

void KubeletCollector::Run() {
  do {
    QueryOnce();
  } while (!stop_.WaitForNotificationWithTimeout(options_.interval));
}

absl::Status KubeletCollector::Collect(Emitter& emitter) {
  if (options_.background && !thread_.joinable()) thread_ = std::thread([this] { Run(); });
  std::vector<EventRecord> events;
  const int64_t t = clock_.NowNanos();
  absl::MutexLock lock(&mu_);
  events.swap(pending_);
  if (active_) {
    if (!defined_) {
      for (int r = 0; r < kResults; ++r) {
        series_[r] = emitter.DefineSeries("railwatch_kubelet_queries_total", MetricKind::kCounter,
                                          {{"result", kResultNames[r]}});
      }
      up_series_ = emitter.DefineSeries("railwatch_kubelet_up", MetricKind::kGauge, {});
      defined_ = true;
    }
    for (int r = 0; r < kResults; ++r) emitter.Counter(series_[r], results_[r], t);
    emitter.Gauge(up_series_, up_ ? 1 : 0, t);
  }
  for (EventRecord& e : events) emitter.Event(std::move(e));
  return absl::OkStatus();
}

}  // namespace railwatch
