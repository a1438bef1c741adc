#include "utils/sim/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "shared/status.h"

namespace pvfs::sim {

std::string num(double value, int decimals) {
  std::string s = fmt::format("{:.{}f}", value, decimals);
  // -0.000 and 0.000 are the same number; print it one way.
  if (s.front() == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

std::string num(int64_t value) {
  return fmt::format("{}", value);
}
std::string num(uint64_t value) {
  return fmt::format("{}", value);
}

void Table::add(std::vector<std::string> row) {
  PVFS_CHECK(row.size() == columns_.size());
  rows_.push_back(std::move(row));
}

std::string Table::csv() const {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      PVFS_CHECK(cells[i].find_first_of(",\n") == std::string::npos);
      if (i) out += ',';
      out += cells[i];
    }
    out += '\n';
  };
  line(columns_);
  for (const auto& row : rows_) line(row);
  return out;
}

std::string Table::pretty() const {
  std::vector<size_t> width(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) width[i] = columns_[i].size();
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i)
      out += fmt::format("{}{:>{}}", i ? "  " : "", cells[i], width[i]);
    out += '\n';
  };
  line(columns_);
  for (const auto& row : rows_) line(row);
  return out;
}

const Table* Report::find(std::string_view name) const {
  for (const Table& t : csv)
    if (t.name() == name) return &t;
  return nullptr;
}

}  // namespace pvfs::sim
