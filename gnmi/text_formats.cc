// Finds gNMI messages in a pasted document (markdown with fenced or indented blocks, a shell
// session, a gnmic debug log) and reads each one; the JSON forms are in text_formats_json.cc.
//
// The scan goes line by line, in document order:
//  - a line holding "received gNMI Subscribe Response:" is a gnmic debug record; the lines after
//    it that do not start a new record ('[' or a date) are its hard-wrapped continuation;
//  - "== getRequest:" and the other request/Set headers of gnmi_get/gnmi_set skip their block
//    (up to the next blank line): requests are not telemetry;
//  - a line starting with a prototext field that a response starts with (notification, update,
//    sync_response, timestamp) starts a prototext message, which runs while brackets are open
//    and then over further top-level fields at the same indentation (more "notification"s of
//    a GetResponse, the fields of a bare Notification; a SubscribeResponse is one field);
//  - a line starting with '{' or '[' (followed by '"', a bracket or nothing), or ending with
//    '{' after a prompt ("password: {"), starts a JSON document, which runs to its matching
//    bracket; what it is comes from its fields (text_formats_json.cc).

#include "gnmi/text_formats.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/labels.h"
#include "gnmi/text_formats_internal.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace railwatch {
namespace {

using gnmi_text::JsonVerdict;
using gnmi_text::Sink;

constexpr std::array<std::pair<GnmiTextFormat, std::string_view>, 7> kFormatNames = {{
    {GnmiTextFormat::kAuto, "auto"},
    {GnmiTextFormat::kProtoJson, "protojson"},
    {GnmiTextFormat::kProtoText, "prototext"},
    {GnmiTextFormat::kGnmicJson, "gnmic-json"},
    {GnmiTextFormat::kGnmicEvent, "gnmic-event"},
    {GnmiTextFormat::kGnmiCli, "gnmi-cli"},
    {GnmiTextFormat::kGnmicDebugLog, "gnmic-debug"},
}};

constexpr std::string_view kDebugMarker = "received gNMI Subscribe Response:";

std::string_view LStrip(std::string_view s) {
  size_t i = s.find_first_not_of(" \t\r");
  return i == std::string_view::npos ? std::string_view() : s.substr(i);
}

std::string_view Strip(std::string_view s) {
  s = LStrip(s);
  size_t e = s.find_last_not_of(" \t\r");
  return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

size_t Indent(std::string_view s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string_view::npos ? s.size() : i;
}

// "name:" or "name {" or "name <" at the start of a (stripped) line.
std::string_view FieldName(std::string_view s) {
  s = LStrip(s);
  size_t i = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
  if (i == 0 || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return {};
  size_t j = i;
  while (j < s.size() && s[j] == ' ') ++j;
  if (j < s.size() && (s[j] == ':' || s[j] == '{' || s[j] == '<')) return s.substr(0, i);
  return {};
}

bool IsProtoTextStart(std::string_view line, bool explicit_format) {
  std::string_view f = FieldName(line);
  if (f == "notification" || f == "update" || f == "sync_response" || f == "timestamp") {
    return true;
  }
  return explicit_format && (f == "prefix" || f == "delete");
}

bool IsLogRecordStart(std::string_view line) {
  if (line.empty() || line[0] == '[') return true;
  return line.size() >= 5 && std::isdigit(static_cast<unsigned char>(line[0])) &&
         std::isdigit(static_cast<unsigned char>(line[3])) && (line[4] == '/' || line[4] == '-');
}

// Offset just past the bracket that closes the one at `start`, or npos.
size_t JsonExtent(std::string_view text, size_t start) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = start; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

// Collects a prototext message from lines[i]: see the file comment. Returns the index of the
// first line after it.
size_t CollectProtoText(const std::vector<std::string_view>& lines, size_t i, std::string& out) {
  int depth = 0;
  bool in_string = false;
  char quote = 0;
  const size_t indent = Indent(lines[i]);
  const std::string_view first = FieldName(lines[i]);
  size_t j = i;
  while (j < lines.size()) {
    std::string_view l = lines[j];
    if (in_string) {
      // A string wrapped over lines; "..." lines inside it are an excerpt's elision.
      while (j < lines.size() && (Strip(lines[j]) == "..." || Strip(lines[j]) == "...,")) ++j;
      if (j == lines.size()) break;
      l = LStrip(lines[j]);
    } else if (j > i && depth == 0) {
      std::string_view field = FieldName(l);
      if (field.empty() || Indent(l) != indent) break;
      // A SubscribeResponse is one field; a stream of them follows without blank lines.
      if (first == "update" || first == "sync_response") break;
      if (first == "notification" && field != "notification") break;
    }
    for (size_t k = 0; k < l.size(); ++k) {
      char c = l[k];
      if (in_string) {
        if (c == '\\') {
          ++k;
        } else if (c == quote) {
          in_string = false;
        }
      } else if (c == '"' || c == '\'') {
        in_string = true;
        quote = c;
      } else if (c == '{' || c == '<') {
        ++depth;
      } else if (c == '}' || c == '>') {
        --depth;
      }
    }
    out.append(l);
    if (!in_string) out.push_back('\n');
    ++j;
  }
  return j;
}

class CollectErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty()) first_ = absl::StrCat("line +", line, " column ", column + 1, ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

template <typename Message>
bool ParseText(std::string_view text, Message& m, std::string* error) {
  CollectErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  bool ok = parser.ParseFromString(std::string(text), &m);
  if (!ok && error != nullptr) *error = errors.first();
  return ok;
}

// A SubscribeResponse, GetResponse or Notification in prototext, whichever it reads as.
bool ReadProtoText(std::string_view text, size_t line, Sink& sink) {
  GnmiCapture& capture = sink.capture;
  std::string_view first = FieldName(text);
  std::string error;
  ::gnmi::SubscribeResponse sr;
  if (ParseText(text, sr, first == "update" || first == "sync_response" ? &error : nullptr)) {
    if (sr.has_update()) capture.notifications.push_back(std::move(*sr.mutable_update()));
    if (sr.sync_response()) ++capture.sync_responses;
    return true;
  }
  ::gnmi::GetResponse gr;
  if (ParseText(text, gr, first == "notification" ? &error : nullptr)) {
    for (auto& n : *gr.mutable_notification()) capture.notifications.push_back(std::move(n));
    return true;
  }
  ::gnmi::Notification n;
  if (ParseText(text, n, error.empty() ? &error : nullptr)) {
    capture.notifications.push_back(std::move(n));
    return true;
  }
  sink.Error(line, absl::StrCat("prototext: ", error));
  return false;
}

void ReadDebugRecord(std::string_view record, size_t line, Sink& sink) {
  std::string_view body = record.substr(record.find(kDebugMarker) + kDebugMarker.size());
  body = Strip(body);
  // Go's %+v of gnmic's struct: &{SubscriptionName:NAME Response:<the response's prototext>}
  if (body.substr(0, 2) == "&{") {
    size_t r = body.find(" Response:");
    size_t close = body.rfind('}');
    if (r == std::string_view::npos || close == std::string_view::npos || close < r) {
      sink.Error(line, "gnmic debug: no \"Response:\" in the record");
      return;
    }
    body = body.substr(r + 10, close - (r + 10));
  }
  ::gnmi::SubscribeResponse sr;
  std::string error;
  if (!ParseText(body, sr, &error)) {
    sink.Error(line, absl::StrCat("gnmic debug: ", error));
    return;
  }
  if (sr.has_update()) sink.capture.notifications.push_back(std::move(*sr.mutable_update()));
  if (sr.sync_response()) ++sink.capture.sync_responses;
}

bool IsJsonFormat(GnmiTextFormat f) {
  return f == GnmiTextFormat::kAuto || f == GnmiTextFormat::kProtoJson ||
         f == GnmiTextFormat::kGnmicJson || f == GnmiTextFormat::kGnmicEvent ||
         f == GnmiTextFormat::kGnmiCli;
}

// Where a JSON document starts on this line, and whether after a prompt; npos when none.
size_t JsonStart(std::string_view line, bool& after_prompt) {
  std::string_view s = LStrip(line);
  size_t at = line.size() - s.size();
  if (!s.empty() && (s[0] == '{' || s[0] == '[')) {
    std::string_view next = LStrip(s.substr(1));
    if (next.empty() || next[0] == '"' || next[0] == '{' || next[0] == '[' || next[0] == '}' ||
        next[0] == ']') {
      after_prompt = false;
      return at;
    }
    return std::string_view::npos;
  }
  std::string_view t = Strip(line);
  if (!t.empty() && t.back() == '{') {
    after_prompt = true;
    return (t.data() - line.data()) + t.size() - 1;
  }
  return std::string_view::npos;
}

}  // namespace

std::string_view GnmiTextFormatName(GnmiTextFormat format) {
  for (const auto& [f, name] : kFormatNames) {
    if (f == format) return name;
  }
  return "?";
}

std::optional<GnmiTextFormat> ParseGnmiTextFormat(std::string_view name) {
  for (const auto& [f, n] : kFormatNames) {
    if (n == name) return f;
  }
  return std::nullopt;
}

absl::StatusOr<GnmiCapture> ReadGnmiCapture(std::string_view text, std::string_view file_name,
                                            GnmiTextFormat format) {
  GnmiCapture capture;
  Sink sink{capture, file_name};
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  const bool any = format == GnmiTextFormat::kAuto;
  size_t read = 0;  // messages read
  size_t i = 0;
  while (i < lines.size()) {
    std::string_view line = lines[i];
    std::string_view stripped = Strip(line);
    if ((any || format == GnmiTextFormat::kGnmicDebugLog) &&
        line.find(kDebugMarker) != std::string_view::npos) {
      std::string record(line);
      size_t j = i + 1;
      while (j < lines.size() && !IsLogRecordStart(lines[j])) record.append(lines[j++]);
      size_t before = capture.errors.size();
      ReadDebugRecord(record, i + 1, sink);
      if (capture.errors.size() == before) ++read;
      i = j;
      continue;
    }
    if (stripped.substr(0, 3) == "== ") {
      std::string_view header = stripped.substr(3);
      if (header.find("Request") != std::string_view::npos || header == "setResponse:") {
        while (i < lines.size() && !Strip(lines[i]).empty()) ++i;
        continue;
      }
      ++i;
      continue;
    }
    if ((any || format == GnmiTextFormat::kProtoText) && IsProtoTextStart(line, !any)) {
      std::string message;
      size_t next = CollectProtoText(lines, i, message);
      if (ReadProtoText(message, i + 1, sink)) ++read;
      i = next;
      continue;
    }
    bool after_prompt = false;
    size_t col = IsJsonFormat(format) ? JsonStart(line, after_prompt) : std::string_view::npos;
    if (col != std::string_view::npos) {
      const size_t start = (line.data() - text.data()) + col;
      const size_t end = JsonExtent(text, start);
      if (end == std::string_view::npos) {
        if (!after_prompt) sink.Error(i + 1, "JSON that never closes (truncated?)");
        ++i;
        continue;
      }
      std::string_view raw = text.substr(start, end - start);
      nlohmann::json j = nlohmann::json::parse(raw.begin(), raw.end(), nullptr, false);
      if (j.is_discarded()) {
        if (!after_prompt) sink.Error(i + 1, "not valid JSON");
        ++i;
        continue;
      }
      bool hint = after_prompt;
      for (size_t k = i; k-- > 0 && k + 3 > i;) {
        if (lines[k].find("gnmi_cli") != std::string_view::npos ||
            lines[k].find("sendQueryAndDisplay") != std::string_view::npos) {
          hint = true;
        }
      }
      if (gnmi_text::ReadJsonMessage(j, raw, format, hint, i + 1, sink) == JsonVerdict::kRead) {
        ++read;
      }
      while (i < lines.size() && static_cast<size_t>(lines[i].data() - text.data()) < end) ++i;
      continue;
    }
    ++i;
  }
  // One bare prototext message with no field we start on ("prefix: ..." first).
  if (read == 0 && format == GnmiTextFormat::kProtoText && capture.errors.empty() &&
      !Strip(text).empty()) {
    if (ReadProtoText(text, 1, sink)) ++read;
  }
  if (read == 0) {
    std::string why = capture.errors.empty()
                          ? absl::StrCat(AsAbsl(file_name), ": no gNMI message found (format ",
                                         AsAbsl(GnmiTextFormatName(format)), ")")
                          : capture.errors.front();
    return absl::InvalidArgumentError(why);
  }
  return capture;
}

}  // namespace railwatch
