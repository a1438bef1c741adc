// Scenario ushape-qos: the U-Shape paper's experiments (Zhang, Davis,
// Jiang, §4.3 Table 1 and §4.4 Table 2) at their scale: nine storage
// servers with one disk each, programs of MPI-like synchronous processes,
// and policy/qos's objects doing the work: LocalityTracker on every
// server, the CART trained on each program's profiling run plus the
// synthetic workload, the WindowPlanner as the coordinator, the
// WindowGate in every server's scheduler. The cluster is ushape_cluster.h.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "policy/qos/cart.h"
#include "policy/qos/model.h"
#include "policy/qos/planner.h"
#include "policy/qos/synthetic.h"
#include "utils/sim/scenario.h"
#include "utils/sim/ushape_cluster.h"

namespace pvfs::sim {
namespace {

using namespace ushape;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

enum class Policy { off, average, ushape };

double secs(Nanos t) { return std::chrono::duration<double>(t).count(); }
Nanos from_secs(double s) { return Nanos(std::llround(s * 1e9)); }

struct Setup {
  ClusterSetup cluster;
  Nanos period{0};
  // Table 1
  uint64_t mpi_bytes = 0;
  uint64_t ior_bytes = 0;  // each of its three phases
  int backup_procs = 0;
  std::vector<double> levels;
  // Table 2
  uint64_t btio_bytes = 0;
  uint64_t btio_request = 0;
  int btio_procs = 0;
  Nanos btio_compute{0};
  double btio_factor = 0;
  double background_mb_per_s = 0;
  Nanos background_compute{0};
  std::vector<double> distances_gb;
  int max_instances = 0;
  // training
  int synthetic_sets = 0;
  int synthetic_requests = 0;
  qos::GrowOptions grow;
};

// What a program's profiling run (alone, no QoS) measured.
struct Profile {
  Nanos total{0};
  Nanos comp{0};
  uint64_t bytes = 0;
  std::vector<qos::EpochSample> samples;  // every server's
  std::vector<Nanos> io;                  // per epoch: time with a request outstanding
  // Mean time from a request's completion at a server to the job's next
  // request's arrival there: what a dedicated window idles (§3.2.1).
  Nanos reuse{0};
};

struct Goal {
  Nanos required{0};
  Nanos comp{0};
  uint64_t bytes = 0;
  std::optional<qos::Model> model;   // ushape
  std::optional<double> fixed_bound;  // a constant demand under either policy (bytes/s)
  Nanos reuse{0};                     // from its profile
};

struct Timeline {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

Profile profile(const Setup& setup, Program program, uint64_t seed) {
  program.goal = true;
  EventQueue queue;
  Cluster cluster(queue, setup.cluster, {program}, false, seed);
  Profile prof;
  const Nanos epoch = setup.cluster.epoch;
  std::function<void()> tick = [&] {
    prof.io.push_back(cluster.take_io_time(0));
    for (auto& s : cluster.take_epochs())
      for (auto& e : s) prof.samples.push_back(std::move(e));
    if (!cluster.finished(0)) queue.after(epoch, tick);
  };
  queue.at(epoch, tick);
  queue.run();
  prof.total = *cluster.finished(0);
  Nanos io{0};
  for (Nanos t : prof.io) io += t;
  prof.comp = prof.total > io ? prof.total - io : Nanos(0);
  prof.bytes = cluster.bytes_done(0);
  double gaps = 0;
  uint64_t count = 0;
  for (const auto& server : cluster.take_period()) gaps += server[0].gap_sum_s, count += server[0].gaps;
  prof.reuse = count ? from_secs(gaps / static_cast<double>(count)) : Nanos(0);
  return prof;
}

// The synthetic workload (§3.1, §4.1.1) served back to back by one disk:
// its epochs, for every program's training set.
std::vector<qos::EpochSample> synthetic_epochs(const Setup& setup, uint64_t seed) {
  std::mt19937_64 rng(mix_seed(seed ^ 0x5eed));
  qos::SyntheticOptions base;
  base.span_bytes = std::min<uint64_t>(uint64_t{10} << 30, setup.cluster.disk.capacity);
  std::vector<qos::EpochSample> out;
  const auto sweep = qos::synthetic_sweep(base, setup.synthetic_sets, rng);
  for (size_t i = 0; i < sweep.size(); ++i) {
    qos::LocalityTracker tracker(setup.cluster.epoch);
    qos::SyntheticWorkload w(sweep[i], 0);
    Nanos t{0};
    uint64_t head = 0;
    for (int r = 0; r < setup.synthetic_requests; ++r) {
      for (const auto& piece : qos::split(w.next(rng), 128 * 1024)) {
        const Nanos took = setup.cluster.disk.service(head, piece.lba, piece.length);
        head = piece.lba + piece.length;
        tracker.record("synthetic", piece.lba, piece.length, t, t + took);
        t += took;
      }
    }
    for (auto& e : tracker.close(t + setup.cluster.epoch)) out.push_back(std::move(e));
  }
  return out;
}

// Trains the model of a program for a goal of `required` (§3.1).
Result<qos::Model> train(const Setup& setup, const Profile& prof, const std::vector<qos::EpochSample>& synthetic,
                         const std::string& job, Nanos required) {
  auto a = qos::alpha(required, prof.total, prof.comp);
  if (!a) return a.status();
  const double alpha = *a;
  const Nanos epoch = setup.cluster.epoch;
  std::vector<qos::Sample> samples;
  // §3.1: B_real = B_profile / alpha. §3.1's B_profile divides by the
  // request's service times at this server; a job striped over many
  // servers has requests at several at once, so the per-server times do
  // not add up to the job's I/O time and neither do the bounds. We divide
  // each server's bytes by the job's I/O time in the epoch (the time it had
  // a request outstanding anywhere, which its clients measure), so the
  // servers' bounds add up to the job's rate while it does I/O.
  for (const auto& e : prof.samples) {
    const auto i = static_cast<size_t>(e.epoch);
    if (i >= prof.io.size() || prof.io[i].count() <= 0) continue;
    samples.push_back({{e.avg_dist_bytes, e.avg_size_bytes}, static_cast<double>(e.bytes) / secs(prof.io[i]) / alpha});
  }
  for (const auto& e : synthetic)
    samples.push_back({{e.avg_dist_bytes, e.avg_size_bytes}, e.throughput() / alpha});
  auto grown = qos::grow(samples, setup.grow);
  if (!grown) return grown.status();
  qos::Model m;
  m.job = job;
  m.alpha = alpha;
  m.profile = prof.total;
  m.comp = prof.comp;
  m.epoch = epoch;
  m.bytes = prof.bytes;
  m.cv_error = grown->cv_error;
  m.tree = std::move(grown->tree);
  return m;
}

// Runs `programs` together under `policy` until every program with a goal
// is done; returns each program's finish time (best effort: when stopped).
std::vector<Nanos> run_mix(const Setup& setup, const std::vector<Program>& programs, Policy policy,
                           const std::vector<std::optional<Goal>>& goals, uint64_t seed, Timeline* timeline) {
  EventQueue queue;
  Cluster cluster(queue, setup.cluster, programs, policy != Policy::off, seed);
  qos::PlannerOptions po;
  po.period = setup.period;
  po.min_window = std::min(po.min_window, setup.period / 8);
  po.share_by_locality = policy == Policy::ushape;
  po.track_loss = policy == Policy::ushape;
  qos::WindowPlanner planner(po);
  const size_t n = programs.size();
  if (timeline) {
    timeline->columns = {"time_s"};
    for (size_t p = 0; p < n; ++p)
      if (goals[p]) {
        timeline->columns.push_back(programs[p].name + "_mb_per_s");
        timeline->columns.push_back(programs[p].name + "_bound_mb_per_s");
        timeline->columns.push_back(programs[p].name + "_window_ms");
      }
  }
  std::function<void()> tick = [&] {
    const auto periods = cluster.take_period();
    const auto epochs = cluster.take_epochs();
    std::vector<qos::JobReport> reports;
    std::vector<double> bounds(n, 0);
    std::vector<Nanos> io_time;
    for (size_t p = 0; p < n; ++p) io_time.push_back(cluster.take_io_time(p));
    for (size_t p = 0; p < n; ++p) {
      qos::JobReport r;
      r.job = programs[p].name;
      const bool running = !cluster.finished(p);
      r.goal = goals[p].has_value() && running;
      double seek_sum = 0, idle_sum = 0;
      int seek_n = 0, idle_n = 0;
      for (size_t s = 0; s < periods.size(); ++s) {
        const ServerPeriod& sp = periods[s][p];
        r.bytes += sp.bytes;
        r.window_bytes += sp.window_bytes;
        r.active = r.active || sp.active;
        if (sp.gaps) idle_sum += sp.gap_sum_s / static_cast<double>(sp.gaps), ++idle_n;
        if (!sp.requests) continue;
        const double centre = sp.lba_sum / static_cast<double>(sp.requests);
        double sum = 0;
        int others = 0;
        for (size_t q = 0; q < n; ++q) {
          const ServerPeriod& o = periods[s][q];
          if (q == p || !o.requests) continue;
          const double c = o.lba_sum / static_cast<double>(o.requests);
          sum += secs(setup.cluster.disk.position_time(static_cast<uint64_t>(std::abs(centre - c))));
          ++others;
        }
        if (others) seek_sum += sum / others, ++seek_n;
      }
      r.active = r.active && running;
      r.seek_cost = seek_n ? from_secs(seek_sum / seek_n) : Nanos(0);
      // What a dedicated window would idle: the job's reuse distance when
      // alone (its profile); measured among others it includes their turns.
      r.idle_cost = goals[p] && goals[p]->reuse.count() > 0 ? goals[p]->reuse
                                                             : (idle_n ? from_secs(idle_sum / idle_n) : Nanos(0));
      if (r.goal) {
        const Goal& g = *goals[p];
        r.left = g.required - queue.now();
        if (g.fixed_bound) {
          r.bound = *g.fixed_bound;
        } else if (policy == Policy::average) {
          r.bound = *qos::average_bound(g.bytes, g.required, g.comp);
        } else if (g.model) {
          // §3.2.2: each server's bound (the mean of its epochs' in the
          // period), added up over servers, for the time the job did I/O.
          double sum = 0;
          for (const auto& server : epochs) {
            double server_sum = 0;
            int count = 0;
            for (const auto& e : server)
              if (e.job == r.job) server_sum += g.model->bound(e.avg_dist_bytes, e.avg_size_bytes), ++count;
            if (count) sum += server_sum / count;
          }
          r.bound = sum * secs(io_time[p]) / secs(setup.period);
        }
        bounds[p] = r.bound;
      }
      reports.push_back(std::move(r));
    }
    if (policy != Policy::off) cluster.install(planner.plan(reports));
    if (timeline) {
      std::vector<std::string> row{num(secs(queue.now()), 1)};
      for (size_t p = 0; p < n; ++p) {
        if (!goals[p]) continue;
        const qos::JobPlan* jp = planner.job(programs[p].name);
        row.push_back(num(static_cast<double>(reports[p].bytes) / secs(setup.period) / 1e6, 1));
        row.push_back(num(bounds[p] / 1e6, 1));
        row.push_back(num(jp ? std::chrono::duration<double, std::milli>(jp->window).count() : 0.0, 0));
      }
      timeline->rows.push_back(std::move(row));
    }
    if (!cluster.goals_done()) queue.after(setup.period, tick);
  };
  queue.at(setup.period, tick);
  queue.run();
  std::vector<Nanos> out;
  for (size_t p = 0; p < n; ++p) out.push_back(cluster.finished(p).value_or(queue.now()));
  return out;
}

// The programs of Table 1 (§4.3): ior-mpi-io between two checkpoints,
// mpi-io-test, and a best-effort backup writer.
Program ior_program(const Setup& s) {
  Program p{"ior-mpi-io", 8, {}, true};
  p.phases.push_back({Phase::Kind::collective, 2, s.ior_bytes, 64 * 1024, true, Nanos(0), false});
  p.phases.push_back({Phase::Kind::regions, 1, s.ior_bytes, 32 * 1024, false, Nanos(0), false});
  p.phases.push_back({Phase::Kind::collective, 2, s.ior_bytes, 64 * 1024, true, Nanos(0), false});
  return p;
}
Program mpi_program(const Setup& s) {
  Program p{"mpi-io-test", 8, {}, true};
  p.phases.push_back({Phase::Kind::collective, 0, s.mpi_bytes, 64 * 1024, false, Nanos(0), false});
  return p;
}
Program backup_program(const Setup& s, int file) {
  Program p{"backup", s.backup_procs, {}, false};
  p.phases.push_back({Phase::Kind::collective, file, 4 * kGiB, 64 * 1024, true, Nanos(0), true});
  return p;
}

struct Table1Row {
  double level = 0;
  std::vector<Nanos> required;                  // ior, mpi
  std::map<Policy, std::vector<Nanos>> times;   // ior, mpi
};

bool meets(Nanos t, Nanos required) { return secs(t) <= 1.05 * secs(required); }

Result<Setup> make_setup(const Params& p) {
  Setup s;
  if (p.integer("servers") < 1 || p.integer("servers") > 1024) return Status(Errc::invalid_argument, "servers must be 1..1024");
  if (p.number("disk_mb_per_s") <= 0 || p.number("seek_min_ms") < 0 || p.number("seek_max_ms") < p.number("seek_min_ms") ||
      p.number("rotation_ms") < 0)
    return Status(Errc::invalid_argument, "need disk_mb_per_s > 0 and 0 <= seek_min_ms <= seek_max_ms, rotation_ms >= 0");
  if (p.number("period_ms") <= 0 || p.number("epoch_ms") <= 0 || p.number("epoch_ms") > p.number("period_ms"))
    return Status(Errc::invalid_argument, "need 0 < epoch_ms <= period_ms");
  if (p.number("mpi_gb") <= 0 || p.number("ior_gb") <= 0 || p.number("btio_mb") <= 0)
    return Status(Errc::invalid_argument, "mpi_gb, ior_gb and btio_mb must be > 0");
  for (double l : p.numbers("levels"))
    if (l < 1) return Status(Errc::invalid_argument, "levels must be >= 1 (a goal shorter than the dedicated run is refused)");
  for (double d : p.numbers("distances_gb"))
    if (d < 0 || d > 1000) return Status(Errc::invalid_argument, "distances_gb must be in [0, 1000]");
  if (p.integer("max_instances") < 1 || p.integer("max_instances") > 32 || p.integer("btio_procs") < 1 ||
      p.integer("backup_procs") < 1 || p.number("btio_factor") < 1)
    return Status(Errc::invalid_argument, "need max_instances 1..32, btio_procs >= 1, backup_procs >= 1, btio_factor >= 1");
  s.cluster.servers = static_cast<int>(p.integer("servers"));
  s.cluster.disk.bytes_per_s = p.number("disk_mb_per_s") * 1e6;
  s.cluster.disk.seek_min = from_secs(p.number("seek_min_ms") / 1e3);
  s.cluster.disk.seek_max = from_secs(p.number("seek_max_ms") / 1e3);
  s.cluster.disk.rotation = from_secs(p.number("rotation_ms") / 1e3);
  s.cluster.epoch = from_secs(p.number("epoch_ms") / 1e3);
  if (p.number("jitter_ms") < 0) return Status(Errc::invalid_argument, "jitter_ms must be >= 0");
  s.cluster.jitter = from_secs(p.number("jitter_ms") / 1e3);
  s.period = from_secs(p.number("period_ms") / 1e3);
  s.mpi_bytes = static_cast<uint64_t>(p.number("mpi_gb") * static_cast<double>(kGiB));
  s.ior_bytes = static_cast<uint64_t>(p.number("ior_gb") * static_cast<double>(kGiB));
  s.backup_procs = static_cast<int>(p.integer("backup_procs"));
  s.levels = p.numbers("levels");
  s.btio_bytes = static_cast<uint64_t>(p.number("btio_mb") * static_cast<double>(kMiB));
  s.btio_procs = static_cast<int>(p.integer("btio_procs"));
  s.btio_request = static_cast<uint64_t>(p.number("btio_request_kb") * 1024);
  if (s.btio_request < 512 || s.btio_request > s.btio_bytes / static_cast<uint64_t>(s.btio_procs))
    return Status(Errc::invalid_argument, "btio_request_kb must be >= 0.5 and fit each process's share of btio_mb");
  s.btio_compute = from_secs(p.number("btio_compute_ms") / 1e3);
  s.btio_factor = p.number("btio_factor");
  s.background_mb_per_s = p.number("background_mb_per_s");
  s.background_compute = from_secs(p.number("background_compute_ms") / 1e3);
  s.distances_gb = p.numbers("distances_gb");
  s.max_instances = static_cast<int>(p.integer("max_instances"));
  s.synthetic_sets = static_cast<int>(std::max<int64_t>(1, p.integer("synthetic_sets")));
  s.synthetic_requests = static_cast<int>(std::max<int64_t>(1, p.integer("synthetic_requests")));
  s.grow.max_error = p.number("max_error");
  if (!(s.grow.max_error > 0)) return Status(Errc::invalid_argument, "max_error must be > 0");
  return s;
}

// Table 1 (§4.3): ior-mpi-io and mpi-io-test with goals at each level
// times their dedicated run, with the backup writer, under each policy.
Result<std::vector<Table1Row>> table1(const Setup& base, uint64_t seed, const std::vector<qos::EpochSample>& synthetic,
                                      Timeline* average_line, Timeline* ushape_line, std::vector<Nanos>* dedicated,
                                      std::vector<std::string>* models) {
  Setup setup = base;
  const uint64_t per_server = [&](uint64_t bytes) { return bytes / static_cast<uint64_t>(setup.cluster.servers) + 1; }(
      std::max(setup.mpi_bytes, setup.ior_bytes));
  // mpi-io-test's file, ior's data, its checkpoint, the backup's file, in
  // that order on every disk, a little apart.
  setup.cluster.file_base.clear();
  for (int f = 0; f < 4; ++f) setup.cluster.file_base.push_back(static_cast<uint64_t>(f) * (per_server + kGiB));
  const std::vector<Program> programs{ior_program(setup), mpi_program(setup), backup_program(setup, 3)};
  std::vector<Profile> profiles;
  for (size_t i = 0; i < 2; ++i) profiles.push_back(profile(setup, programs[i], seed + i));
  *dedicated = {profiles[0].total, profiles[1].total};
  std::vector<Table1Row> rows;
  for (double level : setup.levels) {
    Table1Row row;
    row.level = level;
    std::vector<std::optional<Goal>> goals(3);
    for (size_t i = 0; i < 2; ++i) {
      Goal g;
      g.required = from_secs(secs(profiles[i].total) * level);
      g.comp = profiles[i].comp;
      g.bytes = profiles[i].bytes;
      g.reuse = profiles[i].reuse;
      auto m = train(setup, profiles[i], synthetic, programs[i].name, g.required);
      if (!m) return m.status();
      if (level == setup.levels.front())
        models->push_back(fmt::format("{}: alpha {} at {}x, tree depth {} with {} leaves, cross-validated error {}",
                                      programs[i].name, num(m->alpha, 2), num(level, 1), m->tree.depth(),
                                      m->tree.leaves(), num(m->cv_error, 3)));
      g.model = std::move(*m);
      goals[i] = std::move(g);
      row.required.push_back(goals[i]->required);
    }
    for (Policy pol : {Policy::off, Policy::average, Policy::ushape}) {
      Timeline* line = level == 2.0 ? (pol == Policy::average ? average_line : pol == Policy::ushape ? ushape_line : nullptr)
                                    : nullptr;
      const auto t = run_mix(setup, programs, pol, goals, seed + 17, line);
      row.times[pol] = {t[0], t[1]};
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// Table 2 (§4.4): how many BTIO instances, each with a goal of btio_factor
// times its dedicated run, finish without a violation beside mpi-io-test
// demanding a constant rate, as the distance between their files grows.
struct Table2Row {
  double distance_gb = 0;
  std::map<Policy, int> admitted;
};

std::vector<Table2Row> table2(const Setup& base, uint64_t seed, const std::vector<qos::EpochSample>& synthetic,
                              Nanos* btio_dedicated, std::string* error) {
  std::vector<Table2Row> rows;
  const uint64_t btio_per_server = base.btio_bytes / static_cast<uint64_t>(base.cluster.servers) + 1;
  for (double d : base.distances_gb) {
    Setup setup = base;
    setup.cluster.file_base = {0};
    const uint64_t first = 4 * kGiB / static_cast<uint64_t>(setup.cluster.servers) + kGiB;
    for (int i = 0; i < setup.max_instances; ++i)
      setup.cluster.file_base.push_back(first + static_cast<uint64_t>(i) *
                                                    (btio_per_server + static_cast<uint64_t>(d * static_cast<double>(kGiB))));
    Program background{"mpi-io-test", 8, {}, false};
    background.phases.push_back({Phase::Kind::collective, 0, 4 * kGiB, 64 * 1024, false, setup.background_compute, true});
    auto btio = [&](int i) {
      Program p{fmt::format("btio-{}", i), setup.btio_procs, {}, true};
      p.phases.push_back({Phase::Kind::random, 1 + i, setup.btio_bytes, setup.btio_request, false, setup.btio_compute, false});
      return p;
    };
    const Profile prof = profile(setup, btio(0), seed + 3);
    *btio_dedicated = prof.total;
    Goal g;
    g.required = from_secs(secs(prof.total) * setup.btio_factor);
    g.comp = prof.comp;
    g.bytes = prof.bytes;
    g.reuse = prof.reuse;
    Table2Row row;
    row.distance_gb = d;
    for (Policy pol : {Policy::average, Policy::ushape}) {
      int admitted = 0;
      for (int n = 1; n <= setup.max_instances; ++n) {
        std::vector<Program> programs{background};
        std::vector<std::optional<Goal>> goals(1);
        Goal bg;
        bg.required = from_secs(1e6);
        bg.fixed_bound = setup.background_mb_per_s * 1e6;
        goals[0] = bg;
        for (int i = 0; i < n; ++i) {
          programs.push_back(btio(i));
          Goal gi = g;
          if (pol == Policy::ushape) {
            auto m = train(setup, prof, synthetic, programs.back().name, g.required);
            if (!m) {
              *error = m.status().detail();
              return {};
            }
            gi.model = std::move(*m);
          }
          goals.push_back(std::move(gi));
        }
        const auto t = run_mix(setup, programs, pol, goals, seed + 100 + static_cast<uint64_t>(n), nullptr);
        bool ok = true;
        for (int i = 0; i < n; ++i) ok = ok && meets(t[static_cast<size_t>(1 + i)], g.required);
        if (!ok) break;
        admitted = n;
      }
      row.admitted[pol] = admitted;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string pair_cell(const std::vector<Nanos>& t) { return fmt::format("{:.0f}s/{:.0f}s", secs(t[0]), secs(t[1])); }

Result<Report> run(const Params& p, uint64_t seed) {
  auto setup_or = make_setup(p);
  if (!setup_or) return setup_or.status();
  const Setup& setup = *setup_or;
  const auto synthetic = synthetic_epochs(setup, seed);

  Timeline average_line, ushape_line;
  std::vector<Nanos> dedicated;
  std::vector<std::string> models;
  auto t1 = table1(setup, seed, synthetic, &average_line, &ushape_line, &dedicated, &models);
  if (!t1) return t1.status();
  Nanos btio_dedicated{0};
  std::string error;
  const auto t2 = table2(setup, seed, synthetic, &btio_dedicated, &error);
  if (!error.empty()) return Status(Errc::invalid_argument, error);

  Report report;
  Table csv1("table1", {"level", "ior_required_s", "mpi_required_s", "ior_off_s", "mpi_off_s", "ior_average_s",
                        "mpi_average_s", "ior_ushape_s", "mpi_ushape_s", "ior_off_ratio", "mpi_off_ratio",
                        "ior_average_ratio", "mpi_average_ratio", "ior_ushape_ratio", "mpi_ushape_ratio"});
  Table summary("", {"QoS", "required", "off", "average", "meet?", "ushape", "meet?"});
  for (const auto& r : *t1) {
    std::vector<std::string> row{num(r.level, 1), num(secs(r.required[0]), 2), num(secs(r.required[1]), 2)};
    for (Policy pol : {Policy::off, Policy::average, Policy::ushape})
      for (size_t i = 0; i < 2; ++i) row.push_back(num(secs(r.times.at(pol)[i]), 2));
    for (Policy pol : {Policy::off, Policy::average, Policy::ushape})
      for (size_t i = 0; i < 2; ++i) row.push_back(num(secs(r.times.at(pol)[i]) / secs(r.required[i]), 3));
    csv1.add(row);
    auto meet = [&](Policy pol) {
      return meets(r.times.at(pol)[0], r.required[0]) && meets(r.times.at(pol)[1], r.required[1]) ? "yes" : "no";
    };
    summary.add({fmt::format("{}x", num(r.level, 1)), pair_cell(r.required), pair_cell(r.times.at(Policy::off)),
                 pair_cell(r.times.at(Policy::average)), meet(Policy::average), pair_cell(r.times.at(Policy::ushape)),
                 meet(Policy::ushape)});
  }
  Table csv2("table2", {"distance_gb", "average", "ushape"});
  for (const auto& r : t2)
    csv2.add({num(r.distance_gb, 0), num(r.admitted.at(Policy::average)), num(r.admitted.at(Policy::ushape))});
  Table avg("timeline_average", average_line.columns);
  for (auto& row : average_line.rows) avg.add(row);
  Table ush("timeline_ushape", ushape_line.columns);
  for (auto& row : ushape_line.rows) ush.add(row);

  report.summary = summary;
  report.notes.push_back(fmt::format(
      "Table 1 (ior-mpi-io/mpi-io-test, met when within 5% of required): dedicated runs {:.1f} s and {:.1f} s; "
      "{} servers, {} MB/s disks; the paper's at 2x: average 124s/147s (no), U-Shape 110s/105s (yes)",
      secs(dedicated[0]), secs(dedicated[1]), setup.cluster.servers, num(setup.cluster.disk.bytes_per_s / 1e6, 0)));
  std::string t2line = "Table 2, BTIO instances admitted without a violation (distance GB: average/ushape):";
  for (const auto& r : t2)
    t2line += fmt::format(" {}: {}/{};", num(r.distance_gb, 0), r.admitted.at(Policy::average), r.admitted.at(Policy::ushape));
  t2line += fmt::format(" BTIO dedicated {:.1f} s, goal {}x; the paper's: 0: 2/4, 10: 1/3, 20: 1/2, 30: 1/2",
                        secs(btio_dedicated), num(setup.btio_factor, 1));
  report.notes.push_back(t2line);
  for (const std::string& m : models) report.notes.push_back("model of " + m);

  std::string plot = "set multiplot layout 2,2\nset grid\nset key top right\nset style data lines\n";
  for (const auto& [name, title] : {std::pair<std::string, std::string>{"timeline_average", "average bounds at 2x (Fig. 4b)"},
                                    {"timeline_ushape", "U-Shape bounds at 2x (Fig. 4c)"}}) {
    plot += fmt::format("set title '{}'\nset xlabel 'time (s)'\nset ylabel 'MB/s'\nplot ", title);
    plot += fmt::format("'{0}.csv' skip 1 using 1:2 lw 2 title 'ior-mpi-io', '{0}.csv' skip 1 using 1:3 dt 2 lw 2 title "
                        "'ior bound', '{0}.csv' skip 1 using 1:5 lw 2 title 'mpi-io-test', '{0}.csv' skip 1 using 1:6 dt 2 "
                        "lw 2 title 'mpi bound'\n",
                        name);
  }
  plot += "set title 'Table 1: execution time / required (<= 1.05 meets)'\nset xlabel 'goal (x dedicated)'\n"
          "set ylabel 'time / required'\nset style data linespoints\nset key top right\n"
          "plot 'table1.csv' skip 1 using 1:12 title 'ior average', 'table1.csv' skip 1 using 1:13 title 'mpi average', "
          "'table1.csv' skip 1 using 1:14 title 'ior ushape', 'table1.csv' skip 1 using 1:15 title 'mpi ushape', 1.05 dt 3 "
          "title '1.05'\n";
  plot += "set title 'Table 2: BTIO instances admitted'\nset xlabel 'distance between files (GB)'\n"
          "set ylabel 'instances'\nset yrange [0:*]\nplot 'table2.csv' skip 1 using 1:2 lw 2 title 'average', 'table2.csv' skip 1 using 1:3 "
          "lw 2 title 'ushape'\nunset multiplot\n";
  report.plot = plot;
  report.plot_width = 1600;
  report.plot_height = 1100;
  report.csv = {csv1, csv2, avg, ush};
  return report;
}

}  // namespace

Scenario ushape_qos() {
  Scenario s;
  s.name = "ushape-qos";
  s.title = "U-Shape paper Table 1, Table 2, Fig. 4: execution-time goals under off, average and ushape";
  s.params = {
      {"servers", ParamType::integer, "9", "", "storage servers, one disk each"},
      {"disk_mb_per_s", ParamType::number, "30", "", "each disk's sequential bandwidth (MB/s)"},
      {"seek_min_ms", ParamType::number, "0.5", "", "shortest seek (ms)"},
      {"seek_max_ms", ParamType::number, "12", "", "full-stroke seek (ms); seek grows with sqrt(distance)"},
      {"rotation_ms", ParamType::number, "2", "", "rotational delay of a non-contiguous access (ms)"},
      {"jitter_ms", ParamType::number, "1", "", "each request leaves its process up to this much later (ms)"},
      {"period_ms", ParamType::number, "1000", "250", "scheduling period T_period (ms)"},
      {"epoch_ms", ParamType::number, "100", "25", "locality epoch (ms)"},
      {"mpi_gb", ParamType::number, "10", "2", "mpi-io-test reads this many GiB, 64 KiB per request"},
      {"ior_gb", ParamType::number, "2", "0.2", "ior-mpi-io: checkpoint, random read and checkpoint, GiB each"},
      {"backup_procs", ParamType::integer, "4", "", "processes of the best-effort backup writer"},
      {"levels", ParamType::numbers, "1.5,2,3", "", "goals as multiples of each program's dedicated time"},
      {"btio_mb", ParamType::number, "419", "8", "each BTIO instance's data (MiB)"},
      {"btio_request_kb", ParamType::number, "4", "", "BTIO's request size (KiB), at random offsets"},
      {"btio_procs", ParamType::integer, "4", "", "processes per BTIO instance"},
      {"btio_compute_ms", ParamType::number, "5.5", "", "BTIO's compute before each request (ms)"},
      {"btio_factor", ParamType::number, "4.5", "", "BTIO's goal as a multiple of its dedicated time"},
      {"background_mb_per_s", ParamType::number, "80", "", "mpi-io-test's constant demand beside BTIO (MB/s)"},
      {"background_compute_ms", ParamType::number, "0", "", "mpi-io-test's pause between requests beside BTIO (ms)"},
      {"distances_gb", ParamType::numbers, "0,10,20,30", "0,30", "distance between BTIO files on disk (GB)"},
      {"max_instances", ParamType::integer, "6", "6", "most BTIO instances tried"},
      {"synthetic_sets", ParamType::integer, "40", "20", "synthetic workloads in the training sweep"},
      {"synthetic_requests", ParamType::integer, "500", "250", "requests per synthetic workload"},
      {"max_error", ParamType::number, "0.1", "", "cross-validated error at which the tree stops growing"},
  };
  s.run = run;
  return s;
}

}  // namespace pvfs::sim
