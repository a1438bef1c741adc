#include "utils/sim/scenario.h"

namespace pvfs::sim {

std::vector<Scenario> all_scenarios() {
  return {two_choice_stragglers(), obrr_throughput(), obrr_deadlines(), anu_heterogeneous(), ushape_qos(),
          bb_serialization()};
}

const Scenario* find_scenario(const std::vector<Scenario>& scenarios, std::string_view name) {
  for (const Scenario& s : scenarios)
    if (s.name == name) return &s;
  return nullptr;
}

Result<Report> run_scenario(const Scenario& scenario, const RunOptions& options) {
  auto params = Params::make(scenario.params, options.quick, options.params);
  if (!params) return params.status();
  return scenario.run(*params, options.seed);
}

}  // namespace pvfs::sim
