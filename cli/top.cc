// `railwatch top pfc|ecn|errors`: the worst ports now, from rates the daemon computes over its
// series store (QuerySeries expressions), with the topology's rail and leaf where it has them.
#include <algorithm>
#include <map>
#include <memory>
#include <ostream>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/query_commands.h"
#include "cli/table.h"
#include "common/text.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace {

constexpr int kDefaultRows = 10;

// One counter that a view ranks ports by.
struct TopCounter {
  const char* metric;
  // How the row names it (ecn's COUNTER column, errors' breakdown).
  const char* short_name;
  // For series without a direction label: the direction the counter counts.
  const char* direction;
};

struct TopView {
  const char* name;
  const char* nothing;  // what "no rows" means
  std::vector<TopCounter> counters;
  bool sum_per_port;  // errors: one row per port, the counters added up
};

// Names from docs/METRICS.md (common/vocabulary.cc).
const std::vector<TopView>& Views() {
  static const std::vector<TopView> views = {
      {"pfc",
       "No port sent or received PFC pause frames",
       {
           {"fabric_pfc_pause_frames_total", "pause", ""},
       },
       false},
      {"ecn",
       "No queue marked ECN and no NIC saw ECN marks or sent CNPs",
       {
           {"fabric_switch_queue_ecn_marked_packets_total", "ecn_marked", "tx"},
           {"fabric_roce_ecn_marked_packets_total", "roce_ecn_marked", "rx"},
           {"fabric_roce_cnp_sent_total", "cnp_sent", "tx"},
       },
       false},
      {"errors",
       "No port counted errors",
       {
           {"fabric_rdma_symbol_errors_total", "symbol_errors", "rx"},
           {"fabric_rdma_port_receive_errors_total", "receive_errors", "rx"},
           {"fabric_rdma_link_downed_total", "link_downed", ""},
           {"fabric_rdma_out_of_sequence_total", "out_of_sequence", "rx"},
           {"fabric_rdma_packet_sequence_errors_total", "packet_seq_err", "rx"},
           {"fabric_rdma_local_ack_timeout_errors_total", "local_ack_timeout", "tx"},
           {"fabric_switch_interface_receive_errors_total", "in_errors", "rx"},
           {"fabric_switch_interface_transmit_errors_total", "out_errors", "tx"},
           {"fabric_switch_interface_receive_discards_total", "in_discards", "rx"},
           {"fabric_switch_interface_transmit_discards_total", "out_discards", "tx"},
       },
       true},
  };
  return views;
}

// One row: a port (and priority or queue, and direction, unless summed per port).
struct PortRate {
  bool on_switch = false;
  std::string where;  // host or switch
  std::string port;   // device/port, or interface
  std::string priority;
  std::string queue;
  std::string direction;
  double rate = 0;
  std::map<std::string, double> counters;  // short name -> rate
  std::string rail, leaf;
  nlohmann::json labels = nlohmann::json::object();
};

std::string PortName(const v1::Series& s) {
  const std::string device = LabelValue(s.labels(), "device");
  const std::string port = LabelValue(s.labels(), "port");
  const std::string interface = LabelValue(s.labels(), "interface");
  if (!interface.empty())
    return device.empty() ? interface : absl::StrCat(interface, " (", device, ")");
  return port.empty() ? device : absl::StrCat(device, "/", port);
}

PortRate RowOf(const v1::Series& s, const TopCounter& counter) {
  PortRate r;
  r.where = LabelValue(s.labels(), "switch");
  r.on_switch = !r.where.empty();
  if (!r.on_switch) r.where = LabelValue(s.labels(), "host");
  r.port = PortName(s);
  r.priority = LabelValue(s.labels(), "priority");
  r.queue = LabelValue(s.labels(), "queue");
  r.direction = LabelValue(s.labels(), "direction");
  if (r.direction.empty()) r.direction = counter.direction;
  r.rate = s.points().empty() ? 0 : s.points(s.points_size() - 1).value();
  r.counters[counter.short_name] = r.rate;
  r.rail = LabelValue(s.labels(), "rail");
  r.leaf = LabelValue(s.labels(), "leaf");
  for (const v1::Label& l : s.labels()) r.labels[l.name()] = l.value();
  return r;
}

// Adds `row` into the port's row (errors: every counter of a port is one row).
void AddPerPort(PortRate row, std::map<std::pair<std::string, std::string>, PortRate>& ports) {
  auto [it, inserted] = ports.try_emplace({row.where, row.port}, row);
  if (inserted) {
    it->second.direction.clear();
    return;
  }
  for (const auto& [name, rate] : row.counters) it->second.counters[name] += rate;
  it->second.rate += row.rate;
  if (it->second.rail.empty()) it->second.rail = row.rail;
  if (it->second.leaf.empty()) it->second.leaf = row.leaf;
}

std::string Breakdown(const PortRate& r) {
  std::vector<std::string> parts;
  for (const auto& [name, rate] : r.counters) {
    if (rate > 0) parts.push_back(absl::StrCat(name, " ", ShortNumber(rate)));
  }
  return absl::StrJoin(parts, ", ");
}

