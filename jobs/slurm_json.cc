// squeue --json, scontrol show job --json and slurmrestd's /jobs (jobs/slurm.h).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/json_error.h"
#include "common/text.h"
#include "jobs/slurm.h"
#include "jobs/slurm_internal.h"
#include "nlohmann/json.hpp"

namespace railwatch::jobs {
namespace {

using Json = nlohmann::json;

const Json* JsonMember(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// A number as any version prints it: 42, 42.0, "42", or wrapped {set, infinite, number}
// (v0.0.39+); nullopt when absent, not set or infinite.
std::optional<int64_t> JsonNumber(const Json* j) {
  if (j == nullptr) return std::nullopt;
  if (j->is_number_unsigned()) {
    const uint64_t n = j->get<uint64_t>();
    return n > static_cast<uint64_t>(INT64_MAX) ? std::nullopt
                                                : std::optional<int64_t>(static_cast<int64_t>(n));
  }
  if (j->is_number_integer()) return j->get<int64_t>();
  if (j->is_number_float()) return static_cast<int64_t>(j->get<double>());
  if (j->is_string()) {
    int64_t n = 0;
    if (absl::SimpleAtoi(j->get<std::string>(), &n)) return n;
    return std::nullopt;
  }
  if (j->is_object()) {
    const Json* set = JsonMember(*j, "set");
    const Json* infinite = JsonMember(*j, "infinite");
    if (set != nullptr && set->is_boolean() && !set->get<bool>()) return std::nullopt;
    if (infinite != nullptr && infinite->is_boolean() && infinite->get<bool>()) return std::nullopt;
    return JsonNumber(JsonMember(*j, "number"));
  }
  return std::nullopt;
}

std::string JsonText(const Json* j) {
  if (j == nullptr) return "";
  if (j->is_string()) return j->get<std::string>();
  if (j->is_number()) {
    const std::optional<int64_t> n = JsonNumber(j);
    return n ? std::to_string(*n) : "";
  }
  return "";
}

int64_t JsonTime(const Json* j) {
  const std::optional<int64_t> t = JsonNumber(j);
  return t && *t > 0 ? *t : 0;
}

// Where things are in the text: nlohmann keeps no positions, so a value is found by its text.
class JsonPlaces {
 public:
  JsonPlaces(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  std::string Where(size_t offset) const {
    return absl::StrCat(file_, ":", TextPosition(text_, offset));
  }

  // The offset of "key" (as a key) at or after `from`; npos when none.
  size_t Key(std::string_view key, size_t from) const {
    const std::string quoted = absl::StrCat("\"", absl::string_view(key.data(), key.size()), "\"");
    for (size_t at = text_.find(quoted, from); at != std::string_view::npos;
         at = text_.find(quoted, at + 1)) {
      size_t next = at + quoted.size();
      while (next < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[next]))) {
        ++next;
      }
      if (next < text_.size() && text_[next] == ':') return at;
    }
    return std::string_view::npos;
  }

  // The offsets of the elements of the array that is the value of top-level `key` of the
  // document starting at `start`; empty when there is none.
  std::vector<size_t> TopLevelArrayElements(std::string_view key, size_t start) const {
    std::vector<size_t> out;
    int depth = 0;
    std::string_view last_string;  // the last string read at depth 1: a key, or a value
    bool key_matches = false;      // the key before the ':' just read is `key`
    bool in_array = false;         // inside that key's array
    bool expecting = false;        // an element starts at the next token
    for (size_t i = start; i < text_.size(); ++i) {
      const char c = text_[i];
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) continue;
      if (in_array && depth == 2 && expecting && c != ']') {
        out.push_back(i);
        expecting = false;
      }
      if (c == '"') {
        const size_t close = StringEnd(i);
        if (depth == 1) last_string = text_.substr(i + 1, close - i - 1);
        i = close;
      } else if (c == ':' && depth == 1) {
        key_matches = last_string == key;
      } else if (c == '{' || c == '[') {
        if (c == '[' && depth == 1 && key_matches) {
          in_array = true;
          expecting = true;
        }
        key_matches = false;
        ++depth;
      } else if (c == '}' || c == ']') {
        --depth;
        if (in_array && depth == 1) return out;
      } else if (c == ',' && in_array && depth == 2) {
        expecting = true;
      }
    }
    return out;
  }

  // The offset of the first character inside the string value `value` at or after `from`, as
  // Slurm writes it ('/' escaped or not); npos when not found.
  size_t StringValue(const std::string& value, size_t from) const {
    for (const std::string& form : {Json(value).dump(), SlashEscaped(Json(value).dump())}) {
      const size_t at = text_.find(form, from);
      if (at != std::string_view::npos) return at + 1;
    }
    return std::string_view::npos;
  }

