#include "logs/ras_json.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/json_error.h"
#include "nlohmann/json.hpp"

namespace railwatch::logs {
namespace {

using Json = nlohmann::json;

// 1-based line and column of byte `offset` of `text`.
std::string Position(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
  const size_t start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const size_t column = start == std::string_view::npos || offset == 0 ? offset + 1 : offset - start;
  return absl::StrCat(line, ":", column);
}

struct Document {
  size_t begin = 0;  // byte offset of its '{'
  std::string_view text;
};

// The top-level objects of `text`, by brace depth outside strings. Text between them (a shell
// prompt, blank lines) is skipped.
std::vector<Document> SplitObjects(std::string_view text) {
  std::vector<Document> out;
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"' && depth > 0) {
      in_string = true;
    } else if (c == '{') {
      if (depth++ == 0) begin = i;
    } else if (c == '}' && depth > 0 && --depth == 0) {
      out.push_back({begin, text.substr(begin, i + 1 - begin)});
    }
  }
  if (depth > 0) out.push_back({begin, text.substr(begin)});  // unterminated: its error says so
  return out;
}

// NCCL 2.28.7-2.29.1 leave the comma out after the last field of a missing rank's device
// ("nvml_dev": 1 <newline> "status": ...). Puts a comma wherever a line ends with a value and
// the next line starts a key; returns how many it added.
size_t AddMissingCommas(std::string& json) {
  size_t added = 0;
  std::string out;
  out.reserve(json.size() + 64);
  size_t line_start = 0;
  while (line_start < json.size()) {
    size_t nl = json.find('\n', line_start);
    const size_t line_end = nl == std::string::npos ? json.size() : nl;
    std::string_view line(json.data() + line_start, line_end - line_start);
    size_t keep = line.size();
    while (keep > 0 && (line[keep - 1] == ' ' || line[keep - 1] == '\t' || line[keep - 1] == '\r')) {
      --keep;
    }
    out.append(line.substr(0, keep));
    if (nl != std::string::npos && keep > 0) {
      const char last = line[keep - 1];
      size_t next = nl + 1;
      while (next < json.size() && (json[next] == ' ' || json[next] == '\t')) ++next;
      const bool value_end = last == '"' || last == '}' || last == ']' || last == 'e' ||
                             last == 'l' || (last >= '0' && last <= '9');
      if (value_end && next < json.size() && json[next] == '"') {
        out.push_back(',');
        ++added;
      }
    }
    out.append(line.substr(keep));
    if (nl == std::string::npos) break;
    out.push_back('\n');
    line_start = nl + 1;
  }
  json.swap(out);
  return added;
}

std::string Text(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return std::to_string(j.get<int64_t>());
  if (j.is_number_unsigned()) return std::to_string(j.get<uint64_t>());
  if (j.is_boolean()) return j.get<bool>() ? "true" : "false";
  if (j.is_number_float()) return absl::StrCat(j.get<double>());
  return "";
}

std::string Field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? "" : Text(*it);
}

// "2026-09-23 11:55:37" (the daemon's local time, taken as UTC: RAS prints no zone).
int64_t StampNanos(const std::string& stamp) {
  absl::CivilSecond civil;
  std::string iso = stamp;
  if (iso.size() > 10 && iso[10] == ' ') iso[10] = 'T';
  if (!absl::ParseCivilTime(iso, &civil)) return 0;
  return absl::ToUnixNanos(absl::FromCivil(civil, absl::UTCTimeZone()));
}

std::string StripHex(std::string hash) {
  if (absl::StartsWith(hash, "0x")) hash.erase(0, 2);
  return hash;
}

void AppendUnique(std::string& list, const std::string& value) {
  if (value.empty()) return;
  for (absl::string_view v : absl::StrSplit(list, ',')) {
    if (v == value) return;
  }
  absl::StrAppend(&list, list.empty() ? "" : ",", value);
}

// Adds each of the comma list `values` to `list`, once.
void MergeList(std::string& list, const std::string& values) {
  for (absl::string_view v : absl::StrSplit(values, ',', absl::SkipEmpty())) {
    AppendUnique(list, std::string(v));
  }
}

