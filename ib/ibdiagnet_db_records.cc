// ibdiagnet2.db_csv: records from the sections this library knows (see ibdiagnet_db.h).
#include <array>
#include <map>
#include <utility>

#include "ib/ib_text.h"
#include "ib/ibdiagnet_db.h"
#include "ib/ibdiagnet_db_internal.h"
#include "ib/ibdiagnet_pm_names.h"

namespace railwatch::ib {
namespace {

constexpr std::array<std::string_view, 5> kRecordSections = {"NODES", "PORTS", "LINKS", "PM_INFO",
                                                             "TEMP_SENSING"};

std::string Where(std::string_view source, const DbCsvSection& section, size_t row) {
  return Cat(source, ":", section.row_lines[row], ":1");
}

IbNodeType NodeTypeOfCode(std::optional<uint32_t> code) {
  if (code == 1u) return IbNodeType::kCa;
  if (code == 2u) return IbNodeType::kSwitch;
  if (code == 3u) return IbNodeType::kRouter;
  return IbNodeType::kUnknown;
}

// LinkWidthActv: IBA's width bits (1 1x, 2 4x, 4 8x, 8 12x, 16 2x).
int LanesOfWidthCode(std::optional<uint32_t> code) {
  switch (code.value_or(0)) {
    case 1:
      return 1;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    case 16:
      return 2;
  }
  return 0;
}

void ReadNodes(std::string_view source, const DbCsvSection& s, IbdiagnetDb& db) {
  const ColumnIndex c(s);
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const std::vector<std::string>& row = s.rows[i];
    IbNode node;
    node.description = std::string(c.Get(row, "NodeDesc"));
    node.type = NodeTypeOfCode(ParseUint32(c.Get(row, "NodeType")));
    node.num_ports = static_cast<int>(ParseUint32(c.Get(row, "NumPorts")).value_or(0));
    node.guid = ParseGuid(c.Get(row, "NodeGUID"));
    node.system_image_guid = ParseGuid(c.Get(row, "SystemImageGUID"));
    node.device_id = ParseUint32(c.Get(row, "DeviceID"));
    node.vendor_id = ParseUint32(c.Get(row, "VendorID"));
    node.where = Where(source, s, i);
    if (!node.guid.valid()) {
      db.problems.push_back({node.where, Cat("NodeGUID '", node.guid.text, "' is not hex")});
    }
    db.nodes.push_back(std::move(node));
  }
}

void ReadPorts(const DbCsvSection& s, IbdiagnetDb& db) {
  const ColumnIndex c(s);
  for (const std::vector<std::string>& row : s.rows) {
    IbdiagnetPort port;
    port.node_guid = ParseGuid(c.Get(row, "NodeGuid"));
    port.port_guid = ParseGuid(c.Get(row, "PortGuid"));
    port.port = static_cast<int>(ParseUint32(c.Get(row, "PortNum")).value_or(0));
    port.lid = ParseUint32(c.Get(row, "LID"));
    if (std::optional<uint32_t> state = ParseUint32(c.Get(row, "PortState"))) port.state = *state;
    if (std::optional<uint32_t> phys = ParseUint32(c.Get(row, "PortPhyState"))) {
      port.phys_state = *phys;
    }
    const std::optional<uint32_t> packed = ParseUint32(c.Get(row, "LinkSpeedActv"));
    const std::string_view generation = packed ? GenerationOfPackedSpeed(*packed) : "";
    port.speed =
        MakeLinkSpeed(LanesOfWidthCode(ParseUint32(c.Get(row, "LinkWidthActv"))), generation);
    db.ports.push_back(std::move(port));
  }
}

IbLinkEnd EndOf(std::string_view guid, std::string_view port,
                const std::map<uint64_t, const IbNode*>& nodes) {
  IbLinkEnd end;
  end.node_guid = ParseGuid(guid);
  end.port = static_cast<int>(ParseUint32(port).value_or(0));
  if (end.node_guid.value) {
    if (auto it = nodes.find(*end.node_guid.value); it != nodes.end()) {
      end.type = it->second->type;
      end.description = it->second->description;
    }
  }
  return end;
}

void ReadLinks(std::string_view source, const DbCsvSection& s, IbdiagnetDb& db) {
  std::map<uint64_t, const IbNode*> nodes;
  for (const IbNode& node : db.nodes) {
    if (node.guid.value) nodes.emplace(*node.guid.value, &node);
  }
  // A CA port's own GUID from PORTS: what its host knows it by (GID 0), and so how the
  // fabric map finds the host agent's NIC at the far end of a leaf port.
  std::map<std::pair<uint64_t, int>, IbGuid> ca_port_guids;
  for (const IbdiagnetPort& p : db.ports) {
    if (!p.node_guid.value || !p.port_guid.value) continue;
    auto node = nodes.find(*p.node_guid.value);
    if (node != nodes.end() && node->second->type == IbNodeType::kCa) {
      ca_port_guids.emplace(std::pair{*p.node_guid.value, p.port}, p.port_guid);
    }
  }
  auto with_port_guid = [&ca_port_guids](IbLinkEnd end) {
    if (end.node_guid.value) {
      auto it = ca_port_guids.find({*end.node_guid.value, end.port});
      if (it != ca_port_guids.end()) end.port_guid = it->second;
    }
    return end;
  };
  const ColumnIndex c(s);
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const std::vector<std::string>& row = s.rows[i];
    IbLink link;
    link.local = with_port_guid(EndOf(c.Get(row, "NodeGuid1"), c.Get(row, "PortNum1"), nodes));
    link.peer = with_port_guid(EndOf(c.Get(row, "NodeGuid2"), c.Get(row, "PortNum2"), nodes));
    link.where = Where(source, s, i);
    db.links.push_back(std::move(link));
  }
}

