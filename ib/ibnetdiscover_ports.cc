// `ibnetdiscover -p` (ports report): see ibnetdiscover.h for the grammar.
#include <optional>
#include <string>
#include <utility>

#include "ib/ib_text.h"
#include "ib/ibnetdiscover.h"

namespace railwatch::ib {
namespace {

std::optional<IbNodeType> NodeTypeOf(std::string_view abbreviation) {
  if (abbreviation == "CA") return IbNodeType::kCa;
  if (abbreviation == "SW") return IbNodeType::kSwitch;
  if (abbreviation == "RT") return IbNodeType::kRouter;
  return std::nullopt;
}

// "<CA|SW|RT> <lid> <port> 0x<guid>": one end of a line. Columns are right-aligned, so any
// run of blanks separates the fields.
std::optional<IbLinkEnd> ReadEnd(LineScanner& s) {
  LineScanner probe = s;
  probe.SkipBlanks();
  const std::optional<IbNodeType> type = NodeTypeOf(probe.Token());
  probe.SkipBlanks();
  const std::optional<uint64_t> lid = probe.Decimal();
  probe.SkipBlanks();
  const std::optional<uint64_t> port = probe.Decimal();
  probe.SkipBlanks();
  const std::string_view guid = probe.Token();
  if (!type || !lid || *lid > UINT32_MAX || !port || *port > 255 || guid.empty()) {
    return std::nullopt;
  }
  IbLinkEnd end;
  end.type = *type;
  end.lid = static_cast<uint32_t>(*lid);
  end.port = static_cast<int>(*port);
  end.port_guid = ParseGuid(guid);
  // A switch has one GUID for all its ports: the port's is the node's.
  if (end.type == IbNodeType::kSwitch) end.node_guid = end.port_guid;
  s = probe;
  return end;
}

void ReadPortsLine(const TextLine& line, ProblemSink& problems, IbTopology& out) {
  LineScanner s(line.text);
  std::optional<IbLinkEnd> local = ReadEnd(s);
  if (!local) {
    problems.AddAtStart(line, "not an ibnetdiscover -p line; skipped");
    return;
  }
  IbLink link;
  link.where = problems.Where(line);
  s.SkipBlanks();
  const std::string_view width = s.Token();
  s.SkipBlanks();
  const std::string_view speed_at = s.rest();
  const std::string_view generation = s.Token();
  // Width and speed are two tokens here ("4x EDR"); "???" is a port that is down.
  if (std::optional<IbLinkSpeed> speed = ParseWidthGeneration(Cat(width, generation))) {
    link.speed = std::move(*speed);
    if (link.speed.lane_gbps == 0 && link.speed.generation != "???") {
      problems.Add(line, speed_at, Cat("unknown link speed '", generation, "'"));
    }
  } else {
    problems.Add(line, speed_at, "no '<width>x <speed>' after the GUID");
  }
  s.SkipBlanks();
  problems.CheckGuid(line, local->port_guid, "port GUID");
  if (s.Consume("-")) {
    std::optional<IbLinkEnd> peer = ReadEnd(s);
    if (!peer) {
      problems.Add(line, s.rest(), "'-' not followed by the peer's type, LID, port and GUID");
      return;
    }
    problems.CheckGuid(line, peer->port_guid, "peer port GUID");
    s.SkipBlanks();
    // ( '<local desc>' - '<peer desc>' ); descriptions keep their blanks.
    s.Consume("(");
    s.SkipBlanks();
    if (std::optional<std::string_view> name = s.Quoted('\'')) {
      local->description = std::string(*name);
      s.SkipBlanks();
      s.Consume("-");
      s.SkipBlanks();
      if (std::optional<std::string_view> peer_name = s.QuotedToLast('\'')) {
        peer->description = std::string(*peer_name);
      }
    } else {
      problems.Add(line, s.rest(), "no '( '<local>' - '<peer>' )' names");
    }
    link.peer = std::move(*peer);
  } else if (std::optional<std::string_view> name = s.QuotedToLast('\'')) {
    local->description = std::string(*name);
  } else {
    problems.Add(line, s.rest(), "unconnected port without its quoted name");
  }
  link.local = std::move(*local);
  out.links.push_back(std::move(link));
}

}  // namespace

IbTopology ParseIbnetdiscoverPorts(std::string_view text, std::string_view source) {
  IbTopology topology;
  ProblemSink problems(source, &topology.problems);
  for (const TextLine& line : SplitLines(text)) {
    if (IsBlankLine(line.text)) continue;
    ReadPortsLine(line, problems, topology);
  }
  return topology;
}

}  // namespace railwatch::ib
