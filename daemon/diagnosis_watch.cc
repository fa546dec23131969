#include "daemon/diagnosis_watch.h"

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "engine/alert_proto.h"

namespace railwatch {
namespace {

using EventPtr = std::shared_ptr<const v1::DiagnosisEvent>;

bool Ends(v1::DiagnosisEvent::Kind kind) {
  return kind == v1::DiagnosisEvent::KIND_RESOLVED || kind == v1::DiagnosisEvent::KIND_CLEARED;
}

}  // namespace

// One WatchDiagnoses stream. gRPC allows one write in flight per stream, so events wait in a
// bounded queue; whoever changes the state under the lock (the engine's fan-out, a finished
// write, a cancel, Close) gets back the one step to take (a write or the Finish) and takes it
// after releasing every lock: the stream cannot end before a step it was promised, since only
// Finish ends it and Finish waits for the write in flight.
class WatchSession final : public grpc::ServerWriteReactor<v1::DiagnosisEvent> {
 public:
  struct Step {
    enum What { kNone, kWrite, kFinish };
    What what = kNone;
    const v1::DiagnosisEvent* event = nullptr;
    grpc::Status status;
  };

  WatchSession(DiagnosisWatchHub& hub, DiagnosisFilter filter, std::string peer)
      : hub_(hub), filter_(std::move(filter)), peer_(std::move(peer)) {}

  // The initial diagnoses that match, then SYNCED; the queue may hold `queue_limit` changes
  // on top of them.
  Step Begin(std::vector<v1::Diagnosis> initial, bool send_initial, size_t queue_limit,
             int64_t now) {
    absl::MutexLock lock(&mu_);
    if (send_initial) {
      for (v1::Diagnosis& d : initial) {
        if (!filter_.Matches(d)) continue;
        if (d.state() != v1::DIAGNOSIS_STATE_RESOLVED) sent_.insert(d.id());
        auto e = std::make_shared<v1::DiagnosisEvent>();
        e->set_kind(v1::DiagnosisEvent::KIND_INITIAL);
        e->set_time_unix_nano(now);
        *e->mutable_diagnosis() = std::move(d);
        queue_.push_back(std::move(e));
      }
    }
    auto synced = std::make_shared<v1::DiagnosisEvent>();
    synced->set_kind(v1::DiagnosisEvent::KIND_SYNCED);
    synced->set_time_unix_nano(now);
    queue_.push_back(std::move(synced));
    limit_ = queue_limit + queue_.size();
    return NextLocked();
  }

  // A change from the engine. *fell_behind is set when it overflowed the queue.
  Step Offer(const EventPtr& event, bool* fell_behind) {
    absl::MutexLock lock(&mu_);
    if (ending_) return {};
    const v1::Diagnosis& d = event->diagnosis();
    if (Ends(event->kind())) {
      if (sent_.erase(d.id()) == 0 && !filter_.Matches(d)) return {};
    } else {
      if (!filter_.Matches(d)) return {};
      sent_.insert(d.id());
    }
    if (queue_.size() >= limit_) {
      *fell_behind = true;
      queue_.clear();
      EndLocked({grpc::StatusCode::RESOURCE_EXHAUSTED, "watcher fell behind; reconnect"});
      return NextLocked();
    }
    queue_.push_back(event);
    return NextLocked();
  }

  Step End(grpc::Status status) {
    absl::MutexLock lock(&mu_);
    EndLocked(std::move(status));
    return NextLocked();
  }

  void Take(const Step& step) {
    if (step.what == Step::kWrite) StartWrite(step.event);
    if (step.what == Step::kFinish) Finish(step.status);
  }

  const std::string& peer() const { return peer_; }

  void OnWriteDone(bool ok) override {
    Step step;
    {
      absl::MutexLock lock(&mu_);
      writing_.reset();
      // Not ok: the client went away or the call was cancelled; it only needs its Finish.
      if (!ok) EndLocked({grpc::StatusCode::CANCELLED, "the stream broke"});
      step = NextLocked();
    }
    Take(step);
  }

  void OnCancel() override { Take(End({grpc::StatusCode::CANCELLED, "cancelled"})); }

  void OnDone() override {
    hub_.Remove(this);
    delete this;
  }

 private:
  // The first reason to end wins; what is still queued is not sent.
  void EndLocked(grpc::Status status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (ending_) return;
    ending_ = true;
    final_status_ = std::move(status);
    queue_.clear();
  }

  // What to do now that nothing else is in flight, if anything.
  Step NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || finished_) return {};
    if (ending_) {
      finished_ = true;
      return {Step::kFinish, nullptr, final_status_};
    }
    if (queue_.empty()) return {};
    writing_ = std::move(queue_.front());
    queue_.pop_front();
    return {Step::kWrite, writing_.get(), {}};
  }

  DiagnosisWatchHub& hub_;
  const DiagnosisFilter filter_;
  const std::string peer_;
  absl::Mutex mu_;
  std::deque<EventPtr> queue_ ABSL_GUARDED_BY(mu_);
  size_t limit_ ABSL_GUARDED_BY(mu_) = 0;
  EventPtr writing_ ABSL_GUARDED_BY(mu_);  // the write in flight
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Finish called or about to be
  grpc::Status final_status_ ABSL_GUARDED_BY(mu_);
  // Ids sent as INITIAL, PENDING or FIRING and not yet ended: their end is sent whatever the
  // filter's states say.
  absl::flat_hash_set<std::string> sent_ ABSL_GUARDED_BY(mu_);
};

