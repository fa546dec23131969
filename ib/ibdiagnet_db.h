#pragma once

// ibdiagnet's `ibdiagnet2.db_csv`: sections of CSV, each
//
//   START_<NAME>
//   <header row>
//   <rows>
//   END_<NAME>
//
// two blank lines between sections, "#" comment lines between them (the first line points at
// the INDEX_TABLE, a note explains the packed LinkSpeed fields), and a final INDEX_TABLE with
// each section's byte offset, line and row count. Which sections appear depends on the run's
// --skip and plugins. Every section is kept as text (`sections`); NODES, PORTS, LINKS, PM_INFO
// and TEMP_SENSING are also read into records. Any other section is skipped (counted in
// `skipped_sections`), never an error. Values are decimal, 0x hex, N/A or -1 (unsupported):
// the last two are absent, not zero. Quoted fields may hold commas.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct DbCsvSection {
  std::string name;                            // NODES, PM_INFO, ... (without START_)
  std::vector<std::string> header;             // column names, outer blanks stripped
  std::vector<std::vector<std::string>> rows;  // fields, unquoted
  std::vector<int> row_lines;                  // each row's line number
  std::string where;                           // source:line of START_<name>
};

// One PORTS row: a port's state and its active width and speed.
struct IbdiagnetPort {
  IbGuid node_guid;
  IbGuid port_guid;
  int port = 0;
  std::optional<uint32_t> lid;
  std::optional<int> state;       // IBA PortState: 4 Active
  std::optional<int> phys_state;  // IBA PortPhysicalState: 5 LinkUp
  IbLinkSpeed speed;              // from LinkWidthActv and the packed LinkSpeedActv
};

struct IbdiagnetTemperature {
  IbGuid node_guid;
  double celsius = 0;
};

struct IbdiagnetDb {
  std::vector<DbCsvSection> sections;  // every section, in file order
  std::vector<IbNode> nodes;           // NODES
  std::vector<IbdiagnetPort> ports;    // PORTS
  std::vector<IbLink> links;           // LINKS, ends described from NODES
  // PM_INFO: per port, one record per attribute the row carries: PortCounters (the plain
  // columns), PortCountersExtended (the *Extended / *Ext columns, under their PMA names),
  // PortRcvErrorDetails and PortXmitDiscardDetails.
  std::vector<IbPortCounters> counters;
  std::vector<IbdiagnetTemperature> temperatures;  // TEMP_SENSING
  std::vector<std::string> skipped_sections;       // read as text only
  std::vector<IbProblem> problems;

  const DbCsvSection* Section(std::string_view name) const;
};

IbdiagnetDb ParseIbdiagnetDbCsv(std::string_view text, std::string_view source);

// LinkSpeedActv as ibdiagnet packs it: byte 0 the regular speed bits (SDR 1, DDR 2, QDR 4),
// byte 1 the extended ones (FDR 1, EDR 2, HDR 4, NDR 8, XDR 16), byte 2 Mellanox's (FDR10 1).
// The fastest set bit names the generation; "" when none is set.
std::string_view GenerationOfPackedSpeed(uint32_t packed);

}  // namespace railwatch::ib
