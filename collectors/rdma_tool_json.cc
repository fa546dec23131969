#include "collectors/rdma_tool_json.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace {

using Json = nlohmann::ordered_json;

// A document larger than this, or nested deeper, is refused (rdma prints a flat array).
constexpr size_t kMaxJsonBytes = 16 << 20;
constexpr int kMaxJsonDepth = 32;

// One port object of the document that starts at `line`.
void PortObject(const Json& j, int json_line, std::vector<RdmaToolPort>& ports,
                const RdmaJsonDocument::ProblemFn& problem) {
  if (!j.is_object()) {
    problem(json_line, "JSON: expected an object per port");
    return;
  }
  auto ifname = j.find("ifname");
  auto port = j.find("port");
  if (ifname == j.end() || !ifname->is_string() || port == j.end() ||
      !port->is_number_unsigned() || port->get<uint64_t>() > UINT32_MAX) {
    problem(json_line, "JSON: an object without \"ifname\" (a string) and \"port\" (a number)");
    return;
  }
  RdmaToolPort p;
  p.device = ifname->get<std::string>();
  p.port = static_cast<uint32_t>(port->get<uint64_t>());
  p.line = json_line;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    if (key == "ifname" || key == "port") continue;
    if (v.is_number_unsigned()) {
      uint64_t n = v.get<uint64_t>();
      if (IsRdmaAttributeKey(key)) {
        p.attributes.emplace_back(key, absl::StrCat(n));
      } else {
        p.counters.push_back({key, n, RdmaCounterCanonicalName(key)});
      }
    } else if (v.is_number()) {
      problem(json_line, absl::StrCat("JSON: ", p.Name(), " ", QuoteToken(key), ": ", v.dump(),
                                      " is not an unsigned 64-bit integer"));
    } else if (v.is_string()) {
      p.attributes.emplace_back(key, v.get<std::string>());
    } else if (v.is_boolean()) {
      p.attributes.emplace_back(key, v.get<bool>() ? "true" : "false");
    } else if (v.is_array()) {
      std::vector<std::string> items;
      for (const Json& item : v) {
        if (item.is_string()) items.push_back(item.get<std::string>());
      }
      p.attributes.emplace_back(key, absl::StrJoin(items, ","));
    }
    // Nested objects and null: nothing rdma prints that we use.
  }
  ports.push_back(std::move(p));
}

}  // namespace

bool RdmaJsonDocument::IsStart(std::string_view t) {
  // `rdma -j -p` opens with `[ {` alone; `rdma -j` prints its array on one line. Anything else
  // that opens a bracket (a banner, a pretty-printed dict in a PyTorch log) is not taken: an
  // unbalanced one would swallow the rest of a log.
  if (t == "[ {" || t == "[{") return true;
  return !t.empty() && (t[0] == '[' || t[0] == '{') && t.find("\"ifname\"") != t.npos;
}

void RdmaJsonDocument::Start(int line_number) {
  End();
  open_ = true;
  line_ = line_number;
}

void RdmaJsonDocument::Parse(std::vector<RdmaToolPort>& ports, const ProblemFn& problem) {
  Json j;
  try {
    j = Json::parse(text_);
  } catch (const Json::parse_error& e) {  // the error's position gives the line
    size_t at = std::min<size_t>(e.byte > 0 ? e.byte - 1 : 0, text_.size());
    int line = line_ + static_cast<int>(std::count(text_.begin(), text_.begin() + at, '\n'));
    problem(line, absl::StrCat("invalid JSON: ", e.what()));
    return;
  } catch (const Json::exception& e) {
    problem(line_, absl::StrCat("invalid JSON: ", e.what()));
    return;
  }
  if (j.is_array()) {
    for (const Json& item : j) PortObject(item, line_, ports, problem);
  } else {
    PortObject(j, line_, ports, problem);
  }
}

// Appends `line` to the open document; parses it when its brackets close.
void RdmaJsonDocument::Feed(std::string_view line, int line_number,
                            std::vector<RdmaToolPort>& ports, const ProblemFn& problem) {
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string_) {
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '[' || c == '{') {
      if (++depth_ > kMaxJsonDepth && !discard_) {
        problem(line_number, absl::StrCat("JSON nested deeper than ", kMaxJsonDepth));
        discard_ = true;
      }
    } else if (c == ']' || c == '}') {
      if (--depth_ == 0) {
        if (!discard_) {
          text_.append(line.substr(0, i + 1));
          Parse(ports, problem);
        }
        if (!TrimRdmaText(line.substr(i + 1)).empty()) {
          problem(line_number, "text after the end of the JSON document");
        }
        End();
        return;
      }
    }
  }
  if (!discard_) {
    text_.append(line);
    text_.push_back('\n');
    if (text_.size() > kMaxJsonBytes) {
      problem(line_, absl::StrCat("JSON document larger than ", kMaxJsonBytes, " bytes"));
      discard_ = true;
      text_.clear();
    }
  }
}

void RdmaJsonDocument::Finish(const ProblemFn& problem) {
  if (open_) problem(line_, "JSON document not closed at the end of the input");
  End();
}

void RdmaJsonDocument::End() {
  open_ = discard_ = in_string_ = escape_ = false;
  depth_ = 0;
  text_.clear();
}

}  // namespace railwatch
