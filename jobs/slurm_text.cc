// scontrol show job text and the squeue table (jobs/slurm.h).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "jobs/slurm.h"
#include "jobs/slurm_internal.h"

namespace railwatch::jobs {
namespace {

// One line of the input: its text (no line end), 1-based number.
struct SlurmLine {
  std::string_view text;
  int number = 0;
};

std::vector<SlurmLine> SlurmLines(std::string_view text) {
  std::vector<SlurmLine> out;
  size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back({line, ++number});
    start = end + 1;
  }
  return out;
}

bool IsBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; });
}

size_t Indent(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && (s[n] == ' ' || s[n] == '\t')) ++n;
  return n;
}

// A documentation's elision: ". . .", "...".
bool IsElision(std::string_view s) {
  return !IsBlank(s) &&
         std::all_of(s.begin(), s.end(), [](char c) { return c == '.' || c == ' ' || c == '\t'; });
}

// A value that says "nothing": (null), N/A, None, Unknown.
bool IsNone(std::string_view v) {
  return v.empty() || v == "(null)" || v == "N/A" || v == "None" || v == "Unknown";
}

absl::string_view AbslText(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// scontrol's keys: JobId, CPUs/Task, ReqB:S:C:T, MCS_label, AllocNode:Sid.
bool IsScontrolKey(std::string_view key) {
  if (key.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(key.front()))) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '/';
  });
}

// Keys whose value is the rest of their line when they start it: paths and free text that may
// hold spaces. Mid-line (JobState=PENDING Reason=Resources Dependency=(null)) they are one
// word like any other.
bool TakesRestOfLine(std::string_view key) {
  static constexpr std::string_view kKeys[] = {
      "AdminComment",  "Command", "Comment", "Reason", "StdErr",    "StdIn",      "StdOut",
      "SystemComment", "WorkDir", "OS",      "Extra",  "Container", "ContainerID"};
  return std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys);
}

struct ScontrolField {
  std::string key;
  std::string value;
  size_t value_column = 0;  // 1-based
};

// A line's Key=Value fields. A word that is not Key=... belongs to the value before it
// (JobName=my job); `stray` gets the column of such a word with nothing before it.
std::vector<ScontrolField> ScontrolFields(std::string_view line, size_t& stray) {
  std::vector<ScontrolField> out;
  stray = 0;
  size_t at = Indent(line);
  bool first = true;
  while (at < line.size()) {
    size_t end = line.find(' ', at);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view word = line.substr(at, end - at);
    const size_t eq = word.find('=');
    if (eq != std::string_view::npos && IsScontrolKey(word.substr(0, eq))) {
      ScontrolField field{std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)),
                          at + eq + 2};
      if (first && TakesRestOfLine(field.key)) {
        field.value =
            std::string(absl::StripTrailingAsciiWhitespace(AbslText(line.substr(at + eq + 1))));
        out.push_back(std::move(field));
        return out;
      }
      out.push_back(std::move(field));
    } else if (!out.empty()) {
      absl::StrAppend(&out.back().value, " ", AbslText(word));
    } else if (stray == 0) {
      stray = at + 1;
    }
    first = false;
    at = end;
    while (at < line.size() && line[at] == ' ') ++at;
  }
  for (ScontrolField& f : out) {
    f.value = std::string(absl::StripTrailingAsciiWhitespace(f.value));
  }
  return out;
}

class ScontrolJobReader {
 public:
  ScontrolJobReader(const std::string& file, absl::TimeZone zone, SlurmJobsResult& out)
      : file_(file), zone_(zone), out_(out) {}

  void Start() {
    job_.emplace();
    facts_ = {};
    detail_nodes_.clear();
    tres_rank_ = 0;
  }

  bool open() const { return job_.has_value(); }

