// What a scenario run produces, as values: CSV tables, the body of a
// gnuplot script that plots them, and a short summary table for the
// console. Writing them to disk and running gnuplot is plot.h's job, so
// tests can check a run without touching the file system. Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pvfs::sim {

// Formats a number for a CSV cell or a table: fixed with `decimals`
// decimals ("-0" printed as "0"), so equal runs give equal bytes.
std::string num(double value, int decimals);
std::string num(int64_t value);
std::string num(uint64_t value);
inline std::string num(int value) {
  return num(static_cast<int64_t>(value));
}
inline std::string num(uint32_t value) {
  return num(static_cast<uint64_t>(value));
}

// A table of text cells with named columns.
class Table {
 public:
  Table() = default;
  // `name` is the file stem the CSV is written under (name.csv).
  Table(std::string name, std::vector<std::string> columns)
      : name_(std::move(name)), columns_(std::move(columns)) {}

  // Appends a row; it must have one cell per column (checked).
  void add(std::vector<std::string> row);

  const std::string& name() const { return name_; }
  const std::vector<std::string>& columns() const { return columns_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  // RFC 4180-ish CSV: a header line, then one line per row, "\n" endings.
  // Cells are never quoted: they must not contain commas or newlines
  // (checked).
  std::string csv() const;
  // Right-aligned columns separated by two spaces, for a terminal.
  std::string pretty() const;

 private:
  std::string name_;
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

struct Report {
  std::vector<Table> csv;  // written as <name>.csv
  // gnuplot commands drawing the figure from the CSV files (by name,
  // relative to the output directory). Terminal and output are set by
  // the caller, which runs the body once for PNG and once for SVG.
  std::string plot;
  int plot_width = 1200;  // pixels
  int plot_height = 800;
  Table summary;                   // printed after a run
  std::vector<std::string> notes;  // printed after the summary, one per line

  // The table named `name`, or nullptr.
  const Table* find(std::string_view name) const;
};

}  // namespace pvfs::sim
