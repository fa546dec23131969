#include "cli/gnmi_decode.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/commands.h"
#include "common/labels.h"
#include "gnmi/decode.h"
#include "gnmi/profile.h"
#include "gnmi/text_formats.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace {

using Json = nlohmann::ordered_json;

std::string TimeText(int64_t unix_nanos) {
  if (unix_nanos == 0) return "-";
  return absl::FormatTime(absl::RFC3339_full, absl::FromUnixNanos(unix_nanos),
                          absl::UTCTimeZone());
}

std::string ValueText(const GnmiLeaf& leaf) {
  if (leaf.deleted) return "(deleted)";
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "(none)";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return Json(v).dump();  // quoted and escaped
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else {
          return absl::StrCat(v);
        }
      },
      leaf.value);
}

Json ValueJson(const GnmiLeaf& leaf) {
  return std::visit(
      [](const auto& v) -> Json {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else {
          return v;
        }
      },
      leaf.value);
}

class Printer : public GnmiLeafVisitor {
 public:
  Printer(const GnmiProfile* profile, bool json, std::ostream& out)
      : profile_(profile), json_(json), out_(out) {}

  void set_file(std::string_view file) { file_ = file; }

  void OnLeaf(const GnmiLeaf& leaf) override {
    ++leaves;
    const std::string path = GnmiPathString(leaf.elems);
    GnmiMappedSeries mapped;
    const bool matched = profile_ != nullptr && profile_->Map(leaf, mapped);
    const bool is_mapped = matched && mapped.metric != nullptr;
    // A join leaf (an interface's transceiver component): no series of its own.
    const bool is_join = matched && mapped.metric == nullptr && !mapped.rule->join_label.empty();
    if (profile_ != nullptr) ++(is_mapped || is_join ? this->mapped : unmapped);
    if (json_) {
      Json j;
      j["file"] = file_;
      if (!leaf.origin.empty()) j["origin"] = std::string(leaf.origin);
      if (!leaf.target.empty()) j["target"] = std::string(leaf.target);
      j["path"] = path;
      j["value"] = ValueJson(leaf);
      if (leaf.deleted) j["deleted"] = true;
      j["time_unix_nano"] = leaf.time_unix_nano;
      if (is_mapped || is_join) {
        if (is_mapped) j["series"] = std::string(mapped.metric->name);
        if (is_join) {
          j["series"] = nullptr;
          j["join"] = {{"label", mapped.rule->join_label},
                       {"value", mapped.rule->Text(leaf.value)}};
        }
        Json labels = Json::object();
        for (const Label& l : mapped.labels) labels[l.name] = l.value;
        j["labels"] = labels;
      } else if (profile_ != nullptr) {
        j["series"] = nullptr;
      }
      out_ << j.dump() << "\n";
      return;
    }
    out_ << (leaf.target.empty() ? "" : absl::StrCat(AsAbsl(leaf.target), " ")) << path << " = "
         << ValueText(leaf) << " @ " << TimeText(leaf.time_unix_nano);
    if (is_mapped) {
      out_ << "  -> " << FormatSeries(mapped.metric->name, mapped.labels);
    } else if (is_join) {
      out_ << "  -> join " << mapped.rule->join_label << "=\"" << mapped.rule->Text(leaf.value)
           << "\" is " << FormatLabels(mapped.labels);
    } else if (profile_ != nullptr) {
      out_ << "  -> unmapped";
    }
    out_ << "\n";
  }

  uint64_t leaves = 0, mapped = 0, unmapped = 0;

 private:
  const GnmiProfile* profile_;
  bool json_;
  std::ostream& out_;
  std::string file_;
};

absl::StatusOr<GnmiProfile> LoadProfile(const GnmiDecodeCommand& cmd) {
  if (absl::EndsWith(cmd.profile, ".yaml") || absl::EndsWith(cmd.profile, ".yml") ||
      cmd.profile.find('/') != std::string::npos) {
    return GnmiProfile::LoadFile(cmd.profile);
  }
  absl::StatusOr<std::vector<GnmiProfile>> all = LoadGnmiProfiles(cmd.profiles_dir);
  if (!all.ok()) return all.status();
  std::string names;
  for (GnmiProfile& p : *all) {
    if (p.name() == cmd.profile) return std::move(p);
    absl::StrAppend(&names, names.empty() ? "" : ", ", p.name());
  }
  return absl::NotFoundError(absl::StrCat("no profile \"", cmd.profile, "\" in ",
                                          cmd.profiles_dir, " (there are: ", names, ")"));
}

}  // namespace

