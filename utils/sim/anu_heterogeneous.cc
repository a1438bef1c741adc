// Scenario anu-heterogeneous: the ANU paper's synthetic experiment (Wu and
// Burns, §7, Fig. 8-11). Five metadata servers of processing power 1, 3,
// 5, 7 and 9 serve 500 file sets whose request rates differ tenfold, with
// Poisson arrivals. ANU placement runs as pvfs-mds runs it: the daemons'
// map, tuner, measuring intervals and delegate (utils/sim/anu_cluster.h,
// policy/placement, policy/membership), heartbeats once a second; the
// baselines are simple randomization, round-robin and a prescient
// bin-packer, and the over-tuning ablation switches the three heuristics
// off and on. What this file models is the servers: a FIFO queue each,
// with a fixed service time divided by its power.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "policy/placement/anu_map.h"
#include "policy/placement/anu_tuner.h"
#include "utils/sim/anu_cluster.h"
#include "utils/sim/event_queue.h"
#include "utils/sim/random.h"
#include "utils/sim/scenario.h"

namespace pvfs::sim {
namespace {

struct Setup {
  std::vector<double> power;  // per server
  uint32_t file_sets = 0;
  Nanos duration{0};
  Nanos interval{0};         // between ANU tunings, and each server's measuring interval
  Nanos heartbeat{0};        // between the delegate's turns
  Nanos settle{0};           // results count from here on
  std::vector<double> rate;  // requests per second, per file set
  Nanos base_service{0};     // a request on a server of power 1
};

struct Arrival {
  Nanos at;
  uint32_t file_set;
};

// Every request of the run, the same for every placement policy: one
// Poisson stream of the total rate, each request drawn to a file set in
// proportion to its rate (the superposition of the file sets' streams).
std::vector<Arrival> arrivals(const Setup& setup, Random rng) {
  std::vector<double> cumulative;
  double total = 0;
  for (double r : setup.rate) cumulative.push_back(total += r);
  std::vector<Arrival> out;
  double t = 0;
  const double end = std::chrono::duration<double>(setup.duration).count();
  for (;;) {
    t += rng.exponential(1.0 / total);
    if (t >= end) return out;
    const double pick = rng.uniform() * total;
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), pick);
    const auto set = static_cast<uint32_t>(std::min<size_t>(it - cumulative.begin(), cumulative.size() - 1));
    out.push_back(Arrival{Nanos(std::llround(t * 1e9)), set});
  }
}

MdsId mds(size_t server) {
  return MdsId(static_cast<uint32_t>(server));
}
FileSetId file_set_id(uint32_t set) {
  return FileSetId(static_cast<uint16_t>(set + 1));
}

// Where each file set lives, recomputed whenever ANU issues a map.
std::vector<uint32_t> owners_of(const placement::AnuMap& map, uint32_t file_sets) {
  std::vector<uint32_t> out(file_sets);
  for (uint32_t f = 0; f < file_sets; ++f) out[f] = map.locate(file_set_id(f)).value;
  return out;
}

// One run of one placement: per interval, each server's mean latency.
struct Trace {
  std::vector<Nanos> times;                  // end of each interval
  std::vector<std::vector<double>> latency;  // [interval][server], seconds; 0 when idle
  std::vector<std::vector<double>> share;    // ANU only: [interval][server]
  uint64_t moves_after_settle = 0;           // file sets that changed server
  uint64_t moves_last_third = 0;             // the same in the last third of the run
  uint64_t maps = 0;                         // maps issued
  double settled_latency_sum = 0;            // requests completed after settle
  uint64_t settled_requests = 0;
};