LogEvent Begin(const char* kind, const std::string& source, int line, const std::string& raw) {
  LogEvent e;
  e.kind = kind;
  e.source = source;
  e.line = line;
  e.raw = raw;
  return e;
}

// A communicator's problem, if it has one.
bool CommIssue(const Json& comm, LogEvent& issue, std::string& ranks_behind,
               std::string& pids_behind, std::string& nodes_behind) {
  const Json empty = Json::array();
  const Json& ranks = comm.contains("ranks") && comm["ranks"].is_array() ? comm["ranks"] : empty;
  const Json& missing =
      comm.contains("missing_ranks") && comm["missing_ranks"].is_array() ? comm["missing_ranks"]
                                                                          : empty;
  std::vector<std::string> issues;
  // Collective counts: the operation whose counts differ, and the ranks behind the most
  // advanced (the straggler is the one that stopped launching).
  std::map<std::string, std::map<int64_t, int>> counts;  // op -> count -> ranks
  for (const Json& r : ranks) {
    if (!r.contains("collective_counts") || !r["collective_counts"].is_object()) continue;
    for (const auto& [op, n] : r["collective_counts"].items()) {
      if (n.is_number_integer()) ++counts[op][n.get<int64_t>()];
    }
  }
  for (const auto& [op, by_count] : counts) {
    if (by_count.size() < 2) continue;
    issues.push_back("MISMATCH");
    issue.Set("op", op);
    std::vector<std::string> parts;
    for (auto it = by_count.rbegin(); it != by_count.rend(); ++it) {
      parts.push_back(absl::StrCat(it->first, ":", it->second));
    }
    issue.Set("op_counts", absl::StrJoin(parts, ","));
    const int64_t most = by_count.rbegin()->first;
    std::string gpus;
    for (const Json& r : ranks) {
      const Json& c = r.value("collective_counts", Json::object());
      if (!c.contains(op) || !c[op].is_number_integer() || c[op].get<int64_t>() >= most) continue;
      AppendUnique(ranks_behind, Field(r, "rank"));
      AppendUnique(pids_behind, Field(r, "pid"));
      AppendUnique(nodes_behind, Field(r, "host"));
      AppendUnique(gpus, Field(r, "cuda_dev"));
    }
    issue.Set("ranks", ranks_behind);
    issue.Set("pids", pids_behind);
    issue.Set("nodes", nodes_behind);
    issue.Set("gpus", gpus);
    break;  // one operation is enough to name the ranks behind
  }
  std::string errors;
  for (const Json& r : ranks) {
    const Json& st = r.value("status", Json::object());
    const bool error = st.value("async_error", 0) != 0 || st.value("abort_flag", false);
    if (error) AppendUnique(errors, Field(r, "rank"));
  }
  if (!errors.empty()) {
    issues.push_back("ERROR");
    issue.Set("error_ranks", errors);
  }
  if (!missing.empty() || comm.value("missing_ranks_count", 0) > 0) {
    issues.push_back("INCOMPLETE");
    issue.Set("missing_ranks", absl::StrCat(std::max<int64_t>(comm.value("missing_ranks_count", 0),
                                                               static_cast<int64_t>(missing.size()))));
    std::string ids, pids, nodes, gpus, unresponsive, dead;
    for (const Json& m : missing) {
      AppendUnique(ids, Field(m, "rank"));
      AppendUnique(pids, Field(m, "pid"));
      AppendUnique(nodes, Field(m, "host"));
      AppendUnique(gpus, Field(m, "cuda_dev"));
      const Json& st = m.value("status", Json::object());
      if (st.value("unresponsive", false)) AppendUnique(unresponsive, Field(m, "rank"));
      if (st.value("considered_dead", false)) AppendUnique(dead, Field(m, "rank"));
    }
    issue.Set("missing_rank_ids", ids);
    // Apart from a mismatch's ranks behind: a communicator can be both.
    issue.Set("missing_pids", pids);
    issue.Set("missing_nodes", nodes);
    if (!issue.Get("pids")) issue.Set("pids", pids);
    if (!issue.Get("nodes")) issue.Set("nodes", nodes);
    if (!issue.Get("gpus")) issue.Set("gpus", gpus);
    if (!unresponsive.empty()) issue.Set("unresponsive_ranks", unresponsive);
    if (!dead.empty()) issue.Set("dead_ranks", dead);
  }
  if (issues.empty()) return false;
  issue.Set("issue", absl::StrJoin(issues, ","));
  return true;
}