int RunGnmiDecode(const GnmiDecodeCommand& cmd, std::istream& in, std::ostream& out,
                  std::ostream& err) {
  std::optional<GnmiTextFormat> format = ParseGnmiTextFormat(cmd.format);
  if (!format) {
    err << "railwatch gnmi decode: unknown --format=" << cmd.format
        << " (auto, protojson, prototext, gnmic-json, gnmic-event, gnmi-cli, gnmic-debug)\n";
    return kExitUsage;
  }
  if (cmd.files.empty()) {
    err << "usage: railwatch gnmi decode FILE...|- [--format=F] [--profile=NAME|FILE.yaml] "
           "[--profiles_dir=DIR] [--json]\n";
    return kExitUsage;
  }
  std::optional<GnmiProfile> profile;
  if (!cmd.profile.empty()) {
    absl::StatusOr<GnmiProfile> loaded = LoadProfile(cmd);
    if (!loaded.ok()) {
      err << "railwatch gnmi decode: " << loaded.status().message() << "\n";
      return kExitInvalid;
    }
    profile = *std::move(loaded);
  }
  Printer printer(profile ? &*profile : nullptr, cmd.json, out);
  GnmiDecoder decoder;
  int exit_code = kExitOk;
  uint64_t notifications = 0, sync_responses = 0, message_errors = 0;
  for (const std::string& file : cmd.files) {
    std::string text;
    if (file == "-") {
      std::stringstream ss;
      ss << in.rdbuf();
      text = ss.str();
    } else {
      std::error_code ec;
      if (!std::filesystem::exists(file, ec)) {
        err << file << ": no such file\n";
        exit_code = exit_code == kExitOk ? kExitNotFound : exit_code;
        continue;
      }
      std::ifstream f(file, std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      if (!f.good() && !f.eof()) {
        err << file << ": cannot be read\n";
        exit_code = exit_code == kExitOk ? kExitError : exit_code;
        continue;
      }
      text = ss.str();
    }
    const std::string name = file == "-" ? "<stdin>" : file;
    absl::StatusOr<GnmiCapture> capture = ReadGnmiCapture(text, name, *format);
    if (!capture.ok()) {
      err << capture.status().message() << "\n";
      exit_code = exit_code == kExitOk ? kExitInvalid : exit_code;
      continue;
    }
    for (const std::string& e : capture->errors) err << e << "\n";
    message_errors += capture->errors.size();
    notifications += capture->notifications.size();
    sync_responses += capture->sync_responses;
    printer.set_file(name);
    for (const ::gnmi::Notification& n : capture->notifications) decoder.Decode(n, printer);
  }
  const GnmiDecodeStats& stats = decoder.stats();
  if (cmd.json) {
    Json summary;
    summary["summary"] = true;
    summary["notifications"] = notifications;
    summary["sync_responses"] = sync_responses;
    summary["leaves"] = stats.leaves;
    summary["deletes"] = stats.deletes;
    summary["message_errors"] = message_errors;
    summary["value_errors"] = stats.errors;
    if (profile) {
      summary["profile"] = profile->name();
      summary["mapped"] = printer.mapped;
      summary["unmapped"] = printer.unmapped;
    }
    out << summary.dump() << "\n";
  } else {
    out << "\n" << notifications << " notifications, " << sync_responses << " sync responses, "
        << stats.leaves << " leaves, " << stats.deletes << " deletes";
    if (profile) {
      out << "; profile " << profile->name() << ": " << printer.mapped << " mapped, "
          << printer.unmapped << " unmapped";
    }
    if (message_errors + stats.errors > 0) {
      out << "; " << message_errors << " messages and " << stats.errors
          << " values did not read";
    }
    out << "\n";
  }
  return exit_code;
}

}  // namespace railwatch
