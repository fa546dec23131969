#include "triage/inputs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "logs/kernel_messages.h"
#include "logs/nccl_inspector.h"
#include "logs/ras_json.h"
#include "optics/readers.h"
#include "triage/ib.h"
#include "triage/inspector.h"
#include "triage/optics.h"
#include "triage/rdma.h"

namespace railwatch {
namespace {

using logs::LogEvent;
using logs::LogParser;

// Longest line read; the parser itself looks at the first 64 KiB of it and counts the cut.
constexpr size_t kMaxLineBytes = 1 << 20;
// InfiniBand tool output, NCCL RAS JSON, NCCL Inspector output and mlxlink --json are read whole
// (their readers need the blocks together): the first 64 KiB say whether an input is one, and
// such an input is kept up to 256 MiB.
constexpr size_t kIbHeadBytes = 64 * 1024;
constexpr size_t kMaxIbBytes = size_t{256} << 20;

// Keeps an input's text while it may be one read whole.
struct IbText {
  std::string text;
  bool decided = false, keep = false, too_long = false, inspector = false, mlxlink_json = false;
  void Add(const std::string& line) {
    if (decided && !keep) return;
    if (text.size() + line.size() + 1 > kMaxIbBytes) {
      too_long = true;
      keep = false;
      decided = true;
      text.clear();
      return;
    }
    text.append(line).push_back('\n');
    if (!decided && text.size() >= kIbHeadBytes) Decide();
  }
  void Decide() {
    if (decided) return;
    decided = true;
    inspector = logs::LooksLikeInspectorOutput(text);
    mlxlink_json = !inspector && optics::LooksLikeMlxlinkJson(text);
    keep = inspector || mlxlink_json || LooksLikeIbToolOutput(text) ||
           logs::LooksLikeRasJson(text);
    if (!keep) std::string().swap(text);
  }
};

// Feeds `in` line by line, in chunks: a file of any size or shape, even one without a single
// newline, costs bounded memory. Lines of `rdma` tool output go to `rdma`, lines of optics tool
// output to `optics`, kernel messages (dmesg, journal) to `kernel`, the rest to `parser` (with
// their true line numbers).
bool FeedStream(std::istream& in, LogParser& parser, RdmaToolParser& rdma,
                optics::ToolOutputReader& optics, logs::KernelMessageParser& kernel,
                std::vector<LogEvent>& events, IbText& ib) {
  std::string chunk(64 * 1024, '\0');
  std::string line;
  bool cut = false;
  int line_number = 0;
  bool renumber = false;
  auto feed = [&](const std::string& l) {
    ib.Add(l);
    if (rdma.Feed(l, ++line_number) || optics.Feed(l, line_number) ||
        kernel.FeedLine(l, line_number, events)) {
      renumber = true;
      return;
    }
    if (renumber) parser.SetNextLineNumber(line_number);
    renumber = false;
    parser.Feed(l, events);
  };
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    size_t n = static_cast<size_t>(in.gcount());
    size_t start = 0;
    while (start < n) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data() + start, '\n', n - start));
      size_t end = nl ? static_cast<size_t>(nl - chunk.data()) : n;
      if (!cut) {
        size_t take = std::min(end - start, kMaxLineBytes - line.size());
        line.append(chunk, start, take);
        cut = take < end - start;
      }
      if (nl == nullptr) break;
      feed(line);
      line.clear();
      cut = false;
      start = end + 1;
    }
  }
  if (!line.empty()) feed(line);
  parser.Finish(events);
  kernel.Flush(events);
  rdma.Finish();
  optics.Finish();
  ib.Decide();
  return !in.bad();
}

