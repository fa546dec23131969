#include "ib/ibnetdiscover.h"

#include <optional>
#include <utility>

#include "ib/ib_text.h"

namespace railwatch::ib {
namespace {

// The vendid=/devid=/...guid= lines that open a node block, kept until its node line.
struct BlockHeader {
  std::optional<uint32_t> vendor_id;
  std::optional<uint32_t> device_id;
  IbGuid system_image_guid;
  IbGuid node_guid;  // switchguid= / caguid= / rtrguid=
};

class TopologyReader {
 public:
  TopologyReader(std::string_view source, IbTopology* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    std::string_view text = line.text;
    if (IsBlankLine(text)) return;
    if (text.front() == '#') return ReadComment(line);
    if (text.front() == '[') return ReadPortLine(line);
    if (ReadHeaderAssignment(line)) return;
    if (ReadNodeLine(line)) return;
    // A PuTTY session log's banner is the one wrapper we recognise and drop silently.
    if (text.starts_with("=~=~=~")) return;
    problems_.AddAtStart(line, "not an ibnetdiscover line; skipped");
  }

 private:
  void ReadComment(const TextLine& line) {
    std::string_view text = StripBlanks(line.text.substr(1));
    if (ConsumePrefix(text, "Topology file: generated on ")) {
      out_->generated_on = std::string(StripBlanks(text));
    } else if (ConsumePrefix(text, "Initiated from node ")) {
      LineScanner s(text);
      out_->initiated_from_node = ParseGuid(s.Token());
      s.SkipBlanks();
      if (s.ConsumeWord("port")) out_->initiated_from_port = ParseGuid(s.Token());
      problems_.CheckGuid(line, out_->initiated_from_node, "initiating node");
    }
    // Every other comment (ibdiagnet's preamble, "Max of N hops") carries nothing we keep.
  }

  // vendid=0x2c9, devid=0xd2f0, sysimgguid=0x..., switchguid=0x...(...), caguid=0x...
  bool ReadHeaderAssignment(const TextLine& line) {
    const size_t eq = line.text.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = line.text.substr(0, eq);
    std::string_view value = line.text.substr(eq + 1);
    // switchguid=0x<guid>(<guid>): the parenthesised copy is the port 0 GUID; the same here.
    value = value.substr(0, value.find('('));
    value = StripBlanks(value);
    if (key == "vendid" || key == "devid") {
      // vendid opens a block; a block without it still gets its node from devid onwards.
      if (key == "vendid") header_ = BlockHeader{};
      LineScanner s(value);
      const std::optional<uint64_t> id = s.Hex();
      if (!id || !s.done() || *id > UINT32_MAX) {
        problems_.Add(line, value, Cat("bad ", key, " '", value, "'"));
      } else {
        (key == "vendid" ? header_.vendor_id : header_.device_id) = static_cast<uint32_t>(*id);
      }
      return true;
    }
    if (key == "sysimgguid") {
      header_.system_image_guid = ParseGuid(value);
      problems_.CheckGuid(line, header_.system_image_guid, "system image GUID");
      return true;
    }
    if (key == "switchguid" || key == "caguid" || key == "rtrguid") {
      header_.node_guid = ParseGuid(value);
      problems_.CheckGuid(line, header_.node_guid, "node GUID");
      return true;
    }
    return false;
  }

  // Switch<sep>41 "S-<guid>"<sep># "<desc>" enhanced port 0 lid 1600 lmc 0
  // Ca<sep>1 "H-<guid>"<sep># "<desc>"
  bool ReadNodeLine(const TextLine& line) {
    LineScanner s(line.text);
    IbNode node;
    if (s.ConsumeWord("Switch")) {
      node.type = IbNodeType::kSwitch;
    } else if (s.ConsumeWord("Ca")) {
      node.type = IbNodeType::kCa;
    } else if (s.ConsumeWord("Rt")) {
      node.type = IbNodeType::kRouter;
    } else {
      return false;
    }
    const std::optional<uint64_t> ports = s.Decimal();
    if (!ports || *ports > 255) {
      problems_.Add(line, s.rest(), "node line without a port count; node skipped");
      return true;
    }
    node.num_ports = static_cast<int>(*ports);
    s.SkipBlanks();
    const std::optional<NodeId> id = ReadNodeId(s);
    if (!id) {
      problems_.Add(line, s.rest(), "node line without a quoted \"S-<guid>\"; node skipped");
      return true;
    }
    s.SkipBlanks();
    if (!s.Consume("#")) {
      problems_.Add(line, s.rest(), "node line without '#' before its description");
    }
    s.SkipBlanks();
    std::string_view tail;
    if (std::optional<std::string_view> desc = s.QuotedToLast()) {
      node.description = std::string(*desc);
      tail = s.rest();
    } else {
      problems_.Add(line, s.rest(), "node line without a quoted description");
    }
    node.guid = header_.node_guid.text.empty() ? id->guid : header_.node_guid;
    if (!id->guid.valid()) problems_.CheckGuid(line, id->guid, "node GUID");
    if (id->guid.valid() && node.guid.valid() && *id->guid.value != *node.guid.value) {
      problems_.AddAtStart(
          line, Cat("node line names ", id->guid.text, " but its block says ", node.guid.text));
    }
    node.system_image_guid = header_.system_image_guid;
    node.vendor_id = header_.vendor_id;
    node.device_id = header_.device_id;
    node.where = problems_.Where(line);
    // "enhanced port 0 lid 1600 lmc 0" / "base port 0 lid 31 lmc 0": a switch's own LID.
    if (Contains(tail, "enhanced port 0")) node.enhanced_port0 = true;
    if (Contains(tail, "base port 0")) node.enhanced_port0 = false;
    const size_t lid_at = tail.find("lid ");
    if (lid_at != std::string_view::npos) {
      LineScanner t(tail.substr(lid_at + 4));
      node.lid = ToLid(t.Decimal());
    }
    out_->nodes.push_back(std::move(node));
    header_ = BlockHeader{};
    return true;
  }