 private:
  // The offset of the '"' that closes the string opened at `open`; the text's size when none.
  size_t StringEnd(size_t open) const {
    for (size_t i = open + 1; i < text_.size(); ++i) {
      if (text_[i] == '\\') {
        ++i;
      } else if (text_[i] == '"') {
        return i;
      }
    }
    return text_.size();
  }

  static std::string SlashEscaped(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '/') out += '\\';
      out += c;
    }
    return out;
  }

  std::string_view text_;
  const std::string& file_;
};

struct JsonJobReader {
  const JsonPlaces& places;
  SlurmJobsResult& out;

  void Problem(size_t offset, std::string message) {
    out.problems.push_back({places.Where(offset), std::move(message)});
  }

  // job_resources: v0.0.37-0.0.39 {"nodes": "a[1-2]", "allocated_nodes": {..}|[{nodename}]},
  // v0.0.41 {"nodes": {"list": "a[1-2]", "allocation": [{"name": ...}]}}.
  static std::string ResourcesNodeList(const Json& job) {
    const Json* resources = JsonMember(job, "job_resources");
    if (resources == nullptr) return "";
    const Json* nodes = JsonMember(*resources, "nodes");
    if (nodes == nullptr) return "";
    if (nodes->is_string()) return nodes->get<std::string>();
    return JsonText(JsonMember(*nodes, "list"));
  }

  void ReadNodes(const Json& job, size_t job_at, SlurmJob& j) {
    j.node_list = JsonText(JsonMember(job, "nodes"));
    if (internal::NamesNoNode(j.node_list)) j.node_list = ResourcesNodeList(job);
    if (internal::NamesNoNode(j.node_list)) {
      j.node_list.clear();
      return;
    }
    size_t column = 0;
    absl::StatusOr<std::vector<std::string>> nodes =
        internal::ExpandHostlistAt(j.node_list, kMaxHostlistNames, &column);
    if (nodes.ok()) {
      j.nodes = *std::move(nodes);
      return;
    }
    const size_t at = places.StringValue(j.node_list, job_at);
    Problem(at == std::string_view::npos ? job_at : at + column - 1,
            absl::StrCat("job ", j.id, ": node list \"", j.node_list,
                         "\": ", nodes.status().message()));
  }

  void ReadGpus(const Json& job, size_t job_at, SlurmJob& j) {
    internal::GpuFacts facts;
    facts.per_node_request = GpusFromGres(JsonText(JsonMember(job, "tres_per_node")));
    // gres_detail: one entry per node of the job, in the order of its node list.
    if (const Json* detail = JsonMember(job, "gres_detail");
        detail != nullptr && detail->is_array() && !detail->empty()) {
      if (detail->size() == j.nodes.size()) {
        for (size_t i = 0; i < detail->size(); ++i) {
          facts.per_node.push_back({j.nodes[i], GpusFromGres(JsonText(&(*detail)[i]))});
        }
      } else if (!j.nodes.empty()) {
        const size_t at = places.Key("gres_detail", job_at);
        Problem(at == std::string_view::npos ? job_at : at,
                absl::StrCat("job ", j.id, ": gres_detail has ", detail->size(), " entries for ",
                             j.nodes.size(), " nodes: GPU indexes per node not read"));
      }
    }
    // The allocation; a pending job has none, and then its request is what is known.
    for (const char* key : {"tres_alloc_str", "tres_per_job", "tres_req_str"}) {
      const std::string tres = JsonText(JsonMember(job, key));
      facts.total = absl::StartsWith(key, "tres_per") ? GpusFromGres(tres) : GpusFromTres(tres);
      if (facts.total.count >= 0) break;
    }
    internal::ApplyGpuFacts(facts, j);
  }

  void ReadState(const Json& job, SlurmJob& j) {
    const Json* state = JsonMember(job, "job_state");
    if (state == nullptr) return;
    if (state->is_string()) {
      j.state = state->get<std::string>();
    } else if (state->is_array()) {  // v0.0.40+: ["RUNNING", "COMPLETING"]
      for (const Json& flag : *state) {
        if (!flag.is_string()) continue;
        if (j.state.empty()) {
          j.state = flag.get<std::string>();
        } else {
          j.state_flags.push_back(flag.get<std::string>());
        }
      }
    }
  }

  void Read(const Json& job, size_t job_at) {
    if (!job.is_object()) {
      Problem(job_at, "a job that is not an object: skipped");
      return;
    }
    SlurmJob j;
    j.id = JsonText(JsonMember(job, "job_id"));
    if (j.id.empty()) {
      Problem(job_at, "a job without job_id: skipped");
      return;
    }
    j.name = JsonText(JsonMember(job, "name"));
    j.user = JsonText(JsonMember(job, "user_name"));
    if (j.user.empty()) j.user = JsonText(JsonMember(job, "user_id"));
    j.account = JsonText(JsonMember(job, "account"));
    j.partition = JsonText(JsonMember(job, "partition"));
    ReadState(job, j);
    if (const std::optional<int64_t> n = JsonNumber(JsonMember(job, "node_count"))) {
      j.node_count = static_cast<int>(*n);
    }
    ReadNodes(job, job_at, j);
    ReadGpus(job, job_at, j);
    j.submit_unix = JsonTime(JsonMember(job, "submit_time"));
    j.start_unix = JsonTime(JsonMember(job, "start_time"));
    j.end_unix = JsonTime(JsonMember(job, "end_time"));
    out.jobs.push_back(std::move(j));
  }
};

