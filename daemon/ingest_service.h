#pragma once

#include <functional>

#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "exporters/daemon_metrics.h"
#include "railwatch/v1/ingest.grpc.pb.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

// Receives agent streams (callback API: no thread per stream). Each stream interns its series
// definitions into the store, appends points and events, acknowledges batches cumulatively, and wakes the
// rules engine when a watched series moves.
class IngestService final : public v1::Ingest::CallbackService {
 public:
  struct Deps {
    SeriesStore& store;
    AgentRegistry& agents;
    DaemonMetrics& metrics;
    const Clock& clock;
    std::function<void()> on_watched_update;
    // Where events go (null: counted and dropped), and who learns jobs from them.
    EventStore* events = nullptr;
    JobRegistry* jobs = nullptr;
  };
  explicit IngestService(Deps deps) : deps_(std::move(deps)) {}

  grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* Stream(
      grpc::CallbackServerContext* context) override;

 private:
  Deps deps_;
};

}  // namespace railwatch
