#pragma once

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "agent/sender.h"
#include "daemon/daemon.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch::testing {

// The value of one series (`name` or `name{labels}` exactly as exposed) on the daemon's
// /metrics; -1 when it is absent or the scrape fails.
double ScrapeValue(const Daemon& daemon, const std::string& series);

// A Query stub on a plain channel straight to the daemon.
std::unique_ptr<v1::Query::Stub> QueryStub(const Daemon& daemon);

// Whether ListAgents shows `agent_id` connected.
bool AgentConnected(v1::Query::Stub& query, const std::string& agent_id);
// The last batch sequence the daemon stored from `agent_id` (0: none, or no such agent).
uint64_t AgentLastSequence(v1::Query::Stub& query, const std::string& agent_id);

// A host agent's Sender options: `agent_id` (also its host) to `server`, production settings.
Sender::Options HostSenderOptions(const std::string& agent_id, const std::string& server,
                                  uint64_t instance_id);

// Polls `done` every `poll` until it holds or `timeout` passes (a wait, not a speed check).
bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout,
               absl::Duration poll = absl::Milliseconds(20));

}  // namespace railwatch::testing
