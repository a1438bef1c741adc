// pvfs-sim: runs the papers' experiments against the project's own policy
// objects (see pvfs-sim(1) and docs/sim/). Parses the command line, runs a
// scenario from utils/sim, writes its CSV files and gnuplot script, draws
// the figure when gnuplot is installed and prints the summary.
// Exit status: 0 success, 1 failure, 2 bad usage.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "shared/usage_error.h"
#include "utils/sim/plot.h"
#include "utils/sim/scenario.h"

namespace {

namespace sim = pvfs::sim;

std::string_view type_name(sim::ParamType type) {
  switch (type) {
    case sim::ParamType::integer: return "integer";
    case sim::ParamType::number: return "number";
    case sim::ParamType::numbers: return "numbers";
    case sim::ParamType::words: return "names";
  }
  return "?";
}

int list(const std::vector<sim::Scenario>& scenarios, const std::string& name) {
  if (name.empty()) {
    for (const sim::Scenario& s : scenarios) fmt::print("{:<24} {}\n", s.name, s.title);
    return 0;
  }
  const sim::Scenario* s = sim::find_scenario(scenarios, name);
  if (!s) {
    fmt::print(stderr, "pvfs-sim: no scenario '{}' (pvfs-sim list names them)\n", name);
    return 2;
  }
  fmt::print("{}: {}\n\n", s->name, s->title);
  sim::Table t("", {"parameter", "type", "default", "--quick", "meaning"});
  for (const sim::ParamSpec& p : s->params)
    t.add({p.key, std::string(type_name(p.type)), p.full, p.quick.empty() ? p.full : p.quick, p.help});
  // Left-aligned text reads better here than Table::pretty()'s numbers.
  std::vector<size_t> width(5);
  for (const auto& row : t.rows())
    for (size_t i = 0; i < 4; ++i) width[i] = std::max(width[i], row[i].size());
  for (size_t i = 0; i < 4; ++i) width[i] = std::max(width[i], t.columns()[i].size());
  auto line = [&](const std::vector<std::string>& row) {
    fmt::print("{:<{}}  {:<{}}  {:<{}}  {:<{}}  {}\n", row[0], width[0], row[1], width[1], row[2], width[2],
               row[3], width[3], row[4]);
  };
  line(t.columns());
  for (const auto& row : t.rows()) line(row);
  return 0;
}

int run(const std::vector<sim::Scenario>& scenarios, const std::string& name, const sim::RunOptions& options,
        std::string out_dir, bool plot) {
  const sim::Scenario* s = sim::find_scenario(scenarios, name);
  if (!s) {
    fmt::print(stderr, "pvfs-sim: no scenario '{}' (pvfs-sim list names them)\n", name);
    return 2;
  }
  const auto started = std::chrono::steady_clock::now();
  auto report = sim::run_scenario(*s, options);
  if (!report) {
    fmt::print(stderr, "pvfs-sim: {}\n", report.status().detail());
    return report.code() == pvfs::Errc::invalid_argument ? 2 : 1;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::string command =
      fmt::format("pvfs-sim run {} --seed {}{}", name, options.seed, options.quick ? " --quick" : "");
  for (const std::string& p : options.params) command += " --param " + p;
  auto params = sim::Params::make(s->params, options.quick, options.params);
  std::string comment = "Made by: " + command + "\nParameters:";
  for (const std::string& p : params->describe()) comment += " " + p;

  if (out_dir.empty()) out_dir = "sim-out/" + name;
  if (pvfs::Status st = sim::write_report(out_dir, name, *report, comment); !st.ok()) {
    fmt::print(stderr, "pvfs-sim: {}\n", st.detail());
    return 1;
  }
  fmt::print("{}{}", report->summary.pretty(), report->notes.empty() ? "" : "\n");
  for (const std::string& note : report->notes) fmt::print("{}\n", note);
  fmt::print("\nsimulated in {:.1f} s; CSV and {}.gp in {}\n", seconds, name, out_dir);
  if (!plot) return 0;
  const auto gnuplot = sim::find_gnuplot();
  if (!gnuplot) {
    fmt::print("gnuplot not found: no figure drawn (install gnuplot-nox, then run gnuplot {}.gp in {})\n",
               name, out_dir);
    return 0;
  }
  if (pvfs::Status st = sim::render(*gnuplot, out_dir, name); !st.ok()) {
    fmt::print(stderr, "pvfs-sim: {}\n", st.detail());
    return 1;
  }
  fmt::print("figure: {0}/{1}.png and {0}/{1}.svg\n", out_dir, name);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<sim::Scenario> scenarios = sim::all_scenarios();
  CLI::App app{
      "pvfs-sim: deterministic discrete-event simulations of the papers' experiments,\n"
      "driving pvfs's own scheduling and placement policies. See pvfs-sim(1).",
      "pvfs-sim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PVFS_VERSION);

  std::string list_name;
  auto* list_cmd = app.add_subcommand("list", "name the scenarios, or show one scenario's parameters");
  list_cmd->add_option("scenario", list_name, "a scenario whose parameters to show");

  std::string run_name, out_dir;
  sim::RunOptions options;
  bool no_plot = false;
  auto* run_cmd = app.add_subcommand("run", "run one scenario, write CSV and the figure, print a summary");
  run_cmd->add_option("scenario", run_name, "scenario to run (see pvfs-sim list)")->required();
  run_cmd->add_option("--seed", options.seed, "random seed; the same seed gives the same CSV [1]");
  run_cmd->add_option("-p,--param", options.params, "override a parameter: key=value (repeatable)");
  run_cmd->add_option("-o,--out", out_dir, "output directory [./sim-out/SCENARIO]");
  run_cmd->add_flag("-q,--quick", options.quick, "scaled-down parameters: seconds instead of minutes");
  run_cmd->add_flag("--no-plot", no_plot, "write the CSV and the gnuplot script but do not run gnuplot");

  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app, argc, argv, "pvfs-sim")) return *code;
  if (*list_cmd) return list(scenarios, list_name);
  return run(scenarios, run_name, options, out_dir, !no_plot);
}
