#include "ib/ibdiagnet_net_dump.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

#include "ib/ib_text.h"
#include "ib/ibdiagnet_blocks.h"

namespace railwatch::ib {
namespace {

bool IsCellBlank(char c) { return c == ' ' || c == '\t'; }

// Cells between separators, each stripped: a separator is a ':' with a blank before it and a
// blank (or the line's end) after it. The last of `max_cells` takes the rest of the line.
std::vector<std::string_view> SplitCells(std::string_view line, size_t max_cells) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  for (size_t i = 1; i < line.size() && cells.size() + 1 < max_cells; ++i) {
    if (line[i] != ':' || !IsCellBlank(line[i - 1])) continue;
    if (i + 1 < line.size() && !IsCellBlank(line[i + 1])) continue;
    cells.push_back(StripBlanks(line.substr(start, i - start)));
    start = i + 1;
  }
  cells.push_back(StripBlanks(line.substr(std::min(start, line.size()))));
  return cells;
}

constexpr size_t kAnyCells = 64;

// The columns ibdiagnet 2.10 prints, for an excerpt that starts below its column header.
constexpr std::array<std::string_view, 13> kNetDumpColumns = {
    "#",   "IB#",      "Sta",    "PhysSta",       "MTU", "LWA",
    "LSA", "FEC mode", "Retran", "Neighbor Guid", "N#",  "NLID",
    "Neighbor Description"};
constexpr std::array<std::string_view, 18> kNetDumpExtColumns = {
    "Ty",       "#",          "#IB",           "GUID",       "LID",        "Sta",
    "PhysSta",  "LWA",        "LSA",           "Conn LID (#)", "FEC mode", "RTR",
    "Raw BER",  "Effective BER", "Symbol BER", "Symbol Err", "Effective Err", "Node Desc"};

std::optional<int> StateCode(std::string_view s) {
  if (s == "DOWN") return 1;
  if (s == "INI" || s == "INIT") return 2;
  if (s == "ARM") return 3;
  if (s == "ACT" || s == "ACTIVE") return 4;
  return std::nullopt;
}

std::optional<int> PhysStateCode(std::string_view s) {
  if (s == "SLEEP") return 1;
  if (s == "POLL") return 2;
  if (s == "DISABLED" || s == "DISABLE") return 3;
  if (s == "PORT CONF TRAINING" || s == "TRAINING") return 4;
  if (s == "LINK UP") return 5;
  if (s == "LINK ERROR RECOVERY") return 6;
  if (s == "PHY TEST") return 7;
  return std::nullopt;
}

// The generation whose nominal lane rate ibdiagnet prints as LSA ("100" NDR; "10" is QDR: FDR10
// prints its name).
const IbGeneration* GenerationOfLaneGbps(double gbps) {
  for (std::string_view name : {"SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR"}) {
    const IbGeneration* g = FindGeneration(name);
    if (g != nullptr && std::fabs(g->lane_gbps - gbps) < 1e-6) return g;
  }
  return nullptr;
}

std::string_view UnquoteCell(std::string_view cell, bool& unterminated) {
  unterminated = false;
  if (!cell.starts_with("\"")) return cell;
  if (cell.size() >= 2 && cell.ends_with("\"")) return cell.substr(1, cell.size() - 2);
  unterminated = true;
  return cell.substr(1);
}

class NetDumpReader {
 public:
  NetDumpReader(std::string_view source, IbdiagnetNetDump* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    if (IsColumnHeader(text)) return ReadHeader(line, text);
    if (text.front() == '#') return;  // the file's own header and "# File closed at : ..."
    if (!extended_ && text.front() == '"') return ReadNodeLine(line, text);
    if (columns_.empty() && !AssumeColumns(text)) {
      problems_.Add(line, text, "a row before any column header; skipped");
      return;
    }
    if (!extended_ && !node_) {
      problems_.Add(line, text, "a port row before any node line; skipped");
      return;
    }
    ReadRow(line, text);
  }

  void Finish() {
    ResolveNeighbours();
    out_->extended = extended_;
  }

 private:
  static bool IsColumnHeader(std::string_view text) {
    if (!text.starts_with("#") && !text.starts_with("Ty ")) return false;
    for (std::string_view cell : SplitCells(text, kAnyCells)) {
      if (cell == "IB#" || cell == "#IB") return true;
    }
    return false;
  }

