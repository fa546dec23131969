#include "engine/engine.h"

#include <algorithm>
#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace railwatch {
namespace {

std::vector<const Playbook*> Enabled(const std::vector<Playbook>& playbooks) {
  std::vector<const Playbook*> out;
  for (const Playbook& pb : playbooks) {
    if (pb.enabled && pb.condition != nullptr) out.push_back(&pb);
  }
  return out;
}

EvaluationScheduler::Timing TimingOf(const Engine::Options& o) {
  return {o.interval, o.min_interval, o.poke_hold_factor};
}

}  // namespace

Engine::Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
               const Clock& clock)
    : Engine(options, std::move(playbooks), store, clock, Sources{}) {}

Engine::Engine(Options options, std::vector<Playbook> playbooks, SeriesStore& store,
               const Clock& clock, Sources sources)
    : options_(options),
      playbooks_(std::move(playbooks)),
      store_(store),
      clock_(clock),
      sources_(sources),
      correlator_(Enabled(playbooks_)),
      enricher_(correlator_.order(), store_, sources_.fabric, options_.gpu_hour_cost),
      conditions_(options_.threads, correlator_.order().size()),
      saver_(options_.state_file, options_.state_save_interval),
      history_(options_.history, options_.repeat_window),
      scheduler_(
          TimingOf(options_), [this] { EvaluateOnce(); }, [this] { return EventsArrived(); }) {
  absl::flat_hash_set<std::string> names, kinds;
  // Each name's longest window: the store keeps that much of its series, however often they
  // are sampled (a 125-minute window over a scanner's 10 s samples needs 750).
  absl::flat_hash_map<std::string, int64_t> spans;
  for (const Playbook* pb : correlator_.order()) {
    std::vector<std::string> metric_names, event_kinds;
    std::vector<std::pair<std::string, absl::Duration>> windows;
    pb->condition->CollectMetricNames(metric_names);
    pb->condition->CollectEventKinds(event_kinds);
    pb->condition->CollectWindows(windows);
    names.insert(metric_names.begin(), metric_names.end());
    kinds.insert(event_kinds.begin(), event_kinds.end());
    for (const auto& [name, window] : windows) {
      int64_t& span = spans[name];
      span = std::max(span, absl::ToInt64Nanoseconds(window));
    }
  }
  store_.Watch(names);
  store_.KeepSpans(spans);
  if (sources_.events != nullptr) sources_.events->Watch(kinds);
  absl::MutexLock lock(&mu_);
  states_.reserve(correlator_.order().size());
  for (const Playbook* pb : correlator_.order()) {
    state_index_[pb] = states_.size();
    states_.emplace_back(*pb);
  }
}

Engine::~Engine() { Stop(); }

int Engine::threads() const { return conditions_.threads(); }

absl::Duration Engine::PokeHoldOff(const Options& options, absl::Duration last_duration,
                                   bool event) {
  return EvaluationScheduler::PokeHoldOff(TimingOf(options), last_duration, event);
}

void Engine::AddListener(DiagnosisListener* listener) {
  absl::MutexLock lock(&mu_);
  listeners_.push_back(listener);
}

void Engine::Start() { scheduler_.Start(); }

void Engine::Stop() {
  if (!scheduler_.Stop()) return;
  // The newest evidence, for the restart that may follow.
  absl::MutexLock eval_lock(&eval_mu_);
  SaveState(/*urgent=*/true, /*changed=*/true, clock_.NowNanos());
}

void Engine::Poke() { scheduler_.Poke(); }

bool Engine::EventsArrived() {
  if (sources_.events == nullptr) return false;
  const uint64_t appended = sources_.events->stats().appended;
  const bool arrived = appended != events_seen_;
  events_seen_ = appended;
  return arrived;
}

AlertMap& Engine::AlertsOf(const Playbook& pb) { return states_[state_index_.at(&pb)].alerts(); }

void Engine::EvaluateOnce() {
  absl::MutexLock eval_lock(&eval_mu_);
  Evaluate();
}

void Engine::Evaluate() {
  const auto started = std::chrono::steady_clock::now();
  const int64_t now = clock_.NowNanos();
  const std::vector<const Playbook*>& order = correlator_.order();
  // Conditions read only the stores and the fabric map: in parallel, without the engine's
  // lock (queries go on meanwhile).
  std::vector<std::vector<Candidate>> candidates(order.size());
  const EvalContext ctx{store_, sources_.events, sources_.fabric, now};
  conditions_.Run([&](size_t i) { candidates[i] = EvaluateCandidates(*order[i], ctx); });
  std::vector<AlertTransition> transitions;
  std::vector<DiagnosisListener*> listeners;
  {
    absl::MutexLock lock(&mu_);
    auto alerts_of = [this](const Playbook& pb) -> AlertMap& {
      mu_.AssertHeld();
      return AlertsOf(pb);
    };
    const PlaybookState::Step step{
        .now = now,
        .correlator = correlator_,
        .enricher = enricher_,
        .store = store_,
        .fabric = sources_.fabric,
        .alerts_of = alerts_of,
        .history = history_,
        .transitions = transitions,
        .unknown_results = stats_.unknown_results,
    };
    for (size_t i = 0; i < states_.size(); ++i) states_[i].Evaluate(std::move(candidates[i]), step);
    ++stats_.evaluations;
    stats_.last_duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    listeners = listeners_;
  }
  // Saved before anyone is told: a crash in between restores the diagnosis and takes it up
  // again rather than paging it a second time under a new id.
  bool urgent = false;
  for (const AlertTransition& t : transitions) {
    urgent |= t.what == Transition::kFiring || t.what == Transition::kResolved;
  }
  SaveState(urgent, /*changed=*/!transitions.empty(), now);
  if (listeners.empty()) return;
  // Listeners run outside the lock so that they may query the engine.
  for (const AlertTransition& t : transitions) {
    for (DiagnosisListener* l : listeners) {
      // clang-format off
      switch (t.what) {
        case Transition::kPending: l->OnPending(t.alert); break;
        case Transition::kFiring: l->OnFiring(t.alert); break;
        case Transition::kResolved: l->OnResolved(t.alert); break;
        case Transition::kPendingCleared: l->OnPendingCleared(t.alert); break;
      }
      // clang-format on
    }
  }
}

std::vector<AlertRecord> Engine::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<const AlertRecord*> active;
  for (const PlaybookState& s : states_) {
    for (const auto& [key, a] : s.alerts()) active.push_back(&a);
  }
  std::sort(active.begin(), active.end(), [](const AlertRecord* a, const AlertRecord* b) {
    return a->active_since > b->active_since;
  });
  std::vector<AlertRecord> out;
  out.reserve(active.size() + history_.resolved().size());
  for (const AlertRecord* a : active) out.push_back(*a);
  for (const AlertRecord& a : history_.resolved()) out.push_back(a);
  return out;
}

std::optional<AlertRecord> Engine::Get(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  for (const PlaybookState& s : states_) {
    for (const auto& [key, a] : s.alerts()) {
      if (a.id == id) return a;
    }
  }
  for (const AlertRecord& a : history_.resolved()) {
    if (a.id == id) return a;
  }
  return std::nullopt;
}

Engine::Stats Engine::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace railwatch