// An input's optics tool output: its problems on `err` (FILE:LINE:COLUMN), its readings as
// optics.* events, what was read in `input`.
void AddOptics(optics::ToolOutput output, const std::string& file, TriageInput& input,
               std::vector<LogEvent>& events, std::ostream& err) {
  for (const optics::ToolProblem& p : output.problems) {
    err << "railwatch triage: " << p.ToString(file) << "\n";
  }
  input.optics_lines = output.lines;
  input.optics_readings = output.readings.size();
  input.optics_problems = output.problems.size();
  for (const optics::ToolReading& r : output.readings) {
    const std::string tool(optics::ToolFormatName(r.format));
    if (std::find(input.optics_tools.begin(), input.optics_tools.end(), tool) ==
        input.optics_tools.end()) {
      input.optics_tools.push_back(tool);
    }
  }
  std::vector<LogEvent> optics_events = OpticsToolEvents(output, file);
  events.insert(events.end(), std::make_move_iterator(optics_events.begin()),
                std::make_move_iterator(optics_events.end()));
}

void AddStats(const LogParser::Stats& s, LogParser::Stats& total) {
  total.lines += s.lines;
  total.recognized += s.recognized;
  total.known += s.known;
  total.blank += s.blank;
  total.unknown += s.unknown;
  total.malformed += s.malformed;
  total.truncated += s.truncated;
  total.events += s.events;
}

// One event per member of a communicator's operation, over every input's Inspector records
// together, each counted in the stats of the input its first record came from.
void AddInspectorEvents(TriageInputs& out) {
  if (out.inspector.empty()) return;
  std::vector<InspectorSource> sources;
  std::vector<size_t> input_of_source;
  for (size_t i = 0; i < out.inputs.size(); ++i) {
    if (out.inputs[i].inspector_records == 0) continue;
    sources.push_back({out.inputs[i].name, out.inputs[i].inspector_records});
    input_of_source.push_back(i);
  }
  std::vector<size_t> from_source;
  std::vector<LogEvent> events = InspectorSummaryEvents(out.inspector, sources, &from_source);
  for (size_t source : from_source) ++out.inputs[input_of_source[source]].stats.events;
  out.events.insert(out.events.end(), std::make_move_iterator(events.begin()),
                    std::make_move_iterator(events.end()));
}

}  // namespace

