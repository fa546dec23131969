#pragma once

// The real Engine over fresh stores on a FakeClock, fed by hand: what `railwatch rules test`
// (engine/rule_test.h) and offline triage (triage/playbook_replay.h) play playbooks on. The
// caller stores samples and events as ingest would and evaluates at the times it chooses; the
// engine is used through its public API only.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"
#include "common/labels.h"
#include "engine/engine.h"
#include "engine/playbook.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"
#include "topology/topology.h"

namespace railwatch {

class EngineReplay {
 public:
  struct Options {
    Engine::Options engine;
    // Samples kept per series (SeriesStore::Options::retention).
    size_t retention = 600;
    // Pins names and jobs (FabricMap); null: labels as they come.
    std::shared_ptr<const Topology> topology;
    absl::Time start = absl::FromUnixSeconds(1'700'000'000);
  };

  EngineReplay(Options options, std::vector<Playbook> playbooks);

  // A series by name and labels, with the canonical table's traits (a name the table does not
  // know is a counter when it ends in _total, else a gauge).
  SeriesRef Intern(const std::string& name, const Labels& labels);
  void Append(SeriesRef series, int64_t time_unix_nano, double value);
  // Stores an event as ingest does: the job registry learns from it (NCCL communicators), then
  // the event log keeps it.
  void AddEvent(StoredEvent event);
  // Sets the clock and evaluates once.
  void EvaluateAt(int64_t now_unix_nano);

  void AddListener(DiagnosisListener* listener) { engine_.AddListener(listener); }
  std::vector<AlertRecord> List() const { return engine_.List(); }

 private:
  FakeClock clock_;
  SeriesStore store_;
  EventStore events_;
  JobRegistry jobs_;
  FabricMap fabric_;
  Engine engine_;
};

}  // namespace railwatch
