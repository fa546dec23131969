#include "daemon/alertmanager.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/logging.h"
#include "engine/alert_proto.h"

namespace railwatch {
namespace {

// Prometheus' choice: a firing alert that is not re-sent for 4 intervals has gone away.
constexpr int kTtlIntervals = 4;
// Shutdown should not wait a full timeout for an Alertmanager that is down.
constexpr absl::Duration kFinalAttemptTimeout = absl::Seconds(2);

prometheus::Family<prometheus::Counter>& PostsFamily(prometheus::Registry& r) {
  return prometheus::BuildCounter()
      .Name("railwatch_alertmanager_posts_total")
      .Help("POSTs of alerts to an Alertmanager, by result (ok: 2xx; error: anything else)")
      .Register(r);
}

prometheus::Family<prometheus::Counter>& SentFamily(prometheus::Registry& r) {
  return prometheus::BuildCounter()
      .Name("railwatch_alertmanager_alerts_sent_total")
      .Help("Alerts (firing, re-sent and resolved) that an Alertmanager accepted")
      .Register(r);
}

prometheus::Family<prometheus::Gauge>& LastSuccessFamily(prometheus::Registry& r) {
  return prometheus::BuildGauge()
      .Name("railwatch_alertmanager_last_success_timestamp_seconds")
      .Help("Unix time of the last POST an Alertmanager accepted (0: none yet)")
      .Register(r);
}

}  // namespace

absl::Status AlertmanagerNotifier::ValidateUrls(const std::vector<std::string>& urls) {
  for (const std::string& url : urls) {
    absl::string_view rest(url);
    if (!absl::ConsumePrefix(&rest, "http://") && !absl::ConsumePrefix(&rest, "https://")) {
      return absl::InvalidArgumentError(absl::StrCat("alertmanager URL \"", RedactUrl(url),
                                                     "\" must start with http:// or https://"));
    }
    if (rest.empty() || rest.front() == '/' || rest.front() == ':') {
      return absl::InvalidArgumentError(
          absl::StrCat("alertmanager URL \"", RedactUrl(url), "\" has no host"));
    }
  }
  return absl::OkStatus();
}

AlertmanagerNotifier::AlertmanagerNotifier(Options options, Deps deps)
    : options_(std::move(options)),
      clock_(deps.clock),
      fabric_(deps.fabric),
      lookup_(std::move(deps.lookup)),
      poster_(deps.poster ? std::move(deps.poster) : std::make_unique<CurlPoster>()),
      dropped_(prometheus::BuildCounter()
                   .Name("railwatch_alertmanager_dropped_total")
                   .Help("Alerts railwatchd gave up on: the queue or an outbox was full, or an "
                         "Alertmanager refused them (4xx)")
                   .Register(deps.registry)
                   .Add({})),
      queue_length_(prometheus::BuildGauge()
                        .Name("railwatch_alertmanager_queue_length")
                        .Help("Diagnosis changes waiting for the Alertmanager notifier")
                        .Register(deps.registry)
                        .Add({})) {
  auto& posts = PostsFamily(deps.registry);
  auto& sent = SentFamily(deps.registry);
  auto& last = LastSuccessFamily(deps.registry);
  targets_.reserve(options_.urls.size());
  for (const std::string& url : options_.urls) {
    Target t{.url = RedactUrl(url),
             .endpoint = absl::StrCat(absl::StripSuffix(url, "/"), "/api/v2/alerts"),
             .outbox = {},
             .backoff = Backoff(options_.backoff)};
    t.posts_ok = &posts.Add({{"alertmanager", t.url}, {"result", "ok"}});
    t.posts_error = &posts.Add({{"alertmanager", t.url}, {"result", "error"}});
    t.alerts_sent = &sent.Add({{"alertmanager", t.url}});
    t.last_success = &last.Add({{"alertmanager", t.url}});
    targets_.push_back(std::move(t));
  }
}

AlertmanagerNotifier::~AlertmanagerNotifier() { Stop(); }

void AlertmanagerNotifier::Start() {
  absl::MutexLock lock(&mu_);
  if (running_ || stopping_) return;
  running_ = true;
  std::string urls;
  for (const Target& t : targets_) absl::StrAppend(&urls, urls.empty() ? "" : ", ", t.url);
  thread_ = std::thread([this] { Run(); });
  spdlog::info("alerts go to Alertmanager at {} (re-sent every {})", urls,
               absl::FormatDuration(options_.resend_interval));
}

void AlertmanagerNotifier::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void AlertmanagerNotifier::OnFiring(const AlertRecord& alert) {
  Enqueue(ToDiagnosis(alert, /*points=*/false), false);
}

void AlertmanagerNotifier::OnResolved(const AlertRecord& alert) {
  Enqueue(ToDiagnosis(alert, /*points=*/false), true);
}

// Sent at once, not at the next re-send: an alert that was firing in Alertmanager expires at
// the endsAt the previous process gave it (4 re-send intervals after its last post).
void AlertmanagerNotifier::OnRestored(const AlertRecord& alert) {
  Enqueue(ToDiagnosis(alert, /*points=*/false), false);
}

// Called on the engine's thread: a copy and a push under a short lock, nothing else.
void AlertmanagerNotifier::Enqueue(const v1::Diagnosis& diagnosis, bool resolved) {
  Event event{resolved, diagnosis};
  // Alerts quote the evidence's summaries, not its raw readings: a full queue of diagnoses
  // without them stays small.
  for (v1::Evidence& e : *event.diagnosis.mutable_evidence()) e.clear_points();
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  if (queue_.size() >= options_.queue_capacity) {
    queue_.pop_front();
    dropped_.Increment();
  }
  queue_.push_back(std::move(event));
  queue_length_.Set(static_cast<double>(queue_.size()));
}

bool AlertmanagerNotifier::HasWork() const { return stopping_ || !queue_.empty(); }

absl::Time AlertmanagerNotifier::NextWake(absl::Time next_resend) const {
  absl::Time wake = next_resend;
  for (const Target& t : targets_) {
    if (!t.outbox.empty()) wake = std::min(wake, t.next_attempt);
  }
  return wake;
}

void AlertmanagerNotifier::Run() {
  absl::Time next_resend = absl::Now() + options_.resend_interval;
  while (true) {
    std::deque<Event> events;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithDeadline(absl::Condition(this, &AlertmanagerNotifier::HasWork),
                            NextWake(next_resend));
      events.swap(queue_);
      queue_length_.Set(0);
      stopping = stopping_;
    }
    for (Event& e : events) Apply(e);
    if (stopping) break;
    const absl::Time now = absl::Now();
    if (now >= next_resend) {
      QueueResends();
      next_resend = now + options_.resend_interval;
    }
    for (Target& t : targets_) {
      if (t.outbox.empty() || now < t.next_attempt) continue;
      if (!Deliver(t, options_.timeout)) t.next_attempt = absl::Now() + t.backoff.Next();
    }
  }
  // Resolves (and new alerts) found on the way out get one attempt.
  for (Target& t : targets_) {
    if (!t.outbox.empty()) Deliver(t, std::min(options_.timeout, kFinalAttemptTimeout));
  }
}

