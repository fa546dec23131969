#include "engine/diagnosis_text.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace railwatch {

std::string LabelValue(const Labels& labels, std::string_view name) {
  const std::string* v = FindLabel(labels, name);
  return v == nullptr ? std::string() : *v;
}

std::string ExpandTemplate(const std::string& tmpl, const Labels& labels, double value) {
  std::string out;
  size_t pos = 0;
  while (pos < tmpl.size()) {
    size_t open = tmpl.find("{{", pos);
    size_t close = open == std::string::npos ? open : tmpl.find("}}", open + 2);
    if (close == std::string::npos) {
      out.append(tmpl, pos, std::string::npos);
      break;
    }
    out.append(tmpl, pos, open - pos);
    std::string key(absl::StripAsciiWhitespace(tmpl.substr(open + 2, close - open - 2)));
    if (key == "value") {
      absl::StrAppend(&out, absl::StrFormat("%g", value));
    } else if (const std::string* v = FindLabel(labels, key)) {
      out += *v;
    } else {
      absl::StrAppend(&out, "<", key, "?>");
    }
    pos = close + 2;
  }
  return out;
}

std::vector<std::string> RunbookCommands(std::string_view markdown) {
  std::vector<std::string> out;
  bool in_shell = false, in_other = false;
  for (absl::string_view line : absl::StrSplit(AsAbsl(markdown), '\n')) {
    absl::string_view t = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(t, "```")) {
      if (in_shell || in_other) {
        in_shell = in_other = false;
      } else {
        absl::string_view lang = absl::StripAsciiWhitespace(t.substr(3));
        in_shell = lang == "sh" || lang == "bash" || lang == "shell" || lang == "console";
        in_other = !in_shell;
      }
      continue;
    }
    if (!in_shell || t.empty() || absl::StartsWith(t, "#")) continue;
    absl::ConsumePrefix(&t, "$ ");
    out.emplace_back(t);
  }
  return out;
}

std::string DescribeLocation(const Labels& labels) {
  const std::string host = LabelValue(labels, "host"), sw = LabelValue(labels, "switch");
  std::vector<std::string> where;
  std::string head;
  if (!host.empty()) {
    head = host;
    std::string dev = LabelValue(labels, "device");
    if (dev.empty()) dev = LabelValue(labels, "interface");
    if (!dev.empty()) absl::StrAppend(&head, " ", dev);
    if (std::string r = LabelValue(labels, "rail"); !r.empty()) where.push_back("rail " + r);
    if (std::string leaf = LabelValue(labels, "leaf"); !leaf.empty()) {
      std::string lp = LabelValue(labels, "leaf_port");
      where.push_back(lp.empty() ? leaf : absl::StrCat(leaf, " ", lp));
    }
  } else if (!sw.empty()) {
    head = sw;
    if (std::string i = LabelValue(labels, "interface"); !i.empty()) absl::StrAppend(&head, " ", i);
    if (std::string ph = LabelValue(labels, "peer_host"); !ph.empty()) {
      std::string pd = LabelValue(labels, "peer_device");
      where.push_back(absl::StrCat("to ", ph, pd.empty() ? "" : " ", pd));
    } else if (std::string ps = LabelValue(labels, "peer_switch"); !ps.empty()) {
      std::string pp = LabelValue(labels, "peer_port");
      where.push_back(absl::StrCat("to ", ps, pp.empty() ? "" : " ", pp));
    }
    if (std::string r = LabelValue(labels, "rail"); !r.empty()) where.push_back("rail " + r);
  } else if (std::string link = LabelValue(labels, "link"); !link.empty()) {
    head = link;
  } else {
    head = FormatLabels(labels);
  }
  if (std::string job = LabelValue(labels, "job"); !job.empty()) where.push_back("job " + job);
  if (where.empty()) return head;
  return absl::StrCat(head, " (", absl::StrJoin(where, ", "), ")");
}

}  // namespace railwatch
