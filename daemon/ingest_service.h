#pragma once

#include "daemon/auth.h"
#include "daemon/ingest_stream.h"
#include "railwatch/v1/ingest.grpc.pb.h"

namespace railwatch {

// Receives agent streams (callback API: no thread per stream). Each stream interns its series
// definitions into the store, appends points and events, acknowledges batches cumulatively, and wakes the
// rules engine when a watched series moves (the per-message logic: IngestStream).
class IngestService final : public v1::Ingest::CallbackService {
 public:
  using Deps = IngestDeps;
  // `auth` (daemon/auth.h; null: none) may refuse a stream before it starts.
  explicit IngestService(Deps deps, Authenticator* auth = nullptr)
      : deps_(std::move(deps)), auth_(auth) {}

  grpc::ServerBidiReactor<v1::AgentMessage, v1::DaemonMessage>* Stream(
      grpc::CallbackServerContext* context) override;

 private:
  Deps deps_;
  Authenticator* auth_;
};

}  // namespace railwatch