void ReadPmInfo(std::string_view source, const DbCsvSection& s, IbdiagnetDb& db) {
  std::map<uint64_t, std::string> descriptions;
  for (const IbNode& node : db.nodes) {
    if (node.guid.value) descriptions.emplace(*node.guid.value, node.description);
  }
  std::vector<std::optional<IbdiagnetPmName>> columns;
  for (const std::string& h : s.header) columns.push_back(IbdiagnetPmCounter(h));
  const ColumnIndex c(s);
  constexpr std::array<PmaAttribute, 4> kAttributes = {
      PmaAttribute::kPortCounters, PmaAttribute::kPortCountersExtended,
      PmaAttribute::kPortRcvErrorDetails, PmaAttribute::kPortXmitDiscardDetails};
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const std::vector<std::string>& row = s.rows[i];
    std::array<IbPortCounters, 4> records;
    for (size_t a = 0; a < records.size(); ++a) {
      IbPortCounters& r = records[a];
      r.attribute = kAttributes[a];
      r.node_guid = ParseGuid(c.Get(row, "NodeGUID"));
      r.guid = ParseGuid(c.Get(row, "PortGUID"));
      if (std::optional<uint32_t> port = ParseUint32(c.Get(row, "PortNumber"))) {
        r.port = static_cast<int>(*port);
      }
      if (r.node_guid.value) {
        if (auto it = descriptions.find(*r.node_guid.value); it != descriptions.end()) {
          r.node_description = it->second;
        }
      }
      r.where = Where(source, s, i);
    }
    for (size_t col = 0; col < columns.size() && col < row.size(); ++col) {
      if (!columns[col]) continue;
      const PmaAttribute attribute = columns[col]->attribute;
      const std::string& name = columns[col]->name;
      const std::optional<uint64_t> value = ParseUnsigned(row[col]);
      if (!value) continue;  // N/A, -1: not supported, so absent
      if (attribute == PmaAttribute::kPortCountersExtended && *value >= kImplausibleCounter64) {
        db.problems.push_back(
            {Where(source, s, i),
             Cat(s.header[col], " = ", *value, " is implausible for a 64-bit counter; dropped")});
        continue;
      }
      for (IbPortCounters& r : records) {
        if (r.attribute == attribute) r.counters[name] = MakeCounter(attribute, name, *value);
      }
    }
    for (IbPortCounters& r : records) {
      if (!r.counters.empty()) db.counters.push_back(std::move(r));
    }
  }
}

void ReadTemperatures(std::string_view source, const DbCsvSection& s, IbdiagnetDb& db) {
  const ColumnIndex c(s);
  for (size_t i = 0; i < s.rows.size(); ++i) {
    const std::optional<double> celsius = ParseDouble(c.Get(s.rows[i], "CurrentTemperature"));
    if (!celsius) {
      db.problems.push_back({Where(source, s, i), "CurrentTemperature is not a number"});
      continue;
    }
    db.temperatures.push_back({ParseGuid(c.Get(s.rows[i], "NodeGUID")), *celsius});
  }
}

}  // namespace

std::string_view GenerationOfPackedSpeed(uint32_t packed) {
  const uint32_t regular = packed & 0xff;
  const uint32_t extended = (packed >> 8) & 0xff;
  const uint32_t mellanox = (packed >> 16) & 0xff;
  if (extended & 16) return "XDR";
  if (extended & 8) return "NDR";
  if (extended & 4) return "HDR";
  if (extended & 2) return "EDR";
  if (extended & 1) return "FDR";
  if (mellanox & 1) return "FDR10";
  if (regular & 4) return "QDR";
  if (regular & 2) return "DDR";
  if (regular & 1) return "SDR";
  return "";
}

void ReadDbRecords(std::string_view source, IbdiagnetDb& db) {
  // NODES first: links and counters take their ends' names from it.
  if (const DbCsvSection* s = db.Section("NODES")) ReadNodes(source, *s, db);
  if (const DbCsvSection* s = db.Section("PORTS")) ReadPorts(*s, db);
  if (const DbCsvSection* s = db.Section("LINKS")) ReadLinks(source, *s, db);
  if (const DbCsvSection* s = db.Section("PM_INFO")) ReadPmInfo(source, *s, db);
  if (const DbCsvSection* s = db.Section("TEMP_SENSING")) ReadTemperatures(source, *s, db);
  for (const DbCsvSection& s : db.sections) {
    bool known = false;
    for (std::string_view name : kRecordSections) known |= s.name == name;
    if (!known) db.skipped_sections.push_back(s.name);
  }
}

}  // namespace railwatch::ib