// Runs `arrivals` against FIFO servers. Static placement when `tuner` is
// null (`owners` fixed), otherwise ANU from a uniform map. Either way the
// servers measure their intervals as the daemons do; only ANU's delegate
// acts on them.
Trace simulate(const Setup& setup, const std::vector<Arrival>& arrivals, std::vector<uint32_t> owners,
               const placement::TunerOptions* tuner) {
  const size_t n = setup.power.size();
  EventQueue queue;
  Trace trace;
  std::vector<Nanos> busy_until(n, Nanos(0));
  std::vector<MdsId> ids;
  for (size_t s = 0; s < n; ++s) ids.push_back(mds(s));
  mds::MembershipOptions options;
  options.tune_interval = std::chrono::duration_cast<std::chrono::milliseconds>(setup.interval);
  // The config's defaults relative to its 1 s heartbeat; nobody fails here.
  options.dead_after = std::chrono::duration_cast<std::chrono::milliseconds>(3 * setup.heartbeat);
  options.lease = std::chrono::duration_cast<std::chrono::milliseconds>(2 * setup.heartbeat);
  options.policy = tuner ? placement::Policy::anu : placement::Policy::hash;
  if (tuner) options.tuner = *tuner;
  AnuCluster cluster(ids, options);
  if (tuner) owners = owners_of(cluster.map(), setup.file_sets);

  size_t next = 0;
  std::function<void()> arrive = [&] {
    const Arrival& a = arrivals[next++];
    const uint32_t s = owners[a.file_set];
    const Nanos service(std::llround(static_cast<double>(setup.base_service.count()) / setup.power[s]));
    busy_until[s] = std::max(busy_until[s], a.at) + service;
    const Nanos arrived = a.at;
    cluster.arrived(mds(s), arrived, file_set_id(a.file_set));
    queue.at(busy_until[s], [&, s, arrived] {
      cluster.record(mds(s), arrived, queue.now() - arrived);
      if (queue.now() >= setup.settle) {
        trace.settled_latency_sum += std::chrono::duration<double>(queue.now() - arrived).count();
        ++trace.settled_requests;
      }
    });
    if (next < arrivals.size()) queue.at(arrivals[next].at, arrive);
  };
  if (!arrivals.empty()) queue.at(arrivals.front().at, arrive);

  std::function<void()> beat = [&] {
    const AnuCluster::Round round = cluster.heartbeat(queue.now());
    if (round.next) {
      ++trace.maps;
      std::vector<uint32_t> moved = owners_of(cluster.map(), setup.file_sets);
      for (uint32_t f = 0; f < setup.file_sets; ++f) {
        if (moved[f] == owners[f]) continue;
        if (queue.now() >= setup.settle) ++trace.moves_after_settle;
        if (queue.now() * 3 >= setup.duration * 2) ++trace.moves_last_third;
      }
      owners = std::move(moved);
    }
    if (round.closed) {
      std::vector<double> latency(n, 0);
      for (size_t s = 0; s < n; ++s) latency[s] = cluster.last(mds(s)).latency_ms / 1e3;
      trace.times.push_back(queue.now());
      trace.latency.push_back(latency);
      if (tuner) {
        std::vector<double> shares(n);
        for (size_t s = 0; s < n; ++s) shares[s] = cluster.map().share(mds(s));
        trace.share.push_back(shares);
      }
    }
    if (queue.now() + setup.heartbeat <= setup.duration) queue.after(setup.heartbeat, beat);
  };
  queue.at(setup.heartbeat, beat);
  queue.run();
  return trace;
}

// Predicted mean latency of a FIFO server with Poisson arrivals at `rate`
// and fixed service time `service` (M/D/1); infinite at saturation.
double md1_latency(double rate, double service) {
  const double rho = rate * service;
  if (rho >= 1) return std::numeric_limits<double>::infinity();
  return service + rho * service / (2 * (1 - rho));
}

// The prescient bin-packer: knows every server's power and every file
// set's rate; largest file set first, each to the server whose predicted
// latency after taking it is lowest.
std::vector<uint32_t> prescient(const Setup& setup) {
  std::vector<uint32_t> order(setup.file_sets);
  for (uint32_t f = 0; f < setup.file_sets; ++f) order[f] = f;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return setup.rate[a] > setup.rate[b]; });
  const double base = std::chrono::duration<double>(setup.base_service).count();
  std::vector<double> load(setup.power.size(), 0);
  std::vector<uint32_t> owners(setup.file_sets, 0);
  for (uint32_t f : order) {
    size_t best = 0;
    double best_latency = std::numeric_limits<double>::infinity();
    for (size_t s = 0; s < setup.power.size(); ++s) {
      const double l = md1_latency(load[s] + setup.rate[f], base / setup.power[s]);
      if (l < best_latency) {
        best = s;
        best_latency = l;
      }
    }
    owners[f] = static_cast<uint32_t>(best);
    load[best] += setup.rate[f];
  }
  return owners;
}

