// Tests of pvfs-sim (utils/sim): the event queue and parameters, then every
// scenario in --quick mode against the qualitative results its paper
// reports, and determinism (same seed, same CSV bytes). In-process through
// pvfs-sim-lib; nothing is written to disk.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "utils/sim/event_queue.h"
#include "utils/sim/params.h"
#include "utils/sim/plot.h"
#include "utils/sim/scenario.h"

namespace pvfs::sim {
namespace {

Report quick_run(std::string_view name, std::vector<std::string> params = {}, uint64_t seed = 1) {
  const std::vector<Scenario> all = all_scenarios();
  const Scenario* s = find_scenario(all, name);
  REQUIRE(s != nullptr);
  RunOptions options;
  options.seed = seed;
  options.quick = true;
  options.params = std::move(params);
  auto report = run_scenario(*s, options);
  REQUIRE_MESSAGE(report.ok(), report.status().to_string());
  return std::move(report).value();
}

const Table& table(const Report& r, std::string_view name) {
  const Table* t = r.find(name);
  REQUIRE_MESSAGE(t != nullptr, "no table " << name);
  return *t;
}

// Column `column` of `t` as numbers.
std::vector<double> column(const Table& t, std::string_view column) {
  const auto& cols = t.columns();
  const auto it = std::find(cols.begin(), cols.end(), column);
  REQUIRE_MESSAGE(it != cols.end(), "no column " << column << " in " << t.name());
  const size_t i = static_cast<size_t>(it - cols.begin());
  std::vector<double> out;
  for (const auto& row : t.rows()) {
    double v = 0;
    const std::string& cell = row[i];
    const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
    REQUIRE_MESSAGE((ec == std::errc() && end == cell.data() + cell.size()), "not a number: " << cell);
    out.push_back(v);
  }
  return out;
}

std::string all_csv(const Report& r) {
  std::string out;
  for (const Table& t : r.csv) out += t.name() + "\n" + t.csv();
  return out;
}

}  // namespace

TEST_CASE("events run in time order, ties in the order they were scheduled") {
  EventQueue q;
  std::vector<int> order;
  q.at(Nanos(20), [&] { order.push_back(3); });
  q.at(Nanos(10), [&] { order.push_back(1); });
  q.at(Nanos(10), [&] {
    order.push_back(2);
    q.after(Nanos(10), [&] { order.push_back(4); });  // also at 20, after 3
  });
  q.run();
  CHECK(order == std::vector<int>{1, 2, 3, 4});
  CHECK(q.now() == Nanos(20));
  CHECK(q.executed() == 4);
  CHECK(q.pending() == 0);
}

TEST_CASE("parameters take the quick defaults and typed overrides, and reject unknown keys and bad values") {
  const std::vector<ParamSpec> specs = {
      {"n", ParamType::integer, "1000", "10", ""},
      {"x", ParamType::number, "0.5", "", ""},
      {"xs", ParamType::numbers, "0,0.1", "", ""},
      {"ws", ParamType::words, "a,b", "", ""},
  };
  auto full = Params::make(specs, false, {});
  REQUIRE(full.ok());
  CHECK(full->integer("n") == 1000);
  auto quick = Params::make(specs, true, {"x=2", "xs=1,2,3", "ws=c"});
  REQUIRE(quick.ok());
  CHECK(quick->integer("n") == 10);
  CHECK(quick->number("x") == 2.0);
  CHECK(quick->numbers("xs") == std::vector<double>{1, 2, 3});
  CHECK(quick->words("ws") == std::vector<std::string>{"c"});
  CHECK(quick->describe() == std::vector<std::string>{"n=10", "ws=c", "x=2", "xs=1,2,3"});

  for (const char* bad : {"y=1", "n", "n=1.5", "x=abc", "xs=1,,2", "ws=", "n="}) {
    auto p = Params::make(specs, false, {bad});
    CHECK_MESSAGE(p.code() == Errc::invalid_argument, bad);
  }
  auto unknown = Params::make(specs, false, {"y=1"});
  CHECK(unknown.status().detail().find("n, ws, x, xs") != std::string::npos);
}

TEST_CASE("every scenario has a unique name and a plot, and rejects parameters out of range") {
  const std::vector<Scenario> all = all_scenarios();
  std::vector<std::string> names;
  for (const Scenario& s : all) names.push_back(s.name);
  CHECK(names == std::vector<std::string>{"two-choice-stragglers", "obrr-throughput", "obrr-deadlines",
                                          "anu-heterogeneous", "ushape-qos",
                                          "bb-serialization"});
  for (const Scenario& s : all) {
    CHECK(std::count_if(all.begin(), all.end(), [&](const Scenario& o) { return o.name == s.name; }) == 1);
    CHECK(!s.title.empty());
    CHECK(Params::make(s.params, true, {}).ok());
    CHECK(Params::make(s.params, false, {}).ok());
  }
  const Scenario* tc = find_scenario(all, "two-choice-stragglers");
  REQUIRE(tc);
  CHECK(run_scenario(*tc, RunOptions{1, true, {"ratios=0,2"}}).code() == Errc::invalid_argument);
  CHECK(run_scenario(*tc, RunOptions{1, true, {"policies=fixed,best"}}).code() == Errc::invalid_argument);
  const Scenario* ot = find_scenario(all, "obrr-throughput");
  REQUIRE(ot);
  CHECK(run_scenario(*ot, RunOptions{1, true, {"quantum=0"}}).code() == Errc::invalid_argument);
  const Scenario* us = find_scenario(all, "ushape-qos");
  REQUIRE(us);
  CHECK(run_scenario(*us, RunOptions{1, true, {"levels=0.5"}}).code() == Errc::invalid_argument);
  CHECK(run_scenario(*us, RunOptions{1, true, {"epoch_ms=2000"}}).code() == Errc::invalid_argument);
  CHECK(find_scenario(all, "no-such-scenario") == nullptr);
}

TEST_CASE("the gnuplot script draws a PNG and an SVG from the report's plot body") {
  Report r;
  r.plot = "plot 'a.csv' skip 1 using 1:2\n";
  const std::string script = gnuplot_script("demo", r, "made by a test\nsecond line");
  CHECK(script.find("# made by a test\n# second line\n") == 0);
  CHECK(script.find("set output 'demo.png'") != std::string::npos);
  CHECK(script.find("set output 'demo.svg'") != std::string::npos);
  CHECK(script.find("set terminal svg") != std::string::npos);
  CHECK(script.find("set datafile separator ','") != std::string::npos);
}

// Two-choice paper, Fig. 3 and 4.
TEST_CASE("two-choice-stragglers: fixed and random hit stragglers; the probing policies avoid them") {
  const Report r = quick_run("two-choice-stragglers");
  const Table& placement = table(r, "placement");
  const std::vector<double> load = column(placement, "load");
  const std::vector<double> servers = column(placement, "servers");
  // Stragglers: five times a queue of mean 10 and deviation 2; no normal
  // server comes near 25.
  bool stragglers = false;
  for (size_t i = 0; i < load.size(); ++i) {
    if (load[i] < 25) continue;
    stragglers = stragglers || servers[i] > 0;
    CHECK(column(placement, "fixed_max_placed")[i] > 0);
    // Two-choice keeps a piece home when its second choice is an even
    // heavier straggler; the collaborative probe sees 2k servers.
    CHECK(column(placement, "two-choice_max_placed")[i] < column(placement, "fixed_max_placed")[i]);
    for (std::string avoids : {"collab_max_placed", "preassign_max_placed"})
      CHECK_MESSAGE(column(placement, avoids)[i] == 0,
                    avoids << " placed on a straggler of load " << load[i]);
  }
  CHECK(stragglers);

  // Random placement is no better than round-robin, and worse without
  // stragglers (maximum load log n / log log n instead of the average).
  const Table& completion = table(r, "completion");
  const std::vector<double> fixed = column(completion, "fixed_ms");
  const std::vector<double> random = column(completion, "random_ms");
  CHECK(column(completion, "ratio")[0] == 0.0);
  CHECK(random[0] > fixed[0]);
  // Two-choice leaves stragglers but, in this model, still beats fixed
  // once there are some (the paper: "not significantly better").
  const std::vector<double> two = column(completion, "two-choice_ms");
  for (size_t i = 1; i < fixed.size(); ++i) CHECK(two[i] < fixed[i]);
}

TEST_CASE(
    "two-choice-stragglers: with starts spread over more than a round trip, preassign costs nothing without "
    "stragglers and beats fixed at every "
    "straggler ratio above zero") {
  // Writes of the first nodes reach their servers before the last nodes
  // probe, so loads (and preassigned bytes) reflect earlier decisions.
  const Report r = quick_run("two-choice-stragglers", {"start_window_ms=100"});
  const Table& completion = table(r, "completion");
  const std::vector<double> ratio = column(completion, "ratio");
  const std::vector<double> fixed = column(completion, "fixed_ms");
  const std::vector<double> preassign = column(completion, "preassign_ms");
  for (size_t i = 0; i < ratio.size(); ++i) {
    // Issue 21: no price when nothing is slow.
    if (ratio[i] == 0) {
      CHECK(preassign[i] <= 1.1 * fixed[i]);
      continue;
    }
    CHECK_MESSAGE(preassign[i] < fixed[i], "ratio " << ratio[i]);
    // Well under fixed's straggler-bound time while stragglers are a
    // minority of what a round probes.
    if (ratio[i] <= 0.3) CHECK_MESSAGE(preassign[i] < 0.67 * fixed[i], "ratio " << ratio[i]);
  }
}

// The paper's fully synchronized burst: every node probes within 1 ms,
// less than the 5 ms round trip, so all probes see only the pre-existing
// queues. It holds because the dispatcher gives each probed server at most
// one piece per round (the paper's "select k of the 2k"); without that cap
// the lightest servers became new stragglers worse than fixed's. At half
// stragglers it holds because a home is slow against the round's lower
// quartile of queues, preassigned bytes left out (issue 21: against the
// lightest server's load, preassign took 0.76x fixed's time here).
TEST_CASE(
    "two-choice-stragglers: in a fully synchronized burst preassign costs nothing without stragglers and takes "
    "under two thirds of fixed's time at every straggler ratio above zero (paper Fig. 3, issue 21)") {
  const Report r = quick_run("two-choice-stragglers");
  const Table& completion = table(r, "completion");
  const std::vector<double> ratio = column(completion, "ratio");
  const std::vector<double> fixed = column(completion, "fixed_ms");
  const std::vector<double> preassign = column(completion, "preassign_ms");
  REQUIRE(ratio.back() == 0.5);
  for (size_t i = 0; i < ratio.size(); ++i)
    if (ratio[i] > 0) CHECK_MESSAGE(preassign[i] < 0.67 * fixed[i], "ratio " << ratio[i]);
  // Issue 21: with no straggler the probes all see the normal spread of
  // queues, and preassign leaves it alone (the paper's rule took 1.7x).
  REQUIRE(ratio[0] == 0);
  CHECK(preassign[0] <= 1.1 * fixed[0]);
}

TEST_CASE(
    "two-choice-stragglers: collaborative probe without preassign makes new stragglers of light servers") {
  // Paper §III-B: "with collaborative probe, the problem of possibly
  // creating new stragglers becomes even worse" (Fig. 4).
  const Report r = quick_run("two-choice-stragglers");
  const Table& placement = table(r, "placement");
  const std::vector<double> fixed = column(placement, "fixed_max_placed");
  const std::vector<double> collab = column(placement, "collab_max_placed");
  CHECK(*std::max_element(collab.begin(), collab.end()) > 2 * *std::max_element(fixed.begin(), fixed.end()));
}

// OBRR paper, Fig. 5 and Table 1.
TEST_CASE("obrr-throughput: OBRR has fewer seeks, more bandwidth and larger disk operations than FCFS") {
  const Report r = quick_run("obrr-throughput");
  const Table& bw = table(r, "bandwidth");
  const std::vector<double> fcfs_gbs = column(bw, "fcfs_gb_per_s");
  const std::vector<double> obrr_gbs = column(bw, "obrr_gb_per_s");
  const std::vector<double> fcfs_seeks = column(bw, "fcfs_seeks_per_server");
  const std::vector<double> obrr_seeks = column(bw, "obrr_seeks_per_server");
  REQUIRE(fcfs_gbs.size() >= 2);
  for (size_t i = 0; i < fcfs_gbs.size(); ++i) {
    CHECK(obrr_seeks[i] < fcfs_seeks[i]);
    CHECK(obrr_gbs[i] > 1.4 * fcfs_gbs[i]);  // the paper's headline: 40% more
  }
  // Larger transfers, better bandwidth for both.
  CHECK(std::is_sorted(fcfs_gbs.begin(), fcfs_gbs.end()));
  CHECK(std::is_sorted(obrr_gbs.begin(), obrr_gbs.end()));

  // Table 1: FCFS hands the disk the clients' 1 MiB requests one by one,
  // OBRR merges most of them.
  const Table& sizes = table(r, "dispatch_sizes");
  const std::vector<double> size = column(sizes, "size_bytes");
  const std::vector<double> fcfs_pct = column(sizes, "fcfs_percent");
  const std::vector<double> obrr_pct = column(sizes, "obrr_percent");
  double fcfs_1m = 0, obrr_merged = 0;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 1 << 20) fcfs_1m = fcfs_pct[i];
    if (size[i] >= 2 << 20) obrr_merged += obrr_pct[i];
  }
  CHECK(fcfs_1m >= 99.0);
  CHECK(obrr_merged >= 50.0);
}

