// The scenarios pvfs-sim knows, as plain values: a name, a line for
// `pvfs-sim list`, typed parameters with the papers' values as defaults,
// and a function from parameters and seed to a Report. Each scenario lives
// in its own .cc and drives the project's own policy objects; this header
// only lists them. The list is built on each call: no global registry.
// Pure (no I/O); a run is a deterministic function of (params, seed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"
#include "utils/sim/params.h"
#include "utils/sim/report.h"

namespace pvfs::sim {

struct Scenario {
  std::string name;
  std::string title;  // one line: the paper's experiment it reproduces
  std::vector<ParamSpec> params;
  // Runs the experiment. invalid_argument for parameters out of range.
  Result<Report> (*run)(const Params& params, uint64_t seed) = nullptr;
};

// Two-choice paper, Fig. 3 and 4 (two_choice_stragglers.cc).
Scenario two_choice_stragglers();
// OBRR paper, Fig. 5 and Table 1 (obrr_throughput.cc).
Scenario obrr_throughput();
// OBRR paper, Fig. 6 (obrr_deadlines.cc).
Scenario obrr_deadlines();
// ANU paper, Fig. 8-11 (anu_heterogeneous.cc).
Scenario anu_heterogeneous();
// U-Shape paper, Tables 1 and 2, Fig. 4 (ushape_qos.cc).
Scenario ushape_qos();
// Burst-buffer interference paper, Fig. 11 and 12 (bb_serialization.cc).
Scenario bb_serialization();

// Every scenario, in the order `pvfs-sim list` shows them.
std::vector<Scenario> all_scenarios();
// The scenario called `name` in `scenarios`, or nullptr.
const Scenario* find_scenario(const std::vector<Scenario>& scenarios, std::string_view name);

struct RunOptions {
  uint64_t seed = 1;
  bool quick = false;               // the scaled-down defaults
  std::vector<std::string> params;  // "key=value" overrides
};

// Makes the parameters and runs `scenario`: what `pvfs-sim run` does
// before writing files, and what the tests call.
Result<Report> run_scenario(const Scenario& scenario, const RunOptions& options);

}  // namespace pvfs::sim