struct Outcome {
  std::string name;
  Trace trace;
};

// The mean over settled intervals of the worst server's latency, and the
// single worst interval.
std::pair<double, double> worst_after_settle(const Setup& setup, const Trace& t) {
  double sum = 0, peak = 0;
  size_t intervals = 0;
  for (size_t i = 0; i < t.times.size(); ++i) {
    if (t.times[i] <= setup.settle) continue;
    const double worst = *std::max_element(t.latency[i].begin(), t.latency[i].end());
    sum += worst;
    peak = std::max(peak, worst);
    ++intervals;
  }
  return {intervals ? sum / static_cast<double>(intervals) : 0, peak};
}

Table latency_table(std::string name, const std::vector<Outcome>& runs, size_t servers) {
  std::vector<std::string> cols{"time_s"};
  for (const Outcome& o : runs)
    for (size_t s = 0; s < servers; ++s) cols.push_back(fmt::format("{}_s{}", o.name, s));
  Table t(std::move(name), cols);
  for (size_t i = 0; i < runs.front().trace.times.size(); ++i) {
    std::vector<std::string> row{num(std::chrono::duration<double>(runs.front().trace.times[i]).count(), 0)};
    for (const Outcome& o : runs)
      for (size_t s = 0; s < servers; ++s) row.push_back(num(o.trace.latency[i][s], 4));
    t.add(row);
  }
  return t;
}

placement::TunerOptions heuristics(placement::TunerOptions o, bool thresholding, bool top_off,
                                   bool divergent) {
  o.thresholding = thresholding;
  o.top_off = top_off;
  o.divergent = divergent;
  return o;
}

Result<Setup> make_setup(const Params& p, Random& rng) {
  Setup s;
  s.power = p.numbers("powers");
  if (s.power.size() < 2 || s.power.size() > 64) return Status(Errc::invalid_argument, "need 2 to 64 powers");
  for (double w : s.power)
    if (!(w > 0)) return Status(Errc::invalid_argument, "server powers must be > 0");
  if (p.integer("file_sets") < 1 || p.integer("file_sets") > 65535)
    return Status(Errc::invalid_argument, "file_sets must be in [1, 65535]");
  if (p.number("duration_s") <= 0 || p.number("interval_s") <= 0 || p.number("settle_s") < 0 ||
      p.number("settle_s") >= p.number("duration_s"))
    return Status(Errc::invalid_argument, "need duration_s > 0, interval_s > 0, 0 <= settle_s < duration_s");
  if (!(p.number("heartbeat_s") >= 0.001) || p.number("heartbeat_s") > p.number("interval_s"))
    return Status(Errc::invalid_argument, "need 0.001 <= heartbeat_s <= interval_s");
  if (p.integer("requests") < 1 || p.integer("requests") > 100'000'000)
    return Status(Errc::invalid_argument, "requests must be in [1, 100000000]");
  if (!(p.number("utilization") > 0) || p.number("utilization") >= 1)
    return Status(Errc::invalid_argument, "utilization must be in (0, 1)");
  if (!(p.number("x_min") > 0) || p.number("x_max") < p.number("x_min"))
    return Status(Errc::invalid_argument, "need 0 < x_min <= x_max");
  const double zipf = p.number("zipf");
  if (!(zipf >= 0) || zipf > 4) return Status(Errc::invalid_argument, "zipf must be in [0, 4]");
  s.file_sets = static_cast<uint32_t>(p.integer("file_sets"));
  s.duration = Nanos(std::llround(p.number("duration_s") * 1e9));
  s.interval = Nanos(std::llround(p.number("interval_s") * 1e9));
  s.heartbeat = Nanos(std::llround(p.number("heartbeat_s") * 1e9));
  s.settle = Nanos(std::llround(p.number("settle_s") * 1e9));
  // Workload X*c, X uniform in [x_min, x_max] (the paper's), or with
  // `zipf` s > 0 the f-th set's X is 1 / f^s, as tests/bench/anu gives the
  // daemons (one set may then carry more than a slow server can serve);
  // c gives `requests` in all.
  const double total_rate = static_cast<double>(p.integer("requests")) / p.number("duration_s");
  double sum_x = 0;
  for (uint32_t f = 0; f < s.file_sets; ++f) {
    // Drawn either way, so that zipf leaves the later draws of a seed alone.
    const double uniform = rng.uniform(p.number("x_min"), p.number("x_max"));
    s.rate.push_back(zipf > 0 ? 1 / std::pow(static_cast<double>(f + 1), zipf) : uniform);
    sum_x += s.rate.back();
  }
  for (double& r : s.rate) r *= total_rate / sum_x;
  // The whole cluster runs at `utilization` of its capacity.
  double capacity = 0;
  for (double w : s.power) capacity += w;
  s.base_service = Nanos(std::llround(p.number("utilization") * capacity / total_rate * 1e9));
  return s;
}