// OBRR paper, Fig. 6.
TEST_CASE("obrr-deadlines: urgent requests finish within their maximum while the queue is long") {
  const Report r = quick_run("obrr-deadlines");
  const Table& urgent = table(r, "urgent");
  const std::vector<double> urt = column(urgent, "response_s");
  REQUIRE(urt.size() > 10);
  // Quick mode: 1 s maximum (the full run uses the paper's 5 s).
  for (double t : urt) CHECK(t <= 1.0);

  // The queue grows to most of the clients' windows (paper: "almost 8000"
  // of 1000 x 8) and normal requests wait far longer than urgent ones.
  const std::vector<double> queued = column(table(r, "queue"), "requests");
  CHECK(*std::max_element(queued.begin(), queued.end()) > 0.8 * 200 * 8);
  const Table& normal = table(r, "normal");
  const std::vector<double> rt = column(normal, "response_s");
  CHECK(rt.size() == 200 * 16);  // every normal request completed
  CHECK(*std::max_element(rt.begin(), rt.end()) > 3 * *std::max_element(urt.begin(), urt.end()));
  // Urgent requests were served for their deadline, not by chance: some
  // waited at least half their maximum.
  CHECK(*std::max_element(urt.begin(), urt.end()) > 0.5);
  // The dynamic expiration is large enough to let the elevator collect
  // contiguous requests: no normal request is served before its turn
  // because its own estimate ran out before its response.
  const std::vector<double> et = column(normal, "expiration_s");
  size_t below = 0;
  for (size_t i = 0; i < et.size(); ++i) below += et[i] < rt[i];
  CHECK(below < et.size() / 20);
}

