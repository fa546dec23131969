// The JSON text forms: protojson, gnmic's json and event formats, gnmi_cli's display.

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/labels.h"
#include "gnmi/decode.h"
#include "gnmi/text_formats_internal.h"
#include "google/protobuf/util/json_util.h"

namespace railwatch::gnmi_text {
namespace {

using nlohmann::json;

// gnmic prints decoded values; this is the TypedValue they most likely came from.
bool JsonToTyped(const json& v, ::gnmi::TypedValue& out) {
  if (v.is_string()) {
    out.set_string_val(v.get<std::string>());
  } else if (v.is_boolean()) {
    out.set_bool_val(v.get<bool>());
  } else if (v.is_number_unsigned()) {
    out.set_uint_val(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    out.set_int_val(v.get<int64_t>());
  } else if (v.is_number_float()) {
    out.set_double_val(v.get<double>());
  } else if (v.is_object() || v.is_array()) {
    out.set_json_val(v.dump());
  } else {
    return false;  // null
  }
  return true;
}

bool JsonInt64(const json& v, int64_t& out) {
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    return true;
  }
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return absl::SimpleAtoi(AsAbsl(s), &out);
  }
  return false;
}

// Errors are "what"; the caller adds the line.
absl::Status ParsePathInto(const json& v, ::gnmi::Path& out) {
  if (!v.is_string()) return absl::InvalidArgumentError("a path that is not a string");
  absl::StatusOr<::gnmi::Path> p = ParseGnmiPath(v.get_ref<const std::string&>());
  if (!p.ok()) return p.status();
  out = *std::move(p);
  return absl::OkStatus();
}

absl::Status ReadGnmicJsonOne(const json& j, GnmiCapture& capture) {
  if (!j.is_object()) return absl::InvalidArgumentError("a gnmic json message is an object");
  if (j.contains("results") && !j.contains("updates")) return absl::OkStatus();  // Set reply
  ::gnmi::Notification n;
  int64_t ts = 0;
  if (auto it = j.find("timestamp"); it != j.end()) {
    if (!JsonInt64(*it, ts)) return absl::InvalidArgumentError("\"timestamp\" is not an integer");
  } else if (auto t = j.find("time"); t != j.end() && t->is_string()) {
    ParseGnmiTime(t->get_ref<const std::string&>(), ts);
  }
  n.set_timestamp(ts);
  if (auto it = j.find("prefix"); it != j.end()) {
    if (absl::Status s = ParsePathInto(*it, *n.mutable_prefix()); !s.ok()) return s;
  }
  if (auto it = j.find("target"); it != j.end() && it->is_string()) {
    n.mutable_prefix()->set_target(it->get<std::string>());
  }
  if (auto it = j.find("updates"); it != j.end() && it->is_array()) {
    for (const json& u : *it) {
      if (!u.is_object()) return absl::InvalidArgumentError("an update that is not an object");
      auto values = u.find("values");
      if (values == u.end() || !values->is_object()) {
        return absl::InvalidArgumentError("an update without \"values\"");
      }
      for (const auto& [key, value] : values->items()) {
        ::gnmi::Update* update = n.add_update();
        // One value (the usual case): "Path" has the keys, the value's name does not.
        const json path_text = (values->size() == 1 && u.contains("Path")) ? u["Path"] : json(key);
        if (absl::Status s = ParsePathInto(path_text, *update->mutable_path()); !s.ok()) return s;
        if (!JsonToTyped(value, *update->mutable_val())) n.mutable_update()->RemoveLast();
      }
    }
  }
  if (auto it = j.find("deletes"); it != j.end() && it->is_array()) {
    for (const json& d : *it) {
      if (absl::Status s = ParsePathInto(d, *n.add_delete_()); !s.ok()) return s;
    }
  }
  capture.notifications.push_back(std::move(n));
  return absl::OkStatus();
}

absl::Status ReadGnmicEventOne(const json& e, GnmiCapture& capture) {
  if (!e.is_object()) return absl::InvalidArgumentError("a gnmic event is an object");
  ::gnmi::Notification n;
  int64_t ts = 0;
  if (auto it = e.find("timestamp"); it != e.end() && !JsonInt64(*it, ts)) {
    return absl::InvalidArgumentError("\"timestamp\" is not an integer");
  }
  n.set_timestamp(ts);
  const json* tags = e.contains("tags") && e["tags"].is_object() ? &e["tags"] : nullptr;
  auto apply_tags = [tags](::gnmi::Path& path) {
    if (tags == nullptr) return;
    for (const auto& [tag, value] : tags->items()) {
      if (tag == "source" || tag == "subscription-name") continue;
      for (int i = path.elem_size() - 1; i >= 0; --i) {
        const std::string& name = path.elem(i).name();
        if (tag.size() > name.size() + 1 && tag.compare(0, name.size(), name) == 0 &&
            tag[name.size()] == '_') {
          (*path.mutable_elem(i)->mutable_key())[tag.substr(name.size() + 1)] =
              value.is_string() ? value.get<std::string>() : value.dump();
          break;
        }
      }
    }
  };
  if (auto it = e.find("values"); it != e.end() && it->is_object()) {
    for (const auto& [path_text, value] : it->items()) {
      ::gnmi::Update* update = n.add_update();
      if (absl::Status s = ParsePathInto(path_text, *update->mutable_path()); !s.ok()) return s;
      apply_tags(*update->mutable_path());
      if (!JsonToTyped(value, *update->mutable_val())) n.mutable_update()->RemoveLast();
    }
  }
  if (auto it = e.find("deletes"); it != e.end() && it->is_array()) {
    for (const json& d : *it) {
      ::gnmi::Path* path = n.add_delete_();
      if (absl::Status s = ParsePathInto(d, *path); !s.ok()) return s;
      apply_tags(*path);
    }
  }
  capture.notifications.push_back(std::move(n));
  return absl::OkStatus();
}

bool IsTimedValue(const json& j) {
  return j.is_object() && j.contains("value") && j.contains("timestamp") && j.size() == 2;
}

bool HasTimedValue(const json& j) {
  if (IsTimedValue(j)) return true;
  if (!j.is_object()) return false;
  for (const auto& [k, v] : j.items()) {
    if (HasTimedValue(v)) return true;
  }
  return false;
}

void GnmiCliValue(const json& v, ::gnmi::TypedValue& out) {
  // gnmi_cli prints a json_ietf_val as the JSON string it received.
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    size_t first = s.find_first_not_of(" \t\r\n");
    if (first != std::string::npos && (s[first] == '{' || s[first] == '[') &&
        json::accept(s)) {
      out.set_json_ietf_val(s);
      return;
    }
  }
  JsonToTyped(v, out);
}

