#include "ib/perfquery.h"

#include <array>
#include <optional>
#include <utility>

#include "ib/ib_text.h"

namespace railwatch::ib {
namespace {

struct BlockKind {
  std::string_view title;  // the header's words before ": Lid"
  PmaAttribute attribute;
};

constexpr std::array<BlockKind, 4> kBlocks = {{
    {"Port counters", PmaAttribute::kPortCounters},
    {"Port extended counters", PmaAttribute::kPortCountersExtended},
    {"PortRcvErrorDetails counters", PmaAttribute::kPortRcvErrorDetails},
    {"PortXmitDiscardDetails counters", PmaAttribute::kPortXmitDiscardDetails},
}};

// perfquery's port number for "all ports" (-a), as IBA's AllPortSelect.
constexpr uint64_t kAllPorts = 255;

// Selectors echo the query; they are not counters.
bool IsSelector(std::string_view name) {
  return name == "PortSelect" || name == "CounterSelect" || name == "CounterSelect2";
}

class PerfqueryReader {
 public:
  PerfqueryReader(std::string_view source, PerfqueryResult* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    if (text.front() == '#') return ReadHeader(line, text);
    ReadCounter(line, text);
  }

 private:
  // "# Port extended counters: Lid 1719 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)"
  void ReadHeader(const TextLine& line, std::string_view text) {
    std::string_view rest = StripBlanks(text.substr(1));
    const size_t colon = rest.find(": Lid ");
    if (colon == std::string_view::npos) return;  // a copied prompt, or another comment
    const std::string_view title = rest.substr(0, colon);
    const BlockKind* kind = nullptr;
    for (const BlockKind& k : kBlocks) {
      if (k.title == title) kind = &k;
    }
    current_ = nullptr;
    if (kind == nullptr) {
      problems_.AddAtStart(line,
                           Cat("unknown perfquery block '", title, "'; its counters are skipped"));
      return;
    }
    LineScanner s(rest.substr(colon + 6));
    IbPortCounters port;
    port.attribute = kind->attribute;
    port.where = problems_.Where(line);
    const std::optional<uint64_t> lid = s.Decimal();
    s.SkipBlanks();
    std::optional<uint64_t> number;
    if (s.ConsumeWord("port")) number = s.Decimal();
    if (!lid || *lid > UINT32_MAX || !number) {
      problems_.Add(line, s.rest(), "header without 'Lid <n> port <n>'; block skipped");
      return;
    }
    port.lid = static_cast<uint32_t>(*lid);
    if (*number == kAllPorts) {
      port.all_ports = true;
    } else {
      port.port = static_cast<int>(*number);
    }
    s.SkipBlanks();
    if (s.ConsumeWord("(CapMask:")) {
      port.cap_mask = ToMask(s.Hex());
      s.SkipBlanks();
      if (s.ConsumeWord("CapMask2:")) port.cap_mask2 = ToMask(s.Hex());
    }
    out_->ports.push_back(std::move(port));
    current_ = &out_->ports.back();
  }

  // "PortXmitData:....................36298026860928"
  void ReadCounter(const TextLine& line, std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      problems_.Add(line, text, "not a perfquery line; skipped");
      return;
    }
    const std::string_view name = text.substr(0, colon);
    std::string_view value = text.substr(colon + 1);
    while (!value.empty() && value.front() == '.') value.remove_prefix(1);
    value = StripBlanks(value);
    if (current_ == nullptr) {
      problems_.Add(line, text, Cat("counter '", name, "' outside a '# ... counters:' block"));
      return;
    }
    if (IsSelector(name)) {
      CheckPortSelect(line, name, value);
      return;
    }
    LineScanner s(value);
    const std::optional<uint64_t> n = s.Decimal();
    if (!n || !s.done()) {
      problems_.Add(line, value, Cat("counter '", name, "' has no decimal value"));
      return;
    }
    current_->counters[std::string(name)] = MakeCounter(current_->attribute, name, *n);
  }

  void CheckPortSelect(const TextLine& line, std::string_view name, std::string_view value) {
    if (name != "PortSelect" || !current_->port) return;
    LineScanner s(value);
    const std::optional<uint64_t> n = s.Decimal();
    if (n && *n != static_cast<uint64_t>(*current_->port)) {
      problems_.Add(line, value, "PortSelect differs from the header's port");
    }
  }

  static std::optional<uint32_t> ToMask(std::optional<uint64_t> n) {
    if (!n || *n > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(*n);
  }

  PerfqueryResult* out_;
  ProblemSink problems_;
  IbPortCounters* current_ = nullptr;  // into out_->ports, which grows only in ReadHeader
};

}  // namespace

PerfqueryResult ParsePerfquery(std::string_view text, std::string_view source) {
  return ReadEachLine<PerfqueryResult, PerfqueryReader>(text, source, {.strip_mail_quote = true});
}

}  // namespace railwatch::ib