// ANU paper, Fig. 8-11. The summary table has one row per placement:
// worst server (s) is the mean over settled intervals of the slowest
// server's mean latency.
TEST_CASE(
    "anu-heterogeneous: after convergence ANU's worst server is far below static placement and close to "
    "prescient") {
  const Report r = quick_run("anu-heterogeneous");
  const Table& summary = r.summary;
  auto row = [&](std::string_view name) {
    for (const auto& cells : summary.rows())
      if (cells[0] == name) return cells;
    FAIL("no summary row " << name);
    return std::vector<std::string>{};
  };
  auto worst = [&](std::string_view name) { return std::stod(row(name)[1]); };
  auto moves = [&](std::string_view name) { return std::stod(row(name)[4]); };
  // Static placement gives the weakest server (power 1 of 25) a fifth of
  // the file sets: its queue grows without bound.
  CHECK(worst("anu") < worst("random") / 100);
  CHECK(worst("anu") < worst("round-robin") / 100);
  // "For the most part, the prescient algorithm and ANU randomization are
  // comparable."
  CHECK(worst("anu") < 2 * worst("prescient"));

  // Over-tuning (Fig. 10): without the heuristics file sets keep moving
  // and latency keeps spiking; with all three the map settles. (The quick
  // run counts moves from 1,500 s, before ANU has settled at ~2,300 s:
  // 160-180 moves with either tuner, none after it in the full run.)
  CHECK(moves("anu: no heuristic") > 5 * (moves("anu") + 10));
  CHECK(worst("anu: no heuristic") > 5 * worst("anu"));
  // Fig. 11: top-off alone is the most effective single heuristic.
  CHECK(worst("anu: top-off only") < 2 * worst("anu"));
  CHECK(moves("anu: top-off only") < moves("anu: no heuristic"));

  // The weakest server ends with (almost) nothing mapped.
  const std::vector<double> share0 = column(table(r, "shares"), "s0");
  CHECK(share0.back() < 0.01);
}

