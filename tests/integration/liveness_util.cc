#include "liveness_util.h"

#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "support/http_get.h"

namespace railwatch::testing {

double ScrapeValue(const Daemon& daemon, const std::string& series) {
  const std::string& address = daemon.metrics_address();
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) return -1;
  const HttpResponse r = HttpGet(port, "/metrics");
  std::istringstream in(r.body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      double v = 0;
      if (absl::SimpleAtod(line.substr(series.size() + 1), &v)) return v;
    }
  }
  return -1;
}

std::unique_ptr<v1::Query::Stub> QueryStub(const Daemon& daemon) {
  return v1::Query::NewStub(
      grpc::CreateChannel(daemon.grpc_address(), grpc::InsecureChannelCredentials()));
}

namespace {

v1::AgentInfo FindAgent(v1::Query::Stub& query, const std::string& agent_id) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::ListAgentsResponse resp;
  if (!query.ListAgents(&ctx, {}, &resp).ok()) return {};
  for (const v1::AgentInfo& a : resp.agents()) {
    if (a.agent_id() == agent_id) return a;
  }
  return {};
}

}  // namespace

bool AgentConnected(v1::Query::Stub& query, const std::string& agent_id) {
  return FindAgent(query, agent_id).connected();
}

uint64_t AgentLastSequence(v1::Query::Stub& query, const std::string& agent_id) {
  return FindAgent(query, agent_id).last_sequence();
}

Sender::Options HostSenderOptions(const std::string& agent_id, const std::string& server,
                                  uint64_t instance_id) {
  Sender::Options o;
  o.server = server;
  o.hello.set_agent_id(agent_id);
  o.hello.set_hostname(agent_id);
  o.hello.set_role(v1::AGENT_ROLE_HOST);
  o.hello.set_instance_id(instance_id);
  return o;
}

bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout, absl::Duration poll) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    absl::SleepFor(poll);
  }
  return true;
}

}  // namespace railwatch::testing
