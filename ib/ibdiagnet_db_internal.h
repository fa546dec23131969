#pragma once

// Shared by ibdiagnet_db.cc (sections) and ibdiagnet_db_records.cc (records); internal to ib/.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ibdiagnet_db.h"

namespace railwatch::ib {

// A section's columns by name: sections name the same thing differently (NodeGuid, NodeGUID),
// so readers ask for the names they know and get "" for a column the section lacks.
class ColumnIndex {
 public:
  explicit ColumnIndex(const DbCsvSection& section) : header_(section.header) {}
  std::string_view Get(const std::vector<std::string>& row, std::string_view column) const {
    for (size_t i = 0; i < header_.size() && i < row.size(); ++i) {
      if (header_[i] == column) return row[i];
    }
    return "";
  }
  bool Has(std::string_view column) const {
    for (const std::string& h : header_) {
      if (h == column) return true;
    }
    return false;
  }

 private:
  const std::vector<std::string>& header_;
};

// NODES, PORTS, LINKS, PM_INFO, TEMP_SENSING into records; the rest into skipped_sections.
void ReadDbRecords(std::string_view source, IbdiagnetDb& db);

}  // namespace railwatch::ib