// Issue 21: at 80% of capacity the paper's tuner strands the load on the
// strongest server (its backlog grows, yet it is the request-weighted
// average); ours tunes on each server's busy fraction through a queue
// model, stays near prescient and stops moving file sets.
TEST_CASE("anu-heterogeneous: at 80% load ANU stays near prescient and settles, where the paper's tuner is stuck") {
  const Report r = quick_run("anu-heterogeneous");
  const Table& sweep = table(r, "sweep");
  const std::vector<double> load = column(sweep, "utilization");
  const std::vector<double> ours = column(sweep, "anu_worst_s");
  const std::vector<double> paper = column(sweep, "paper_anu_worst_s");
  const std::vector<double> best = column(sweep, "prescient_worst_s");
  const std::vector<double> moves = column(sweep, "anu_moves_last_third");
  REQUIRE(load.size() == 2);
  CHECK(load[1] == doctest::Approx(0.8));
  // The paper's tuner at 80%: the strongest server saturated for good.
  CHECK(paper[1] > 50 * best[1]);
  // Ours: within 2.5x of prescient in this short run (1.74x; 1.2-1.4x in
  // the full one; 11x on latency and backlog alone, before the busy model)
  // and no file set moves in the last third (294 before).
  CHECK(ours[1] < 2.5 * best[1]);
  CHECK(moves[1] == 0);
  // At 60% both behave as the paper says: comparable to prescient.
  CHECK(ours[0] < 1.5 * best[0]);
  CHECK(moves[0] == 0);
}