void ReadReport(const Json& doc, const std::string& source, int line, std::string_view raw,
                std::vector<LogEvent>& out) {
  LogEvent report = Begin("nccl_ras.report", source, line, std::string(raw.substr(0, raw.find('\n'))));
  const std::string stamp = Field(doc, "timestamp");
  report.time_unix_nano = StampNanos(stamp);
  report.Set("nccl_version", Field(doc, "nccl_version"));
  report.Set("cuda_runtime", Field(doc, "cuda_runtime_version"));
  report.Set("cuda_driver", Field(doc, "cuda_driver_version"));
  report.Set("timestamp", stamp);
  report.Set("comms", Field(doc, "communicators_count"));
  if (doc.contains("ras") && doc["ras"].is_object()) {
    report.Set("collection_s", Field(doc["ras"], "collection_time_sec"));
    report.Set("timeouts", Field(doc["ras"], "timeouts_count"));
  }
  std::vector<LogEvent> issues;
  std::string errors, ranks, pids, nodes, missing_nodes, missing_pids;
  const Json& comms = doc.value("communicators", Json::array());
  for (const Json& comm : comms) {
    LogEvent issue = Begin("nccl_ras.comm_issue", source, line, report.raw);
    issue.time_unix_nano = report.time_unix_nano;
    issue.Set("comm_hash", StripHex(Field(comm, "hash")));
    issue.Set("secondary_hash", Field(comm, "secondary_hash"));
    issue.Set("size", Field(comm, "size"));
    issue.Set("nccl_version", Field(doc, "nccl_version"));
    std::string behind_ranks, behind_pids, behind_nodes;
    if (!CommIssue(comm, issue, behind_ranks, behind_pids, behind_nodes)) continue;
    MergeList(errors, issue.Value("issue"));
    MergeList(ranks, behind_ranks);
    MergeList(pids, behind_pids);
    MergeList(nodes, behind_nodes);
    MergeList(missing_nodes, issue.Value("missing_nodes"));
    MergeList(missing_pids, issue.Value("missing_pids"));
    issues.push_back(std::move(issue));
  }
  report.Set("errors", errors.empty() ? "OK" : errors);
  report.Set("issues", absl::StrCat(issues.size()));
  if (!nodes.empty()) report.Set("outlier_nodes", nodes);
  if (!ranks.empty()) report.Set("outlier_ranks", ranks);
  if (!pids.empty()) report.Set("outlier_pids", pids);
  if (!missing_nodes.empty()) report.Set("missing_nodes", missing_nodes);
  if (!missing_pids.empty()) report.Set("missing_pids", missing_pids);
  out.push_back(std::move(report));
  for (LogEvent& issue : issues) out.push_back(std::move(issue));
}

void ReadMonitorEvent(const Json& doc, const std::string& source, int line, std::string_view raw,
                      std::vector<LogEvent>& out) {
  LogEvent e = Begin("nccl_ras.event", source, line, std::string(raw.substr(0, raw.find('\n'))));
  const std::string stamp = Field(doc, "timestamp");
  e.time_unix_nano = StampNanos(stamp);
  e.Set("event", Field(doc, "event"));
  e.Set("group", Field(doc, "group"));
  e.Set("timestamp", stamp);
  if (doc.contains("peer") && doc["peer"].is_object()) {
    const Json& peer = doc["peer"];
    e.Set("pid", Field(peer, "pid"));
    e.Set("node", Field(peer, "host"));
    std::string gpus;
    if (peer.contains("cuda_devs") && peer["cuda_devs"].is_array()) {
      for (const Json& g : peer["cuda_devs"]) AppendUnique(gpus, Text(g));
    }
    e.Set("gpus", gpus);
    // A peer NCCL knew only by its RAS address: "10.0.0.7<41234>", "fd00::7<41234>"
    // (ncclSocketToString).
    const std::string addr = Field(peer, "addr");
    if (e.Value("node").empty() && !addr.empty()) e.Set("node", addr.substr(0, addr.find('<')));
  }
  e.Set("details", Field(doc, "details"));
  out.push_back(std::move(e));
}