  void Finish() {
    if (!job_) return;
    // The per-node lines name the allocation's nodes even where NodeList= is not there (a
    // documentation's elision).
    if (job_->nodes.empty()) {
      for (const std::string& node : detail_nodes_) {
        if (std::find(job_->nodes.begin(), job_->nodes.end(), node) == job_->nodes.end()) {
          job_->nodes.push_back(node);
        }
      }
    }
    internal::ApplyGpuFacts(facts_, *job_);
    out_.jobs.push_back(*std::move(job_));
    job_.reset();
  }

  void Line(const SlurmLine& line) {
    size_t stray = 0;
    std::vector<ScontrolField> fields = ScontrolFields(line.text, stray);
    if (stray != 0) Problem(line, stray, "not Key=Value: skipped up to the next key");
    if (!fields.empty() && fields.front().key == "Nodes") {
      NodeDetail(line, fields);
      return;
    }
    for (const ScontrolField& f : fields) Field(line, f);
  }

 private:
  void Problem(const SlurmLine& line, size_t column, std::string message) {
    out_.problems.push_back(
        {absl::StrCat(file_, ":", line.number, ":", column), std::move(message)});
  }

  std::optional<std::vector<std::string>> Hostlist(const SlurmLine& line, const ScontrolField& f) {
    size_t column = 0;
    absl::StatusOr<std::vector<std::string>> nodes =
        internal::ExpandHostlistAt(f.value, kMaxHostlistNames, &column);
    if (nodes.ok()) return *std::move(nodes);
    Problem(line, f.value_column + column - 1,
            absl::StrCat(f.key, "=", f.value, ": ", nodes.status().message()));
    return std::nullopt;
  }

  int64_t Time(const SlurmLine& line, const ScontrolField& f) {
    if (IsNone(f.value)) return 0;
    absl::Time t;
    std::string error;
    if (!absl::ParseTime("%Y-%m-%dT%H:%M:%S", f.value, zone_, &t, &error)) {
      Problem(line, f.value_column,
              absl::StrCat(f.key, "=", f.value, ": not a time (YYYY-MM-DDTHH:MM:SS)"));
      return 0;
    }
    return absl::ToUnixSeconds(t);
  }

  // The job's total GPUs, most exact first: JOB_GRES (its allocation), AllocTRES, TRES,
  // TresPerJob, ReqTRES (what a pending job asks).
  void Total(int rank, const SlurmGpus& gpus) {
    if (gpus.count < 0 || rank <= tres_rank_) return;
    facts_.total = gpus;
    tres_rank_ = rank;
  }

  void Field(const SlurmLine& line, const ScontrolField& f) {
    SlurmJob& j = *job_;
    const std::string& v = f.value;
    if (f.key == "JobId") {
      j.id = v;
    } else if (f.key == "JobName") {
      j.name = v;
    } else if (f.key == "UserId") {  // testuser(1002)
      j.user = v.substr(0, v.find('('));
    } else if (f.key == "Account") {
      j.account = IsNone(v) ? "" : v;
    } else if (f.key == "Partition") {
      j.partition = IsNone(v) ? "" : v;
    } else if (f.key == "JobState") {
      j.state = v;
    } else if (f.key == "NodeList") {
      if (internal::NamesNoNode(v)) return;
      j.node_list = v;
      if (std::optional<std::vector<std::string>> nodes = Hostlist(line, f)) j.nodes = *nodes;
    } else if (f.key == "NumNodes") {  // 2 or, while pending, 2-4
      int n = 0;
      if (absl::SimpleAtoi(AbslText(std::string_view(v).substr(0, v.find('-'))), &n)) {
        j.node_count = n;
      }
    } else if (f.key == "SubmitTime") {
      j.submit_unix = Time(line, f);
    } else if (f.key == "StartTime") {
      j.start_unix = Time(line, f);
    } else if (f.key == "EndTime") {
      j.end_unix = Time(line, f);
    } else if (f.key == "TresPerNode" || f.key == "Gres") {
      if (SlurmGpus gpus = GpusFromGres(v); gpus.count >= 0) facts_.per_node_request = gpus;
    } else if (f.key == "JOB_GRES") {
      Total(5, GpusFromGres(v));
    } else if (f.key == "AllocTRES") {
      Total(4, GpusFromTres(v));
    } else if (f.key == "TRES") {
      Total(3, GpusFromTres(v));
    } else if (f.key == "TresPerJob") {
      Total(2, GpusFromGres(v));
    } else if (f.key == "ReqTRES") {
      Total(1, GpusFromTres(v));
    }
  }

