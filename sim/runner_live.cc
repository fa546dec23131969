#include "sim/runner_live.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/format.h"
#include "engine/diagnosis_text.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch::sim {
namespace {

constexpr int kEvidenceShown = 3;
constexpr int kCommandsShown = 3;

std::string Since(int64_t sim_start, int64_t t) {
  if (sim_start == 0 || t == 0) return "       ";
  return absl::StrFormat("%7s", absl::StrFormat("+%.1fs", (t - sim_start) / 1e9));
}

std::string Where(const v1::Diagnosis& d) {
  return d.location().empty() ? LabelsText(d.culprit()) : d.location();
}

}  // namespace

std::string LiveFiring(const v1::Diagnosis& d, int64_t sim_start, int64_t t,
                       const std::string& prefix) {
  const std::string indent = prefix + "          ";
  std::string out = absl::StrCat(prefix, Since(sim_start, t), "  FIRING ",
                                 absl::AsciiStrToUpper(SeverityName(d.severity())), "  ",
                                 d.playbook(), "  ", Where(d), "\n");
  absl::StrAppend(&out, indent, d.summary(), "\n");
  if (d.active_since_unix_nano() != 0 && d.fired_at_unix_nano() > d.active_since_unix_nano()) {
    absl::StrAppend(&out, indent,
                    absl::StrFormat("(condition held for %.1f s before paging)",
                                    (d.fired_at_unix_nano() - d.active_since_unix_nano()) / 1e9),
                    "\n");
  }
  int shown = 0;
  for (const v1::Evidence& e : d.evidence()) {
    if (shown == kEvidenceShown) {
      absl::StrAppend(&out, indent, "  ... ", d.evidence_size() - shown,
                      " more (railwatch explain ", d.id(), ")\n");
      break;
    }
    const std::string what = e.kind() == "symptom" && !e.playbook().empty()
                                 ? absl::StrCat(e.playbook(), ": ", e.series())
                                 : e.series();
    absl::StrAppend(&out, indent, shown == 0 ? "evidence: " : "          ", what,
                    e.summary().empty() ? "" : absl::StrCat("  (", e.summary(), ")"), "\n");
    ++shown;
  }
  const v1::BlastRadius& b = d.blast_radius();
  if (!b.scope().empty()) {
    // As `railwatch explain` and the alert put it: the jobs it stalls and their hosts, where
    // the fault is, what it costs.
    absl::StrAppend(&out, indent, "hurts:    ", DescribeBlastRadius(b),
                    b.gpus() > 0 ? absl::StrFormat("; %d GPUs stalled, about $%.0f a minute",
                                                   b.gpus(), b.cost_per_minute())
                                 : "",
                    "\n");
  }
  if (!d.runbook().empty()) absl::StrAppend(&out, indent, "runbook:  ", d.runbook(), "\n");
  const int commands = std::min(d.commands_size(), kCommandsShown);
  for (int i = 0; i < commands; ++i) absl::StrAppend(&out, indent, "  $ ", d.commands(i), "\n");
  if (d.commands_size() > commands) {
    absl::StrAppend(&out, indent, "  ... railwatch explain ", d.id(), " shows all\n");
  }
  return out;
}

std::string LiveResolved(const v1::Diagnosis& d, int64_t sim_start, int64_t t,
                         const std::string& prefix) {
  return absl::StrCat(prefix, Since(sim_start, t), "  RESOLVED  ", d.playbook(), "  ", Where(d),
                      d.explained_by().empty()
                          ? ""
                          : absl::StrCat("  (a symptom: explained by ", d.explained_by(), ")"),
                      "\n");
}

LiveWatch::LiveWatch(std::string address, int64_t sim_start, std::string prefix, Printer& printer)
    : address_(std::move(address)),
      sim_start_(sim_start),
      prefix_(std::move(prefix)),
      printer_(printer),
      thread_([this] { Loop(); }) {}

LiveWatch::~LiveWatch() {
  done_.Notify();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (context_ != nullptr) context_->TryCancel();
  }
  thread_.join();
}

void LiveWatch::Loop() {
  auto stub = v1::Query::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  while (!done_.HasBeenNotified()) {
    grpc::ClientContext context;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_.HasBeenNotified()) return;
      context_ = &context;
    }
    v1::WatchDiagnosesRequest request;
    auto reader = stub->WatchDiagnoses(&context, request);
    v1::DiagnosisEvent event;
    while (reader->Read(&event)) {
      if (event.kind() == v1::DiagnosisEvent::KIND_FIRING) {
        printer_.Live(LiveFiring(event.diagnosis(), sim_start_, event.time_unix_nano(), prefix_));
      } else if (event.kind() == v1::DiagnosisEvent::KIND_RESOLVED) {
        printer_.Live(LiveResolved(event.diagnosis(), sim_start_, event.time_unix_nano(), prefix_));
      }
    }
    (void)reader->Finish();
    {
      std::lock_guard<std::mutex> lock(mu_);
      context_ = nullptr;
    }
    done_.WaitForNotificationWithTimeout(absl::Milliseconds(500));
  }
}

}  // namespace railwatch::sim
