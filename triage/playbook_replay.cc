#include "triage/playbook_replay.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "collectors/log_event_record.h"
#include "common/labels.h"
#include "common/shipped_data.h"
#include "engine/alert_proto.h"
#include "engine/diagnosis_text.h"
#include "engine/engine.h"
#include "engine/replay.h"
#include "store/event_store.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;

constexpr absl::Duration kReplayTick = absl::Seconds(1);
// A long log is evaluated in longer steps, so that a day of timed lines costs seconds, not
// minutes: about this many steps over the log's span, never longer than kReplayMaxStep (a 5m
// window is still seen ten times as it passes).
constexpr int64_t kReplayTargetSteps = 2000;
constexpr absl::Duration kReplayMaxStep = absl::Seconds(30);
// After the last event: evaluations every this long until every playbook's `for` has passed.
constexpr absl::Duration kReplayTailStep = absl::Seconds(5);
constexpr absl::Duration kReplayTailLimit = absl::Minutes(10);

// Remembers which diagnoses fired; their final state is read back once the replay is over.
class FiredRecorder final : public DiagnosisListener {
 public:
  void OnFiring(const AlertRecord& a) override {
    if (std::find(ids_.begin(), ids_.end(), a.id) == ids_.end()) ids_.push_back(a.id);
  }
  void OnResolved(const AlertRecord&) override {}
  const std::vector<std::string>& ids() const { return ids_; }

 private:
  std::vector<std::string> ids_;
};

// What the agent's emitter (which adds its host) and ingest (IngestStream::StoreEvents: sorted
// attributes) make of the agent's event.
StoredEvent ReplayedEvent(const logs::LogEvent& e, int64_t time_unix_nano) {
  const std::string host = TriageHostLabel(e);
  EventRecord r = LogEventRecord(e, e.source, e.source, time_unix_nano, /*line_known=*/true);
  StoredEvent s;
  s.kind = std::move(r.kind);
  s.time_unix_nano = r.time_unix_nano;
  s.labels = std::move(r.labels);
  s.labels.push_back({"host", host});
  NormalizeLabels(s.labels);
  std::map<std::string, std::string> attributes(r.attributes.begin(), r.attributes.end());
  s.attributes.assign(attributes.begin(), attributes.end());
  s.raw = std::move(r.raw);
  return s;
}

// Times for every event: its own, else the one before it in the same input.
std::vector<int64_t> ReplayTimes(const std::vector<logs::LogEvent>& events) {
  int64_t first = 0;
  for (const logs::LogEvent& e : events) {
    if (e.time_unix_nano != 0 && (first == 0 || e.time_unix_nano < first)) {
      first = e.time_unix_nano;
    }
  }
  if (first == 0) first = absl::ToUnixNanos(absl::FromUnixSeconds(kTriageReplayStartUnixSeconds));
  std::map<std::string, int64_t> last_by_input;
  std::vector<int64_t> times;
  times.reserve(events.size());
  for (const logs::LogEvent& e : events) {
    auto [it, inserted] = last_by_input.try_emplace(e.source, first);
    if (e.time_unix_nano != 0) it->second = e.time_unix_nano;
    times.push_back(it->second);
  }
  return times;
}

using KindsByPlaybook = std::map<std::string, std::vector<std::string>>;

KindsByPlaybook EventKindsOf(const std::vector<Playbook>& playbooks) {
  KindsByPlaybook out;
  for (const Playbook& p : playbooks) {
    std::vector<std::string>& read = out[p.name];
    if (p.condition) p.condition->CollectEventKinds(read);
  }
  return out;
}

TriageDiagnosis FromDiagnosis(const v1::Diagnosis& d, const KindsByPlaybook& kinds_of) {
  TriageDiagnosis t;
  t.playbook = d.playbook();
  t.severity = SeverityName(d.severity());
  t.summary = d.summary();
  Labels culprit;
  for (const v1::Label& l : d.culprit()) {
    culprit.push_back({l.name(), l.value()});
    if (l.name() == "host") t.host = l.value();
  }
  t.culprit = FormatLabels(culprit);
  t.runbook = d.runbook();
  t.runbook_text = d.runbook_text();
  t.commands.assign(d.commands().begin(), d.commands().end());
  std::set<std::string> symptoms;
  for (const v1::Evidence& ev : d.evidence()) {
    if (!ev.playbook().empty()) symptoms.insert(ev.playbook());
  }
  symptoms.insert(d.playbook());
  std::set<std::string> kinds;
  for (const std::string& playbook : symptoms) {
    auto it = kinds_of.find(playbook);
    if (it != kinds_of.end()) kinds.insert(it->second.begin(), it->second.end());
  }
  t.event_kinds.assign(kinds.begin(), kinds.end());
  return t;
}

}  // namespace

