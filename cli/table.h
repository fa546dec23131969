#pragma once

#include <string>
#include <vector>

namespace railwatch {

// A plain-text table with a header row and columns padded to their widest cell; the last
// column is not padded so that long summaries do not leave trailing blanks.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;
  size_t rows() const { return rows_.size() - 1; }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace railwatch
