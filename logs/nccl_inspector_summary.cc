// NCCL Inspector records summarised per communicator member and operation, and the members
// behind their peers (logs/nccl_inspector.h): what `railwatch triage` reports of them.
#include "logs/nccl_inspector.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace railwatch::logs {
namespace {

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

std::vector<InspectorSummary> SummariseInspector(const std::vector<InspectorRecord>& records) {
  using Key = std::tuple<absl::string_view, absl::string_view, int, absl::string_view,
                         absl::string_view, bool>;
  struct Sums {
    double exec = 0, busbw = 0;
    size_t exec_n = 0, busbw_n = 0;
  };
  absl::flat_hash_map<Key, size_t> index;
  std::vector<InspectorSummary> out;
  std::vector<Sums> sums;
  for (const InspectorRecord& r : records) {
    absl::string_view comm = r.comm_id.empty() ? r.comm_name : r.comm_id;
    auto [it, inserted] =
        index.try_emplace(Key{comm, r.host, r.rank, r.gpu, r.op, r.p2p}, out.size());
    if (inserted) {
      out.push_back({.comm = std::string(comm),
                     .host = r.host,
                     .rank = r.rank,
                     .gpu = r.gpu,
                     .op = r.op,
                     .p2p = r.p2p});
      sums.emplace_back();
    }
    InspectorSummary& s = out[it->second];
    Sums& sum = sums[it->second];
    ++s.count;
    if (!std::isnan(r.exec_us)) {
      sum.exec += r.exec_us;
      ++sum.exec_n;
    }
    if (!std::isnan(r.busbw_gbs)) {
      sum.busbw += r.busbw_gbs;
      ++sum.busbw_n;
      s.min_busbw_gbs =
          std::isnan(s.min_busbw_gbs) ? r.busbw_gbs : std::min(s.min_busbw_gbs, r.busbw_gbs);
      s.max_busbw_gbs =
          std::isnan(s.max_busbw_gbs) ? r.busbw_gbs : std::max(s.max_busbw_gbs, r.busbw_gbs);
    }
    if (r.seq >= 0) {
      s.first_seq = s.first_seq < 0 ? r.seq : std::min(s.first_seq, r.seq);
      s.last_seq = std::max(s.last_seq, r.seq);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (sums[i].exec_n > 0) out[i].mean_exec_us = sums[i].exec / sums[i].exec_n;
    if (sums[i].busbw_n > 0) out[i].mean_busbw_gbs = sums[i].busbw / sums[i].busbw_n;
  }
  return out;
}

std::vector<InspectorStraggler> FindInspectorStragglers(
    const std::vector<InspectorSummary>& summaries, double ratio) {
  std::vector<InspectorStraggler> out;
  if (!(ratio > 0 && ratio <= 1)) return out;
  using Group = std::tuple<absl::string_view, absl::string_view, bool>;
  absl::flat_hash_map<Group, size_t> index;
  std::vector<std::vector<const InspectorSummary*>> groups;
  for (const InspectorSummary& s : summaries) {
    auto [it, inserted] = index.try_emplace(Group{s.comm, s.op, s.p2p}, groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(&s);
  }
  for (const auto& members : groups) {
    if (members.size() < 3) continue;
    const size_t first = out.size();
    for (const InspectorSummary* m : members) {
      std::vector<double> busbw, exec;
      for (const InspectorSummary* peer : members) {
        if (peer == m) continue;
        if (!std::isnan(peer->mean_busbw_gbs)) busbw.push_back(peer->mean_busbw_gbs);
        if (!std::isnan(peer->mean_exec_us)) exec.push_back(peer->mean_exec_us);
      }
      const double exec_min =
          exec.empty() ? std::numeric_limits<double>::quiet_NaN() : *std::min_element(exec.begin(), exec.end());
      double busbw_median = Median(std::move(busbw));
      double exec_median = Median(std::move(exec));
      // NaN on either side compares false: that test does not apply.
      bool slow_busbw = m->mean_busbw_gbs < ratio * busbw_median;
      bool slow_exec = m->mean_exec_us > exec_median / ratio;
      // Late: below every peer, not only their median (one slow member among three would make
      // the other two look late against a median of two).
      const bool late = !m->p2p && !slow_busbw && !slow_exec && m->mean_exec_us < ratio * exec_min;
      if (!slow_busbw && !slow_exec && !late) continue;
      InspectorStraggler st;
      st.comm = m->comm;
      st.op = m->op;
      st.p2p = m->p2p;
      st.host = m->host;
      st.rank = m->rank;
      st.gpu = m->gpu;
      st.busbw_gbs = m->mean_busbw_gbs;
      st.peers_median_busbw_gbs = busbw_median;
      st.exec_us = m->mean_exec_us;
      st.peers_median_exec_us = exec_median;
      st.late = late;
      if (late) {
        st.share = m->mean_exec_us / exec_median;
      } else if (!std::isnan(m->mean_busbw_gbs) && busbw_median > 0) {
        st.share = m->mean_busbw_gbs / busbw_median;
      } else if (m->mean_exec_us > 0) {
        st.share = exec_median / m->mean_exec_us;
      }
      out.push_back(std::move(st));
    }
    // A late member makes its peers wait: they look slow against a median it drags down (5,
    // 20, 20 ms), and are its victims, not stragglers. Only the late ones stay.
    if (std::any_of(out.begin() + first, out.end(), [](const auto& st) { return st.late; })) {
      out.erase(std::remove_if(out.begin() + first, out.end(),
                               [](const auto& st) { return !st.late; }),
                out.end());
    }
  }
  return out;
}

}  // namespace railwatch::logs
