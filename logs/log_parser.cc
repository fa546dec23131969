#include "logs/log_parser.h"

#include <utility>

#include "logs/line_prefix.h"
#include "logs/nccl_line.h"
#include "logs/nccl_parser.h"
#include "logs/nccltests_parser.h"
#include "logs/parse_context.h"
#include "logs/pytorch_parser.h"
#include "logs/ras_parser.h"
#include "logs/text_scan.h"

namespace railwatch::logs {

using internal::Outcome;

struct LogParser::State {
  State(std::string source, const Clock& clock) : ctx(std::move(source), clock) {}

  Outcome Dispatch(const internal::Line& line);

  internal::Context ctx;
  internal::NcclParser nccl;
  internal::PytorchParser pytorch;
  internal::RasParser ras;
  internal::NcclTestsParser nccltests;
  int next_line = 1;
};

// Which parser takes a line. Multi-line constructs in progress come first (a PyTorch
// termination block, an NCCL error quoted after "Last error:", a RAS report), then the
// formats by how distinctive their marks are: the NCCL prefix, PyTorch's, nccl-tests'.
Outcome LogParser::State::Dispatch(const internal::Line& line) {
  Outcome o;
  if (pytorch.TakeQuotedNcclError()) {
    o = nccl.FeedBareError(line, ctx);
    if (o != Outcome::kNotMine) return o;
  }
  o = pytorch.Continue(line, ctx);
  if (o != Outcome::kNotMine) return o;

  internal::NcclLine nl;
  bool is_nccl = internal::ParseNcclLine(line.text, &nl);
  bool is_pytorch = !is_nccl && internal::PytorchParser::Claims(line);
  if (ras.active() || internal::RasParser::StartsReport(line.text)) {
    if (!is_nccl && !is_pytorch) {
      o = ras.Feed(line, ctx);
      if (o != Outcome::kNotMine) return o;
    }
    ras.Finish(ctx);
  }
  if (!is_nccl && !is_pytorch) {
    o = internal::RasParser::FeedMonitorLine(line, ctx);
    if (o != Outcome::kNotMine) return o;
  }
  if (is_nccl) return nccl.Feed(line, &nl, ctx);
  if (internal::NcclParser::IsBareVersionLine(line.text)) return nccl.Feed(line, nullptr, ctx);
  if (is_pytorch) {
    o = pytorch.Feed(line, ctx);
    if (o != Outcome::kNotMine) return o;
  }
  o = nccltests.Feed(line, ctx);
  if (o != Outcome::kNotMine) return o;
  if (nccltests.ObserveCommand(line.text)) return Outcome::kKnown;
  return Outcome::kNotMine;
}

LogParser::LogParser(std::string source) : LogParser(std::move(source), RealClock::Get()) {}

LogParser::LogParser(std::string source, const Clock& clock)
    : state_(std::make_unique<State>(std::move(source), clock)) {}

LogParser::~LogParser() = default;
LogParser::LogParser(LogParser&&) noexcept = default;
LogParser& LogParser::operator=(LogParser&&) noexcept = default;

void LogParser::Feed(std::string_view text, std::vector<LogEvent>& out) {
  State& s = *state_;
  s.ctx.set_out(&out);
  Stats& stats = s.ctx.stats();
  ++stats.lines;

  internal::Line line;
  line.number = s.next_line++;
  absl::string_view raw(text.data(), text.size());
  if (raw.size() > internal::kMaxLineBytes) {
    raw = raw.substr(0, internal::kMaxLineBytes);
    ++stats.truncated;
  }
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == '\r')) raw.remove_suffix(1);
  line.raw = raw;
  internal::StripPrefixes(line);
  s.nccl.Tick(line, s.ctx);

  if (scan::Trim(line.text).empty()) {
    ++stats.blank;
    return;
  }
  switch (s.Dispatch(line)) {
    case Outcome::kEvent:
      ++stats.recognized;
      break;
    case Outcome::kKnown:
      ++stats.known;
      break;
    case Outcome::kMalformed:
      ++stats.malformed;
      break;
    case Outcome::kNotMine:
      ++stats.unknown;
      break;
  }
}

void LogParser::Finish(std::vector<LogEvent>& out) {
  State& s = *state_;
  s.ctx.set_out(&out);
  s.pytorch.Finish(s.ctx);
  s.ras.Finish(s.ctx);
  s.nccltests.Finish(s.ctx);
  s.nccl.Finish(s.ctx);
}

const LogParser::Stats& LogParser::stats() const { return state_->ctx.stats(); }

void LogParser::SetNextLineNumber(int line) { state_->next_line = line; }

}  // namespace railwatch::logs
