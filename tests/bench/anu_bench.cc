// The ANU benchmark (issue 6; Wu and Burns, §7): five
// metadata servers of unequal speed (pvfs-mds --slowdown 1, 3, 5, 7, 9) under
// a skewed create/stat workload over 100+ file sets, once per placement
// policy (anu, hash, round-robin; anu-busy and anu-paper on request), each
// on a fresh local cluster. Samples every member's mean request latency per
// tuning interval from clusterStatus (utils/common/mds_status.h), prints the
// latencies over time per policy, the worst/average ratio, how often a member
// was saturated, the time ANU takes to converge, whether its steady state is
// balanced (issue 21's goal), and a last line `RESULT key=value ...`;
// with --repeat N, each policy N times and a line over its runs.
// Driven by tests/bench/anu; see docs/bench/anu.md. Not a test. One
// thread runs the client (libpvfs-client, no FUSE), another samples the
// members. Stopped by SIGINT, SIGTERM or SIGHUP, it kills the daemons it
// started and removes its folder (kept with --keep) before it dies.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fs/client.h"
#include "shared/rpc/run_sync.h"
#include "shared/secret.h"
#include "tests/support/signal_cleanup.h"
#include "utils/cluster/local_cluster.h"
#include "utils/common/mds_status.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Options {
  std::vector<std::string> policies = {"anu", "hash", "round-robin"};
  std::vector<double> slowdown = {1, 3, 5, 7, 9};
  uint32_t service_us = 1000;
  uint32_t filesets = 120;
  double zipf = 1.0;           // popularity of the k-th set ~ 1 / k^zipf
  double rate = 700;           // requests per second offered (Poisson)
  uint32_t max_outstanding = 512;
  double create_fraction = 0.3;  // the rest are stats of files made earlier
  uint32_t duration_s = 80;    // of the workload, per policy
  uint32_t interval_ms = 2000;  // [mds_cluster] tune_interval_ms
  double converged_ratio = 1.5;
  // Members that served less than this fraction of an interval's requests
  // are left out of its worst latency: their latency is their service time
  // alone and says nothing of balance (the rows still show them).
  double min_share = 0.01;
  uint64_t seed = 42;
  std::string workdir = "/tmp";
  bool keep = false;
  // Also print what each member reported beside its latency (busy
  // fraction, service time, backlog) and the delegate's tuning steps.
  bool detail = false;
  // Runs of each policy, each on a fresh cluster with the same workload
  // seed: one run a seed does not separate two tunings (the runs differ).
  uint32_t repeat = 1;
};

// One member's interval as seen by the sampler.
struct Sample {
  uint64_t seq = 0;
  double latency_ms = 0;
  uint64_t requests = 0;
  double at_s = 0;  // when it was first seen, from the start of the workload
  uint64_t backlog = 0;
  double busy = 0;
  double service_ms = 0;
};

// One row of the latency table: interval `index` (ends at (index + 1) x
// interval), each member's latency and requests (nullopt: not seen).
struct Row {
  size_t index = 0;
  std::vector<std::optional<Sample>> members;
  double average_ms = 0;  // request-weighted, as the tuner's L
  double worst_ms = 0;    // of the members that served at least min_share of the requests
  double ratio = 0;       // worst / average; 0 when nothing was served
  double ratio_all = 0;   // the same with every member that served any
};

// A member that ends an interval with this many requests outstanding is
// saturated: a queue that long is 98.5% busy (M/M/1), and a member reads
// at most 128 of one connection at a time, so a client's further requests
// wait in the socket, unseen.
constexpr uint64_t kSaturatedBacklog = 64;

