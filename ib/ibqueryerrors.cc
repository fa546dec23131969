#include "ib/ibqueryerrors.h"

#include <utility>

#include "ib/ib_text.h"

namespace railwatch::ib {
namespace {

class IbqueryerrorsReader {
 public:
  IbqueryerrorsReader(std::string_view source, IbqueryerrorsResult* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    if (text.starts_with("##")) return ReadSummary(line, text.substr(2));
    if (text.starts_with("# ")) return;  // a copied prompt: "# ibqueryerrors"
    if (text.starts_with("Errors for ")) return ReadNode(line, text.substr(11));
    if (text.starts_with("GUID ")) return ReadPort(line, text.substr(5));
    problems_.Add(line, text, "not an ibqueryerrors line; skipped");
  }

 private:
  // Errors for "<CA desc>"  |  Errors for 0x<guid> "<switch desc>"
  void ReadNode(const TextLine& line, std::string_view text) {
    LineScanner s(text);
    node_guid_ = IbGuid{};
    if (!text.starts_with("\"")) {
      node_guid_ = ParseGuid(s.Token());
      problems_.CheckGuid(line, node_guid_, "node GUID");
      s.SkipBlanks();
    }
    const std::optional<std::string_view> name = s.QuotedToLast();
    node_description_ = name ? std::string(*name) : std::string();
    if (!name) problems_.Add(line, s.rest(), "'Errors for' without a quoted node name");
  }

  // GUID 0x<guid> port <n|ALL>: [<Counter> == <value>] ...
  void ReadPort(const TextLine& line, std::string_view text) {
    LineScanner s(text);
    IbPortCounters port;
    port.attribute = PmaAttribute::kPortCounters;
    port.where = problems_.Where(line);
    port.node_guid = node_guid_;
    port.node_description = node_description_;
    port.guid = ParseGuid(s.Token());
    problems_.CheckGuid(line, port.guid, "port GUID");
    s.SkipBlanks();
    if (!s.ConsumeWord("port")) {
      problems_.Add(line, s.rest(), "GUID without 'port <n>:'; skipped");
      return;
    }
    if (s.Consume("ALL")) {
      port.all_ports = true;
    } else if (std::optional<uint64_t> n = s.Decimal(); n && *n <= 255) {
      port.port = static_cast<int>(*n);
    } else {
      problems_.Add(line, s.rest(), "port is neither a number nor ALL; skipped");
      return;
    }
    s.Consume(":");
    ReadCounters(line, s, port);
    (port.all_ports ? out_->aggregates : out_->ports).push_back(std::move(port));
  }

  void ReadCounters(const TextLine& line, LineScanner& s, IbPortCounters& port) {
    for (s.SkipBlanks(); s.rest().starts_with("["); s.SkipBlanks()) {
      const std::string_view item_at = s.rest();
      s.Consume("[");
      const std::optional<std::string_view> item = s.Until(']');
      if (!item) {
        problems_.Add(line, item_at, "unclosed '['");
        return;
      }
      const size_t eq = item->find(" == ");
      LineScanner value(eq == std::string_view::npos ? std::string_view() : item->substr(eq + 4));
      const std::optional<uint64_t> n = value.Decimal();
      if (!n) {
        problems_.Add(line, item_at, Cat("not '[<counter> == <value>]': '", *item, "'"));
        continue;
      }
      const std::string_view name = item->substr(0, eq);
      port.counters[std::string(name)] = MakeCounter(port.attribute, name, *n);
    }
    // ibqueryerrors -l appends " Link info: ..." after the counters; nothing else is expected.
    if (!s.done() && !Contains(s.rest(), "Link info")) {
      problems_.Add(line, s.rest(), "unexpected text after the counters");
    }
  }

  // ## Summary: 4 nodes checked, 4 bad nodes found
  // ##          43 ports checked, 14 ports have errors beyond threshold
  // ## Thresholds: ...   ## Suppressed: ...
  void ReadSummary(const TextLine& line, std::string_view text) {
    text = StripBlanks(text);
    IbqueryerrorsSummary& summary = out_->summary;
    if (ConsumePrefix(text, "Thresholds:")) {
      summary.thresholds = std::string(StripBlanks(text));
    } else if (ConsumePrefix(text, "Suppressed:")) {
      summary.suppressed = std::string(StripBlanks(text));
    } else if (ConsumePrefix(text, "Summary:")) {
      ReadCountPair(line, StripBlanks(text), "nodes checked,", "bad nodes found",
                    summary.nodes_checked, summary.bad_nodes);
    } else {
      ReadCountPair(line, text, "ports checked,", "ports have errors beyond threshold",
                    summary.ports_checked, summary.ports_with_errors);
    }
  }

  // "<n> <first words> <m> <second words>"
  void ReadCountPair(const TextLine& line, std::string_view text, std::string_view first_words,
                     std::string_view second_words, std::optional<uint64_t>& first,
                     std::optional<uint64_t>& second) {
    LineScanner s(text);
    std::optional<uint64_t> a = s.Decimal();
    s.SkipBlanks();
    const bool first_ok = s.ConsumeWord(first_words);
    std::optional<uint64_t> b = s.Decimal();
    s.SkipBlanks();
    if (!a || !first_ok || !b || !s.ConsumeWord(second_words)) {
      problems_.Add(line, text, "summary line not understood");
      return;
    }
    first = a;
    second = b;
  }

  IbqueryerrorsResult* out_;
  ProblemSink problems_;
  IbGuid node_guid_;
  std::string node_description_;
};

}  // namespace

IbqueryerrorsResult ParseIbqueryerrors(std::string_view text, std::string_view source) {
  return ReadEachLine<IbqueryerrorsResult, IbqueryerrorsReader>(text, source,
                                                                {.strip_mail_quote = true});
}

}  // namespace railwatch::ib
