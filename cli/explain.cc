// `railwatch explain ID`: one diagnosis in full, for the engineer who was just paged: what,
// where, since when, what it costs, the evidence as a timeline, and what to run.
#include <algorithm>
#include <memory>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/query_commands.h"
#include "common/text.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

// Hosts listed by name in the blast radius before "and N more".
constexpr int kBlastHostsShown = 12;

void PrintHeader(const v1::Diagnosis& d, std::ostream& out) {
  out << d.summary() << "\n\n";
  out << "  id        " << d.id() << "\n";
  out << "  playbook  " << d.playbook() << " (" << SeverityName(d.severity()) << ", "
      << StateName(d.state()) << ")\n";
  out << "  culprit   " << LabelsText(d.culprit()) << "\n";
  if (!d.location().empty()) out << "  where     " << d.location() << "\n";
  out << "  since     " << FormatTime(d.active_since_unix_nano()) << " ("
      << Ago(d.active_since_unix_nano()) << ")\n";
  if (d.fired_at_unix_nano() != 0) {
    out << "  fired     " << FormatTime(d.fired_at_unix_nano()) << "\n";
  }
  if (d.resolved_at_unix_nano() != 0) {
    out << "  resolved  " << FormatTime(d.resolved_at_unix_nano()) << "\n";
  }
  if (!d.explained_by().empty()) {
    out << "  explained by " << d.explained_by() << " (this was a symptom of it)\n";
  }
  if (d.previous_incidents() > 0) {
    out << "  repeats   " << d.previous_incidents()
        << " earlier incident(s) of this playbook here in the last week\n";
  }
  if (d.explains_size() > 0) {
    out << "  explains  " << d.explains_size() << " symptom(s), in the timeline below\n";
  }
  if (!d.source().empty()) out << "  defined   " << d.source() << "\n";
  if (!d.description().empty()) out << "\n" << d.description() << "\n";
}

void PrintBlastRadius(const v1::BlastRadius& b, std::ostream& out) {
  if (b.scope().empty()) return;
  out << "\nBlast radius: " << DescribeBlastRadius(b);
  if (b.gpus() > 0) {
    out << "; " << b.gpus() << " GPUs stalled, about $"
        << absl::StrFormat("%.0f", b.cost_per_minute()) << " a minute";
  }
  out << "\n";
  if (!b.hosts().empty()) {
    const int shown = std::min(b.hosts_size(), kBlastHostsShown);
    out << "  hosts  " << absl::StrJoin(b.hosts().begin(), b.hosts().begin() + shown, " ");
    if (b.hosts_size() > shown) out << " and " << b.hosts_size() - shown << " more";
    out << "\n";
  }
  for (const v1::JobImpact& j : b.jobs()) {
    out << "  job " << j.job() << ": " << j.gpus() << " GPUs, " << j.ranks() << " ranks";
    if (j.job_hosts_size() > 0) {
      const int shown = std::min(j.job_hosts_size(), kBlastHostsShown);
      out << ", " << j.job_hosts_size() << " host(s): "
          << absl::StrJoin(j.job_hosts().begin(), j.job_hosts().begin() + shown, " ");
      if (j.job_hosts_size() > shown) out << " and " << j.job_hosts_size() - shown << " more";
    }
    out << " (" << j.hosts_size() << " in the blast radius)\n";
  }
}

// One line of the timeline: an evidence item, or a step of the diagnosis' life.
struct TimelineEntry {
  int64_t time = 0;
  std::string what;                // "series", "event", "symptom", "PENDING" ...
  std::string text;                // the series, event or symptom
  std::vector<std::string> lines;  // what was computed, the raw line, the readings
};

// Events and symptoms: when they happened. Series: the first reading shown (the daemon sets
// time_unix_nano to its window's start, where there may be no reading).
int64_t EvidenceTime(const v1::Evidence& e) {
  if (!e.points().empty()) return e.points(0).time_unix_nano();
  return e.time_unix_nano();
}

std::vector<TimelineEntry> Timeline(const v1::Diagnosis& d) {
  std::vector<TimelineEntry> entries;
  for (const v1::Evidence& e : d.evidence()) {
    TimelineEntry entry{EvidenceTime(e), e.kind().empty() ? "series" : e.kind(), e.series(), {}};
    if (e.kind() == "symptom" && !e.playbook().empty()) {
      entry.text = absl::StrCat(e.playbook(), ": ", e.series());
    }
    if (!e.summary().empty()) entry.lines.push_back(e.summary());
    if (!e.raw().empty()) entry.lines.push_back(e.raw());
    for (const v1::EvidencePoint& p : e.points()) {
      entry.lines.push_back(
          absl::StrCat(ClockTime(p.time_unix_nano()), "  ", absl::StrFormat("%.17g", p.value())));
    }
    entries.push_back(std::move(entry));
  }
  auto step = [&](int64_t t, const char* what, std::string text) {
    if (t != 0) entries.push_back({t, what, std::move(text), {}});
  };
  step(d.active_since_unix_nano(), "PENDING", "the condition started to hold");
  step(d.fired_at_unix_nano(), "FIRING", "held for the playbook's `for`: alert sent");
  step(d.resolved_at_unix_nano(), "RESOLVED",
       d.explained_by().empty() ? "the condition stopped holding"
                                : absl::StrCat("explained by ", d.explained_by()));
  // Evidence without a time (none recorded) leads; equal times keep the daemon's order.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const TimelineEntry& a, const TimelineEntry& b) { return a.time < b.time; });
  return entries;
}

void PrintTimeline(const v1::Diagnosis& d, std::ostream& out) {
  std::vector<TimelineEntry> entries = Timeline(d);
  if (entries.empty()) return;
  out << "\nTimeline (UTC):\n";
  std::string day;
  for (const TimelineEntry& e : entries) {
    std::string when = "              ";
    if (e.time != 0) {
      // The date once, and again when it changes.
      const std::string date = FormatTime(e.time).substr(0, 10);
      if (date != day) out << "  " << date << "\n";
      day = date;
      when = ClockTime(e.time) + "  ";
    }
    out << "  " << when << absl::StrFormat("%-8s  ", e.what) << e.text << "\n";
    for (const std::string& line : e.lines) out << "                            " << line << "\n";
  }
}

void PrintRunbook(const v1::Diagnosis& d, bool full, std::ostream& out) {
  out << "\nRunbook: " << (d.runbook().empty() ? "(none)" : d.runbook()) << "\n";
  if (full) {
    if (d.runbook_text().empty()) {
      out << "(the daemon sent no runbook text)\n";
    } else {
      out << "\n" << d.runbook_text() << (d.runbook_text().back() == '\n' ? "" : "\n");
    }
    return;
  }
  if (!d.commands().empty()) {
    out << "Commands (culprit filled in):\n";
    for (const std::string& c : d.commands()) out << "  " << c << "\n";
  }
  if (!d.runbook_text().empty()) out << "(--runbook prints the whole runbook)\n";
}

}  // namespace

int RunExplain(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err) {
  v1::GetDiagnosisRequest request;
  request.set_id(args[1]);
  v1::Diagnosis d;
  if (std::optional<int> done =
          QueryForTable(o, &v1::Query::Stub::GetDiagnosis, request, &d, out, err)) {
    return *done;
  }
  PrintHeader(d, out);
  PrintBlastRadius(d.blast_radius(), out);
  PrintTimeline(d, out);
  PrintRunbook(d, o.runbook, out);
  return kExitOk;
}

}  // namespace railwatch