// Issue 21: the daemons' bench (tests/bench/anu) gives 120 file sets Zipf
// popularity, so one set carries 19% of the requests, more than the slow
// servers can serve. The simulator draws the same workload with zipf=1.
TEST_CASE("anu-heterogeneous with Zipf-popular file sets: one hot set, and ANU still near prescient at 80% load") {
  const Report r = quick_run("anu-heterogeneous", {"file_sets=120", "zipf=1"});
  // The hottest of 120 sets under Zipf 1 carries 1 / H(120) of the load.
  double harmonic = 0;
  for (int k = 1; k <= 120; ++k) harmonic += 1.0 / k;
  const std::string hot = fmt::format("the busiest file set carries {:.1f}% of the requests", 100 / harmonic);
  CHECK_MESSAGE(std::find(r.notes.begin(), r.notes.end(), hot) != r.notes.end(), "no note: " << hot);
  const Table& sweep = table(r, "sweep");
  const std::vector<double> ours = column(sweep, "anu_worst_s");
  const std::vector<double> paper = column(sweep, "paper_anu_worst_s");
  const std::vector<double> best = column(sweep, "prescient_worst_s");
  REQUIRE(ours.size() == 2);
  // At 80% the paper's tuner strands load as before; ours stays near the
  // bin-packer that knows each set's rate (0.97x in this run).
  CHECK(paper[1] > 50 * best[1]);
  CHECK(ours[1] < 1.5 * best[1]);
  CHECK(ours[0] < 1.5 * best[0]);
  // The paper's uniform workload: no set near that share.
  const Report uniform = quick_run("anu-heterogeneous");
  CHECK(std::find(uniform.notes.begin(), uniform.notes.end(), hot) == uniform.notes.end());
  const std::vector<Scenario> all = all_scenarios();
  const Scenario* anu = find_scenario(all, "anu-heterogeneous");
  REQUIRE(anu);
  CHECK(run_scenario(*anu, RunOptions{1, true, {"zipf=-1"}}).code() == Errc::invalid_argument);
}

