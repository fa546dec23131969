#include "engine/diagnosis_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace {

using nlohmann::json;

constexpr char kFormat[] = "railwatchd-diagnoses";
constexpr int kVersion = 1;

json LabelsJson(const Labels& labels) {
  // Pairs, not an object: the order is the engine's (first seen), kept as it was.
  json out = json::array();
  for (const Label& l : labels) out.push_back({l.name, l.value});
  return out;
}

// Typed reads of a parsed file; each error names the field's path.
class Reader {
 public:
  explicit Reader(absl::Status& status) : status_(status) {}

  const json* Field(const json& obj, const std::string& path, const char* name) {
    if (!status_.ok()) return nullptr;
    auto it = obj.find(name);
    if (it == obj.end()) {
      Fail(absl::StrCat(path, ".", name, ": missing"));
      return nullptr;
    }
    return &*it;
  }
  std::string String(const json& obj, const std::string& path, const char* name) {
    const json* v = Field(obj, path, name);
    if (v == nullptr) return "";
    if (!v->is_string()) return Fail(absl::StrCat(path, ".", name, ": not a string")), "";
    return v->get<std::string>();
  }
  int64_t Int(const json& obj, const std::string& path, const char* name) {
    const json* v = Field(obj, path, name);
    if (v == nullptr) return 0;
    if (!v->is_number_integer()) return Fail(absl::StrCat(path, ".", name, ": not an integer")), 0;
    return v->get<int64_t>();
  }
  double Number(const json& obj, const std::string& path, const char* name) {
    const json* v = Field(obj, path, name);
    if (v == nullptr) return 0;
    if (!v->is_number()) return Fail(absl::StrCat(path, ".", name, ": not a number")), 0;
    return v->get<double>();
  }
  const json* Array(const json& obj, const std::string& path, const char* name) {
    const json* v = Field(obj, path, name);
    if (v != nullptr && !v->is_array()) {
      Fail(absl::StrCat(path, ".", name, ": not an array"));
      return nullptr;
    }
    return v;
  }
  Labels LabelList(const json& obj, const std::string& path, const char* name) {
    Labels out;
    const json* v = Array(obj, path, name);
    if (v == nullptr) return out;
    for (size_t i = 0; i < v->size(); ++i) {
      const json& pair = (*v)[i];
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string()) {
        Fail(absl::StrCat(path, ".", name, "[", i, "]: not a [name, value] pair of strings"));
        return out;
      }
      out.push_back({pair[0].get<std::string>(), pair[1].get<std::string>()});
    }
    return out;
  }
  void Fail(std::string message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(std::move(message));
  }
  bool ok() const { return status_.ok(); }

 private:
  absl::Status& status_;
};

void ReadDiagnosis(Reader& r, const json& j, const std::string& path, SavedDiagnosis& out) {
  if (!j.is_object()) return r.Fail(absl::StrCat(path, ": not an object"));
  out.key = r.String(j, path, "key");
  out.labels = r.LabelList(j, path, "labels");
  out.last_true_unix_nano = r.Int(j, path, "last_true_unix_nano");
  const json* d = r.Field(j, path, "diagnosis");
  if (d == nullptr) return;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer daemon's fields, after a downgrade
  auto status = google::protobuf::util::JsonStringToMessage(d->dump(), &out.diagnosis, options);
  if (!status.ok()) {
    return r.Fail(absl::StrCat(path, ".diagnosis: ", status.ToString()));
  }
  if (out.diagnosis.id().empty()) return r.Fail(absl::StrCat(path, ".diagnosis.id: missing"));
  if (out.diagnosis.playbook().empty()) {
    return r.Fail(absl::StrCat(path, ".diagnosis.playbook: missing"));
  }
  const json* symptoms = r.Array(j, path, "symptoms");
  if (symptoms == nullptr) return;
  for (size_t i = 0; i < symptoms->size() && r.ok(); ++i) {
    const json& s = (*symptoms)[i];
    const std::string sp = absl::StrCat(path, ".symptoms[", i, "]");
    if (!s.is_object()) return r.Fail(absl::StrCat(sp, ": not an object"));
    SavedSymptom& out_s = out.symptoms.emplace_back();
    out_s.playbook = r.String(s, sp, "playbook");
    out_s.key = r.String(s, sp, "key");
    out_s.labels = r.LabelList(s, sp, "labels");
    out_s.value = r.Number(s, sp, "value");
    out_s.series = r.String(s, sp, "series");
    out_s.raw = r.String(s, sp, "raw");
    out_s.first_seen_unix_nano = r.Int(s, sp, "first_seen_unix_nano");
    out_s.last_seen_unix_nano = r.Int(s, sp, "last_seen_unix_nano");
  }
}

absl::Status ErrnoError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

