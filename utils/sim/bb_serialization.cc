// Scenario bb-serialization: the burst-buffer interference paper's
// simulation (Thapaliya et al., §III-B and §VII, Tables I-III, Fig. 11 and
// 12). 128 burst-buffer nodes of 5 GB/s; each node's bandwidth is divided
// among the I/O processes of the jobs writing to it (linear model, §III-B4);
// a job's I/O step ends when its data is on every one of its nodes. The
// order in which steps get tokens is the daemons' own scheduler
// (policy/iosched), under none (the paper's NS), fcfs, sjf and the
// sharing-aware variants of Algorithm 1. What this file models is the
// nodes, the jobs of Table II, the mixes of Table III and the round-robin
// allocation of nodes to jobs.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "policy/iosched/scheduler.h"
#include "utils/sim/random.h"
#include "utils/sim/scenario.h"

namespace pvfs::sim {
namespace {

constexpr uint32_t kNodes = 128;  // §VII-A: "the number of BB nodes ... to 128"

// Table II. The data per BB node is computed (processes x data per
// process / nodes); the paper's column agrees with that for every job but
// J4 and J5 (256 and 512 GB computed, 512 and 128 GB printed).
struct JobType {
  const char* name;
  uint32_t procs;
  double mb_per_proc;
  uint32_t nodes;
};
constexpr std::array<JobType, 7> kJobs = {{
    {"J1", 4096, 1024, 128},
    {"J2", 16384, 512, 128},
    {"J3", 65536, 128, 128},
    {"J4", 4096, 1024, 16},
    {"J5", 4096, 2048, 16},
    {"J6", 16384, 512, 32},
    {"J7", 65536, 512, 64},
}};

// Table III: how many of J1..J7 each mix holds. W1-W6 stripe over all
// nodes (J1-J3), W7-W12 over subsets (J4-J7).
struct Mix {
  const char* name;
  std::array<uint32_t, 7> count;
};
constexpr std::array<Mix, 12> kMixes = {{
    {"W1", {1, 1, 1, 0, 0, 0, 0}},
    {"W2", {2, 2, 2, 0, 0, 0, 0}},
    {"W3", {0, 2, 4, 0, 0, 0, 0}},
    {"W4", {2, 4, 0, 0, 0, 0, 0}},
    {"W5", {10, 2, 1, 0, 0, 0, 0}},
    {"W6", {2, 10, 0, 0, 0, 0, 0}},
    {"W7", {0, 0, 0, 1, 1, 1, 2}},
    {"W8", {0, 0, 0, 10, 1, 1, 1}},
    {"W9", {0, 0, 0, 1, 10, 1, 1}},
    {"W10", {0, 0, 0, 1, 1, 5, 1}},
    {"W11", {0, 0, 0, 0, 10, 0, 2}},
    {"W12", {0, 0, 0, 10, 10, 2, 1}},
}};

struct Setup {
  std::vector<const Mix*> mixes;
  std::vector<iosched::Policy> policies;
  uint32_t trials = 0;
  double node_bytes_per_s = 0;
  double arrival_gap_s = 0;
  iosched::Nanos max_wait{0};
};

Result<Setup> make_setup(const Params& p) {
  Setup s;
  for (const std::string& w : p.words("workloads")) {
    const auto it = std::find_if(kMixes.begin(), kMixes.end(), [&](const Mix& m) { return w == m.name; });
    if (it == kMixes.end()) return Status(Errc::invalid_argument, "workloads: no mix " + w + " (W1..W12)");
    s.mixes.push_back(&*it);
  }
  for (const std::string& name : p.words("policies")) {
    const auto policy = iosched::parse_policy(name);
    if (!policy) return Status(Errc::invalid_argument, "policies: " + name + " is not none, fcfs, sjf, sa-fcfs or sa-sjf");
    s.policies.push_back(*policy);
  }
  if (std::find(s.policies.begin(), s.policies.end(), iosched::Policy::none) == s.policies.end())
    return Status(Errc::invalid_argument, "policies: none is the baseline and must be listed");
  const int64_t trials = p.integer("trials");
  if (trials < 1 || trials > 1000) return Status(Errc::invalid_argument, "trials: 1 to 1000");
  s.trials = static_cast<uint32_t>(trials);
  const double gbps = p.number("node_gb_per_s");
  if (!(gbps > 0) || gbps > 1e6) return Status(Errc::invalid_argument, "node_gb_per_s must be positive");
  s.node_bytes_per_s = gbps * 1e9;
  s.arrival_gap_s = p.number("arrival_gap_s");
  if (!(s.arrival_gap_s >= 0) || s.arrival_gap_s > 1e6)
    return Status(Errc::invalid_argument, "arrival_gap_s must be >= 0");
  const double max_wait = p.number("max_wait_s");
  if (!(max_wait >= 0) || max_wait > 1e9) return Status(Errc::invalid_argument, "max_wait_s must be >= 0");
  s.max_wait = iosched::Nanos(std::llround(max_wait * 1e9));
  return s;
}

// One job instance of a trial, in arrival order.
struct Instance {
  const JobType* type;
  double arrival_s = 0;
  std::vector<uint32_t> nodes;  // round-robin from a cursor, in arrival order
  double bytes_per_node = 0;
};

// The trial's jobs: the mix in a random arrival order (§VII-A: "we
// randomize the I/O request arrival order across the jobs"), nodes given
// round-robin as they arrive (§III-B2). The same for every policy.
std::vector<Instance> arrivals(const Mix& mix, const Setup& setup, Random rng) {
  std::vector<Instance> out;
  for (size_t j = 0; j < kJobs.size(); ++j)
    for (uint32_t c = 0; c < mix.count[j]; ++c) out.push_back(Instance{&kJobs[j], 0, {}, 0});
  for (size_t i = out.size(); i > 1; --i) std::swap(out[i - 1], out[rng.below(i)]);
  uint32_t cursor = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    Instance& job = out[i];
    job.arrival_s = static_cast<double>(i) * setup.arrival_gap_s;
    for (uint32_t k = 0; k < job.type->nodes; ++k) job.nodes.push_back((cursor + k) % kNodes);
    cursor = (cursor + job.type->nodes) % kNodes;
    job.bytes_per_node = job.type->procs * job.type->mb_per_proc * 1e6 / job.type->nodes;
  }
  return out;
}

iosched::Nanos nanos(double seconds) { return iosched::Nanos(std::llround(seconds * 1e9)); }

// Runs one trial under `policy`; returns each job's I/O time (arrival to
// its data on every node), in arrival order.
std::vector<double> simulate(const std::vector<Instance>& jobs, const Setup& setup, iosched::Policy policy) {
  iosched::Options options;
  options.policy = policy;
  options.lease = iosched::Nanos::max() / 4;  // nobody dies in the model
  options.max_wait = setup.max_wait;
  iosched::Scheduler scheduler(options);

  const size_t n = jobs.size();
  // remaining[i][k]: bytes job i still has to write to its k-th node; only
  // jobs holding a token write.
  std::vector<std::vector<double>> remaining(n);
  std::vector<bool> writing(n, false);
  std::vector<uint32_t> parts_left(n, 0);
  std::vector<double> io_time(n, 0);
  std::map<std::string, size_t, std::less<>> index;
  for (size_t i = 0; i < n; ++i) {
    remaining[i].assign(jobs[i].nodes.size(), jobs[i].bytes_per_node);
    parts_left[i] = static_cast<uint32_t>(jobs[i].nodes.size());
    index.emplace(fmt::format("{}#{}", jobs[i].type->name, i), i);
  }
  const auto name_of = [&](size_t i) { return fmt::format("{}#{}", jobs[i].type->name, i); };
  const auto start_granted = [&](const std::vector<iosched::StepView>& granted) {
    for (const auto& step : granted) writing[index.at(step.job)] = true;
  };

  double now = 0;
  size_t next_arrival = 0;
  size_t done = 0;
  std::vector<double> procs_on(kNodes);
  while (done < n) {
    while (next_arrival < n && jobs[next_arrival].arrival_s <= now) {
      const Instance& job = jobs[next_arrival];
      iosched::BeginRequest request;
      request.job = name_of(next_arrival);
      request.client = next_arrival + 1;
      request.declared_bytes = static_cast<uint64_t>(job.bytes_per_node * static_cast<double>(job.nodes.size()));
      for (uint32_t node : job.nodes) request.servers.push_back(ServerId(node));
      PVFS_CHECK(scheduler.begin(request, nanos(now)).ok());
      ++next_arrival;
    }
    start_granted(scheduler.schedule(nanos(now)));

    // Linear bandwidth division (§III-B4): a node's bandwidth per process
    // is its peak over the processes of every job writing to it.
    std::fill(procs_on.begin(), procs_on.end(), 0.0);
    for (size_t i = 0; i < n; ++i) {
      if (!writing[i]) continue;
      for (size_t k = 0; k < jobs[i].nodes.size(); ++k)
        if (remaining[i][k] > 0) procs_on[jobs[i].nodes[k]] += jobs[i].type->procs;
    }
    double step = std::numeric_limits<double>::infinity();
    if (next_arrival < n) step = jobs[next_arrival].arrival_s - now;
    const auto rate = [&](size_t i, size_t k) {
      return setup.node_bytes_per_s * jobs[i].type->procs / procs_on[jobs[i].nodes[k]];
    };
    for (size_t i = 0; i < n; ++i) {
      if (!writing[i]) continue;
      for (size_t k = 0; k < jobs[i].nodes.size(); ++k)
        if (remaining[i][k] > 0) step = std::min(step, remaining[i][k] / rate(i, k));
    }
    // The scheduler's own deadline (a step starving) is an event too.
    if (const auto deadline = scheduler.next_deadline(); deadline) {
      const double at = std::chrono::duration<double>(*deadline).count();
      if (at > now) step = std::min(step, at - now);
    }
    PVFS_CHECK(std::isfinite(step));

    const double end = now + step;
    std::vector<size_t> finished;
    for (size_t i = 0; i < n; ++i) {
      if (!writing[i]) continue;
      for (size_t k = 0; k < jobs[i].nodes.size(); ++k) {
        if (remaining[i][k] <= 0) continue;
        const double r = rate(i, k);
        // Parts due within rounding of this event finish with it.
        if (remaining[i][k] / r <= step * (1 + 1e-9)) {
          remaining[i][k] = 0;
          if (--parts_left[i] == 0) finished.push_back(i);
        } else {
          remaining[i][k] -= r * step;
        }
      }
    }
    now = end;
    for (size_t i : finished) {
      writing[i] = false;
      io_time[i] = now - jobs[i].arrival_s;
      ++done;
      PVFS_CHECK(scheduler.end(name_of(i), i + 1, static_cast<uint64_t>(jobs[i].bytes_per_node), nanos(now)).ok());
    }
  }
  return io_time;
}

std::string label(iosched::Policy p) {
  switch (p) {
    case iosched::Policy::none: return "NS";
    case iosched::Policy::fcfs: return "FCFS";
    case iosched::Policy::sjf: return "SJF";
    case iosched::Policy::sa_fcfs: return "SA-FCFS";
    case iosched::Policy::sa_sjf: return "SA-SJF";
  }
  return "?";
}

// The two figures the paper states in its text (§VII-B and §VII-C).
std::string paper_figure(const Mix& mix, iosched::Policy p) {
  if (std::string_view(mix.name) == "W1" && p == iosched::Policy::sjf) return "-62%";
  if (std::string_view(mix.name) == "W8" && p == iosched::Policy::sa_sjf) return "-36%";
  return "";
}

Result<Report> run(const Params& params, uint64_t seed) {
  auto setup_or = make_setup(params);
  if (!setup_or) return setup_or.status();
  const Setup& setup = *setup_or;

  Table trials("trials", {"workload", "trial", "policy", "aggregate_io_s"});
  Table aggregate("aggregate", {"workload", "policy", "aggregate_io_s", "min_s", "max_s", "vs_ns_pct", "paper"});
  std::vector<std::string> columns = {"workload"};
  for (auto p : setup.policies) columns.push_back(label(p));
  Table reduction("reduction", columns);
  std::vector<std::string> summary_columns = {"workload", "NS (s)"};
  for (auto p : setup.policies)
    if (p != iosched::Policy::none) summary_columns.push_back(label(p));
  summary_columns.push_back("best");
  Table summary("summary", summary_columns);

  for (size_t m = 0; m < setup.mixes.size(); ++m) {
    const Mix& mix = *setup.mixes[m];
    std::vector<std::vector<double>> totals(setup.policies.size());
    for (uint32_t t = 0; t < setup.trials; ++t) {
      const auto jobs = arrivals(mix, setup, Random::stream(seed, m * 1000 + t));
      for (size_t p = 0; p < setup.policies.size(); ++p) {
        double sum = 0;
        for (double io : simulate(jobs, setup, setup.policies[p])) sum += io;
        totals[p].push_back(sum);
        trials.add({mix.name, num(t), std::string(iosched::policy_name(setup.policies[p])), num(sum, 3)});
      }
    }
    std::vector<double> mean(setup.policies.size());
    double ns = 0;
    for (size_t p = 0; p < setup.policies.size(); ++p) {
      for (double v : totals[p]) mean[p] += v;
      mean[p] /= static_cast<double>(totals[p].size());
      if (setup.policies[p] == iosched::Policy::none) ns = mean[p];
    }
    std::vector<std::string> reduction_row = {mix.name};
    std::vector<std::string> summary_row = {mix.name, num(ns, 1)};
    size_t best = 0;
    for (size_t p = 0; p < setup.policies.size(); ++p) {
      const double pct = 100.0 * (mean[p] - ns) / ns;
      aggregate.add({mix.name, std::string(iosched::policy_name(setup.policies[p])), num(mean[p], 3),
                     num(*std::min_element(totals[p].begin(), totals[p].end()), 3),
                     num(*std::max_element(totals[p].begin(), totals[p].end()), 3), num(pct, 1),
                     paper_figure(mix, setup.policies[p])});
      reduction_row.push_back(num(pct, 1));
      if (setup.policies[p] != iosched::Policy::none) {
        const std::string paper = paper_figure(mix, setup.policies[p]);
        summary_row.push_back(num(pct, 1) + "%" + (paper.empty() ? "" : " (paper " + paper + ")"));
      }
      if (mean[p] < mean[best]) best = p;
    }
    summary_row.push_back(label(setup.policies[best]));
    reduction.add(reduction_row);
    summary.add(summary_row);
  }

  Report report;
  report.summary = summary;
  report.notes.push_back(fmt::format(
      "aggregate I/O time (sum of the jobs' arrival-to-done times) under NS, and each policy's change "
      "against NS; mean of {} trials of random arrival order{}; {} BB nodes at {} GB/s, linear division "
      "per I/O process; W1-W6 striped over all nodes, W7-W12 over round-robin subsets",
      setup.trials, setup.arrival_gap_s > 0 ? fmt::format(", {} s apart", num(setup.arrival_gap_s, 3)) : "",
      kNodes, num(setup.node_bytes_per_s / 1e9, 1)));
  if (setup.max_wait > iosched::Nanos(0))
    report.notes.push_back(fmt::format("starvation guard on: max_wait {} s",
                                       num(std::chrono::duration<double>(setup.max_wait).count(), 1)));
  std::string plot = "set grid ytics\nset style data histograms\nset style histogram clustered gap 1\n"
                     "set style fill solid 0.8 border -1\nset key outside right\n"
                     "set title 'Aggregate I/O time against NS (Fig. 11: W1-W6, Fig. 12: W7-W12)'\n"
                     "set ylabel 'change against NS (%)'\nset xlabel 'workload'\n";
  plot += "plot ";
  for (size_t p = 0; p < setup.policies.size(); ++p) {
    if (setup.policies[p] == iosched::Policy::none) continue;
    plot += fmt::format("{}'reduction.csv' skip 1 using {}{} title '{}'", plot.ends_with("plot ") ? "" : ", \\\n     ",
                        p + 2, plot.ends_with("plot ") ? ":xtic(1)" : "", label(setup.policies[p]));
  }
  report.plot = plot + "\n";
  report.plot_width = 1400;
  report.plot_height = 700;
  report.csv = {aggregate, reduction, trials};
  return report;
}

}  // namespace

Scenario bb_serialization() {
  Scenario s;
  s.name = "bb-serialization";
  s.title = "Burst-buffer paper Fig. 11 and 12: aggregate I/O time of job mixes under NS, FCFS, SJF and Algorithm 1";
  s.params = {
      {"workloads", ParamType::words, "W1,W2,W3,W4,W5,W6,W7,W8,W9,W10,W11,W12", "W1,W3,W7,W8,W12",
       "mixes of Table III to run"},
      {"policies", ParamType::words, "none,fcfs,sjf,sa-fcfs,sa-sjf", "",
       "scheduling policies (none is the baseline and must be listed)"},
      {"trials", ParamType::integer, "10", "3", "trials of random arrival order per workload"},
      {"node_gb_per_s", ParamType::number, "5", "", "bandwidth of one BB node (GB/s, Table I)"},
      {"arrival_gap_s", ParamType::number, "0", "", "seconds between consecutive arrivals"},
      {"max_wait_s", ParamType::number, "0", "", "starvation guard (ours, not the paper's); 0 is off"},
  };
  s.run = run;
  return s;
}

}  // namespace pvfs::sim