struct PolicyRun {
  std::string policy;
  std::vector<Row> rows;
  uint64_t ops = 0, errors = 0, lost = 0;
  std::string first_error;
  double offered_s = 0;   // how long the workload ran, its drain included
  uint32_t moves = 0;     // file sets shipped during the workload (not the new sets' first trip)
  // Over the last third of the run (the steady state):
  double steady_ratio = 0;      // mean worst/average
  double steady_ratio_all = 0;  // the same counting every member that served any
  double steady_max = 0;        // highest worst/average
  // The part of the intervals in which some member ended holding at least
  // kSaturatedBacklog requests: it cannot keep up, whatever worst/average
  // says (a saturated member that serves most requests is the average).
  double steady_saturated = 0;
  double steady_avg_ms = 0;     // mean latency of all requests
  // Each member's mean latency over the whole third (members with at
  // least min_share of its requests), the worst over steady_avg_ms: the
  // placement's imbalance without one interval's sampling noise, which
  // a member serving a few dozen requests an interval carries into the
  // mean of per-interval worsts.
  double steady_pooled = 0;
  std::optional<double> converge_s;  // start of the first interval after which the ratio stays <= bound
  std::vector<pvfs::MdsTuningStep> tunings;  // the delegate's, as sampled (--detail)
  int64_t start_unix_ms = 0;
};

void note(const std::string& text) { std::fprintf(stderr, "# %s\n", text.c_str()); }

// The Zipf(s) distribution over ranks 0..n-1 by inverse CDF.
class Zipf {
 public:
  Zipf(size_t n, double s) {
    double sum = 0;
    for (size_t k = 1; k <= n; ++k) cdf_.push_back(sum += 1.0 / std::pow(double(k), s));
    for (double& c : cdf_) c /= sum;
  }
  template <typename Rng>
  size_t operator()(Rng& rng) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min(size_t(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()), cdf_.size() - 1);
  }
  double probability(size_t rank) const { return cdf_[rank] - (rank ? cdf_[rank - 1] : 0); }

 private:
  std::vector<double> cdf_;
};

// Whether some member ended the row's interval saturated.
bool saturated_row(const Row& row) {
  return std::any_of(row.members.begin(), row.members.end(),
                     [](const auto& s) { return s && s->backlog >= kSaturatedBacklog; });
}