std::string StateToJson(const EngineState& state) {
  // Each diagnosis' protobuf JSON is spliced in as text: parsing it into a json tree only to
  // print it again was most of a save's time (bench/state_save_bench.cc).
  const auto dump = [](const json& j) {
    // Invalid UTF-8 in a log line quoted as evidence must not make the state unwritable.
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  json head = {{"format", kFormat},
               {"version", kVersion},
               {"saved_at", FormatTime(state.saved_at_unix_nano)},
               {"saved_at_unix_nano", state.saved_at_unix_nano}};
  std::string out = dump(head);
  out.pop_back();  // its closing brace
  out += ",\n\"diagnoses\": [";
  std::string proto_json;
  for (size_t i = 0; i < state.diagnoses.size(); ++i) {
    const SavedDiagnosis& d = state.diagnoses[i];
    json symptoms = json::array();
    for (const SavedSymptom& s : d.symptoms) {
      symptoms.push_back({{"playbook", s.playbook},
                          {"key", s.key},
                          {"labels", LabelsJson(s.labels)},
                          {"value", s.value},
                          {"series", s.series},
                          {"raw", s.raw},
                          {"first_seen_unix_nano", s.first_seen_unix_nano},
                          {"last_seen_unix_nano", s.last_seen_unix_nano}});
    }
    json entry = {{"key", d.key},
                  {"labels", LabelsJson(d.labels)},
                  {"last_true_unix_nano", d.last_true_unix_nano},
                  {"symptoms", std::move(symptoms)}};
    proto_json.clear();
    (void)google::protobuf::util::MessageToJsonString(d.diagnosis, &proto_json, options);
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", dump(entry));
    out.pop_back();
    absl::StrAppend(&out, ",\"diagnosis\":", proto_json, "}");
  }
  json incidents = json::array();
  for (const SavedIncidents& i : state.incidents) {
    incidents.push_back({{"playbook", i.playbook},
                         {"key", i.key},
                         {"resolved_unix_nano", i.resolved_unix_nano}});
  }
  absl::StrAppend(&out, "],\n\"incidents\": ", dump(incidents), "}\n");
  return out;
}

absl::StatusOr<EngineState> StateFromJson(absl::string_view text) {
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 7: ..."
    std::string what = e.what();
    if (size_t at = what.find("parse error"); at != std::string::npos) what = what.substr(at);
    return absl::InvalidArgumentError(what);
  }
  if (!root.is_object()) return absl::InvalidArgumentError("not a JSON object");
  absl::Status status;
  Reader r(status);
  const std::string format = r.String(root, "$", "format");
  if (r.ok() && format != kFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("format is \"", format, "\", not \"", kFormat, "\""));
  }
  const int64_t version = r.Int(root, "$", "version");
  if (r.ok() && version != kVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("version ", version, " (this railwatchd reads version ", kVersion, ")"));
  }
  EngineState state;
  state.saved_at_unix_nano = r.Int(root, "$", "saved_at_unix_nano");
  if (const json* ds = r.Array(root, "$", "diagnoses")) {
    for (size_t i = 0; i < ds->size() && r.ok(); ++i) {
      ReadDiagnosis(r, (*ds)[i], absl::StrCat("$.diagnoses[", i, "]"),
                    state.diagnoses.emplace_back());
    }
  }
  if (const json* is = r.Array(root, "$", "incidents")) {
    for (size_t i = 0; i < is->size() && r.ok(); ++i) {
      const json& j = (*is)[i];
      const std::string path = absl::StrCat("$.incidents[", i, "]");
      if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": not an object"));
      SavedIncidents& out = state.incidents.emplace_back();
      out.playbook = r.String(j, path, "playbook");
      out.key = r.String(j, path, "key");
      const json* times = r.Array(j, path, "resolved_unix_nano");
      if (times == nullptr) break;
      for (const json& t : *times) {
        if (!t.is_number_integer()) {
          r.Fail(absl::StrCat(path, ".resolved_unix_nano: not a list of integers"));
          break;
        }
        out.resolved_unix_nano.push_back(t.get<int64_t>());
      }
    }
  }
  if (!status.ok()) return status;
  return state;
}

absl::Status WriteStateFile(const std::string& path, const EngineState& state) {
  const std::string text = StateToJson(state);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoError("create", tmp);
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      absl::Status s = ErrnoError("write", tmp);
      ::close(fd);
      return s;
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    absl::Status s = ErrnoError("fsync", tmp);
    ::close(fd);
    return s;
  }
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return ErrnoError(absl::StrCat("rename ", tmp, " to"), path);
  }
  // The rename itself is durable only once the directory is.
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

absl::StatusOr<EngineState> ReadStateFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no state file"));
  }
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return absl::DataLossError(std::string(text.status().message()));
  absl::StatusOr<EngineState> state = StateFromJson(*text);
  if (!state.ok()) {
    return absl::DataLossError(absl::StrCat(path, ": ", state.status().message()));
  }
  return state;
}

absl::StatusOr<std::string> MoveStateFileAside(const std::string& path, absl::Time now) {
  const std::string aside =
      absl::StrCat(path, ".corrupt-", absl::FormatTime("%Y%m%dT%H%M%SZ", now, absl::UTCTimeZone()));
  if (std::rename(path.c_str(), aside.c_str()) != 0) {
    return ErrnoError(absl::StrCat("move aside ", path, " to"), aside);
  }
  return aside;
}

}  // namespace railwatch
