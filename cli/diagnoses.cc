// `railwatch diagnoses` and `railwatch watch`: which diagnoses there are, and as they change.
#include <memory>
#include <ostream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/query_commands.h"
#include "cli/table.h"
#include "common/backoff.h"
#include "common/text.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

std::vector<std::string> CommaList(const std::string& text) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    items.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

absl::Status AddStates(const std::string& state, v1::DiagnosisFilter* filter) {
  if (state == "active" || state == "pending") filter->add_states(v1::DIAGNOSIS_STATE_PENDING);
  if (state == "active" || state == "firing") filter->add_states(v1::DIAGNOSIS_STATE_FIRING);
  if (state == "resolved") filter->add_states(v1::DIAGNOSIS_STATE_RESOLVED);
  if (filter->states().empty() && state != "all") {
    return absl::InvalidArgumentError(
        absl::StrCat("--state=", state,
                     ": want one of active (pending and firing), firing, pending, "
                     "resolved, all"));
  }
  return absl::OkStatus();
}

absl::Status AddSeverities(const std::string& list, v1::DiagnosisFilter* filter) {
  for (const std::string& name : CommaList(list)) {
    v1::Severity severity = v1::SEVERITY_UNSPECIFIED;
    for (v1::Severity s : {v1::SEVERITY_CRITICAL, v1::SEVERITY_WARNING, v1::SEVERITY_INFO}) {
      if (absl::AsciiStrToLower(name) == SeverityName(s)) severity = s;
    }
    if (severity == v1::SEVERITY_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          absl::StrCat("--severity: \"", name, "\" is not one of critical, warning, info"));
    }
    filter->add_severities(severity);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status BuildDiagnosisFilter(const CliOptions& o, absl::Time now,
                                  v1::DiagnosisFilter* filter) {
  absl::Status s = AddStates(o.state, filter);
  if (s.ok()) s = AddSeverities(o.severity, filter);
  if (!s.ok()) return s;
  for (const std::string& name : CommaList(o.playbook)) filter->add_playbooks(name);
  filter->set_host(o.host);
  filter->set_switch_(o.switch_name);
  filter->set_job(o.job);
  if (!o.since.empty()) {
    absl::StatusOr<int64_t> since = ParseTimeFlag("since", o.since, now);
    if (!since.ok()) return since.status();
    filter->set_since_unix_nano(*since);
  }
  return absl::OkStatus();
}

int UsageError(const std::string& command, const std::string& problem, std::ostream& err) {
  err << "railwatch " << command << ": " << problem << "\n\n" << CommandUsage(command);
  return kExitUsage;
}

int RunDiagnoses(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                 std::ostream& err) {
  v1::ListDiagnosesRequest request;
  absl::Status filter = BuildDiagnosisFilter(o, absl::Now(), request.mutable_filter());
  if (!filter.ok()) return UsageError("diagnoses", std::string(filter.message()), err);
  if (o.limit < -1) return UsageError("diagnoses", "--limit must be 0 (all) or more", err);
  if (o.limit > 0) request.set_limit(o.limit);

  v1::ListDiagnosesResponse response;
  if (std::optional<int> done =
          QueryForTable(o, &v1::Query::Stub::ListDiagnoses, request, &response, out, err)) {
    return *done;
  }
  if (response.diagnoses().empty()) {
    out << "No " << (o.state == "all" ? "" : o.state + " ") << "diagnoses.\n";
    return kExitOk;
  }
  Table t({"ID", "STATE", "SEVERITY", "PLAYBOOK", "CULPRIT", "SINCE", "SUMMARY"});
  for (const v1::Diagnosis& d : response.diagnoses()) {
    t.Add({d.id(), StateName(d.state()), SeverityName(d.severity()), d.playbook(),
           LabelsText(d.culprit()), Ago(d.active_since_unix_nano()), d.summary()});
  }
  out << t.Render();
  return kExitOk;
}

namespace {

std::string KindName(v1::DiagnosisEvent::Kind kind) {
  return std::string(absl::StripPrefix(v1::DiagnosisEvent::Kind_Name(kind), "KIND_"));
}

// Where, short: the location's head ("gpu-node-003 mlx5_2" of "gpu-node-003 mlx5_2 (rail 2,
// leaf-r2 Ethernet8)"), or the culprit's values when the daemon gave no location.
std::string ShortWhere(const v1::Diagnosis& d) {
  if (!d.location().empty()) return d.location().substr(0, d.location().find(" ("));
  std::vector<std::string> values;
  for (const v1::Label& l : d.culprit()) values.push_back(l.value());
  return absl::StrJoin(values, " ");
}

// "12:03:04  FIRING    pfc_storm           critical  gpu-node-003 mlx5_2 1   summary  [id]"
std::string EventLine(const v1::DiagnosisEvent& event, int synced_count) {
  const std::string time = ClockTime(event.time_unix_nano()).substr(0, 8);
  if (event.kind() == v1::DiagnosisEvent::KIND_SYNCED) {
    return absl::StrFormat("%s  %-8s  %d matching diagnoses now; watching for changes", time,
                           KindName(event.kind()), synced_count);
  }
  const v1::Diagnosis& d = event.diagnosis();
  return absl::StrFormat("%s  %-8s  %-18s  %-8s  %-26s  %s  [%s]", time, KindName(event.kind()),
                         d.playbook(), SeverityName(d.severity()), ShortWhere(d), d.summary(),
                         d.id());
}

// Cancels `context` when the interrupt is notified, until Stop().
class InterruptCanceller {
 public:
  InterruptCanceller(absl::Notification* interrupt, grpc::ClientContext& context) {
    if (interrupt == nullptr) return;
    thread_ = std::thread([this, interrupt, &context] {
      // The interrupt is a Notification (set from the signal thread), so it is polled
      // alongside the stream's own end.
      while (!done_.HasBeenNotified()) {
        if (interrupt->WaitForNotificationWithTimeout(absl::Milliseconds(50))) {
          context.TryCancel();
          return;
        }
      }
    });
  }
  ~InterruptCanceller() {
    done_.Notify();
    if (thread_.joinable()) thread_.join();
  }

 private:
  absl::Notification done_;
  std::thread thread_;
};

struct WatchResult {
  grpc::Status status;
  bool received = false;
};

WatchResult WatchOnce(QueryClient& client, const v1::WatchDiagnosesRequest& request,
                      const CliOptions& o, std::ostream& out) {
  grpc::ClientContext context;
  client.AddCredentials(context);
  InterruptCanceller canceller(o.interrupt, context);
  std::unique_ptr<grpc::ClientReader<v1::DiagnosisEvent>> reader =
      client.stub().WatchDiagnoses(&context, request);
  WatchResult result;
  v1::DiagnosisEvent event;
  int initial = 0;
  while (reader->Read(&event)) {
    result.received = true;
    if (event.kind() == v1::DiagnosisEvent::KIND_INITIAL) ++initial;
    out << (o.json ? ToJson(event, /*one_line=*/true) : EventLine(event, initial)) << "\n"
        << std::flush;
  }
  result.status = reader->Finish();
  return result;
}

bool Interrupted(const CliOptions& o) {
  return o.interrupt != nullptr && o.interrupt->HasBeenNotified();
}

}  // namespace

int RunWatch(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err) {
  v1::WatchDiagnosesRequest request;
  request.set_send_initial(true);
  absl::Status filter = BuildDiagnosisFilter(o, absl::Now(), request.mutable_filter());
  if (!filter.ok()) return UsageError("watch", std::string(filter.message()), err);

  std::unique_ptr<QueryClient> client = QueryClient::Open(o, err);
  if (client == nullptr) return kExitUsage;
  Backoff backoff({.initial = o.reconnect_initial, .max = o.reconnect_max});
  while (true) {
    WatchResult result = WatchOnce(*client, request, o, out);
    if (Interrupted(o)) return kExitOk;
    if (!o.reconnect) {
      if (result.status.ok()) {
        err << "railwatch: the daemon ended the watch\n";
        return kExitOk;
      }
      return client->ExitCodeFor(result.status, err);
    }
    if (result.received) backoff.Reset();
    const absl::Duration delay = backoff.Next();
    err << "railwatch: watch ended ("
        << (result.status.ok() ? "closed by the daemon" : result.status.error_message())
        << "); reconnecting in " << HumanDuration(absl::Trunc(delay, absl::Milliseconds(1)))
        << "\n";
    if (o.interrupt == nullptr) {
      absl::SleepFor(delay);
    } else if (o.interrupt->WaitForNotificationWithTimeout(delay)) {
      return kExitOk;
    }
  }
}

}  // namespace railwatch