// Rows from each member's samples: a sample seen at time t belongs to the
// interval that ended last before t. Ratios per row; then the steady-state
// figures over the last third and the convergence time.
void analyse(PolicyRun& run, const std::vector<std::vector<Sample>>& samples, const Options& o) {
  const double interval_s = o.interval_ms / 1000.0;
  // The intervals of the arrivals; what is seen after them is the drain.
  const size_t count = static_cast<size_t>(double(o.duration_s) / interval_s);
  for (size_t i = 0; i < count; ++i) {
    Row row;
    row.index = i;
    row.members.resize(samples.size());
    for (size_t m = 0; m < samples.size(); ++m)
      for (const Sample& s : samples[m]) {
        const auto at = static_cast<size_t>(std::floor(s.at_s / interval_s));
        if (at == i + 1) row.members[m] = s;  // seen during the next interval
      }
    double weighted = 0, worst_all = 0;
    uint64_t requests = 0;
    for (const auto& s : row.members)
      if (s && s->requests) {
        weighted += s->latency_ms * double(s->requests);
        requests += s->requests;
        worst_all = std::max(worst_all, s->latency_ms);
      }
    for (const auto& s : row.members)
      if (s && s->requests && double(s->requests) >= o.min_share * double(requests))
        row.worst_ms = std::max(row.worst_ms, s->latency_ms);
    if (requests) {
      row.average_ms = weighted / double(requests);
      row.ratio = row.average_ms > 0 ? row.worst_ms / row.average_ms : 0;
      row.ratio_all = row.average_ms > 0 ? worst_all / row.average_ms : 0;
    }
    run.rows.push_back(std::move(row));
  }
  std::vector<double> steady;
  double weighted = 0, requests = 0, all_sum = 0, saturated = 0, rows = 0;
  std::vector<double> member_weighted(samples.size(), 0), member_requests(samples.size(), 0);
  for (size_t i = run.rows.size() - run.rows.size() / 3; i < run.rows.size(); ++i) {
    rows += 1;
    if (saturated_row(run.rows[i])) saturated += 1;
    if (run.rows[i].ratio > 0) {
      steady.push_back(run.rows[i].ratio);
      all_sum += run.rows[i].ratio_all;
    }
    for (size_t m = 0; m < run.rows[i].members.size(); ++m)
      if (const auto& s = run.rows[i].members[m]) {
        weighted += s->latency_ms * double(s->requests);
        requests += double(s->requests);
        member_weighted[m] += s->latency_ms * double(s->requests);
        member_requests[m] += double(s->requests);
      }
  }
  if (requests > 0) {
    run.steady_avg_ms = weighted / requests;
    double worst = 0;
    for (size_t m = 0; m < member_requests.size(); ++m)
      if (member_requests[m] > 0 && member_requests[m] >= o.min_share * requests)
        worst = std::max(worst, member_weighted[m] / member_requests[m]);
    if (run.steady_avg_ms > 0) run.steady_pooled = worst / run.steady_avg_ms;
  }
  if (rows > 0) run.steady_saturated = saturated / rows;
  if (!steady.empty()) {
    double sum = 0;
    for (double r : steady) sum += r;
    run.steady_ratio = sum / double(steady.size());
    run.steady_ratio_all = all_sum / double(steady.size());
    run.steady_max = *std::max_element(steady.begin(), steady.end());
  }
  // Converged after row i when every later row with requests is within the
  // bound with no member saturated (and there is at least one such row): a
  // saturated member that serves most requests is the average, so its
  // row's ratio can be within the bound while requests go unsent.
  for (size_t i = 0; i < run.rows.size(); ++i) {
    bool ok = false, bad = false;
    for (size_t j = i; j < run.rows.size(); ++j) {
      if (run.rows[j].ratio <= 0) continue;
      if (run.rows[j].ratio > o.converged_ratio || saturated_row(run.rows[j])) bad = true;
      else ok = true;
    }
    if (ok && !bad) {
      run.converge_s = double(i) * interval_s;
      break;
    }
  }
}

// The steady state is balanced (issue 21's goal at the bench's load):
// worst/L within the bound on average over the last third, and no member
// saturated in any of its intervals.
bool balanced(const PolicyRun& run, const Options& o) {
  return run.steady_ratio > 0 && run.steady_ratio <= o.converged_ratio && run.steady_saturated == 0;
}

// Offered load: Poisson arrivals at `rate`, each request a coroutine of its
// own, at most max_outstanding at once (arrivals while all are taken are
// counted as lost).
struct Workload {
  Workload(pvfs::Client& c, const Options& options, std::vector<pvfs::InodeId> set_roots)
      : client(c), o(options), roots(std::move(set_roots)), files(roots.size()), zipf(roots.size(), o.zipf),
        rng(o.seed + 1) {}

  pvfs::Client& client;
  const Options& o;
  std::vector<pvfs::InodeId> roots;                  // per file set, by popularity rank
  std::vector<std::vector<pvfs::InodeId>> files;     // made so far, per rank
  Zipf zipf;
  std::mt19937_64 rng;
  uint64_t next_name = 0;
  uint32_t outstanding = 0;
  uint64_t ops = 0, errors = 0, lost = 0;
  std::string first_error;

  asio::awaitable<void> one(size_t rank, bool create) {
    const pvfs::Credentials root{};
    pvfs::Status st;
    if (create) {
      auto made = co_await client.mknod(root, roots[rank], fmt::format("f{}", next_name++), S_IFREG | 0644, 0);
      if (made) files[rank].push_back(made->ino);
      st = made.status();
    } else {
      const auto& list = files[rank];
      const auto ino = list[std::uniform_int_distribution<size_t>(0, list.size() - 1)(rng)];
      st = (co_await client.getattr(root, ino)).status();
    }
    ++ops;
    if (!st.ok() && errors++ == 0) first_error = st.to_string();
    --outstanding;
  }