namespace {

class Refused final : public grpc::ServerWriteReactor<v1::DiagnosisEvent> {
 public:
  explicit Refused(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

grpc::ServerWriteReactor<v1::DiagnosisEvent>* RefusedWatch(grpc::Status status) {
  return new Refused(std::move(status));
}

DiagnosisWatchHub::DiagnosisWatchHub(const Engine& engine, const Clock& clock, Options options)
    : engine_(engine), clock_(clock), options_(options) {}

DiagnosisWatchHub::~DiagnosisWatchHub() {
  absl::MutexLock lock(&mu_);
  if (!sessions_.empty()) {
    spdlog::error(
        "{} diagnosis watches still open when their hub went away (the gRPC server "
        "must shut down first)",
        sessions_.size());
  }
}

grpc::ServerWriteReactor<v1::DiagnosisEvent>* DiagnosisWatchHub::Watch(
    grpc::CallbackServerContext* ctx, const v1::WatchDiagnosesRequest& request) {
  auto* session = new WatchSession(*this, DiagnosisFilter(request.filter()), ctx->peer());
  WatchSession::Step step;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      step = session->End({grpc::StatusCode::UNAVAILABLE, "railwatchd is shutting down"});
    } else {
      sessions_.insert(session);
      ++stats_.started;
      // Registered before the snapshot, under the lock the fan-out takes: a change is either
      // in the snapshot or queued after SYNCED (or both, when it lands in between), never
      // lost.
      std::vector<v1::Diagnosis> now;
      if (request.send_initial()) {
        for (const AlertRecord& a : engine_.List()) now.push_back(ToDiagnosis(a));
      }
      step = session->Begin(std::move(now), request.send_initial(), options_.queue_limit,
                            clock_.NowNanos());
    }
  }
  session->Take(step);
  return session;
}

void DiagnosisWatchHub::Publish(v1::DiagnosisEvent::Kind kind, const v1::Diagnosis& d) {
  std::vector<std::pair<WatchSession*, WatchSession::Step>> steps;
  {
    absl::MutexLock lock(&mu_);
    if (sessions_.empty()) return;
    auto event = std::make_shared<v1::DiagnosisEvent>();
    event->set_kind(kind);
    event->set_time_unix_nano(clock_.NowNanos());
    *event->mutable_diagnosis() = d;
    const EventPtr shared = std::move(event);
    for (WatchSession* s : sessions_) {
      bool fell_behind = false;
      WatchSession::Step step = s->Offer(shared, &fell_behind);
      if (fell_behind) {
        ++stats_.fell_behind;
        spdlog::warn("diagnosis watch from {} fell behind ({} events unsent); ending it", s->peer(),
                     options_.queue_limit);
      }
      if (step.what != WatchSession::Step::kNone) steps.emplace_back(s, std::move(step));
    }
  }
  for (auto& [session, step] : steps) session->Take(step);
}

void DiagnosisWatchHub::Close() {
  std::vector<std::pair<WatchSession*, WatchSession::Step>> steps;
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    for (WatchSession* s : sessions_) {
      WatchSession::Step step =
          s->End({grpc::StatusCode::UNAVAILABLE, "railwatchd is shutting down"});
      if (step.what != WatchSession::Step::kNone) steps.emplace_back(s, std::move(step));
    }
  }
  for (auto& [session, step] : steps) session->Take(step);
}

void DiagnosisWatchHub::Remove(WatchSession* session) {
  absl::MutexLock lock(&mu_);
  sessions_.erase(session);
}

DiagnosisWatchHub::Stats DiagnosisWatchHub::stats() const {
  absl::MutexLock lock(&mu_);
  Stats s = stats_;
  s.open = sessions_.size();
  return s;
}

void DiagnosisWatchHub::OnPending(const AlertRecord& a) {
  Publish(v1::DiagnosisEvent::KIND_PENDING, ToDiagnosis(a));
}
void DiagnosisWatchHub::OnFiring(const AlertRecord& a) {
  Publish(v1::DiagnosisEvent::KIND_FIRING, ToDiagnosis(a));
}
void DiagnosisWatchHub::OnResolved(const AlertRecord& a) {
  Publish(v1::DiagnosisEvent::KIND_RESOLVED, ToDiagnosis(a));
}
void DiagnosisWatchHub::OnPendingCleared(const AlertRecord& a) {
  Publish(v1::DiagnosisEvent::KIND_CLEARED, ToDiagnosis(a));
}

}  // namespace railwatch