  // [port](label|port guid)<sep>"X-<guid>"[peer port](peer port guid)<sep># [lid N lmc N ]
  // "<peer desc>" lid N <W>x<GEN>
  void ReadPortLine(const TextLine& line) {
    if (out_->nodes.empty()) {
      problems_.AddAtStart(line, "port line before any node line; skipped");
      return;
    }
    const IbNode& node = out_->nodes.back();
    LineScanner s(line.text);
    IbLink link;
    link.where = problems_.Where(line);
    link.local.type = node.type;
    link.local.node_guid = node.guid;
    link.local.description = node.description;
    link.local.lid = node.lid;
    std::optional<int> port = ReadPortNumber(s);
    if (!port) {
      problems_.AddAtStart(line, "port line without [<port>]; skipped");
      return;
    }
    link.local.port = *port;
    if (s.Consume("(")) {
      std::optional<std::string_view> inside = s.Until(')');
      if (!inside) {
        problems_.Add(line, s.rest(), "unclosed '(' after the port number");
        return;
      }
      // Switch ports carry ibdiagnet's label here, CA ports their own port GUID.
      if (node.type == IbNodeType::kSwitch) {
        link.local.port_label = std::string(*inside);
      } else {
        link.local.port_guid = ParseGuid(*inside);
        problems_.CheckGuid(line, link.local.port_guid, "port GUID");
      }
    }
    s.SkipBlanks();
    const std::string_view peer_at = s.rest();
    const std::optional<NodeId> peer = ReadNodeId(s);
    std::optional<int> peer_port = peer ? ReadPortNumber(s) : std::nullopt;
    if (!peer || !peer_port) {
      problems_.Add(line, peer_at, "port line without its peer \"X-<guid>\"[<port>]; skipped");
      return;
    }
    IbLinkEnd end;
    end.type = peer->type;
    end.node_guid = peer->guid;
    end.port = *peer_port;
    problems_.CheckGuid(line, end.node_guid, "peer GUID");
    if (s.Consume("(")) {
      if (std::optional<std::string_view> inside = s.Until(')')) {
        end.port_guid = ParseGuid(*inside);
        problems_.CheckGuid(line, end.port_guid, "peer port GUID");
      }
    }
    s.SkipBlanks();
    s.Consume("#");
    s.SkipBlanks();
    // A CA port line gives the CA port's own LID before the peer's description.
    if (s.ConsumeWord("lid")) {
      link.local.lid = ToLid(s.Decimal());
      s.SkipBlanks();
      if (s.ConsumeWord("lmc")) s.Decimal();
      s.SkipBlanks();
    }
    if (std::optional<std::string_view> desc = s.QuotedToLast()) {
      end.description = std::string(*desc);
    } else {
      problems_.Add(line, s.rest(), "port line without the peer's quoted description");
    }
    s.SkipBlanks();
    if (s.ConsumeWord("lid")) {
      end.lid = ToLid(s.Decimal());
      s.SkipBlanks();
    }
    const std::string_view speed_at = s.rest();
    if (std::optional<IbLinkSpeed> speed = ParseWidthGeneration(s.Token())) {
      link.speed = std::move(*speed);
      if (link.speed.lane_gbps == 0) {
        problems_.Add(line, speed_at, Cat("unknown link speed '", link.speed.generation, "'"));
      }
    } else {
      problems_.Add(line, speed_at, "port line without a <width>x<speed> such as 4xHDR");
    }
    link.peer = std::move(end);
    out_->links.push_back(std::move(link));
  }

  static std::optional<uint32_t> ToLid(std::optional<uint64_t> n) {
    if (!n || *n > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(*n);
  }

  IbTopology* out_;
  ProblemSink problems_;
  BlockHeader header_;
};

}  // namespace

IbTopology ParseIbnetdiscover(std::string_view text, std::string_view source) {
  return ReadEachLine<IbTopology, TopologyReader>(text, source);
}

const IbNode* FindNode(const IbTopology& topology, uint64_t guid) {
  for (const IbNode& node : topology.nodes) {
    if (node.guid.value == guid) return &node;
  }
  return nullptr;
}

}  // namespace railwatch::ib
