#include "logs/nccl_chains.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "logs/codes.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {

void ErrorChains::Open(const NcclLine& nl, const LogEvent& first, Context& ctx) {
  std::string key = ThreadKey(nl);
  auto it = open_.find(key);
  if (it != open_.end()) {
    Emit(it->second, ctx);
    open_.erase(it);
  }
  Chain& c = open_[key];
  c.event.kind = "nccl.error_chain";
  c.event.source = first.source;
  c.event.line = first.line;
  c.event.time_unix_nano = first.time_unix_nano;
  c.event.raw = first.raw;
  AddNcclOrigin(c.event, nl);
  c.event.Set("first_error_kind", first.kind);
  if (const std::string* m = first.Get("message")) c.event.Set("first_error", *m);
  c.event.Set("first_error_line", absl::StrCat(first.line));
  if (const std::string* loc = first.Get("location")) c.event.Set("first_error_location", *loc);
  for (const char* key : {"mpi_rank", "launcher_tag"}) {
    if (const std::string* v = first.Get(key)) c.launcher.emplace_back(key, *v);
  }
  c.last_line = first.line;
}

void ErrorChains::Add(const NcclLine& nl, const Line& line, absl::string_view location,
                      absl::string_view code, absl::string_view thread, Context& ctx) {
  std::string key = ThreadKey(nl);
  auto [it, inserted] = open_.try_emplace(key);
  Chain& c = it->second;
  if (inserted) {
    // No WARN before the trace (NCCL_DEBUG=INFO without WARN lines, or a cut log): the first
    // step is the origin.
    c.event = ctx.Begin("nccl.error_chain", line);
    AddNcclOrigin(c.event, nl);
    if (!line.mpi_rank.empty()) c.launcher.emplace_back("mpi_rank", std::string(line.mpi_rank));
    if (!line.launcher_tag.empty()) {
      c.launcher.emplace_back("launcher_tag", std::string(line.launcher_tag));
    }
  }
  if (c.depth == 0) {
    c.event.Set("origin", std::string(location));
    c.first_code = std::string(code);
  }
  absl::StrAppend(&c.steps, c.steps.empty() ? "" : " | ", location, " -> ", code);
  c.last_code = std::string(code);
  ++c.depth;
  c.last_line = line.number;
  if (!thread.empty()) {
    c.thread = std::string(thread);
    // A named thread's trace ends where the thread gave up: nothing follows on it.
    Emit(c, ctx);
    open_.erase(it);
  }
}

void ErrorChains::End(const NcclLine& nl, Context& ctx) {
  if (open_.empty()) return;
  auto it = open_.find(ThreadKey(nl));
  if (it == open_.end()) return;
  Emit(it->second, ctx);
  open_.erase(it);
}

void ErrorChains::Tick(int line_number, Context& ctx) {
  if (open_.empty()) return;
  std::vector<std::string> stale;
  for (auto& [key, c] : open_) {
    if (line_number - c.last_line > kStaleLines) stale.push_back(key);
  }
  std::sort(stale.begin(), stale.end(), [this](const std::string& a, const std::string& b) {
    return open_[a].event.line < open_[b].event.line;
  });
  for (const std::string& key : stale) {
    Emit(open_[key], ctx);
    open_.erase(key);
  }
}

void ErrorChains::Flush(Context& ctx) {
  std::vector<Chain*> chains;
  for (auto& [key, c] : open_) chains.push_back(&c);
  std::sort(chains.begin(), chains.end(),
            [](const Chain* a, const Chain* b) { return a->event.line < b->event.line; });
  for (Chain* c : chains) Emit(*c, ctx);
  open_.clear();
}

void ErrorChains::Emit(Chain& c, Context& ctx) {
  // A WARN that no trace followed is its own event already.
  if (c.depth == 0) return;
  LogEvent& e = c.event;
  e.Set("code", c.first_code);
  int64_t code = -1;
  scan::ToInt(c.first_code, &code);
  absl::string_view name = NcclResultName(code);
  if (!name.empty()) e.Set("code_name", std::string(name));
  if (c.last_code != c.first_code) e.Set("final_code", c.last_code);
  e.Set("chain", c.steps);
  e.Set("depth", absl::StrCat(c.depth));
  if (!c.thread.empty()) e.Set("thread", c.thread);
  for (auto& [key, value] : c.launcher) e.Set(key, value);
  ctx.Emit(std::move(e));
}

}  // namespace railwatch::logs::internal