Result<Report> run(const Params& p, uint64_t seed) {
  Random rng = Random::stream(seed, 1);
  auto setup_or = make_setup(p, rng);
  if (!setup_or) return setup_or.status();
  const Setup& setup = *setup_or;
  const size_t n = setup.power.size();
  const std::vector<Arrival> requests = arrivals(setup, Random::stream(seed, 2));

  std::vector<uint32_t> random_owners(setup.file_sets), round_robin(setup.file_sets);
  Random placement_rng = Random::stream(seed, 3);
  for (uint32_t f = 0; f < setup.file_sets; ++f) {
    random_owners[f] = static_cast<uint32_t>(placement_rng.below(n));
    round_robin[f] = static_cast<uint32_t>(f % n);
  }
  placement::TunerOptions tuning;
  const std::string average = p.words("average").front();
  if (average == "request-weighted") {
    tuning.average = placement::Average::request_weighted;
  } else if (average == "mean") {
    tuning.average = placement::Average::mean;
  } else if (average == "median") {
    tuning.average = placement::Average::median;
  } else if (average == "capped") {
    tuning.average = placement::Average::capped;
  } else {
    return Status(Errc::invalid_argument, "average must be capped, request-weighted, mean or median");
  }
  tuning.backlog = p.integer("backlog") != 0;
  tuning.backlog_max_factor = p.number("backlog_max_factor");
  tuning.backlog_growth = p.number("backlog_growth");
  if (!(tuning.backlog_growth >= 0)) return Status(Errc::invalid_argument, "need backlog_growth >= 0");
  if (!(tuning.backlog_max_factor >= 1)) return Status(Errc::invalid_argument, "need backlog_max_factor >= 1");
  tuning.grow_underloaded = p.integer("grow_underloaded") != 0;
  tuning.busy = p.integer("busy") != 0;
  tuning.significance = p.number("significance");
  tuning.service_scv = p.number("scv");
  if (!(tuning.service_scv >= 0)) return Status(Errc::invalid_argument, "need scv >= 0");
  if (!(tuning.significance >= 0)) return Status(Errc::invalid_argument, "need significance >= 0");
  tuning.overload_guard = p.integer("guard") != 0;
  tuning.hand_over = p.integer("hand_over") != 0;
  tuning.floor_share = p.number("floor_share");
  if (!(tuning.floor_share >= 0 && tuning.floor_share <= 1))
    return Status(Errc::invalid_argument, "need 0 <= floor_share <= 1");
  tuning.threshold = p.number("threshold");
  tuning.max_factor = p.number("max_factor");
  if (!(tuning.threshold >= 0) || !(tuning.max_factor >= 1))
    return Status(Errc::invalid_argument, "need threshold >= 0 and max_factor >= 1");
  const placement::TunerOptions all = heuristics(tuning, true, true, true);
  std::vector<Outcome> policies = {
      {"anu", simulate(setup, requests, {}, &all)},
      {"random", simulate(setup, requests, random_owners, nullptr)},
      {"round-robin", simulate(setup, requests, round_robin, nullptr)},
      {"prescient", simulate(setup, requests, prescient(setup), nullptr)},
  };
  // The ablation is the paper's (Fig. 10, 11): its heuristics against
  // latency's over-correction, on latency (the busy model and the overload
  // guard, ours, make them nearly moot; the backlog rule is kept as before
  // issue 21's model).
  placement::TunerOptions on_latency = tuning;
  on_latency.busy = false;
  on_latency.overload_guard = false;
  on_latency.floor_share = 0;
  const placement::TunerOptions none = heuristics(on_latency, false, false, false),
                                thr = heuristics(on_latency, true, false, false),
                                top = heuristics(on_latency, false, true, false),
                                div = heuristics(on_latency, false, false, true);
  std::vector<Outcome> ablation = {
      {"none", simulate(setup, requests, {}, &none)},
      {"thresholding", simulate(setup, requests, {}, &thr)},
      {"top-off", simulate(setup, requests, {}, &top)},
      {"divergent", simulate(setup, requests, {}, &div)},
      {"all", policies.front().trace},
  };

  Table summary("summary", {"placement", "worst server (s)", "worst interval (s)", "mean latency (s)",
                            "file-set moves", "maps issued"});
  auto add = [&](const Outcome& o) {
    const auto [worst, peak] = worst_after_settle(setup, o.trace);
    const double mean = o.trace.settled_requests
                            ? o.trace.settled_latency_sum / static_cast<double>(o.trace.settled_requests)
                            : 0;
    const bool anu = !o.trace.share.empty();
    summary.add({o.name, num(worst, 3), num(peak, 3), num(mean, 3),
                 anu ? num(o.trace.moves_after_settle) : "-", anu ? num(o.trace.maps) : "-"});
  };
  for (const Outcome& o : policies) add(o);
  const char* variants[] = {"anu: no heuristic", "anu: thresholding only", "anu: top-off only",
                            "anu: divergent only"};
  for (size_t i = 0; i + 1 < ablation.size(); ++i) add(Outcome{variants[i], ablation[i].trace});

  Table shares("shares", [&] {
    std::vector<std::string> cols{"time_s"};
    for (size_t s = 0; s < n; ++s) cols.push_back(fmt::format("s{}", s));
    return cols;
  }());
  const Trace& anu = policies.front().trace;
  for (size_t i = 0; i < anu.times.size(); ++i) {
    std::vector<std::string> row{num(std::chrono::duration<double>(anu.times[i]).count(), 0)};
    for (size_t s = 0; s < n; ++s) row.push_back(num(anu.share[i][s], 4));
    shares.add(row);
  }

  // The load sweep: ANU (ours and the paper's tuner) against prescient at
  // each utilization, on the same requests (utilization only sets the
  // service time).
  placement::TunerOptions paper = all;
  paper.average = placement::Average::request_weighted;
  paper.backlog = false;
  paper.busy = false;
  paper.grow_underloaded = false;
  paper.overload_guard = false;
  paper.floor_share = 0;
  Table sweep("sweep", {"utilization", "anu_worst_s", "paper_anu_worst_s", "prescient_worst_s", "anu/prescient",
                        "paper/prescient", "anu_moves_last_third", "paper_moves_last_third"});
  for (double u : p.numbers("sweep")) {
    Setup at = setup;
    double capacity = 0;
    for (double w : at.power) capacity += w;
    const double total_rate = static_cast<double>(p.integer("requests")) / p.number("duration_s");
    at.base_service = Nanos(std::llround(u * capacity / total_rate * 1e9));
    const Trace ours = simulate(at, requests, {}, &all);
    const Trace theirs = simulate(at, requests, {}, &paper);
    const Trace best = simulate(at, requests, prescient(at), nullptr);
    const double a = worst_after_settle(at, ours).first, b = worst_after_settle(at, theirs).first,
                 c = worst_after_settle(at, best).first;
    sweep.add({num(u, 2), num(a, 3), num(b, 3), num(c, 3), num(a / c, 2), num(b / c, 2), num(ours.moves_last_third),
               num(theirs.moves_last_third)});
  }

  Report report;
  report.summary = summary;
  std::string powers;
  for (double w : setup.power) powers += (powers.empty() ? "" : ",") + num(w, 0);
  report.notes.push_back(fmt::format(
      "{} requests to {} file sets over {} s on servers of power {}; a request takes {} s on power 1; "
      "ANU tunes every {} s; columns from {} s on",
      requests.size(), setup.file_sets, num(std::chrono::duration<double>(setup.duration).count(), 0), powers,
      num(std::chrono::duration<double>(setup.base_service).count(), 3),
      num(std::chrono::duration<double>(setup.interval).count(), 0),
      num(std::chrono::duration<double>(setup.settle).count(), 0)));
  const double total = std::accumulate(setup.rate.begin(), setup.rate.end(), 0.0);
  const double busiest = *std::max_element(setup.rate.begin(), setup.rate.end());
  report.notes.push_back(
      fmt::format("the busiest file set carries {}% of the requests", num(100 * busiest / total, 1)));
  report.notes.push_back("worst server: mean over intervals of the slowest server's mean latency");
  report.notes.push_back(
      "\nload sweep (sweep.csv): worst server (s) of ANU, of ANU with the paper's tuner, and of prescient; "
      "file-set moves in the last third of the run\n" +
      sweep.pretty());

  std::string plot =
      "set multiplot layout 4,3\nset grid\nset logscale y\nset yrange [0.01:*]\n"
      "set xlabel 'time (s)'\nset ylabel 'mean latency (s)'\nset key top right font ',8'\n";
  auto panel = [&](const std::string& file, size_t first_column, const std::string& title) {
    plot += fmt::format("set title '{}'\nplot ", title);
    for (size_t s = 0; s < n; ++s)
      plot += fmt::format("{}'{}' skip 1 using 1:{} with lines lw 1.5 lc {} title 'server {} (power {})'",
                          s ? ", " : "", file, first_column + s, s + 1, s, num(setup.power[s], 0));
    plot += "\n";
  };
  const char* titles[] = {"ANU (Fig. 8, 9)", "simple randomization (Fig. 8)", "round-robin (Fig. 8)",
                          "prescient (Fig. 8, 9)"};
  for (size_t i = 0; i < policies.size(); ++i) panel("latency.csv", 2 + i * n, titles[i]);
  const char* ablation_titles[] = {"ANU, no heuristic: over-tuning (Fig. 10)",
                                   "ANU, thresholding only (Fig. 11a)", "ANU, top-off only (Fig. 11b)",
                                   "ANU, divergent tuning only (Fig. 11c)"};
  for (size_t i = 0; i + 1 < ablation.size(); ++i) panel("ablation.csv", 2 + i * n, ablation_titles[i]);
  plot +=
      "unset logscale y\nset yrange [0:*]\nset ylabel 'share of the mapped half'\n"
      "set title 'ANU: each server''s share of the unit interval'\nplot ";
  for (size_t s = 0; s < n; ++s)
    plot += fmt::format("{}'shares.csv' skip 1 using 1:{} with steps lw 1.5 lc {} title 'server {}'",
                        s ? ", " : "", s + 2, s + 1, s);
  plot += "\n";
  // Issue 21: the load sweep, worst server over prescient's.
  plot +=
      "set logscale y\nset yrange [0.5:*]\nset xlabel 'utilization'\nset ylabel 'worst server / prescient'\n"
      "set title 'load sweep: ANU (ours) and the paper''s tuner against prescient'\n"
      "plot 'sweep.csv' skip 1 using 1:5 with linespoints lw 2 title 'ANU (busy model)', "
      "'sweep.csv' skip 1 using 1:6 with linespoints lw 2 title 'the paper''s tuner', "
      "1.5 with lines dt 2 lc rgb 'gray' title 'goal: 1.5x'\n";
  report.plot = plot;
  report.plot_width = 1800;
  report.plot_height = 2000;
  ablation.pop_back();
  report.csv = {latency_table("latency", policies, n), latency_table("ablation", ablation, n), shares, sweep};
  return report;
}

}  // namespace

