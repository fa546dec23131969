#pragma once

// railwatchd -> Alertmanager: every firing diagnosis becomes an alert, posted to each
// configured Alertmanager (POST /api/v2/alerts), re-sent while it fires and resolved when it
// resolves, the way Prometheus' notifier does it.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/backoff.h"
#include "common/clock.h"
#include "daemon/alert_format.h"
#include "daemon/alert_poster.h"
#include "engine/engine.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace railwatch {

// A DiagnosisListener that posts alerts to Alertmanager from one worker thread.
//
// The engine's callbacks only copy the diagnosis into a bounded queue (when it is full the
// oldest entry is dropped and counted), so a slow or dead Alertmanager never holds up
// evaluation. The worker keeps the firing alerts and, per Alertmanager, an outbox of alerts
// it owes that Alertmanager: a new alert or a resolve goes out at once; every
// `resend_interval` every firing alert is queued again with endsAt = now + 4 x the interval, so
// Alertmanager resolves it on its own only if railwatchd stops sending (a crash); a failed post
// is retried with capped, jittered backoff for that URL only. An alert keeps the labels it was
// first sent with until it resolves: its identity in Alertmanager never changes mid-incident.
class AlertmanagerNotifier final : public DiagnosisListener {
 public:
  struct Options {
    // Base URLs, e.g. http://alertmanager-0:9093; /api/v2/alerts is appended.
    std::vector<std::string> urls;
    absl::Duration resend_interval = absl::Minutes(1);
    absl::Duration timeout = absl::Seconds(10);
    AlertFormatOptions format;
    // Diagnoses waiting for the worker.
    size_t queue_capacity = 4096;
    // Alerts owed to one Alertmanager (firing ones plus resolves not yet delivered).
    size_t outbox_capacity = 10000;
    size_t max_alerts_per_post = 500;
    Backoff::Options backoff = {absl::Milliseconds(500), absl::Seconds(30), 2.0, 0.2};
  };

  struct Deps {
    const Clock& clock;
    prometheus::Registry& registry;
    // Topology labels (rail, leaf, job) for alert labels; may be null.
    const FabricMap* fabric = nullptr;
    // The current version of a diagnosis (Engine::Get), so re-sends carry fresh annotations
    // (blast radius, evidence); may be empty.
    std::function<std::optional<v1::Diagnosis>(const std::string& id)> lookup;
    // Null: libcurl.
    std::unique_ptr<HttpPoster> poster;
  };

  AlertmanagerNotifier(Options options, Deps deps);
  ~AlertmanagerNotifier() override;

  // Every URL must be http:// or https:// with a host.
  static absl::Status ValidateUrls(const std::vector<std::string>& urls);

  void Start();
  // Delivers what is queued with one last attempt per Alertmanager, then stops the worker.
  // Alerts still firing expire in Alertmanager at their endsAt.
  void Stop();

  // Listener calls (engine's thread): the alert's v1::Diagnosis is built here (alert_proto.h),
  // without the readings, and queued for the worker.
  void OnFiring(const AlertRecord& alert) override;
  void OnResolved(const AlertRecord& alert) override;
  // A diagnosis that fired before railwatchd restarted: taken up again, with the labels and
  // startsAt it was first sent with, so that Alertmanager sees the same alert (no new page)
  // and keeps it active; re-sent and resolved like any other.
  void OnRestored(const AlertRecord& alert) override;

 private:
  struct Event {
    bool resolved = false;
    v1::Diagnosis diagnosis;
  };
  struct Target {
    std::string url;       // as configured, credentials removed: logs and metric labels
    std::string endpoint;  // <url>/api/v2/alerts
    std::map<std::string, Alert> outbox;  // by diagnosis id; the newest version wins
    Backoff backoff;
    absl::Time next_attempt = absl::InfinitePast();
    bool failing = false;
    prometheus::Counter* posts_ok = nullptr;
    prometheus::Counter* posts_error = nullptr;
    prometheus::Counter* alerts_sent = nullptr;
    prometheus::Gauge* last_success = nullptr;
  };

  void Enqueue(const v1::Diagnosis& diagnosis, bool resolved);
  void Run();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Time NextWake(absl::Time next_resend) const;
  void Apply(Event& event);
  void QueueResends();
  void Owe(const Alert& alert);
  // Posts the target's outbox; false when a post failed and should be retried later.
  bool Deliver(Target& target, absl::Duration timeout);

  const Options options_;
  const Clock& clock_;
  const FabricMap* const fabric_;
  const std::function<std::optional<v1::Diagnosis>(const std::string&)> lookup_;
  std::unique_ptr<HttpPoster> poster_;

  prometheus::Counter& dropped_;
  prometheus::Gauge& queue_length_;

  mutable absl::Mutex mu_;
  std::deque<Event> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;

  // The worker's own state: no lock.
  absl::flat_hash_map<std::string, Alert> firing_;  // by diagnosis id
  std::vector<Target> targets_;
  std::thread thread_;
};

}  // namespace railwatch