  // -d: "Nodes=gpu[01-02] CPU_IDs=0-5 Mem=0 GRES=gpu:1(IDX:0)" (older: GRES_IDX=gpu(IDX:0)).
  void NodeDetail(const SlurmLine& line, const std::vector<ScontrolField>& fields) {
    std::optional<std::vector<std::string>> nodes = Hostlist(line, fields.front());
    if (!nodes) return;
    detail_nodes_.insert(detail_nodes_.end(), nodes->begin(), nodes->end());
    for (const ScontrolField& f : fields) {
      if (f.key != "GRES" && f.key != "GRES_IDX") continue;
      const SlurmGpus gpus = GpusFromGres(f.value);
      if (gpus.count < 0) continue;
      for (const std::string& node : *nodes) facts_.per_node.push_back({node, gpus});
    }
  }

  const std::string& file_;
  absl::TimeZone zone_;
  SlurmJobsResult& out_;
  std::optional<SlurmJob> job_;
  internal::GpuFacts facts_;
  std::vector<std::string> detail_nodes_;  // what the per-node lines name
  int tres_rank_ = 0;
};

// The squeue table's columns by their header names: a text field of the job, or one read
// apart.
enum class SqueueColumnKind { kOther, kText, kState, kNodes, kNodeList };

struct SqueueColumn {
  SqueueColumnKind kind = SqueueColumnKind::kOther;
  std::string SlurmJob::*text = nullptr;  // kText: where the cell goes
};

SqueueColumn SqueueColumnOf(std::string_view header) {
  using Kind = SqueueColumnKind;
  if (header == "JOBID") return {Kind::kText, &SlurmJob::id};
  if (header == "PARTITION") return {Kind::kText, &SlurmJob::partition};
  if (header == "NAME") return {Kind::kText, &SlurmJob::name};
  if (header == "USER") return {Kind::kText, &SlurmJob::user};
  if (header == "ACCOUNT") return {Kind::kText, &SlurmJob::account};
  if (header == "ST" || header == "STATE") return {Kind::kState};
  if (header == "NODES") return {Kind::kNodes};
  if (header == "NODELIST(REASON)" || header == "NODELIST") return {Kind::kNodeList};
  return {};
}

struct SqueueHeader {
  std::vector<SqueueColumn> columns;
  std::vector<size_t> ends;  // the offset just past each header word
};

std::vector<std::pair<size_t, std::string_view>> Words(std::string_view line) {
  std::vector<std::pair<size_t, std::string_view>> out;
  size_t at = 0;
  while (true) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    if (at >= line.size()) return out;
    size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    out.push_back({at, line.substr(at, end - at)});
    at = end;
  }
}

// A row's cells: one per word when the words and the columns agree in number, else cut at
// the header's word ends (squeue right-aligns its default columns, so a name that holds a
// space stays in its column); the last column is the rest of the line.
std::vector<std::pair<size_t, std::string_view>> SqueueCells(std::string_view line,
                                                             const SqueueHeader& header) {
  std::vector<std::pair<size_t, std::string_view>> words = Words(line);
  if (words.size() == header.columns.size()) return words;
  std::vector<std::pair<size_t, std::string_view>> out;
  size_t start = 0;
  for (size_t i = 0; i < header.ends.size(); ++i) {
    const size_t end = i + 1 == header.ends.size() ? line.size() : header.ends[i];
    if (start >= line.size()) {
      out.push_back({line.size(), std::string_view()});
      continue;
    }
    std::string_view cell = line.substr(start, std::min(end, line.size()) - start);
    const size_t lead = Indent(cell);
    cell.remove_prefix(lead);
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t')) cell.remove_suffix(1);
    out.push_back({start + lead, cell});
    start = end;
  }
  return out;
}

}  // namespace

