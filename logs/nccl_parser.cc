#include "logs/nccl_parser.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "logs/nccl_errors.h"
#include "logs/nccl_info.h"

namespace railwatch::logs::internal {

bool NcclParser::IsBareVersionLine(absl::string_view text) {
  return absl::StartsWith(text, "NCCL version ") && !absl::StrContains(text, "compiled with");
}

Outcome NcclParser::Feed(const Line& line, const NcclLine* nl, Context& ctx) {
  if (nl == nullptr) {
    LogEvent e = ctx.Begin("nccl.version", line);
    if (!DescribeNcclVersion(line.text, e)) {
      ctx.Problem(line.number, "NCCL version line without a version number");
      return Outcome::kMalformed;
    }
    Context::AddLauncher(e, line);
    ctx.Emit(std::move(e));
    return Outcome::kEvent;
  }
  if (nl->level == "WARN") return Warn(line, *nl, ctx);
  if (nl->level == "INFO") return Info(line, *nl, ctx);
  chains_.End(*nl, ctx);
  return Outcome::kKnown;
}

Outcome NcclParser::Warn(const Line& line, const NcclLine& nl, Context& ctx) {
  LogEvent e = ctx.Begin("nccl.warn", line);
  AddNcclOrigin(e, nl);
  std::string problem;
  bool ok = DescribeNcclError(nl.message, nl.location, e, &problem);
  SetIf(e, "location", nl.location);
  SetIf(e, "function", nl.function);
  Context::AddLauncher(e, line);
  chains_.Open(nl, e, ctx);
  ctx.Emit(std::move(e));
  if (!ok) {
    ctx.Problem(line.number, problem);
    return Outcome::kMalformed;
  }
  return Outcome::kEvent;
}

Outcome NcclParser::Info(const Line& line, const NcclLine& nl, Context& ctx) {
  absl::string_view location, code, thread;
  if (ParseReturnTrace(nl.message, &location, &code, &thread)) {
    chains_.Add(nl, line, location, code, thread, ctx);
    return Outcome::kEvent;
  }
  if (IsKnownNcclError(nl.message)) return Warn(line, nl, ctx);
  chains_.End(nl, ctx);
  // Most INFO lines are chatter: describe first, build the full event only when it is one.
  LogEvent described;
  if (!DescribeNcclInfo(nl.message, described)) return Outcome::kKnown;
  LogEvent e = ctx.Begin(described.kind, line);
  AddNcclOrigin(e, nl);
  for (auto& [key, value] : described.fields) e.Set(key, std::move(value));
  Context::AddLauncher(e, line);
  ctx.Emit(std::move(e));
  return Outcome::kEvent;
}

Outcome NcclParser::FeedBareError(const Line& line, Context& ctx) {
  absl::string_view m = line.text;
  LogEvent e = ctx.Begin("nccl.warn", line);
  std::string problem;
  bool ok = DescribeNcclError(m, "", e, &problem);
  if (e.kind == "nccl.warn") return Outcome::kNotMine;
  e.Set("quoted", "1");
  SetIf(e, "global_rank", line.global_rank);
  Context::AddLauncher(e, line);
  ctx.Emit(std::move(e));
  if (!ok) {
    ctx.Problem(line.number, problem);
    return Outcome::kMalformed;
  }
  return Outcome::kEvent;
}

}  // namespace railwatch::logs::internal