void AlertmanagerNotifier::Apply(Event& e) {
  const v1::Diagnosis& d = e.diagnosis;
  if (!e.resolved) {
    auto [it, inserted] = firing_.try_emplace(d.id());
    if (inserted) {
      it->second = BuildAlert(d, fabric_, options_.format);
    } else {
      it->second.annotations = AlertAnnotations(d, options_.format);
    }
    Owe(it->second);
    return;
  }
  Alert alert;
  if (auto it = firing_.find(d.id()); it != firing_.end()) {
    // Same labels as when it fired, or Alertmanager would see a different alert; and the
    // annotations last sent, so the resolve reads like the page it closes (the diagnosis'
    // last evaluation may describe one end of a link only).
    alert = std::move(it->second);
    firing_.erase(it);
    alert.resolved_at_unix_nano = std::max<int64_t>(d.resolved_at_unix_nano(), 1);
  } else {
    // Its firing was dropped from a full queue (or came before a restart): resolve anyway.
    alert = BuildAlert(d, fabric_, options_.format);
    if (!alert.resolved()) alert.resolved_at_unix_nano = std::max<int64_t>(clock_.NowNanos(), 1);
  }
  Owe(alert);
}

void AlertmanagerNotifier::QueueResends() {
  for (auto& [id, alert] : firing_) {
    if (lookup_) {
      std::optional<v1::Diagnosis> now = lookup_(id);
      if (now && now->state() == v1::DIAGNOSIS_STATE_FIRING) {
        alert.annotations = AlertAnnotations(*now, options_.format);
      }
    }
    Owe(alert);
  }
}

void AlertmanagerNotifier::Owe(const Alert& alert) {
  for (Target& t : targets_) {
    auto it = t.outbox.find(alert.diagnosis_id);
    if (it != t.outbox.end()) {
      it->second = alert;
      continue;
    }
    if (t.outbox.size() >= options_.outbox_capacity) {
      t.outbox.erase(t.outbox.begin());
      dropped_.Increment();
    }
    t.outbox.emplace(alert.diagnosis_id, alert);
  }
}

bool AlertmanagerNotifier::Deliver(Target& t, absl::Duration timeout) {
  const absl::Duration ttl = kTtlIntervals * options_.resend_interval;
  while (!t.outbox.empty()) {
    std::vector<const Alert*> batch;
    for (auto it = t.outbox.begin();
         it != t.outbox.end() && batch.size() < options_.max_alerts_per_post; ++it) {
      batch.push_back(&it->second);
    }
    const std::string body = AlertsToJson(batch, clock_.NowNanos(), ttl);
    const PostResult r = poster_->PostJson(t.endpoint, body, timeout);
    // Posted or refused for good: either way these leave the outbox.
    if (r.ok || !r.retry) {
      for (const Alert* a : batch) t.outbox.erase(a->diagnosis_id);
    }
    if (r.ok) {
      t.posts_ok->Increment();
      t.alerts_sent->Increment(static_cast<double>(batch.size()));
      t.last_success->Set(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
      t.backoff.Reset();
      if (t.failing) spdlog::info("alertmanager {}: posting alerts again", t.url);
      t.failing = false;
      continue;
    }
    t.posts_error->Increment();
    if (!r.retry) {
      dropped_.Increment(static_cast<double>(batch.size()));
      spdlog::error("alertmanager {} refused {} alert(s), dropped: {}", t.url, batch.size(),
                    r.error);
      continue;
    }
    // One line when it starts failing; the retries that follow are counted, not logged.
    if (!t.failing) {
      spdlog::warn("alertmanager {}: cannot post {} alert(s): {} (retrying with backoff)", t.url,
                   t.outbox.size(), r.error);
    } else {
      spdlog::debug("alertmanager {}: still failing: {}", t.url, r.error);
    }
    t.failing = true;
    return false;
  }
  return true;
}

}  // namespace railwatch
