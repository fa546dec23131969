#include "agent/agent.h"

#include <chrono>

#include "common/version.h"
#include "common/logging.h"

namespace railwatch {
namespace {

// A switch agent's and the IB fabric scanner's series describe switches, not the machine they
// run on: no host label; their own series say agent=<id>.
bool DescribesSwitches(v1::AgentRole role) {
  return role == v1::AGENT_ROLE_SWITCH || role == v1::AGENT_ROLE_IB_FABRIC;
}

}  // namespace

Agent::Agent(Options options, std::vector<std::unique_ptr<Collector>> collectors,
             const Clock& clock)
    : options_(std::move(options)),
      collectors_(std::move(collectors)),
      clock_(clock),
      // A switch agent's series describe the switches (switch=<target>), not the machine the
      // agent runs on: no common host label; its own series say agent=<id> instead.
      registry_(DescribesSwitches(options_.role) ? Labels{}
                                                       : Labels{{"host", options_.hostname}}),
      builder_(registry_) {
  if (options_.agent_id.empty()) options_.agent_id = options_.hostname;
  v1::Hello& hello = options_.sender.hello;
  hello.set_agent_id(options_.agent_id);
  hello.set_role(options_.role);
  hello.set_hostname(options_.hostname);
  hello.set_version(kVersion);
  std::unique_ptr<Spool> spool = OpenAgentSpool(options_.spool, hello, builder_, clock_);
  for (const auto& c : collectors_) {
    hello.add_collectors(std::string(c->name()));
    Labels labels = {{"collector", std::string(c->name())}};
    if (DescribesSwitches(options_.role)) labels.push_back({"agent", options_.agent_id});
    collector_series_.push_back(
        {registry_.Define("railwatch_collector_duration_seconds", MetricKind::kGauge, labels, 0),
         registry_.Define("railwatch_collector_success", MetricKind::kGauge, labels, 0)});
  }
  DefineDeliverySeries(spool != nullptr);
  sender_ = std::make_unique<Sender>(options_.sender, registry_, std::move(spool));
}

void Agent::DefineDeliverySeries(bool spool) {
  Labels labels;
  if (DescribesSwitches(options_.role)) labels.push_back({"agent", options_.agent_id});
  auto define = [&](std::string_view name, MetricKind kind) {
    return registry_.Define(name, kind, labels, 0);
  };
  using enum MetricKind;
  delivery_series_.queue_dropped = define("railwatch_agent_queue_dropped_batches_total", kCounter);
  if (!spool) return;
  delivery_series_.spool_appended = define("railwatch_agent_spool_appended_batches_total", kCounter);
  delivery_series_.spool_replayed = define("railwatch_agent_spool_replayed_batches_total", kCounter);
  delivery_series_.spool_dropped = define("railwatch_agent_spool_dropped_batches_total", kCounter);
  delivery_series_.spool_dropped_bytes =
      define("railwatch_agent_spool_dropped_bytes_total", kCounter);
  delivery_series_.spool_errors = define("railwatch_agent_spool_errors_total", kCounter);
  delivery_series_.spool_bytes = define("railwatch_agent_spool_bytes", kGauge);
}

void Agent::EmitDeliverySeries(int64_t t) {
  builder_.Counter(delivery_series_.queue_dropped, sender_->stats().batches_dropped, t);
  const Spool* spool = sender_->spool();
  if (spool == nullptr) return;
  const Spool::Stats s = spool->stats();
  builder_.Counter(delivery_series_.spool_appended, s.batches_spooled, t);
  builder_.Counter(delivery_series_.spool_replayed, s.batches_replayed, t);
  builder_.Counter(delivery_series_.spool_dropped, s.batches_dropped, t);
  builder_.Counter(delivery_series_.spool_dropped_bytes, s.bytes_dropped, t);
  builder_.Counter(delivery_series_.spool_errors, s.append_errors, t);
  builder_.Gauge(delivery_series_.spool_bytes, static_cast<double>(s.bytes), t);
}

size_t Agent::PollOnce() {
  for (size_t i = 0; i < collectors_.size(); ++i) {
    Collector& c = *collectors_[i];
    const auto started = std::chrono::steady_clock::now();
    absl::Status status = c.Collect(builder_);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!status.ok()) spdlog::warn("collector {}: {}", c.name(), status.message());
    const int64_t t = clock_.NowNanos();
    builder_.Gauge(collector_series_[i].duration_id, seconds, t);
    builder_.Gauge(collector_series_[i].success_id, status.ok() ? 1 : 0, t);
  }
  EmitDeliverySeries(clock_.NowNanos());
  std::shared_ptr<v1::Batch> batch = builder_.Take(sender_->SpareBatch());
  const size_t points = batch->points_size();
  sender_->Enqueue(std::move(batch));
  return points;
}

void Agent::Run(absl::Notification& stop) {
  sender_->Start();
  spdlog::info("agent {} polling {} collectors every {}s, sending to {}", options_.agent_id,
               collectors_.size(), absl::ToDoubleSeconds(options_.interval),
               options_.sender.server);
  // Ticks on a fixed grid so that a slow cycle does not shift every later sample.
  absl::Time next = absl::Now();
  while (!stop.HasBeenNotified()) {
    PollOnce();
    next += options_.interval;
    const absl::Time now = absl::Now();
    if (next < now) next = now;  // fell behind: skip the missed ticks rather than burst
    stop.WaitForNotificationWithDeadline(next);
  }
  sender_->Stop(absl::Seconds(2));
}

}  // namespace railwatch