  // An excerpt cut below the column header: a row with as many cells as ibdiagnet 2.10's
  // columns is read with them.
  bool AssumeColumns(std::string_view text) {
    const std::vector<std::string_view> cells = SplitCells(text, kAnyCells);
    const std::string_view first = cells.front();
    if ((first == "SW" || first == "CA" || first == "RT") &&
        cells.size() == kNetDumpExtColumns.size()) {
      columns_.assign(kNetDumpExtColumns.begin(), kNetDumpExtColumns.end());
      extended_ = true;
      return true;
    }
    if (node_ && cells.size() == kNetDumpColumns.size()) {
      columns_.assign(kNetDumpColumns.begin(), kNetDumpColumns.end());
      return true;
    }
    return false;
  }

  void ReadHeader(const TextLine& line, std::string_view text) {
    columns_.clear();
    for (std::string_view cell : SplitCells(text, kAnyCells)) columns_.emplace_back(cell);
    const bool extended = !columns_.empty() && columns_.front() == "Ty";
    if (!out_->ports.empty() && extended != extended_) {
      problems_.AddAtStart(line, "a net_dump_ext header after net_dump rows (or the reverse)");
    }
    extended_ = extended;
    for (std::string_view needed :
         {std::string_view("#"), extended ? std::string_view("#IB") : std::string_view("IB#")}) {
      if (Column(needed) < 0) {
        problems_.AddAtStart(line, Cat("column header without '", needed, "'"));
      }
    }
  }