absl::Status ReadGnmiCli(const json& j, std::vector<std::string>& path,
                         ::gnmi::Notification& untimed, GnmiCapture& capture) {
  auto set_path = [&path](::gnmi::Path& out) {
    for (const std::string& name : path) out.add_elem()->set_name(name);
  };
  if (IsTimedValue(j)) {
    ::gnmi::Notification n;
    int64_t ts = 0;
    const json& t = j["timestamp"];
    if (!(t.is_string() && ParseGnmiTime(t.get_ref<const std::string&>(), ts)) &&
        !JsonInt64(t, ts)) {
      return absl::InvalidArgumentError("a \"timestamp\" that is neither RFC 3339 nor ns");
    }
    n.set_timestamp(ts);
    ::gnmi::Update* u = n.add_update();
    set_path(*u->mutable_path());
    GnmiCliValue(j["value"], *u->mutable_val());
    capture.notifications.push_back(std::move(n));
    return absl::OkStatus();
  }
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      path.push_back(k);
      absl::Status s = ReadGnmiCli(v, path, untimed, capture);
      path.pop_back();
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (j.is_null()) return absl::OkStatus();
  ::gnmi::Update* u = untimed.add_update();
  set_path(*u->mutable_path());
  GnmiCliValue(j, *u->mutable_val());
  return absl::OkStatus();
}

template <typename Message>
absl::Status ReadProtoJson(const json& j, Message& m) {
  auto status = google::protobuf::util::JsonStringToMessage(j.dump(), &m);
  if (!status.ok()) return absl::InvalidArgumentError(status.ToString());
  return absl::OkStatus();
}

absl::Status ReadProtoJsonAny(const json& j, GnmiCapture& capture) {
  if (j.contains("notification")) {
    ::gnmi::GetResponse r;
    if (absl::Status s = ReadProtoJson(j, r); !s.ok()) return s;
    for (auto& n : *r.mutable_notification()) capture.notifications.push_back(std::move(n));
    return absl::OkStatus();
  }
  if (j.contains("syncResponse") || j.contains("sync_response") ||
      (j.contains("update") && j["update"].is_object())) {
    ::gnmi::SubscribeResponse r;
    if (absl::Status s = ReadProtoJson(j, r); !s.ok()) return s;
    if (r.has_update()) capture.notifications.push_back(std::move(*r.mutable_update()));
    if (r.sync_response()) ++capture.sync_responses;
    return absl::OkStatus();
  }
  ::gnmi::Notification n;
  if (absl::Status s = ReadProtoJson(j, n); !s.ok()) return s;
  capture.notifications.push_back(std::move(n));
  return absl::OkStatus();
}