SlurmJobsResult ParseScontrolShowJob(std::string_view text, const std::string& file,
                                     absl::TimeZone zone) {
  SlurmJobsResult out;
  ScontrolJobReader reader(file, zone, out);
  bool any = false;
  for (const SlurmLine& line : SlurmLines(text)) {
    const bool starts_job = absl::StartsWith(AbslText(line.text), "JobId=");
    if (starts_job) {
      reader.Finish();
      reader.Start();
      any = true;
    } else if (IsBlank(line.text) || Indent(line.text) == 0) {
      // A blank line ends a job; so does unindented text that is not one (a prompt).
      reader.Finish();
      continue;
    }
    if (!reader.open() || IsElision(line.text)) continue;
    reader.Line(line);
  }
  reader.Finish();
  if (!any && text.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    out.problems.push_back(
        {absl::StrCat(file, ":1:1"), "no JobId= line: not scontrol show job output"});
  }
  return out;
}

SlurmJobsResult ParseSqueueTable(std::string_view text, const std::string& file) {
  SlurmJobsResult out;
  std::optional<SqueueHeader> header;
  for (const SlurmLine& line : SlurmLines(text)) {
    if (!header) {
      std::vector<std::pair<size_t, std::string_view>> words = Words(line.text);
      if (words.empty() || words.front().second != "JOBID") continue;
      header.emplace();
      for (const auto& [at, word] : words) {
        header->columns.push_back(SqueueColumnOf(word));
        header->ends.push_back(at + word.size());
      }
      continue;
    }
    if (IsBlank(line.text)) break;
    SlurmJob j;
    const std::vector<std::pair<size_t, std::string_view>> cells = SqueueCells(line.text, *header);
    for (size_t i = 0; i < cells.size() && i < header->columns.size(); ++i) {
      const std::string value(cells[i].second);
      const SqueueColumn& column = header->columns[i];
      switch (column.kind) {
        case SqueueColumnKind::kText:
          j.*column.text = value;
          break;
        case SqueueColumnKind::kState:
          j.state = internal::JobStateName(value);
          break;
        case SqueueColumnKind::kNodes:
          if (!absl::SimpleAtoi(value, &j.node_count)) j.node_count = -1;
          break;
        case SqueueColumnKind::kNodeList: {
          // A pending job shows its reason here: (Resources), (Priority).
          if (value.empty() || value.front() == '(') break;
          size_t error_column = 0;
          absl::StatusOr<std::vector<std::string>> nodes =
              internal::ExpandHostlistAt(value, kMaxHostlistNames, &error_column);
          j.node_list = value;
          if (nodes.ok()) {
            j.nodes = *std::move(nodes);
          } else {
            out.problems.push_back(
                {absl::StrCat(file, ":", line.number, ":", cells[i].first + error_column),
                 absl::StrCat("node list \"", value, "\": ", nodes.status().message())});
          }
          break;
        }
        case SqueueColumnKind::kOther:
          break;
      }
    }
    if (j.id.empty()) {
      out.problems.push_back(
          {absl::StrCat(file, ":", line.number, ":1"), "a row without a job id: skipped"});
      continue;
    }
    internal::ApplyGpuFacts({}, j);
    out.jobs.push_back(std::move(j));
  }
  if (!header && text.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    out.problems.push_back(
        {absl::StrCat(file, ":1:1"), "no header line starting with JOBID: not squeue output"});
  }
  return out;
}

}  // namespace railwatch::jobs