// Parses `text` as one JSON document, adding the commas NCCL 2.28.7-2.29.1 leave out.
Json ParseLenient(std::string_view text) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) return doc;
  std::string repaired(text);
  if (AddMissingCommas(repaired) == 0) return doc;
  return Json::parse(repaired, nullptr, false);
}

}  // namespace

std::map<std::string, RasProcess> RasReportProcesses(std::string_view report) {
  std::map<std::string, RasProcess> out;
  const std::vector<Document> docs = SplitObjects(report);
  if (docs.empty()) return out;
  const Json doc = ParseLenient(docs.front().text);
  if (!doc.is_object() || !doc.contains("communicators") || !doc["communicators"].is_array()) {
    return out;
  }
  for (const Json& comm : doc["communicators"]) {
    if (!comm.is_object()) continue;
    const std::string hash = StripHex(Field(comm, "hash"));
    for (const char* list : {"ranks", "missing_ranks"}) {
      if (!comm.contains(list) || !comm[list].is_array()) continue;
      for (const Json& r : comm[list]) {
        if (!r.is_object()) continue;
        const std::string host = Field(r, "host"), pid = Field(r, "pid");
        if (host.empty() || pid.empty()) continue;
        RasProcess& p = out[absl::StrCat(host, "/", pid)];
        absl::StrAppend(&p.comm_hashes, p.comm_hashes.empty() ? "" : ",", hash);
        absl::StrAppend(&p.ranks, p.ranks.empty() ? "" : ",", Field(r, "rank"));
      }
    }
  }
  return out;
}

bool LooksLikeRasJson(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return false;
  const std::string_view head = text.substr(first, 4096);
  const auto has = [&](std::string_view key) { return head.find(key) != std::string_view::npos; };
  return has("\"communicators_count\"") || (has("\"event\"") && has("\"peer\""));
}

std::vector<LogEvent> ParseRasJson(std::string_view text, const std::string& source,
                                   std::vector<std::string>& problems) {
  std::vector<LogEvent> out;
  size_t counted_to = 0;
  int line = 1;
  for (const Document& d : SplitObjects(text)) {
    line += static_cast<int>(std::count(text.begin() + counted_to, text.begin() + d.begin, '\n'));
    counted_to = d.begin;
    Json doc = Json::parse(d.text, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
      std::string repaired(d.text);
      const size_t commas = AddMissingCommas(repaired);
      doc = Json::parse(repaired, nullptr, false);
      if (doc.is_discarded() || commas == 0) {
        // Say where: nlohmann's exception carries the byte offset.
        try {
          const Json unused = Json::parse(d.text);
        } catch (const Json::parse_error& e) {
          const JsonErrorAt error = DescribeJsonError(e);
          problems.push_back(
              absl::StrCat(source, ":", Position(text, d.begin + error.offset), ": ", error.message));
          continue;
        }
        problems.push_back(absl::StrCat(source, ":", line, ": not JSON"));
        continue;
      }
      problems.push_back(absl::StrCat(source, ":", line, ": invalid JSON read after adding ",
                                      commas, " missing comma", commas == 1 ? "" : "s",
                                      " (NCCL 2.28.7-2.29.1 print one after a missing rank's "
                                      "\"nvml_dev\")"));
    }
    if (!doc.is_object()) continue;
    // A field of an unexpected type (a number where a boolean should be, a rank that is not an
    // object) makes nlohmann throw: that document is a problem, the next one is still read.
    std::vector<LogEvent> read;
    try {
      if (doc.contains("communicators") || doc.contains("communicators_count")) {
        ReadReport(doc, source, line, d.text, read);
      } else if (doc.contains("event")) {
        ReadMonitorEvent(doc, source, line, d.text, read);
      } else {
        problems.push_back(absl::StrCat(source, ":", line,
                                        ": a JSON object that is neither a RAS report nor event"));
      }
    } catch (const Json::exception& e) {
      problems.push_back(
          absl::StrCat(source, ":", line, ": not a RAS document NCCL writes: ", e.what()));
      continue;
    }
    for (LogEvent& e : read) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace railwatch::logs
