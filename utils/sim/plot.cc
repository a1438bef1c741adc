#include "utils/sim/plot.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace pvfs::sim {
namespace {

Status write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Status(Errc::io, "cannot write " + path.string());
  return ok_status();
}

}  // namespace

std::string gnuplot_script(std::string_view stem, const Report& report, std::string_view comment) {
  std::string out;
  size_t start = 0;
  while (start < comment.size()) {
    const size_t nl = comment.find('\n', start);
    const std::string_view line =
        comment.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    out += fmt::format("# {}\n", line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out += fmt::format("# Draws {0}.png and {0}.svg from the CSV files beside it: gnuplot {0}.gp\n\n", stem);
  const int w = report.plot_width, h = report.plot_height;
  out += fmt::format(
      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {{\n"
      "  set terminal pngcairo size {0},{1} noenhanced font ',10'\n"
      "}} else {{\n"
      "  set terminal png size {0},{1} noenhanced\n"
      "}}\n",
      w, h);
  // `reset` keeps terminal and output, so each pass starts from the same
  // state.
  auto pass = [&](std::string_view extension) {
    out += fmt::format("set output '{}.{}'\nreset\nset datafile separator ','\n", stem, extension);
    out += report.plot;
    if (!report.plot.empty() && report.plot.back() != '\n') out += '\n';
    out += "unset multiplot\nset output\n";
  };
  pass("png");
  out += fmt::format("\nset terminal svg size {},{} noenhanced dynamic font 'sans,10'\n", w, h);
  pass("svg");
  return out;
}

Status write_report(const std::filesystem::path& dir, std::string_view stem, const Report& report,
                    std::string_view comment) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Errc::io, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  for (const Table& t : report.csv)
    if (Status st = write_file(dir / (t.name() + ".csv"), t.csv()); !st.ok()) return st;
  return write_file(dir / (std::string(stem) + ".gp"), gnuplot_script(stem, report, comment));
}

std::optional<std::filesystem::path> find_gnuplot() {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest = path;
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view entry = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
    if (entry.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(entry) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

Status render(const std::filesystem::path& gnuplot, const std::filesystem::path& dir, std::string_view stem) {
  const std::string script = std::string(stem) + ".gp";
  const pid_t pid = ::fork();
  if (pid < 0) return Status(Errc::io, fmt::format("cannot start gnuplot: {}", std::strerror(errno)));
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    ::execl(gnuplot.c_str(), "gnuplot", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return Status(Errc::io, fmt::format("waiting for gnuplot: {}", std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status(Errc::io, fmt::format("gnuplot {} failed in {}", script, dir.string()));
  return ok_status();
}

}  // namespace pvfs::sim
