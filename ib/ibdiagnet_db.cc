// ibdiagnet2.db_csv: the sections as text. The records made from them are in
// ibdiagnet_db_records.cc.
#include "ib/ibdiagnet_db.h"

#include <utility>

#include "ib/ib_text.h"
#include "ib/ibdiagnet_db_internal.h"

namespace railwatch::ib {
namespace {

// One CSV line: commas separate, double quotes protect commas, "" is a quote.
std::vector<std::string> SplitCsv(std::string_view line, bool& unterminated) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back().push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back().push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back().push_back(c);
    }
  }
  unterminated = quoted;
  return fields;
}

class SectionReader {
 public:
  SectionReader(std::string_view source, IbdiagnetDb* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    const std::string_view text = line.text;
    if (current_ == nullptr) return ReadOutside(line, text);
    if (text.starts_with("END_")) {
      if (text.substr(4) != current_->name) {
        problems_.AddAtStart(line, Cat("END_", text.substr(4), " closes START_", current_->name));
      }
      current_ = nullptr;
      return;
    }
    if (IsBlankLine(text)) return;
    bool unterminated = false;
    std::vector<std::string> fields = SplitCsv(text, unterminated);
    if (unterminated) problems_.AddAtStart(line, "unterminated quote; the row ends the line");
    if (!header_read_) {
      for (std::string& f : fields) f = std::string(StripBlanks(f));
      current_->header = std::move(fields);
      header_read_ = true;
      return;
    }
    if (fields.size() != current_->header.size()) {
      problems_.AddAtStart(line,
                           Cat(current_->name, " row has ", fields.size(), " fields, its header ",
                               current_->header.size(), "; row skipped"));
      return;
    }
    current_->rows.push_back(std::move(fields));
    current_->row_lines.push_back(line.number);
  }

  void Finish() {
    if (current_ != nullptr) {
      out_->problems.push_back({Cat(current_->where, ":1"),
                                Cat("START_", current_->name, " never ends; its rows are kept")});
    }
  }

 private:
  void ReadOutside(const TextLine& line, std::string_view text) {
    if (IsBlankLine(text) || text.starts_with("#")) return;
    if (!text.starts_with("START_") || text.size() == 6) {
      problems_.AddAtStart(line, "not in a START_/END_ section; skipped");
      return;
    }
    DbCsvSection section;
    section.name = std::string(StripBlanks(text.substr(6)));
    section.where = problems_.Where(line);
    out_->sections.push_back(std::move(section));
    current_ = &out_->sections.back();
    header_read_ = false;
  }

  IbdiagnetDb* out_;
  ProblemSink problems_;
  DbCsvSection* current_ = nullptr;  // into out_->sections, which grows only when it is null
  bool header_read_ = false;
};

// The INDEX_TABLE's row counts against what was read: a mismatch means a cut or edited file.
void CheckIndexTable(IbdiagnetDb& db) {
  const DbCsvSection* index = db.Section("INDEX_TABLE");
  if (index == nullptr) return;
  const ColumnIndex columns(*index);
  for (size_t i = 0; i < index->rows.size(); ++i) {
    const std::string_view name = StripBlanks(columns.Get(index->rows[i], "Name"));
    const std::optional<uint64_t> rows = ParseUnsigned(columns.Get(index->rows[i], "Rows"));
    const DbCsvSection* section = db.Section(name);
    if (section == nullptr || !rows || section->rows.size() == *rows) continue;
    db.problems.push_back(
        {Cat(section->where, ":1"),
         Cat("INDEX_TABLE gives ", name, " ", *rows, " rows, the file ", section->rows.size())});
  }
}

}  // namespace

const DbCsvSection* IbdiagnetDb::Section(std::string_view name) const {
  for (const DbCsvSection& s : sections) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

IbdiagnetDb ParseIbdiagnetDbCsv(std::string_view text, std::string_view source) {
  IbdiagnetDb db;
  SectionReader reader(source, &db);
  for (const TextLine& line : SplitLines(text)) reader.Read(line);
  reader.Finish();
  CheckIndexTable(db);
  ReadDbRecords(source, db);
  return db;
}

}  // namespace railwatch::ib