GnmiTextFormat Classify(const json& j, bool gnmi_cli_hint) {
  if (j.is_array()) {
    if (j.empty() || !j[0].is_object()) return GnmiTextFormat::kAuto;
    if (j[0].contains("values") || j[0].contains("tags")) return GnmiTextFormat::kGnmicEvent;
    if (j[0].contains("updates") || j[0].contains("source")) return GnmiTextFormat::kGnmicJson;
    return GnmiTextFormat::kAuto;
  }
  if (!j.is_object()) return GnmiTextFormat::kAuto;
  if (j.contains("tags") && j.contains("values")) return GnmiTextFormat::kGnmicEvent;
  if (j.contains("updates") || j.contains("results") || j.contains("source") ||
      j.contains("subscription-name") || j.contains("notifications")) {
    return GnmiTextFormat::kGnmicJson;
  }
  if (j.contains("notification") || j.contains("syncResponse") ||
      j.contains("sync_response") || (j.contains("update") && !j.contains("tags")) ||
      (j.contains("delete") && j.contains("timestamp"))) {
    return GnmiTextFormat::kProtoJson;
  }
  if (gnmi_cli_hint || HasTimedValue(j)) return GnmiTextFormat::kGnmiCli;
  return GnmiTextFormat::kAuto;
}

}  // namespace

void Sink::Error(size_t line, std::string_view what) {
  capture.errors.push_back(absl::StrCat(AsAbsl(file_name), ":", line, ": ", AsAbsl(what)));
}

bool ParseGnmiTime(std::string_view text, int64_t& unix_nanos) {
  absl::Time t;
  std::string err;
  if (absl::ParseTime(absl::RFC3339_full, AsAbsl(text), &t, &err) ||
      absl::ParseTime("%Y-%m-%d-%H:%M:%E*S", AsAbsl(text), absl::UTCTimeZone(), &t, &err)) {
    unix_nanos = absl::ToUnixNanos(t);
    return true;
  }
  return false;
}

JsonVerdict ReadJsonMessage(const json& j, std::string_view raw, GnmiTextFormat format,
                            bool gnmi_cli_hint, size_t line, Sink& sink) {
  (void)raw;
  GnmiTextFormat kind = Classify(j, gnmi_cli_hint);
  if (format != GnmiTextFormat::kAuto) {
    // Asked for one format: JSON of another recognised format is not ours; anything
    // unrecognised is read as the format asked for.
    if (kind != GnmiTextFormat::kAuto && kind != format) return JsonVerdict::kNotGnmi;
    kind = format;
  }
  absl::Status status;
  switch (kind) {
    case GnmiTextFormat::kProtoJson:
      status = ReadProtoJsonAny(j, sink.capture);
      break;
    case GnmiTextFormat::kGnmicJson:
      if (j.is_array()) {
        for (const json& m : j) {
          if (status = ReadGnmicJsonOne(m, sink.capture); !status.ok()) break;
        }
      } else if (j.contains("notifications") && j["notifications"].is_array()) {
        for (const json& m : j["notifications"]) {
          if (status = ReadGnmicJsonOne(m, sink.capture); !status.ok()) break;
        }
      } else {
        status = ReadGnmicJsonOne(j, sink.capture);
      }
      break;
    case GnmiTextFormat::kGnmicEvent:
      if (j.is_array()) {
        for (const json& e : j) {
          if (status = ReadGnmicEventOne(e, sink.capture); !status.ok()) break;
        }
      } else {
        status = ReadGnmicEventOne(j, sink.capture);
      }
      break;
    case GnmiTextFormat::kGnmiCli: {
      if (!j.is_object()) {
        status = absl::InvalidArgumentError("gnmi_cli output is an object");
        break;
      }
      std::vector<std::string> path;
      ::gnmi::Notification untimed;
      status = ReadGnmiCli(j, path, untimed, sink.capture);
      if (status.ok() && untimed.update_size() > 0) {
        sink.capture.notifications.push_back(std::move(untimed));
      }
      break;
    }
    default:
      return JsonVerdict::kNotGnmi;
  }
  if (!status.ok()) {
    sink.Error(line, absl::StrCat(AsAbsl(GnmiTextFormatName(kind)), ": ", status.message()));
    return JsonVerdict::kFailed;
  }
  return JsonVerdict::kRead;
}

}  // namespace railwatch::gnmi_text
