#include "daemon/server_metrics.h"

#include <algorithm>

#include "prometheus/client_metric.h"
#include "prometheus/metric_type.h"

namespace railwatch {
namespace {

const char* RoleLabel(v1::AgentRole role) {
  switch (role) {
    case v1::AGENT_ROLE_HOST: return "host";
    case v1::AGENT_ROLE_SWITCH: return "switch";
    case v1::AGENT_ROLE_IB_FABRIC: return "ib-fabric";
    default: return "unknown";
  }
}

prometheus::MetricFamily Family(prometheus::MetricType type, const char* name,
                                const char* help) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

prometheus::MetricFamily Gauge(const char* name, const char* help) {
  return Family(prometheus::MetricType::Gauge, name, help);
}

}  // namespace

std::vector<prometheus::MetricFamily> AgentCollectable::Collect() const {
  std::vector<v1::AgentInfo> agents = agents_.List();
  std::sort(agents.begin(), agents.end(), [](const v1::AgentInfo& a, const v1::AgentInfo& b) {
    return a.agent_id() < b.agent_id();
  });
  std::vector<prometheus::MetricFamily> out;
  out.push_back(Gauge("railwatch_agent_connected",
                      "1 while the agent has an open Ingest stream, 0 after it went away."));
  out.push_back(Gauge("railwatch_agent_last_seen_timestamp_seconds",
                      "Unix time at which the agent's last batch arrived (0: none yet)."));
  out.push_back(Gauge("railwatch_agent_lag_seconds",
                      "Age of the newest point of the agent's last batch when it arrived."));
  out.push_back(Gauge("railwatch_agent_series", "Series the agent has defined."));
  for (const v1::AgentInfo& a : agents) {
    const std::vector<prometheus::ClientMetric::Label> labels = {{"agent", a.agent_id()},
                                                                 {"role", RoleLabel(a.role())}};
    const double values[] = {a.connected() ? 1.0 : 0.0,
                             static_cast<double>(a.last_seen_unix_nano()) / 1e9,
                             a.lag_seconds(), static_cast<double>(a.series())};
    for (size_t i = 0; i < out.size(); ++i) {
      prometheus::ClientMetric& m = out[i].metric.emplace_back();
      m.label = labels;
      m.gauge.value = values[i];
    }
  }
  return out;
}

std::vector<prometheus::MetricFamily> WatchCollectable::Collect() const {
  const DiagnosisWatchHub::Stats s = hub_.stats();
  std::vector<prometheus::MetricFamily> out;
  out.push_back(Gauge("railwatch_query_watches_open", "WatchDiagnoses streams open now."));
  out.back().metric.emplace_back().gauge.value = static_cast<double>(s.open);
  out.push_back(Family(prometheus::MetricType::Counter, "railwatch_query_watches_started_total",
                       "WatchDiagnoses streams started."));
  out.back().metric.emplace_back().counter.value = static_cast<double>(s.started);
  out.push_back(Family(prometheus::MetricType::Counter, "railwatch_query_watch_overflows_total",
                       "WatchDiagnoses streams ended with RESOURCE_EXHAUSTED because the client "
                       "read too slowly and its queue filled."));
  out.back().metric.emplace_back().counter.value = static_cast<double>(s.fell_behind);
  return out;
}

}  // namespace railwatch
