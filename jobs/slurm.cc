// GPUs in Slurm's TRES and GRES strings, and what every Slurm reader does with them.

#include "jobs/slurm.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "jobs/slurm_internal.h"

namespace railwatch::jobs {
namespace {

absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The entries of a comma list, commas inside (...) not counted: "gpu:2(IDX:0,2),shard:0".
std::vector<absl::string_view> GresEntries(absl::string_view list) {
  std::vector<absl::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '(') ++depth;
    if (i < list.size() && list[i] == ')' && depth > 0) --depth;
    if (i == list.size() || (list[i] == ',' && depth == 0)) {
      const absl::string_view entry = absl::StripAsciiWhitespace(list.substr(start, i - start));
      if (!entry.empty()) out.push_back(entry);
      start = i + 1;
    }
  }
  return out;
}

// How many GPU indexes "0-7", "0,2-3" names; -1 when it is not such a list.
int CountIndexes(absl::string_view indexes) {
  int count = 0;
  for (absl::string_view item : absl::StrSplit(indexes, ',')) {
    const std::pair<absl::string_view, absl::string_view> range = absl::StrSplit(item, '-');
    int lo = 0;
    int hi = 0;
    if (!absl::SimpleAtoi(range.first, &lo)) return -1;
    hi = lo;
    if (!range.second.empty() && !absl::SimpleAtoi(range.second, &hi)) return -1;
    if (hi < lo || lo < 0) return -1;
    count += hi - lo + 1;
  }
  return count;
}

// Adds `type` to the one type seen so far; "" once two differ.
void AddGpuType(std::string_view type, bool& first, std::string& out) {
  if (first) {
    out = std::string(type);
    first = false;
  } else if (out != type) {
    out.clear();
  }
}

}  // namespace

SlurmGpus GpusFromTres(std::string_view tres) {
  SlurmGpus out;
  int untyped = -1;
  int typed = -1;
  bool first_type = true;
  for (absl::string_view entry : absl::StrSplit(AbslView(tres), ',')) {
    const std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(entry, '=');
    absl::string_view key = absl::StripAsciiWhitespace(kv.first);
    int n = 0;
    if (!absl::ConsumePrefix(&key, "gres/gpu") ||
        !absl::SimpleAtoi(absl::StripAsciiWhitespace(kv.second), &n)) {
      continue;
    }
    if (key.empty()) {
      untyped = n;
    } else if (absl::ConsumePrefix(&key, ":")) {
      typed = (typed < 0 ? 0 : typed) + n;
      AddGpuType(std::string_view(key.data(), key.size()), first_type, out.type);
    }
  }
  out.count = untyped >= 0 ? untyped : typed;
  return out;
}

SlurmGpus GpusFromGres(std::string_view gres) {
  SlurmGpus out;
  bool first_type = true;
  std::vector<std::string> indexes;
  for (absl::string_view entry : GresEntries(AbslView(gres))) {
    if (!absl::ConsumePrefix(&entry, "gres:")) absl::ConsumePrefix(&entry, "gres/");
    // (IDX:0-7), (S:0-1), (IDX:N/A): only the indexes matter here.
    absl::string_view detail;
    size_t paren = entry.find('(');
    while (paren != absl::string_view::npos && entry.substr(paren, 6) == "(null)") {
      paren = entry.find('(', paren + 1);  // gpu:(null):8: a type that is not set
    }
    if (paren != absl::string_view::npos) {
      detail = entry.substr(paren + 1);
      detail = detail.substr(0, detail.find(')'));
      entry = entry.substr(0, paren);
    }
    std::vector<absl::string_view> fields = absl::StrSplit(entry, absl::ByAnyChar(":="));
    if (fields.empty() || fields.front() != "gpu") continue;
    int count = -1;
    if (fields.size() > 1 && !fields.back().empty() && absl::SimpleAtoi(fields.back(), &count)) {
      fields.pop_back();
    }
    const absl::string_view type =
        fields.size() > 1 && fields[1] != "(null)" ? fields[1] : absl::string_view();
    std::string entry_indexes;
    if (absl::ConsumePrefix(&detail, "IDX:") && detail != "N/A" && !detail.empty()) {
      entry_indexes = std::string(detail);
    }
    if (count < 0) count = entry_indexes.empty() ? 1 : std::max(CountIndexes(entry_indexes), 1);
    out.count = (out.count < 0 ? 0 : out.count) + count;
    AddGpuType(std::string_view(type.data(), type.size()), first_type, out.type);
    if (!entry_indexes.empty()) indexes.push_back(std::move(entry_indexes));
  }
  out.indexes = absl::StrJoin(indexes, ",");
  return out;
}