TEST_CASE(
    "ushape-qos: U-Shape meets goals at 2x and 3x where average misses at 2x, comes closer at 1.5x, and admits "
    "more BTIO instances") {
  const Report r = quick_run("ushape-qos");
  const Table& t1 = table(r, "table1");
  const std::vector<double> level = column(t1, "level");
  const std::vector<double> ior_avg = column(t1, "ior_average_ratio"), mpi_avg = column(t1, "mpi_average_ratio");
  const std::vector<double> ior_us = column(t1, "ior_ushape_ratio"), mpi_us = column(t1, "mpi_ushape_ratio");
  REQUIRE(level == std::vector<double>{1.5, 2.0, 3.0});
  // Table 1 of the paper: a goal is met within 5% of the required time.
  CHECK(ior_us[1] <= 1.05);
  CHECK(mpi_us[1] <= 1.05);
  CHECK(std::max(ior_avg[1], mpi_avg[1]) > 1.05);
  CHECK(ior_us[2] <= 1.05);
  CHECK(mpi_us[2] <= 1.05);
  CHECK(std::max(ior_us[0], mpi_us[0]) > 1.05);  // 1.5x is beyond the disks
  CHECK(ior_us[0] + mpi_us[0] < ior_avg[0] + mpi_avg[0]);

  // Table 2: at least as many instances everywhere, more where the files
  // are close (one shared window keeps the disks busy).
  const Table& t2 = table(r, "table2");
  const std::vector<double> avg = column(t2, "average"), us = column(t2, "ushape");
  REQUIRE(avg.size() == 2);
  for (size_t i = 0; i < avg.size(); ++i) CHECK(us[i] >= avg[i]);
  CHECK(us[0] > avg[0]);
  CHECK(avg[0] >= 1);

  // The timelines follow the derived bounds (Fig. 4c): U-Shape's bound for
  // ior-mpi-io falls when it turns random and rises again.
  std::vector<double> bound = column(table(r, "timeline_ushape"), "ior-mpi-io_bound_mb_per_s");
  std::erase(bound, 0.0);  // after it finished
  REQUIRE(bound.size() > 10);
  const double first = bound.front(), last = bound.back();
  const double low = *std::min_element(bound.begin(), bound.end());
  CHECK(low < first / 2);
  CHECK(low < last / 2);
}