  // Always ok: failed requests are counted, not returned.
  asio::awaitable<pvfs::Status> run(Clock::time_point until) {
    auto ex = co_await asio::this_coro::executor;
    asio::steady_timer timer(ex);
    std::exponential_distribution<double> gap(o.rate);
    auto next = Clock::now();
    while (Clock::now() < until) {
      next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
      timer.expires_at(next);
      co_await timer.async_wait(asio::use_awaitable);
      if (outstanding >= o.max_outstanding) {
        // Arrivals while every slot is taken are lost, not made up for
        // later: a burst of catching up would overload whoever is fastest.
        while (outstanding >= o.max_outstanding) {
          timer.expires_after(milliseconds(1));
          co_await timer.async_wait(asio::use_awaitable);
        }
        const auto now = Clock::now();
        while (next < now) {
          ++lost;
          next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(gap(rng)));
        }
      }
      const size_t rank = zipf(rng);
      const bool create =
          files[rank].empty() || std::uniform_real_distribution<double>(0, 1)(rng) < o.create_fraction;
      ++outstanding;
      asio::co_spawn(ex, one(rank, create), asio::detached);
    }
    while (outstanding > 0) {
      timer.expires_after(milliseconds(5));
      co_await timer.async_wait(asio::use_awaitable);
    }
    co_return pvfs::Status{};
  }
};