// meta: v0.0.37 {"plugin": {"type": "openapi/v0.0.37"}, "Slurm": {"release"}}, v0.0.39
// {"plugins": {"data_parser": ...}, "Slurm": ...}, v0.0.40+ {"plugin": {"data_parser": ...},
// "slurm": ...}.
void ReadMeta(const Json& doc, SlurmJobsResult& out) {
  const Json* meta = JsonMember(doc, "meta");
  if (meta == nullptr) return;
  for (const char* plugin_key : {"plugin", "plugins"}) {
    if (const Json* plugin = JsonMember(*meta, plugin_key)) {
      out.format = JsonText(JsonMember(*plugin, "data_parser"));
      if (out.format.empty()) out.format = JsonText(JsonMember(*plugin, "type"));
      if (!out.format.empty()) break;
    }
  }
  for (const char* slurm_key : {"slurm", "Slurm"}) {
    if (const Json* slurm = JsonMember(*meta, slurm_key)) {
      out.slurm_release = JsonText(JsonMember(*slurm, "release"));
      if (!out.slurm_release.empty()) break;
    }
  }
}

// errors and warnings: [{"error": "...", "error_number": 2017, "description": ...}] (v0.0.37:
// "errno"); each becomes a problem.
void ReadSlurmMessages(const Json& doc, const JsonPlaces& places, SlurmJobsResult& out) {
  for (const char* key : {"errors", "warnings"}) {
    const Json* list = JsonMember(doc, key);
    if (list == nullptr || !list->is_array() || list->empty()) continue;
    const size_t at = places.Key(key, 0);
    for (const Json& e : *list) {
      std::string text = e.is_string() ? e.get<std::string>() : "";
      for (const char* field : {"description", "error", "warning"}) {
        const std::string s = JsonText(JsonMember(e, field));
        if (!s.empty()) absl::StrAppend(&text, text.empty() ? "" : ": ", s);
      }
      for (const char* field : {"error_number", "errno"}) {
        if (const std::optional<int64_t> n = JsonNumber(JsonMember(e, field)); n && *n != 0) {
          absl::StrAppend(&text, " (", *n, ")");
          break;
        }
      }
      out.problems.push_back(
          {places.Where(at == std::string_view::npos ? 0 : at),
           absl::StrCat("Slurm ", key == std::string_view("errors") ? "error" : "warning", ": ",
                        text.empty() ? e.dump() : text)});
    }
  }
}

}  // namespace

SlurmJobsResult ParseSqueueJson(std::string_view text, const std::string& file) {
  SlurmJobsResult out;
  const JsonPlaces places(text, file);
  // Skip what comes before the document: a shell prompt, the command line.
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const absl::string_view line =
        absl::StripLeadingAsciiWhitespace(absl::string_view(text.data() + start, end - start));
    if (absl::StartsWith(line, "{")) {
      start += (end - start) - line.size();
      break;
    }
    start = end + 1;
  }
  if (start >= text.size()) {
    if (!absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())).empty()) {
      out.problems.push_back({places.Where(0), "no JSON object: not squeue --json output"});
    }
    return out;
  }
  Json doc;
  try {
    doc = Json::parse(text.substr(start));
  } catch (const Json::parse_error& e) {
    const JsonErrorAt error = DescribeJsonError(e);
    out.problems.push_back({places.Where(start + error.offset), error.message});
    return out;
  }
  const Json* jobs = JsonMember(doc, "jobs");
  if (jobs == nullptr || !jobs->is_array()) {
    out.problems.push_back({places.Where(start), "no \"jobs\" array: not squeue --json output"});
    return out;
  }
  try {
    ReadMeta(doc, out);
    ReadSlurmMessages(doc, places, out);
    JsonJobReader reader{places, out};
    // Each job is placed at its '{' in the text.
    const std::vector<size_t> offsets = places.TopLevelArrayElements("jobs", start);
    for (size_t i = 0; i < jobs->size(); ++i) {
      reader.Read((*jobs)[i], i < offsets.size() ? offsets[i] : start);
    }
  } catch (const Json::exception& e) {  // a value of a type no version prints
    out.problems.push_back({places.Where(start), absl::StrCat("unexpected JSON: ", e.what())});
  }
  return out;
}

}  // namespace railwatch::jobs