std::string RenderTable(const TopView& view, const std::vector<PortRate>& rows) {
  bool rail = false, leaf = false;
  for (const PortRate& r : rows) {
    rail |= !r.rail.empty();
    leaf |= !r.leaf.empty();
  }
  std::vector<std::string> header = {"WHERE", "PORT"};
  if (view.name == std::string("pfc")) header.push_back("PRIORITY");
  if (view.name == std::string("ecn")) header.insert(header.end(), {"QUEUE", "COUNTER"});
  if (!view.sum_per_port) header.push_back("DIRECTION");
  header.push_back("RATE/s");
  if (view.sum_per_port) header.push_back("COUNTERS/s");
  if (rail) header.push_back("RAIL");
  if (leaf) header.push_back("LEAF");
  Table t(header);
  for (const PortRate& r : rows) {
    std::vector<std::string> row = {r.where, r.port};
    if (view.name == std::string("pfc")) row.push_back(r.priority);
    if (view.name == std::string("ecn")) {
      row.push_back(r.queue.empty() ? "-" : r.queue);
      row.push_back(r.counters.begin()->first);
    }
    if (!view.sum_per_port) row.push_back(r.direction.empty() ? "-" : r.direction);
    row.push_back(ShortNumber(r.rate));
    if (view.sum_per_port) row.push_back(Breakdown(r));
    if (rail) row.push_back(r.rail.empty() ? "-" : r.rail);
    if (leaf) row.push_back(r.leaf.empty() ? "-" : r.leaf);
    t.Add(std::move(row));
  }
  return t.Render();
}

nlohmann::json RowsJson(const std::vector<PortRate>& rows) {
  nlohmann::json ports = nlohmann::json::array();
  for (const PortRate& r : rows) {
    nlohmann::json j = {{r.on_switch ? "switch" : "host", r.where},
                        {"port", r.port},
                        {"rate", r.rate},
                        {"counters", r.counters},
                        {"labels", r.labels}};
    if (!r.priority.empty()) j["priority"] = r.priority;
    if (!r.queue.empty()) j["queue"] = r.queue;
    if (!r.direction.empty()) j["direction"] = r.direction;
    ports.push_back(std::move(j));
  }
  return ports;
}

}  // namespace

int RunTop(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err) {
  const TopView* view = nullptr;
  for (const TopView& v : Views()) {
    if (args[1] == v.name) view = &v;
  }
  if (view == nullptr) {
    return UsageError("top", absl::StrCat("\"", args[1], "\" is not one of pfc, ecn, errors"), err);
  }
  absl::StatusOr<absl::Duration> window = ParseDuration(o.window);
  if (!window.ok() || *window <= absl::ZeroDuration()) {
    return UsageError("top", absl::StrCat("--window=", o.window, ": want a duration such as 1m"),
                      err);
  }
  const int limit = o.limit == -1 ? kDefaultRows : o.limit;
  if (limit <= 0) return UsageError("top", "--limit must be 1 or more", err);

  std::unique_ptr<QueryClient> client = QueryClient::Open(o, err);
  if (client == nullptr) return kExitUsage;
  std::vector<PortRate> rows;
  std::map<std::pair<std::string, std::string>, PortRate> per_port;
  for (const TopCounter& counter : view->counters) {
    v1::QuerySeriesRequest request;
    // topology() adds rail and leaf where the daemon has a topology, and passes through where
    // it has none; "> 0" keeps quiet ports off the wire.
    request.set_query(absl::StrCat("topology(rate(", counter.metric, "[", o.window, "])) > 0"));
    request.set_limit(100000);
    v1::QuerySeriesResponse response;
    int rc = client->Call(&v1::Query::Stub::QuerySeries, request, &response, err);
    if (rc != kExitOk) return rc;
    if (response.truncated()) {
      err << "railwatch: " << counter.metric << ": " << response.matched()
          << " series matched, only the first " << response.series_size() << " were ranked\n";
    }
    for (const v1::Series& s : response.series()) {
      PortRate row = RowOf(s, counter);
      if (view->sum_per_port) {
        AddPerPort(std::move(row), per_port);
      } else {
        rows.push_back(std::move(row));
      }
    }
  }
  for (auto& [key, row] : per_port) rows.push_back(std::move(row));
  std::sort(rows.begin(), rows.end(), [](const PortRate& a, const PortRate& b) {
    return std::tie(b.rate, a.where, a.port, a.priority, a.queue, a.direction) <
           std::tie(a.rate, b.where, b.port, b.priority, b.queue, b.direction);
  });
  if (rows.size() > static_cast<size_t>(limit)) rows.resize(limit);

  if (o.json) {
    nlohmann::json j = {{"view", view->name}, {"window", o.window}, {"ports", RowsJson(rows)}};
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  if (rows.empty()) {
    out << view->nothing << " in the last " << o.window << ".\n";
    return kExitOk;
  }
  out << RenderTable(*view, rows);
  return kExitOk;
}

}  // namespace railwatch
