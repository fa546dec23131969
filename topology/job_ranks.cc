// JobRegistry::RankHost (topology/fabric_map.h): a rank of a communicator learnt from NCCL logs,
// by the communicator's hash as NCCL RAS prints it (the commId of the logs' Init lines); and
// RanksBehind (topology/job_ranks.h), which places RAS's ranks behind on their hosts.
#include "topology/job_ranks.h"

#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace railwatch {
namespace {

// "0xF31E..." / "f31e..." -> the number; false for anything else.
bool HexId(std::string_view text, uint64_t* out) {
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return false;
  return absl::SimpleHexAtoi(absl::string_view(text.data(), text.size()), out);
}

}  // namespace

// The learnt communicator whose commId is `comm`: by the key the logs' spelling makes
// ("0x" + lower-case hex), else by the number (another spelling: zero padding, no "0x").
const JobRegistry::Learnt* JobRegistry::FindLearntLocked(std::string_view comm) const {
  uint64_t wanted = 0;
  if (!HexId(comm, &wanted)) return nullptr;
  std::string key = absl::AsciiStrToLower(absl::string_view(comm.data(), comm.size()));
  if (!absl::StartsWith(key, "0x")) key.insert(0, "0x");
  if (auto it = learnt_.find(key); it != learnt_.end()) return &it->second;
  for (const auto& [k, learnt] : learnt_) {
    // Keys of jobs learnt without a commId are "host\0comm": not a hex number.
    if (uint64_t id = 0; HexId(k, &id) && id == wanted && learnt.rank_hosts.size() > 0) {
      return &learnt;
    }
  }
  return nullptr;
}

bool JobRegistry::RankHost(std::string_view comm, int rank, std::string* host,
                           int* local_rank) const {
  if (rank < 0) return false;
  absl::MutexLock lock(&mu_);
  const Learnt* learnt = FindLearntLocked(comm);
  if (learnt == nullptr) return false;
  auto it = learnt->rank_hosts.find(rank);
  if (it == learnt->rank_hosts.end()) return false;
  int before = 0;
  for (const auto& [r, h] : learnt->rank_hosts) {
    if (r < rank && h == it->second) ++before;
  }
  *host = it->second;
  *local_rank = before;
  return true;
}

int JobRegistry::RankGpu(std::string_view comm, int rank) const {
  absl::MutexLock lock(&mu_);
  const Learnt* learnt = FindLearntLocked(comm);
  if (learnt == nullptr) return -1;
  auto it = learnt->rank_gpus.find(rank);
  return it == learnt->rank_gpus.end() ? -1 : it->second;
}

bool JobRegistry::NoteRankBehind(const std::string& key, int64_t now_unix_nano,
                                 int64_t every_nanos) const {
  absl::MutexLock lock(&mu_);
  // Bounded: entries older than `every` say nothing any more.
  if (rank_behind_at_.size() > 4096) {
    absl::erase_if(rank_behind_at_,
                   [&](const auto& kv) { return now_unix_nano - kv.second >= every_nanos; });
  }
  auto [it, inserted] = rank_behind_at_.try_emplace(key, now_unix_nano);
  if (!inserted && now_unix_nano - it->second < every_nanos) return false;
  it->second = now_unix_nano;
  return true;
}

std::vector<StoredEvent> RanksBehind(const StoredEvent& issue, const JobRegistry& jobs,
                                     const RanksBehindOptions& options) {
  std::vector<StoredEvent> out;
  if (issue.kind != "nccl_ras.comm_issue") return out;
  const std::string* comm = issue.Attribute("comm_hash");
  const std::string* what = issue.Attribute("issue");
  const std::string* ranks = issue.Attribute("ranks");
  if (comm == nullptr || what == nullptr || ranks == nullptr ||
      !absl::StrContains(*what, "MISMATCH")) {
    return out;
  }
  // Stuck long enough: the host agent measures it across its answers (stuck_for_s).
  double stuck = 0;
  if (const std::string* s = issue.Attribute("stuck_for_s");
      s == nullptr || !absl::SimpleAtod(*s, &stuck)) {
    stuck = 0;
  }
  if (stuck < absl::ToDoubleSeconds(options.stuck_after)) return out;
  const std::vector<absl::string_view> parts = absl::StrSplit(*ranks, ',', absl::SkipWhitespace());
  // Most ranks "behind" is one rank ahead of the rest (it launched one more): nobody to name.
  if (const std::string* size = issue.Attribute("size"); size != nullptr) {
    if (int n = 0; absl::SimpleAtoi(*size, &n) && n > 0 && 2 * parts.size() > static_cast<size_t>(n)) {
      return out;
    }
  }
  const std::string* reporter = FindLabel(issue.labels, "host");
  const std::string comm_label =
      absl::StrCat("0x", absl::AsciiStrToLower(absl::StripPrefix(*comm, "0x")));
  for (absl::string_view part : parts) {
    int rank = -1;
    std::string host;
    int local_rank = -1;
    if (!absl::SimpleAtoi(part, &rank) || !jobs.RankHost(comm_label, rank, &host, &local_rank)) {
      continue;
    }
    // Every agent of the job asks RAS and reports the same ranks: one event per rank and
    // `every` is enough to keep job_hang firing.
    if (!jobs.NoteRankBehind(absl::StrCat(comm_label, "/", rank), issue.time_unix_nano,
                             absl::ToInt64Nanoseconds(options.every))) {
      continue;
    }
    StoredEvent e;
    e.kind = kRankBehindEvent;
    e.time_unix_nano = issue.time_unix_nano;
    e.labels = {{"comm", comm_label},
                {"host", host},
                {"local_rank", absl::StrCat(local_rank)},
                {"rank", absl::StrCat(rank)}};
    e.attributes.emplace_back("issue", "MISMATCH");
    for (const char* key : {"op", "op_counts"}) {
      if (const std::string* v = issue.Attribute(key); v != nullptr) e.attributes.emplace_back(key, *v);
    }
    if (reporter != nullptr) e.attributes.emplace_back("reported_by", *reporter);
    e.attributes.emplace_back("stuck_for_s", absl::StrCat(stuck));
    e.raw = issue.raw;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace railwatch