namespace internal {

bool NamesNoNode(std::string_view node_list) {
  const absl::string_view s = absl::StripAsciiWhitespace(AbslView(node_list));
  return s.empty() || s == "(null)" || s == "(None)" || s == "None assigned";
}

void ApplyGpuFacts(const GpuFacts& facts, SlurmJob& job) {
  // Per-node GPUs that cover every node of the job are exact.
  absl::flat_hash_map<std::string, const SlurmGpus*> by_node;
  for (const NodeGpus& n : facts.per_node) {
    by_node[n.node] = &n.gpus;
    if (!n.gpus.indexes.empty()) job.gpu_indexes_by_node[n.node] = n.gpus.indexes;
  }
  int sum = 0;
  int uniform = -2;  // -2: none seen yet; -1: they differ
  bool every_node = !job.nodes.empty();
  bool first_type = true;
  std::string type;
  for (const std::string& node : job.nodes) {
    auto it = by_node.find(node);
    if (it == by_node.end() || it->second->count < 0) {
      every_node = false;
      break;
    }
    const int count = it->second->count;
    sum += count;
    uniform = uniform == -2 || uniform == count ? count : -1;
    AddGpuType(it->second->type, first_type, type);
  }
  if (every_node) {
    job.gpus_total = sum;
    job.gpus_per_node = uniform;
    if (job.gpu_type.empty()) job.gpu_type = type;
  }
  if (job.gpus_per_node < 0 && !every_node) job.gpus_per_node = facts.per_node_request.count;
  if (job.gpus_total < 0) job.gpus_total = facts.total.count;
  if (job.gpu_type.empty()) job.gpu_type = facts.per_node_request.type;
  if (job.gpu_type.empty()) job.gpu_type = facts.total.type;
  // Each from the other where that is exact.
  const int nodes = static_cast<int>(job.nodes.size());
  if (job.gpus_total < 0 && job.gpus_per_node >= 0 && nodes > 0) {
    job.gpus_total = job.gpus_per_node * nodes;
  }
  if (job.gpus_per_node < 0 && job.gpus_total >= 0 && (nodes == 1 || job.gpus_total == 0)) {
    job.gpus_per_node = job.gpus_total;
  }
  if (job.node_count < 0 && nodes > 0) job.node_count = nodes;
}

std::string JobStateName(std::string_view code) {
  static constexpr std::pair<std::string_view, std::string_view> kStates[] = {
      {"BF", "BOOT_FAIL"},     {"CA", "CANCELLED"},    {"CD", "COMPLETED"},
      {"CF", "CONFIGURING"},   {"CG", "COMPLETING"},   {"DL", "DEADLINE"},
      {"F", "FAILED"},         {"NF", "NODE_FAIL"},    {"OOM", "OUT_OF_MEMORY"},
      {"PD", "PENDING"},       {"PR", "PREEMPTED"},    {"R", "RUNNING"},
      {"RD", "RESV_DEL_HOLD"}, {"RF", "REQUEUE_FED"},  {"RH", "REQUEUE_HOLD"},
      {"RQ", "REQUEUED"},      {"RS", "RESIZING"},     {"RV", "REVOKED"},
      {"S", "SUSPENDED"},      {"SE", "SPECIAL_EXIT"}, {"SI", "SIGNALING"},
      {"SO", "STAGE_OUT"},     {"ST", "STOPPED"},      {"TO", "TIMEOUT"}};
  for (const auto& [short_name, name] : kStates) {
    if (code == short_name) return std::string(name);
  }
  return std::string(code);
}

}  // namespace internal
}  // namespace railwatch::jobs