// One run of `policy` on a fresh cluster in `dir`.
std::optional<PolicyRun> run_policy(const std::string& policy, const Options& o, const fs::path& dir) {
  PolicyRun run;
  run.policy = policy;
  pvfs::ClusterOptions co;
  co.dir = dir;
  co.servers = 1;
  co.mds = static_cast<uint32_t>(o.slowdown.size());
  co.mds_slowdown = o.slowdown;
  co.mds_service_us = o.service_us;
  // "anu": ANU as the daemons run it by default (the tuner on latency and
  // backlog, with the overload guard); "anu-busy": with the busy model
  // ([mds_cluster] busy = true); "anu-noguard": the default without the
  // overload guard; "anu-paper": the paper's tuner (backlog, busy and
  // overload_guard false).
  const bool anu = policy == "anu" || policy == "anu-busy" || policy == "anu-noguard" || policy == "anu-paper";
  co.mds_placement = anu ? "anu" : policy;
  co.mds_backlog = policy != "anu-paper";
  co.mds_busy = policy == "anu-busy";
  co.mds_overload_guard = policy != "anu-paper" && policy != "anu-noguard";
  co.mds_tune_interval_ms = o.interval_ms;
  co.fileset_per_top_directory = true;
  co.start_timeout = milliseconds(30000);
  note(fmt::format("{}: starting {} metadata servers (slowdown {}) and a storage server in {}", policy, co.mds,
                   fmt::join(o.slowdown, ","), co.dir.string()));
  auto cluster = pvfs::LocalCluster::up(co);
  if (!cluster) {
    std::fprintf(stderr, "tests/bench/anu: %s: %s\n", policy.c_str(), cluster.status().to_string().c_str());
    return std::nullopt;
  }
  struct Down {
    pvfs::LocalCluster& c;
    ~Down() { (void)c.down(); }
  } down{*cluster};

  asio::io_context io(1);
  auto client = pvfs::Client::create(io, cluster->config());
  if (!client) {
    std::fprintf(stderr, "tests/bench/anu: client: %s\n", client.status().to_string().c_str());
    return std::nullopt;
  }
  if (auto st = pvfs::rpc::run_sync(io, (*client)->start()); !st.ok()) {
    std::fprintf(stderr, "tests/bench/anu: client start: %s\n", st.to_string().c_str());
    return std::nullopt;
  }

  // The file sets, one per top directory; popularity ranks in a seeded
  // random order of the sets, the same for every policy, so no policy
  // gains from how ids are handed out.
  std::mt19937_64 rng(o.seed);
  std::vector<pvfs::InodeId> roots;
  for (uint32_t i = 0; i < o.filesets; ++i) {
    auto made = pvfs::rpc::run_sync(io, (*client)->mkdir({}, pvfs::kRootInode, fmt::format("set{:03}", i), S_IFDIR | 0755));
    if (!made) {
      std::fprintf(stderr, "tests/bench/anu: mkdir /set%03u: %s\n", i, made.status().to_string().c_str());
      return std::nullopt;
    }
    roots.push_back(made->ino);
  }
  std::shuffle(roots.begin(), roots.end(), rng);

  Workload w(**client, o, roots);

  auto key = pvfs::load_secret(cluster->config().secret_file);
  if (!key) return std::nullopt;
  // New file sets are made by the owner of the root and shipped to their
  // owners in the background: wait until each is on exactly one member
  // (at most 30 s), so moves during the workload are the placement's own.
  const auto settle_until = Clock::now() + std::chrono::seconds(30);
  for (int stable = 0; stable < 2 && Clock::now() < settle_until;) {
    std::map<uint16_t, int> holders;
    bool all_answered = true;
    for (const auto& entry : cluster->config().mds) {
      auto view = pvfs::mds_cluster_status(entry.address, *key, milliseconds(1000));
      if (!view) all_answered = false;
      else
        for (const auto& m : view->members)
          if (m.id == entry.id)
            for (uint16_t set : m.file_sets) ++holders[set];
    }
    const bool settled = all_answered && holders.size() == roots.size() + 1 &&
                         std::all_of(holders.begin(), holders.end(), [](const auto& h) { return h.second == 1; });
    stable = settled ? stable + 1 : 0;
    std::this_thread::sleep_for(milliseconds(250));
  }
  const auto start = Clock::now();
  const int64_t start_unix_ms = std::chrono::duration_cast<milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch()).count();
  std::atomic<bool> stop{false};
  std::vector<std::vector<Sample>> samples(cluster->config().mds.size());
  std::vector<pvfs::MdsTuningStep> tunings;
  std::thread sampler([&] {
    const auto poll = milliseconds(std::max<uint32_t>(o.interval_ms / 8, 50));
    while (!stop) {
      for (size_t m = 0; m < cluster->config().mds.size(); ++m) {
        const auto& entry = cluster->config().mds[m];
        auto view = pvfs::mds_cluster_status(entry.address, *key, milliseconds(1000));
        if (!view) continue;
        for (const auto& member : view->members) {
          if (member.id != entry.id) continue;
          auto& list = samples[m];
          if (!list.empty() && list.back().seq == member.interval.seq) break;
          list.push_back({member.interval.seq, member.interval.latency_ms, member.interval.requests,
                          std::chrono::duration<double>(Clock::now() - start).count(), member.interval.backlog,
                          member.interval.busy, member.interval.service_ms});
        }
        if (view->self == view->delegate)
          for (const auto& step : view->history)
            if (step.at_unix_ms >= start_unix_ms &&
                (tunings.empty() || step.at_unix_ms > tunings.back().at_unix_ms))
              tunings.push_back(step);
      }
      std::this_thread::sleep_for(poll);
    }
  });
  note(fmt::format("{}: {} file sets made; {} s of {:.0f} requests/s ({}% creates, Zipf {})", policy, roots.size(),
                   o.duration_s, o.rate, std::lround(o.create_fraction * 100), o.zipf));
  (void)pvfs::rpc::run_sync(io, w.run(start + std::chrono::seconds(o.duration_s)));
  run.offered_s = std::chrono::duration<double>(Clock::now() - start).count();
  // One more interval, so the last one is reported.
  std::this_thread::sleep_for(milliseconds(o.interval_ms + o.interval_ms / 2));
  stop = true;
  sampler.join();
  run.ops = w.ops;
  run.errors = w.errors;
  run.lost = w.lost;
  run.first_error = w.first_error;
  run.tunings = std::move(tunings);
  run.start_unix_ms = start_unix_ms;
  for (const auto& entry : cluster->config().mds)
    if (auto view = pvfs::mds_cluster_status(entry.address, *key, milliseconds(2000)))
      for (const auto& m : view->moves)
        if (m.from == entry.id && m.outcome == "shipped" && m.at_unix_ms >= start_unix_ms) ++run.moves;
  analyse(run, samples, o);
  return run;
}