// Burst-buffer interference paper, Fig. 11 and 12. aggregate.csv has one
// row per (workload, policy): the mean aggregate I/O time over the trials.
double aggregate_of(const Report& r, std::string_view workload, std::string_view policy) {
  const Table& t = table(r, "aggregate");
  const std::vector<double> values = column(t, "aggregate_io_s");
  for (size_t i = 0; i < t.rows().size(); ++i)
    if (t.rows()[i][0] == workload && t.rows()[i][1] == policy) return values[i];
  FAIL("no row " << workload << " " << policy);
  return 0;
}

TEST_CASE("bb-serialization: W1 under NS and SJF matches the linear model worked by hand") {
  // Per node J1, J2, J3 write 32.768, 65.536, 65.536 GB with 4096, 16384
  // and 65536 processes at 5 GB/s. NS: J3 gets 65536/86016 of the node
  // and ends at 17.2 s, J2 then gets 16384/20480 and ends at 29.5 s, J1 at
  // 32.8 s: 79.46 s. SJF: 6.55 + 19.66 + 32.77 = 58.98 s, whatever the
  // arrival order.
  const Report r = quick_run("bb-serialization", {"workloads=W1"});
  CHECK(aggregate_of(r, "W1", "none") == doctest::Approx(79.462).epsilon(0.001));
  CHECK(aggregate_of(r, "W1", "sjf") == doctest::Approx(58.982).epsilon(0.001));
}

TEST_CASE("bb-serialization: with full striping scheduling beats NS and SJF is best; with partial striping "
          "only the sharing-aware policies beat NS and SA-SJF is best") {
  const Report r = quick_run("bb-serialization");
  for (const char* w : {"W1", "W3"}) {
    CAPTURE(w);
    const double ns = aggregate_of(r, w, "none");
    CHECK(aggregate_of(r, w, "fcfs") < ns);
    CHECK(aggregate_of(r, w, "sjf") < 0.8 * ns);
    CHECK(aggregate_of(r, w, "sjf") <= aggregate_of(r, w, "fcfs"));
    // Every job uses every node: sharing awareness changes nothing.
    CHECK(aggregate_of(r, w, "sa-sjf") == doctest::Approx(aggregate_of(r, w, "sjf")));
  }
  for (const char* w : {"W7", "W8", "W12"}) {
    CAPTURE(w);
    const double ns = aggregate_of(r, w, "none");
    CHECK(aggregate_of(r, w, "fcfs") > ns);
    CHECK(aggregate_of(r, w, "sjf") > ns);
    CHECK(aggregate_of(r, w, "sa-fcfs") < ns);
    CHECK(aggregate_of(r, w, "sa-sjf") < 0.85 * ns);
    for (const char* other : {"none", "fcfs", "sjf", "sa-fcfs"}) CHECK(aggregate_of(r, w, "sa-sjf") < aggregate_of(r, w, other));
  }
}

TEST_CASE("bb-serialization: bad workloads, policies and counts are refused") {
  const std::vector<Scenario> all = all_scenarios();
  const Scenario* bb = find_scenario(all, "bb-serialization");
  REQUIRE(bb);
  for (const char* bad : {"workloads=W13", "policies=fcfs,sjf", "policies=none,lifo", "trials=0", "node_gb_per_s=0",
                          "arrival_gap_s=-1"}) {
    CAPTURE(bad);
    CHECK(run_scenario(*bb, RunOptions{1, true, {bad}}).code() == Errc::invalid_argument);
  }
}

TEST_CASE("the same seed gives the same CSV bytes, another seed other numbers") {
  for (const Scenario& s : all_scenarios()) {
    CAPTURE(s.name);
    const std::string a = all_csv(quick_run(s.name, {}, 7));
    const std::string b = all_csv(quick_run(s.name, {}, 7));
    const std::string c = all_csv(quick_run(s.name, {}, 8));
    CHECK(a == b);
    CHECK(a != c);
  }
}

}  // namespace pvfs::sim
