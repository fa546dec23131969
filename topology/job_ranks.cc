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

bool JobRegistry::RankHost(std::string_view comm, int rank, std::string* host,
                           int* local_rank) const {
  uint64_t wanted = 0;
  if (rank < 0 || !HexId(comm, &wanted)) return false;
  absl::MutexLock lock(&mu_);
  for (const auto& [key, learnt] : learnt_) {
    uint64_t id = 0;
    // Keys of jobs learnt without a commId are "host\0comm": not a hex number.
    if (!HexId(key, &id) || id != wanted) continue;
    auto it = learnt.rank_hosts.find(rank);
    if (it == learnt.rank_hosts.end()) return false;
    int before = 0;
    for (const auto& [r, h] : learnt.rank_hosts) {
      if (r < rank && h == it->second) ++before;
    }
    *host = it->second;
    *local_rank = before;
    return true;
  }
  return false;
}

std::vector<StoredEvent> RanksBehind(const StoredEvent& issue, const JobRegistry& jobs) {
  std::vector<StoredEvent> out;
  if (issue.kind != "nccl_ras.comm_issue") return out;
  const std::string* comm = issue.Attribute("comm_hash");
  const std::string* what = issue.Attribute("issue");
  if (comm == nullptr || what == nullptr) return out;
  const std::string* reporter = FindLabel(issue.labels, "host");
  // MISMATCH: the ranks behind the most advanced; INCOMPLETE: the ranks missing.
  std::vector<std::pair<std::string, const std::string*>> named;
  if (absl::StrContains(*what, "MISMATCH")) named.emplace_back("MISMATCH", issue.Attribute("ranks"));
  if (absl::StrContains(*what, "INCOMPLETE")) {
    named.emplace_back("INCOMPLETE", issue.Attribute("missing_rank_ids"));
  }
  const std::string comm_label =
      absl::StrCat("0x", absl::AsciiStrToLower(absl::StripPrefix(*comm, "0x")));
  for (const auto& [kind, ranks] : named) {
    if (ranks == nullptr) continue;
    for (absl::string_view part : absl::StrSplit(*ranks, ',', absl::SkipWhitespace())) {
      int rank = -1;
      std::string host;
      int local_rank = -1;
      if (!absl::SimpleAtoi(part, &rank) || !jobs.RankHost(comm_label, rank, &host, &local_rank)) {
        continue;
      }
      StoredEvent e;
      e.kind = kRankBehindEvent;
      e.time_unix_nano = issue.time_unix_nano;
      e.labels = {{"comm", comm_label},
                  {"host", host},
                  {"local_rank", absl::StrCat(local_rank)},
                  {"rank", absl::StrCat(rank)}};
      e.attributes.emplace_back("issue", kind);
      for (const char* key : {"op", "op_counts"}) {
        if (const std::string* v = issue.Attribute(key); v != nullptr && kind == "MISMATCH") {
          e.attributes.emplace_back(key, *v);
        }
      }
      if (reporter != nullptr) e.attributes.emplace_back("reported_by", *reporter);
      e.raw = issue.raw;
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace railwatch