std::string ratio_text(double r) { return r > 0 ? fmt::format("{:.2f}", r) : "-"; }

// The middle value (the mean of the two middle ones for an even count).
double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// With --repeat: one line per policy over its runs, in run order.
void print_repeats(const std::string& policy, const std::vector<const PolicyRun*>& runs, const Options& o) {
  std::vector<std::string> ratio, latency, saturated;
  size_t balanced_runs = 0;
  for (const PolicyRun* run : runs) {
    ratio.push_back(fmt::format("{:.2f}", run->steady_ratio));
    latency.push_back(fmt::format("{:.1f}", run->steady_avg_ms));
    saturated.push_back(fmt::format("{:.0f}%", 100 * run->steady_saturated));
    balanced_runs += balanced(*run, o) ? 1 : 0;
  }
  std::printf("\n%s, %zu runs of seed %llu, last third of each: worst/avg mean %s; mean latency %s ms; a member "
              "saturated in %s of the intervals",
              policy.c_str(), runs.size(), static_cast<unsigned long long>(o.seed),
              fmt::format("{}", fmt::join(ratio, ", ")).c_str(), fmt::format("{}", fmt::join(latency, ", ")).c_str(),
              fmt::format("{}", fmt::join(saturated, ", ")).c_str());
  if (policy.starts_with("anu")) std::printf("; balanced in %zu of %zu", balanced_runs, runs.size());
  std::printf("\n");
}