  // "Quantum-2 Mellanox Technologies", Mellanox, 0xb0cf0e0300e5b940, LID 24
  void ReadNodeLine(const TextLine& line, std::string_view text) {
    node_.reset();
    const size_t close = text.rfind('"');
    if (close == 0) {
      problems_.Add(line, text, "node line whose description never closes its quote; its rows "
                                "are skipped");
      return;
    }
    IbNode node;
    node.type = IbNodeType::kSwitch;
    node.description = std::string(text.substr(1, close - 1));
    node.where = problems_.Where(line);
    std::string vendor;
    std::string_view rest = text.substr(close + 1);
    std::vector<std::string_view> parts;
    while (ConsumePrefix(rest, ",")) {
      const size_t comma = rest.find(',');
      parts.push_back(StripBlanks(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma);
    }
    if (parts.size() != 3 || !StripBlanks(rest).empty()) {
      problems_.Add(line, text.substr(close + 1),
                    "node line is not '\"<description>\", <vendor>, <GUID>, LID <n>'; its rows "
                    "are skipped");
      return;
    }
    vendor = std::string(parts[0]);
    node.guid = ParseGuid(parts[1]);
    problems_.CheckGuid(line, node.guid, "node GUID");
    std::string_view lid = parts[2];
    if (!ConsumePrefix(lid, "LID") || !(node.lid = ParseUint32(lid))) {
      problems_.Add(line, parts[2], "not 'LID <n>'; the LID is left absent");
    }
    node_ = BlockNode{out_->nodes.size(), std::move(vendor)};
    out_->nodes.push_back(std::move(node));
  }

  int Column(std::string_view name) const {
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i] == name) return static_cast<int>(i);
    }
    return -1;
  }

  std::string_view Cell(const std::vector<std::string_view>& cells, std::string_view name) const {
    const int i = Column(name);
    return i >= 0 && static_cast<size_t>(i) < cells.size() ? cells[static_cast<size_t>(i)]
                                                           : std::string_view();
  }

  void ReadRow(const TextLine& line, std::string_view text) {
    std::vector<std::string_view> cells = SplitCells(text, columns_.size());
    if (cells.size() < 3) {
      problems_.Add(line, text, "not a port row (no ' : ' columns); skipped");
      return;
    }
    if (cells.size() < columns_.size()) {
      // A row cut short: its last cell may be cut too.
      problems_.Add(line, text.substr(text.size()),
                    Cat("row has ", static_cast<uint64_t>(cells.size()), " of ",
                        static_cast<uint64_t>(columns_.size()),
                        " columns (cut short?): its last cell is dropped, the rest kept"));
      cells.pop_back();
    }
    IbdiagnetNetDumpPort p;
    p.where = problems_.Where(line);
    if (extended_) {
      ReadExtNode(line, cells, p);
    } else {
      const IbNode& node = out_->nodes[node_->index];
      p.node_type = node.type;
      p.node_guid = node.guid;
      p.node_description = node.description;
      p.vendor = node_->vendor;
      p.lid = node.lid;
    }
    p.port_label = std::string(Cell(cells, "#"));
    if (const std::string_view n = Cell(cells, extended_ ? "#IB" : "IB#"); !n.empty()) {
      if (const std::optional<uint32_t> port = ParseUint32(n); port && *port <= 255) {
        p.port = static_cast<int>(*port);
      } else {
        problems_.Add(line, n, Cat("port number '", n, "' is not 0..255; row skipped"));
      }
    }
    if (!p.port) {
      if (Cell(cells, extended_ ? "#IB" : "IB#").empty()) {
        problems_.Add(line, text, "row without a port number; skipped");
      }
      return;
    }
    p.state = std::string(NotNa(Cell(cells, "Sta")));
    p.state_code = StateCode(p.state);
    p.phys_state = std::string(NotNa(Cell(cells, "PhysSta")));
    p.phys_state_code = PhysStateCode(p.phys_state);
    if (const std::string_view mtu = NotNa(Cell(cells, "MTU")); !mtu.empty()) {
      if (const std::optional<uint32_t> code = ParseUint32(mtu); code && *code <= 7) {
        p.mtu_code = static_cast<int>(*code);
      } else {
        problems_.Add(line, mtu, Cat("MTU '", mtu, "' is not an IBA MTU code; left absent"));
      }
    }
    p.speed = ReadSpeed(line, NotNa(Cell(cells, "LWA")), NotNa(Cell(cells, "LSA")));
    p.fec_mode = std::string(NotNa(Cell(cells, "FEC mode")));
    p.retransmission = std::string(NotNa(Cell(cells, extended_ ? "RTR" : "Retran")));
    if (extended_) {
      ReadExtNeighbour(line, cells, p);
      ReadBer(line, cells, p);
    } else {
      ReadNeighbour(line, cells, p);
    }
    if (IbNode* node = NodeOf(p.node_guid); node != nullptr) {
      node->num_ports = std::max(node->num_ports, *p.port);
    }
    out_->ports.push_back(std::move(p));
  }

  static std::string_view NotNa(std::string_view cell) {
    return IsNotAvailable(cell) ? std::string_view() : cell;
  }

  IbNode* NodeOf(const IbGuid& guid) {
    if (!guid.valid()) return nullptr;
    for (IbNode& n : out_->nodes) {
      if (n.guid.value == guid.value) return &n;
    }
    return nullptr;
  }

  IbLinkSpeed ReadSpeed(const TextLine& line, std::string_view width, std::string_view lane) {
    int lanes = 0;
    if (!width.empty()) {
      std::string_view w = width;
      if ((w.ends_with("x") || w.ends_with("X")) && w.size() > 1) w.remove_suffix(1);
      if (const std::optional<uint32_t> n = ParseUint32(w); n && *n >= 1 && *n <= 32) {
        lanes = static_cast<int>(*n);
      } else {
        problems_.Add(line, width, Cat("width '", width, "' is not '<n>x'; left absent"));
      }
    }
    std::string generation;
    if (!lane.empty()) {
      if (FindGeneration(lane) != nullptr) {
        generation = std::string(lane);  // "FDR10"
      } else if (const std::optional<double> gbps = ParseDouble(lane)) {
        const IbGeneration* g = GenerationOfLaneGbps(*gbps);
        generation = g != nullptr ? std::string(g->name) : std::string(lane);
        if (g == nullptr) {
          problems_.Add(line, lane, Cat("lane speed ", lane,
                                        " Gb/s is no InfiniBand generation's; kept as printed"));
        }
      } else {
        generation = std::string(lane);
        problems_.Add(line, lane, Cat("lane speed '", lane, "' is not Gb/s; kept as printed"));
      }
    }
    return MakeLinkSpeed(lanes, generation);
  }

  // net_dump: Neighbor Guid : N# : NLID : Neighbor Description
  void ReadNeighbour(const TextLine& line, const std::vector<std::string_view>& cells,
                     IbdiagnetNetDumpPort& p) {
    if (const std::string_view guid = NotNa(Cell(cells, "Neighbor Guid")); !guid.empty()) {
      p.neighbor_guid = ParseGuid(guid);
      problems_.CheckGuid(line, p.neighbor_guid, "neighbour GUID");
    }
    p.neighbor_port_label = std::string(NotNa(Cell(cells, "N#")));
    if (const std::string_view lid = NotNa(Cell(cells, "NLID")); !lid.empty()) {
      p.neighbor_lid = ParseUint32(lid);
      if (!p.neighbor_lid) problems_.Add(line, lid, Cat("NLID '", lid, "' is not a number"));
    }
    const std::string_view desc = NotNa(Cell(cells, "Neighbor Description"));
    bool unterminated = false;
    p.neighbor_description = std::string(UnquoteCell(desc, unterminated));
    if (unterminated) {
      problems_.Add(line, desc.substr(desc.size()),
                    "neighbour description without its closing quote (cut short?); kept");
    }
  }

  // net_dump_ext: Ty, GUID, LID and Node Desc describe the row's own node.
  void ReadExtNode(const TextLine& line, const std::vector<std::string_view>& cells,
                   IbdiagnetNetDumpPort& p) {
    const std::string_view type = Cell(cells, "Ty");
    if (type == "SW") {
      p.node_type = IbNodeType::kSwitch;
    } else if (type == "CA") {
      p.node_type = IbNodeType::kCa;
    } else if (type == "RT") {
      p.node_type = IbNodeType::kRouter;
    } else {
      problems_.Add(line, type, Cat("node type '", type, "' is not SW, CA or RT"));
    }
    if (const std::string_view guid = NotNa(Cell(cells, "GUID")); !guid.empty()) {
      p.node_guid = ParseGuid(guid);
      problems_.CheckGuid(line, p.node_guid, "GUID");
    }
    std::string label;
    p.lid = ReadLidCell(line, NotNa(Cell(cells, "LID")), label, true);
    const std::string_view desc = Cell(cells, "Node Desc");
    bool unterminated = false;
    p.node_description = std::string(UnquoteCell(desc, unterminated));
    if (unterminated) {
      problems_.Add(line, desc.substr(desc.size()),
                    "node description without its closing quote (cut short?); kept");
    }
    if (!p.node_guid.valid()) return;
    IbNode* node = NodeOf(p.node_guid);
    if (node == nullptr) {
      node = &out_->nodes.emplace_back();
      node->type = p.node_type;
      node->guid = p.node_guid;
      node->description = p.node_description;
      node->where = p.where;
      // A switch's ports share its LID; a CA's each have their own, kept on the rows.
      if (p.node_type == IbNodeType::kSwitch) node->lid = p.lid;
    }
  }

  // "24   (0x18 )" (own LID: the hex must agree) or "156   (B184D0F0/0/0/1)" (a neighbour's
  // LID and port label).
  std::optional<uint32_t> ReadLidCell(const TextLine& line, std::string_view cell,
                                      std::string& label, bool hex_inside) {
    if (cell.empty()) return std::nullopt;
    LineScanner s(cell);
    const std::optional<uint64_t> lid = s.Decimal();
    if (!lid || *lid > UINT32_MAX) {
      problems_.Add(line, cell, Cat("'", cell, "' does not start with a LID; left absent"));
      return std::nullopt;
    }
    s.SkipBlanks();
    if (s.Consume("(")) {
      std::optional<std::string_view> inside = s.Until(')');
      if (!inside) {
        problems_.Add(line, s.rest(), "'(' without ')' (cut short?)");
        inside = s.rest();
      }
      label = std::string(StripBlanks(*inside));
      if (hex_inside && ParseUnsigned(label) != *lid) {
        problems_.Add(line, cell, Cat("LID ", *lid, " and '(", label, ")' disagree; the decimal kept"));
      }
    }
    return static_cast<uint32_t>(*lid);
  }

  void ReadExtNeighbour(const TextLine& line, const std::vector<std::string_view>& cells,
                        IbdiagnetNetDumpPort& p) {
    std::string label;
    p.neighbor_lid = ReadLidCell(line, NotNa(Cell(cells, "Conn LID (#)")), label, false);
    p.neighbor_port_label = std::move(label);
  }

  void ReadBer(const TextLine& line, const std::vector<std::string_view>& cells,
               IbdiagnetNetDumpPort& p) {
    auto ber = [&](std::string_view column, std::optional<double>& field) {
      const std::string_view cell = NotNa(Cell(cells, column));
      if (cell.empty()) return;
      field = ParseDouble(cell);
      if (!field) problems_.Add(line, cell, Cat(column, " '", cell, "' is not a number"));
    };
    auto count = [&](std::string_view column, std::optional<uint64_t>& field) {
      const std::string_view cell = NotNa(Cell(cells, column));
      if (cell.empty()) return;
      field = ParseUnsigned(cell);
      if (!field) problems_.Add(line, cell, Cat(column, " '", cell, "' is not a count"));
    };
    ber("Raw BER", p.raw_ber);
    ber("Effective BER", p.effective_ber);
    ber("Symbol BER", p.symbol_ber);
    count("Symbol Err", p.symbol_errors);
    count("Effective Err", p.effective_errors);
  }

  // Neighbours' GUIDs (net_dump_ext: by LID), types, descriptions and port numbers (by label)
  // from the rows the file holds of them.
  void ResolveNeighbours() {
    std::map<uint32_t, uint64_t> guid_by_lid;
    std::map<std::pair<uint64_t, std::string>, int> port_by_label;
    std::map<uint64_t, const IbNode*> nodes;
    for (const IbNode& n : out_->nodes) {
      if (n.guid.value) nodes.emplace(*n.guid.value, &n);
    }
    for (const IbdiagnetNetDumpPort& p : out_->ports) {
      if (!p.node_guid.value) continue;
      if (p.lid && !IsUnassignedLid(*p.lid)) guid_by_lid.emplace(*p.lid, *p.node_guid.value);
      if (p.port) port_by_label.emplace(std::pair{*p.node_guid.value, p.port_label}, *p.port);
    }
    for (IbdiagnetNetDumpPort& p : out_->ports) {
      if (p.neighbor_guid.text.empty() && p.neighbor_lid) {
        if (auto it = guid_by_lid.find(*p.neighbor_lid); it != guid_by_lid.end()) {
          p.neighbor_guid = ParseGuid(GuidString(IbGuid{"", it->second}));
        }
      }
      if (!p.neighbor_guid.value) continue;
      if (auto it = nodes.find(*p.neighbor_guid.value); it != nodes.end()) {
        p.neighbor_type = it->second->type;
        if (p.neighbor_description.empty()) p.neighbor_description = it->second->description;
      }
      if (p.neighbor_port_label.empty()) continue;
      if (auto it = port_by_label.find({*p.neighbor_guid.value, p.neighbor_port_label});
          it != port_by_label.end()) {
        p.neighbor_port = it->second;
      } else if (const std::optional<uint32_t> n = ParseUint32(p.neighbor_port_label);
                 n && *n <= 255) {
        p.neighbor_port = static_cast<int>(*n);  // a label that is a port number ("1", "65")
      }
    }
  }

  struct BlockNode {
    size_t index = 0;  // into out_->nodes
    std::string vendor;
  };

  IbdiagnetNetDump* out_;
  ProblemSink problems_;
  std::vector<std::string> columns_;
  bool extended_ = false;
  std::optional<BlockNode> node_;  // net_dump: the block being read
};

}  // namespace

std::vector<IbLink> IbdiagnetNetDump::Links() const {
  std::vector<IbLink> links;
  for (const IbdiagnetNetDumpPort& p : ports) {
    if (!p.neighbor_guid.valid()) continue;
    IbLink& l = links.emplace_back();
    l.local.type = p.node_type;
    l.local.node_guid = p.node_guid;
    l.local.port = p.port.value_or(0);
    l.local.port_label = p.port_label;
    l.local.lid = p.lid;
    l.local.description = p.node_description;
    IbLinkEnd& peer = l.peer.emplace();
    peer.type = p.neighbor_type;
    peer.node_guid = p.neighbor_guid;
    peer.port = p.neighbor_port.value_or(0);
    peer.port_label = p.neighbor_port_label;
    peer.lid = p.neighbor_lid;
    peer.description = p.neighbor_description;
    l.speed = p.speed;
    l.where = p.where;
  }
  return links;
}

IbdiagnetNetDump ParseIbdiagnetNetDump(std::string_view text, std::string_view source) {
  IbdiagnetNetDump out;
  NetDumpReader reader(source, &out);
  for (const TextLine& line : SplitLines(text)) reader.Read(line);
  reader.Finish();
  return out;
}

}  // namespace railwatch::ib