std::string TriageHostLabel(const logs::LogEvent& event) {
  const std::string& host = event.Value("host");
  if (!host.empty()) return host;
  if (event.source.empty() || event.source == "-") return "<host>";
  return absl::StrCat("<host of ", fs::path(event.source).filename().string(), ">");
}

std::vector<TriageDiagnosis> ReplayThroughPlaybooks(const std::vector<logs::LogEvent>& events,
                                                    std::vector<Playbook> playbooks,
                                                    ReplayStats* stats) {
  ReplayStats local;
  ReplayStats& st = stats != nullptr ? *stats : local;
  absl::Duration longest_for = absl::ZeroDuration();
  for (const Playbook& p : playbooks) longest_for = std::max(longest_for, p.for_duration);
  longest_for = std::min(longest_for, kReplayTailLimit);

  const std::vector<int64_t> times = ReplayTimes(events);
  std::vector<size_t> order(events.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return times[a] < times[b]; });

  const int64_t start =
      order.empty() ? absl::ToUnixNanos(absl::FromUnixSeconds(kTriageReplayStartUnixSeconds))
                    : times[order.front()];
  EngineReplay::Options options;
  options.engine.threads = 1;
  options.start = absl::FromUnixNanos(start);
  const KindsByPlaybook kinds_of = EventKindsOf(playbooks);
  EngineReplay replay(std::move(options), std::move(playbooks));
  FiredRecorder fired;
  replay.AddListener(&fired);

  auto evaluate = [&](int64_t now) {
    replay.EvaluateAt(now);
    ++st.evaluations;
  };
  const int64_t tick = absl::ToInt64Nanoseconds(kReplayTick);
  const int64_t span = order.empty() ? 0 : times[order.back()] - times[order.front()];
  const int64_t step_length =
      std::clamp(span / kReplayTargetSteps, tick, absl::ToInt64Nanoseconds(kReplayMaxStep));
  size_t next = 0;
  int64_t now = start;
  while (next < order.size()) {
    // One step: every event up to a second after the first one not yet stored.
    const int64_t step = times[order[next]] + step_length - 1;
    for (; next < order.size() && times[order[next]] <= step; ++next) {
      const size_t i = order[next];
      replay.AddEvent(ReplayedEvent(events[i], times[i]));
      ++st.events;
    }
    now = times[order[next - 1]];
    evaluate(now);
  }
  const int64_t tail_end = now + absl::ToInt64Nanoseconds(longest_for);
  const int64_t tail_step = absl::ToInt64Nanoseconds(kReplayTailStep);
  for (int64_t t = now + tail_step; t < tail_end + tail_step; t += tail_step) {
    evaluate(std::min(t, tail_end + tick));
  }

  std::map<std::string, v1::Diagnosis> by_id;
  // Triage words its findings from the diagnosis as the Query API gives it (alert_proto.h).
  for (const AlertRecord& a : replay.List()) by_id.emplace(a.id, ToDiagnosis(a));
  std::vector<TriageDiagnosis> out;
  for (const std::string& id : fired.ids()) {
    auto it = by_id.find(id);
    if (it == by_id.end() || !it->second.explained_by().empty()) continue;
    out.push_back(FromDiagnosis(it->second, kinds_of));
  }
  return out;
}

LoadResult LoadTriagePlaybooks(const std::string& rules) {
  return LoadPlaybooks({rules.empty() ? ShippedPath("rules") : rules});
}

TriageReport TriageEvents(const std::vector<logs::LogEvent>& events,
                          std::vector<Playbook> playbooks, ReplayStats* stats) {
  return AnalyzeEvents(events, ReplayThroughPlaybooks(events, std::move(playbooks), stats));
}

}  // namespace railwatch