void print_run(const PolicyRun& run, const Options& o) {
  std::printf("\n== %s: mean latency per member and interval, ms (requests)\n", run.policy.c_str());
  std::string header = fmt::format("{:>6}", "t(s)");
  for (size_t m = 0; m < o.slowdown.size(); ++m)
    header += fmt::format("  {:>16}", fmt::format("mds{} ({:g}x)", m, o.slowdown[m]));
  header += fmt::format("  {:>8}  {:>6}", "avg", "w/avg");
  std::printf("%s\n", header.c_str());
  for (const Row& row : run.rows) {
    std::string line = fmt::format("{:>6.0f}", double(row.index + 1) * o.interval_ms / 1000.0);
    for (const auto& s : row.members)
      line += fmt::format("  {:>16}", s ? fmt::format("{:.1f} ({})", s->latency_ms, s->requests) : "?");
    line += fmt::format("  {:>8.1f}  {:>6}", row.average_ms, ratio_text(row.ratio));
    std::printf("%s\n", line.c_str());
    if (!o.detail) continue;
    // What the tuner sees: busy fraction, service time (ms), backlog.
    line = fmt::format("{:>6}", "");
    for (const auto& s : row.members)
      line += fmt::format("  {:>16}", s ? fmt::format("{:.2f} {:.1f} {}", s->busy, s->service_ms, s->backlog) : "?");
    std::printf("%s\n", line.c_str());
  }
  if (o.detail) {
    std::printf("\n== %s: the delegate's tuning steps (t, L ms; per member: signal ms, decision, share old->new)\n",
                run.policy.c_str());
    for (const auto& step : run.tunings) {
      std::string line = fmt::format("{:>6.1f} {:>7.1f} v{}", double(step.at_unix_ms - run.start_unix_ms) / 1000.0,
                                     step.average_ms, step.map_version);
      for (const auto& t : step.servers)
        line += fmt::format(" | {} {:.1f} {} {:.3f}->{:.3f}", t.server, t.latency_ms, t.decision, t.old_share,
                            t.new_share);
      std::printf("%s\n", line.c_str());
    }
  }
  std::printf("%s\n",
              fmt::format("{}: {} requests, {} failed{}, {} not sent (all {} slots busy); {} file sets moved; "
                          "last third: mean latency {:.1f} ms, worst/avg mean {}, max {} (counting members "
                          "with under {:g}% of the requests too: mean {}; each member over the whole third: {}), "
                          "a member saturated (>= {} queued) "
                          "in {:.0f}% of the intervals; converged (<= {:g} and none saturated from then on): {}; "
                          "balanced (worst/avg mean <= {:g}, none saturated in the last third): {}",
                          run.policy, run.ops, run.errors,
                          run.errors ? " (first: " + run.first_error + ")" : std::string(), run.lost,
                          o.max_outstanding, run.moves, run.steady_avg_ms, ratio_text(run.steady_ratio),
                          ratio_text(run.steady_max), o.min_share * 100, ratio_text(run.steady_ratio_all),
                          ratio_text(run.steady_pooled),
                          kSaturatedBacklog, run.steady_saturated * 100, o.converged_ratio,
                          run.converge_s ? fmt::format("after {:.0f} s", *run.converge_s) : "never",
                          o.converged_ratio, balanced(run, o) ? "yes" : "no")
                  .c_str());
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"tests/bench/anu: ANU against simple hashing and round-robin on five metadata servers of "
               "unequal speed, under a skewed create/stat workload. See docs/bench/anu.md."};
  std::string policies = "anu,hash,round-robin";
  app.add_option("--policies", policies,
                 "comma-separated placements to run: anu (the daemons' default tuner), anu-busy (with the busy "
                 "model), anu-noguard (the default without the overload guard), anu-paper (the paper's tuner), "
                 "hash, round-robin")
      ->capture_default_str();
  app.add_option("--slowdown", o.slowdown, "pvfs-mds --slowdown per member")->delimiter(',')->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--service-us", o.service_us, "pvfs-mds --service-us: one request at factor 1")
      ->capture_default_str();
  app.add_option("--filesets", o.filesets, "file sets (top directories)")->capture_default_str()
      ->check(CLI::Range(1u, 4000u));
  app.add_option("--zipf", o.zipf, "skew: popularity of the k-th file set ~ 1/k^s")->capture_default_str();
  auto* rate = app.add_option("--rate", o.rate, "requests per second offered (Poisson arrivals)")
                   ->capture_default_str()
                   ->check(CLI::Range(1.0, 1e6));
  double load = 0;
  app.add_option("--load", load,
                 "offer this fraction of the members' emulated capacity instead of --rate (the sum over members "
                 "of 1 / (service x slowdown); 0.8 is the issue's near-peak load)")
      ->check(CLI::Range(0.01, 2.0))
      ->excludes(rate);
  app.add_option("--max-outstanding", o.max_outstanding, "requests in flight at most")->capture_default_str();
  app.add_option("--creates", o.create_fraction, "fraction of requests that create a file (the rest stat one)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--duration", o.duration_s, "seconds of workload per policy")->capture_default_str();
  app.add_option("--interval-ms", o.interval_ms, "[mds_cluster] tune_interval_ms")->capture_default_str()
      ->check(CLI::Range(100u, 600000u));
  app.add_option("--bound", o.converged_ratio, "worst/average counted as converged and balanced")->capture_default_str();
  app.add_option("--min-share", o.min_share,
                 "members serving less than this fraction of an interval's requests do not count as its worst")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", o.seed, "workload seed")->capture_default_str();
  app.add_option("--workdir", o.workdir, "where to make the temporary folder")->capture_default_str();
  app.add_flag("--keep", o.keep, "keep the clusters' folders (logs) afterwards");
  app.add_option("--repeat", o.repeat,
                 "runs of each policy, each on a fresh cluster with the same seed; RESULT then gives the median "
                 "of each figure and, for ANU, how many runs were balanced")
      ->capture_default_str()->check(CLI::Range(1u, 100u));
  app.add_flag("--detail", o.detail,
               "also print each member's busy fraction, service time and backlog per interval, and the "
               "delegate's tuning steps");
  CLI11_PARSE(app, argc, argv);
  o.policies = split(policies);
  if (load > 0) {
    double capacity = 0;  // requests per second the emulated members serve at most
    for (double factor : o.slowdown) capacity += 1e6 / (static_cast<double>(o.service_us) * factor);
    o.rate = load * capacity;
    note(fmt::format("--load {}: {:.0f} requests/s of the members' {:.0f}", load, o.rate, capacity));
  }

  fs::path work = fs::path(o.workdir) / fmt::format("pvfs-anu.{}", ::getpid());
  fs::create_directories(work);
  pvfs::test::CleanupOnSignal on_signal([work, keep = o.keep] { pvfs::test::undo_folder(work, !keep); });
  std::vector<PolicyRun> runs;
  int status = 0;
  for (const auto& policy : o.policies) {
    for (uint32_t k = 1; k <= o.repeat; ++k) {
      if (o.repeat > 1) note(fmt::format("{}: run {} of {}", policy, k, o.repeat));
      auto run = run_policy(policy, o, o.repeat > 1 ? work / fmt::format("{}.{}", policy, k) : work / policy);
      if (!run) {
        status = 1;
        continue;
      }
      print_run(*run, o);
      std::fflush(stdout);
      runs.push_back(std::move(*run));
    }
  }
  if (o.keep) note("logs kept in " + work.string());
  else fs::remove_all(work);

  std::string result = "RESULT";
  uint64_t errors = 0;
  for (const auto& policy : o.policies) {
    std::vector<const PolicyRun*> mine;
    for (const auto& run : runs)
      if (run.policy == policy) mine.push_back(&run);
    if (mine.empty()) continue;
    const std::string key = policy == "round-robin" ? "rr"
                            : policy == "anu-paper"  ? "anu_paper"
                            : policy == "anu-busy"   ? "anu_busy"
                            : policy == "anu-noguard" ? "anu_noguard"
                                                     : policy;
    uint64_t failed = 0;
    for (const PolicyRun* run : mine) failed += run->errors;
    errors += failed;
    if (o.repeat == 1) {
      const PolicyRun& run = *mine.front();
      result += fmt::format(" {}_worst_over_avg={:.2f} {}_pooled={:.2f} {}_avg_ms={:.1f} {}_saturated={:.2f}", key,
                            run.steady_ratio, key, run.steady_pooled, key, run.steady_avg_ms, key,
                            run.steady_saturated);
      if (policy.starts_with("anu"))
        result += fmt::format(" {}_converge_s={} {}_balanced={}", key,
                              run.converge_s ? fmt::format("{:.0f}", *run.converge_s) : "never", key,
                              balanced(run, o) ? 1 : 0);
    } else {
      print_repeats(policy, mine, o);
      auto median_of = [&](double PolicyRun::*field) {
        std::vector<double> v;
        for (const PolicyRun* run : mine) v.push_back(run->*field);
        return median(v);
      };
      result += fmt::format(" {}_runs={} {}_worst_over_avg={:.2f} {}_pooled={:.2f}", key, mine.size(), key,
                            median_of(&PolicyRun::steady_ratio), key, median_of(&PolicyRun::steady_pooled));
      result += fmt::format(" {}_avg_ms={:.1f} {}_saturated={:.2f}", key, median_of(&PolicyRun::steady_avg_ms), key,
                            median_of(&PolicyRun::steady_saturated));
      if (policy.starts_with("anu")) {
        const auto balanced_runs =
            std::count_if(mine.begin(), mine.end(), [&](const PolicyRun* r) { return balanced(*r, o); });
        result += fmt::format(" {}_balanced_runs={}", key, balanced_runs);
      }
    }
    if (failed) result += fmt::format(" {}_errors={}", key, failed);
  }
  result += fmt::format(" errors={}", errors);
  std::printf("\n%s\n", result.c_str());
  return status ? status : errors ? 1 : 0;
}