TriageInputs ReadTriageInputs(const std::vector<std::string>& files, std::istream& in,
                              std::ostream& err) {
  TriageInputs out;
  for (const std::string& file : files) {
    TriageInput input;
    input.name = file;
    LogParser parser(file);
    RdmaToolParser rdma;
    optics::ToolOutputReader optics;
    logs::KernelMessageParser kernel(file);
    IbText ib;
    std::error_code ec;
    if (file == "-") {
      if (!FeedStream(in, parser, rdma, optics, kernel, out.events, ib)) {
        input.error = "read error on standard input";
      }
    } else if (!std::filesystem::exists(file, ec)) {
      input.error = "no such file";
      input.failure = TriageInput::Failure::kNotFound;
    } else if (std::filesystem::is_directory(file, ec)) {
      input.error = "is a directory";
    } else {
      std::ifstream f(file, std::ios::binary);
      if (!f) {
        input.error = absl::StrCat("cannot open: ", std::strerror(errno));
      } else if (!FeedStream(f, parser, rdma, optics, kernel, out.events, ib)) {
        input.error = absl::StrCat("read error: ", std::strerror(errno));
      }
    }
    if (!input.error.empty()) {
      if (input.failure == TriageInput::Failure::kNone) {
        input.failure = TriageInput::Failure::kUnreadable;
      }
      err << "railwatch triage: " << file << ": " << input.error << "\n";
    }
    input.stats = parser.stats();
    // Kernel messages (dmesg, journal) are lines of the input like the logs' own.
    input.kernel = kernel.stats();
    AddStats(input.kernel, input.stats);
    input.stats.problems.insert(input.stats.problems.end(), input.kernel.problems.begin(),
                                input.kernel.problems.end());
    for (const auto& p : input.stats.problems) {
      err << "railwatch triage: " << file << ":" << p.line << ": " << p.reason << "\n";
    }
    input.rdma = rdma.TakeOutput();
    for (const RdmaToolProblem& p : input.rdma.problems) {
      err << "railwatch triage: " << file << ":" << p.line << ": rdma output: " << p.reason << "\n";
    }
    std::vector<LogEvent> rdma_events = RdmaToolEvents(input.rdma, file);
    out.events.insert(out.events.end(), std::make_move_iterator(rdma_events.begin()),
                      std::make_move_iterator(rdma_events.end()));
    optics::ToolOutput optics_output = optics.TakeOutput();
    if (ib.keep && ib.mlxlink_json) {
      // mlxlink --json: read whole; its lines are the document's, not unknown log lines.
      optics::ToolOutput json = optics::ReadMlxlinkJson(ib.text);
      input.stats.recognized += input.stats.unknown;
      input.stats.unknown = 0;
      for (const optics::ToolReading& r : json.readings) {
        input.stats.events += r.module.has_value() + r.fec.has_value() + r.phy.has_value();
      }
      optics_output.lines += json.lines;
      for (optics::ToolReading& r : json.readings) optics_output.readings.push_back(std::move(r));
      for (optics::ToolProblem& p : json.problems) optics_output.problems.push_back(std::move(p));
    }
    AddOptics(std::move(optics_output), file, input, out.events, err);
    if (ib.too_long) {
      err << "railwatch triage: " << file << ": over " << (kMaxIbBytes >> 20)
          << " MiB: not read as "
          << (ib.inspector ? "NCCL Inspector output" : "InfiniBand tool output") << "\n";
    }
    if (ib.keep && logs::LooksLikeRasJson(ib.text)) {
      // NCCL RAS in JSON (`ncclras -f json`, MONITOR events): read whole.
      std::vector<std::string> problems;
      std::vector<LogEvent> ras = logs::ParseRasJson(ib.text, file, problems);
      for (const std::string& p : problems) err << "railwatch triage: " << p << "\n";
      // Its lines are the document's, not unknown log lines.
      input.stats.recognized += input.stats.unknown;
      input.stats.unknown = 0;
      input.stats.events += ras.size();
      out.events.insert(out.events.end(), std::make_move_iterator(ras.begin()),
                        std::make_move_iterator(ras.end()));
    } else if (ib.keep && ib.mlxlink_json) {
      // Read above, with the optics lines.
    } else if (ib.keep && ib.inspector) {
      // NCCL Inspector records (JSONL or the Prometheus textfile): summarised with every other
      // input's after the loop.
      logs::InspectorParse parsed = logs::ParseInspectorOutput(ib.text);
      for (const std::string& p : parsed.problems) {
        err << "railwatch triage: " << file << ":" << p << "\n";
      }
      // Its lines are records, not unknown log lines; a bad record is a malformed line.
      const uint64_t bad = std::min<uint64_t>(parsed.skipped, input.stats.unknown);
      input.stats.malformed += bad;
      input.stats.recognized += input.stats.unknown - bad;
      input.stats.unknown = 0;
      input.inspector_records = parsed.records.size();
      out.inspector.insert(out.inspector.end(), std::make_move_iterator(parsed.records.begin()),
                           std::make_move_iterator(parsed.records.end()));
    } else if (ib.keep) {
      std::vector<std::string> problems;
      std::vector<LogEvent> ib_events = IbToolEvents(ib.text, file, problems);
      input.ib_kind = IbToolKind(ib.text);
      input.ib_records = ib_events.size();
      for (const std::string& p : problems) err << "railwatch triage: " << p << "\n";
      out.events.insert(out.events.end(), std::make_move_iterator(ib_events.begin()),
                        std::make_move_iterator(ib_events.end()));
    }
    out.inputs.push_back(std::move(input));
  }
  AddInspectorEvents(out);
  for (const TriageInput& input : out.inputs) AddStats(input.stats, out.total);
  return out;
}

}  // namespace railwatch