Scenario anu_heterogeneous() {
  Scenario s;
  s.name = "anu-heterogeneous";
  s.title = "ANU paper Fig. 8-11: file sets on servers of power 1-9, ANU vs static and prescient placement";
  s.params = {
      {"powers", ParamType::numbers, "1,3,5,7,9", "", "processing power of each server"},
      {"file_sets", ParamType::integer, "500", "", "file sets"},
      {"requests", ParamType::integer, "100000", "30000", "requests in the whole run (sets c)"},
      {"duration_s", ParamType::number, "10000", "3000", "length of the run (s)"},
      {"x_min", ParamType::number, "1", "", "a file set's workload is X*c, X uniform in [x_min, x_max]"},
      {"x_max", ParamType::number, "10", "", "see x_min"},
      {"zipf", ParamType::number, "0", "",
       "0: workloads as x_min, x_max (the paper's); s > 0: the f-th file set's is 1/f^s (tests/bench/anu's --zipf)"},
      {"utilization", ParamType::number, "0.6", "", "offered load as a fraction of the cluster's capacity"},
      {"interval_s", ParamType::number, "120", "", "ANU tuning interval (s)"},
      {"heartbeat_s", ParamType::number, "1", "", "between the delegate's turns, as heartbeat_interval_ms"},
      {"average", ParamType::words, "request-weighted", "",
       "tuner's average latency: request-weighted, mean, median or capped"},
      {"backlog", ParamType::integer, "1", "",
       "1: count queued requests in a server's latency and shrink a server whose backlog grows; 0: the paper's"},
      {"backlog_max_factor", ParamType::number, "4", "", "bound on a backlogged server's shrink per interval"},
      {"backlog_growth", ParamType::number, "0.05", "",
       "a backlog grows when it rose by more than this x the requests completed (and by 2 or more)"},
      {"grow_underloaded", ParamType::integer, "0", "",
       "1: what backlogged servers shed goes to the servers below the band; 0: to all, by share (the paper's)"},
      {"busy", ParamType::integer, "1", "",
       "1: tune on each server's busy fraction through a queue model (ours); 0: on its latency"},
      {"scv", ParamType::number, "1", "",
       "busy: the queue model's service time variability (1: M/M/1, the daemons' default; 0: M/D/1, as these servers)"},
      {"significance", ParamType::number, "3", "",
       "busy: scale a server only when the change exceeds this many standard deviations of its arrivals"},
      {"guard", ParamType::integer, "1", "",
       "1: no map change makes a server predicted busier than halfway from the cluster's load to saturation "
       "(ours); 0: off"},
      {"hand_over", ParamType::integer, "1", "",
       "guard: a server whose queue stands while the map would stay gives one whole partition to the server the "
       "counts say can carry it (ours); 0: off"},
      {"floor_share", ParamType::number, "0.25", "",
       "a server below this part of an even share, not above the band, is raised to it (busy: when saturated; "
       "ours); 0: off"},
      {"threshold", ParamType::number, "0.5", "", "thresholding band k: tune outside [(1-k)L, (1+k)L]"},
      {"max_factor", ParamType::number, "4", "", "bound on one interval's scale factor"},
      {"settle_s", ParamType::number, "5000", "1500", "results count from this time on (s)"},
      {"sweep", ParamType::numbers, "0.5,0.55,0.6,0.65,0.7,0.75,0.8,0.85,0.9,0.95", "0.6,0.8",
       "utilizations of the load sweep (sweep.csv): ANU, the paper's tuner and prescient at each"},
  };
  s.run = run;
  return s;
}

}  // namespace pvfs::sim
