// Puts a Report on disk: one CSV per table and a gnuplot script that draws
// the figure as PNG and SVG, then runs gnuplot when it is installed. The
// only part of the simulator that touches files or starts processes.
// Not thread-safe only in that two runs must not share a directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "shared/status.h"
#include "utils/sim/report.h"

namespace pvfs::sim {

// The whole script: `comment` (how the data was made) as comment lines,
// then the report's plot body twice, drawing <stem>.png and <stem>.svg in
// the current directory (pngcairo when gnuplot has it, else png).
std::string gnuplot_script(std::string_view stem, const Report& report, std::string_view comment);

// Writes every table as dir/<name>.csv and the script as dir/<stem>.gp,
// creating dir. io with the path on failure.
Status write_report(const std::filesystem::path& dir, std::string_view stem, const Report& report,
                    std::string_view comment);

// gnuplot on $PATH, or nullopt.
std::optional<std::filesystem::path> find_gnuplot();

// Runs `gnuplot <stem>.gp` in `dir` and waits. io when it cannot start or
// exits non-zero (its own messages go to stderr).
Status render(const std::filesystem::path& gnuplot, const std::filesystem::path& dir, std::string_view stem);

}  // namespace pvfs::sim
