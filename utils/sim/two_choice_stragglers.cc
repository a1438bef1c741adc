// Scenario two-choice-stragglers: the two-choice paper's simulation
// (Dai et al., §III-A, Fig. 3 and 4). Many compute nodes write one
// synchronized burst to storage servers that already have a normally
// distributed queue, some of them (the stragglers) five times longer. The
// write dispatch round (policy/dispatch/round.h: the probe-or-not rule
// over the client's load memory, assign, ProbeDone, the loads the writes
// carry), the preassign estimator, load detector and peer loads
// (policy/load) and the redirect table (policy/redirect) are the daemons'
// own; this file models only the network (a fixed round trip) and each
// server's disk (one FIFO queue at a fixed bandwidth), the way
// fs/client_dispatch.cc and server/storage_sched.cc drive those objects.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "policy/dispatch/dispatcher.h"
#include "policy/dispatch/load_memory.h"
#include "policy/dispatch/round.h"
#include "policy/load/load_detector.h"
#include "policy/load/peer_loads.h"
#include "policy/load/preassign.h"
#include "policy/redirect/redirect_table.h"
#include "utils/sim/event_queue.h"
#include "utils/sim/random.h"
#include "utils/sim/scenario.h"

namespace pvfs::sim {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
using std::chrono::milliseconds;

struct Setup {
  uint32_t servers = 0;
  uint32_t processes = 0;
  uint32_t per_node = 0;
  uint64_t piece_bytes = 0;
  double load_mean = 0;  // pre-existing queue, in pieces
  double load_sd = 0;
  double straggler_factor = 0;
  Nanos rtt{0};
  Nanos piece_service{0};  // disk time of one piece
  Nanos start_window{0};   // nodes start within it
  uint64_t margin_bytes = 0;
  Nanos load_ttl{0};       // how long a load heard stays fresh (client and servers)
  double skew_factor = 0;
};

// One storage server: the daemon's load counters and preassign estimator,
// its redirect table as the home of its objects, and a FIFO disk.
struct Server {
  load::LoadDetector load;
  load::PreassignEstimator preassign;
  load::PeerLoads peers;  // what the writes told it of the others
  redirect::RedirectTable redirects;
  Nanos busy_until{0};
  uint32_t placed = 0;  // pieces of the current burst written here
};

// One compute node's pieces in the current burst: they share one dispatch
// round, as in fs/client_dispatch.cc.
struct Node {
  std::vector<sched::Piece> pieces;
  std::vector<uint32_t> process;  // the process writing each piece
  std::optional<sched::Round> round;
  uint64_t round_id = 0;
  size_t awaiting = 0;  // probe answers not yet back
  std::shared_ptr<const std::vector<sched::ServerLoad>> seen;  // what its writes carry
};

sched::TimePoint at(Nanos t) {
  return sched::TimePoint(std::chrono::duration_cast<sched::TimePoint::duration>(t));
}

// A cluster that lives through successive bursts, so the preassign
// estimators learn from earlier ones as they would in a running system.
class Cluster {
 public:
  Cluster(const Setup& setup, sched::Policy policy, Random rng)
      : setup_(setup), rng_(rng), servers_(setup.servers) {
    options_.policy = policy;
    options_.margin_bytes = setup.margin_bytes;
    options_.skew_factor = setup.skew_factor;
    for (uint32_t s = 0; s < setup.servers; ++s) ids_.push_back(ServerId(s));
    memories_.resize((setup.processes + setup.per_node - 1) / setup.per_node);
  }
  // Events hold pointers into the cluster.
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Runs one burst on top of `preload[s]` queued pieces per server and
  // returns the completion time of its slowest write. Afterwards
  // placed(s) tells how many pieces server s received.
  Nanos burst(const std::vector<uint32_t>& preload) {
    const Nanos t0 = queue_.now() + std::chrono::seconds(1);
    for (uint32_t s = 0; s < setup_.servers; ++s) start_server(s, preload[s], t0);
    nodes_.assign((setup_.processes + setup_.per_node - 1) / setup_.per_node, Node{});
    finish_.assign(setup_.processes, t0);
    for (uint32_t p = 0; p < setup_.processes; ++p) {
      Node& node = nodes_[p / setup_.per_node];
      // Round-robin striping: process p's object lives on server p mod n.
      node.pieces.push_back(sched::Piece{ids_[p % setup_.servers], setup_.piece_bytes});
      node.process.push_back(p);
    }
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const Nanos start = t0 + Nanos(static_cast<int64_t>(rng_.uniform() * setup_.start_window.count()));
      queue_.at(start, [this, n] { plan(n); });
    }
    queue_.run();
    return *std::max_element(finish_.begin(), finish_.end()) - t0;
  }

  uint32_t placed(uint32_t server) const { return servers_[server].placed; }
  uint64_t redirected() const { return redirected_; }

 private:
  void start_server(uint32_t s, uint32_t preload, Nanos t0) {
    Server& server = servers_[s];
    server.placed = 0;
    server.redirects = redirect::RedirectTable{};  // the maintainer pulled everything home
    server.busy_until = t0;
    for (uint32_t i = 0; i < preload; ++i) {
      server.load.begin(setup_.piece_bytes);
      server.busy_until += setup_.piece_service;
      queue_.at(server.busy_until, [this, s] { servers_[s].load.end(setup_.piece_bytes); });
    }
  }

  bool preassign() const { return options_.policy == sched::Policy::preassign; }

  // The node's dispatch round, as fs/client_dispatch.cc runs it: the
  // memory may decide without a probe; otherwise probe, and decide when
  // every answer is back.
  void plan(size_t n) {
    Node& node = nodes_[n];
    node.round.emplace(options_, node.pieces, ids_, memories_[n], at(queue_.now()), setup_.load_ttl, rng_.engine());
    if (!node.round->probes()) {
      decide(n);
      return;
    }
    node.round_id = ++last_round_;
    node.awaiting = node.round->plan().probe.size();
    for (ServerId s : node.round->plan().probe) queue_.after(setup_.rtt / 2, [this, n, s] { probe(n, s); });
  }

  // The server answers with its load, preassigned bytes included, and the
  // fresh loads it heard of its peers, then preassigns this round
  // (server/storage_sched.cc, StorageService::probe).
  void probe(size_t n, ServerId id) {
    Node& node = nodes_[n];
    Server& server = servers_[id.value];
    server.preassign.expire(queue_.now());
    const uint64_t bytes = server.load.bytes() + server.preassign.preassigned_bytes();
    const sched::ServerLoad self{id, bytes, server.load.requests(), server.preassign.preassigned_bytes()};
    std::vector<load::HeardLoad> others = server.peers.fresh(queue_.now(), setup_.load_ttl);
    if (node.round->preassign())
      server.preassign.on_probe(node.round_id, bytes, node.round->piece_bytes(), queue_.now());
    queue_.after(setup_.rtt / 2, [this, n, self, others = std::move(others)] {
      Node& node = nodes_[n];
      sched::LoadMemory& memory = memories_[n];
      node.round->answered(self, at(queue_.now()), memory);
      for (const load::HeardLoad& o : others)
        memory.heard(sched::ServerLoad{ServerId(o.load.server), o.load.bytes + o.load.preassigned, o.load.requests,
                                       o.load.preassigned},
                     at(queue_.now() - o.age));
      if (--node.awaiting == 0) decide(n);
    });
  }

  void decide(size_t n) {
    Node& node = nodes_[n];
    const std::vector<ServerId> chosen = node.round->decide(memories_[n], at(queue_.now()), rng_.engine());
    // Probed servers that got nothing hear so at once (ProbeDone).
    for (ServerId s : node.round->probe_done(chosen)) {
      const uint64_t round = node.round_id;
      queue_.after(setup_.rtt / 2, [this, s, round] { servers_[s.value].preassign.on_outcome(round, false); });
    }
    node.seen = std::make_shared<const std::vector<sched::ServerLoad>>(node.round->reported());
    const uint64_t round = node.round->probes() ? node.round_id : 0;
    for (size_t i = 0; i < chosen.size(); ++i) {
      const ServerId s = chosen[i];
      const Nanos sent = queue_.now();
      queue_.after(setup_.rtt / 2, [this, n, i, s, round, sent] { write(n, i, s, round, sent); });
    }
  }

  // The write arrives: the server learns the loads it carries, settles the
  // round's preassign, queues it; the reply tells the client the server's
  // load and how long the write took.
  void write(size_t n, size_t i, ServerId id, uint64_t round, Nanos sent) {
    Node& node = nodes_[n];
    Server& server = servers_[id.value];
    if (round) server.preassign.on_outcome(round, true);
    for (const sched::ServerLoad& l : *node.seen) {
      const uint64_t preassigned = std::min(l.bytes, l.preassigned);
      if (l.server != id)
        server.peers.learn(load::PeerLoad{l.server.value, l.requests, l.bytes - preassigned, preassigned}, Nanos(0),
                           queue_.now());
    }
    server.load.begin(setup_.piece_bytes);
    ++server.placed;
    server.busy_until = std::max(server.busy_until, queue_.now()) + setup_.piece_service;
    queue_.at(server.busy_until, [this, n, i, id, sent] {
      Server& server = servers_[id.value];
      server.load.end(setup_.piece_bytes);
      server.preassign.expire(queue_.now());
      const sched::ServerLoad left{id, server.load.bytes() + server.preassign.preassigned_bytes(),
                                   server.load.requests(), server.preassign.preassigned_bytes()};
      queue_.after(setup_.rtt / 2, [this, n, i, id, sent, left] {
        sched::LoadMemory& memory = memories_[n];
        memory.wrote(id, setup_.piece_bytes, queue_.now() - sent, at(queue_.now()));
        memory.heard(left, at(queue_.now() - setup_.rtt / 2));
        written(n, i, id);
      });
    });
  }

  // The reply reached the client. A piece written away from home is not
  // done until its home has recorded where it went: one more round trip.
  void written(size_t n, size_t i, ServerId id) {
    const Node& node = nodes_[n];
    const uint32_t p = node.process[i];
    const ServerId home = node.pieces[i].home;
    if (id == home) {
      finish_[p] = queue_.now();
      return;
    }
    queue_.after(setup_.rtt / 2, [this, p, home, id] {
      redirect::RedirectTable& table = servers_[home.value].redirects;
      const ObjectId object{InodeId::make(FileSetId(1), p + 1), 0};
      (void)table.append(object, redirect::Entry{table.next_seq(), 0, setup_.piece_bytes,
                                                 redirect::Location::remote(id, p + 1, 0)});
      ++redirected_;
      finish_[p] = queue_.now() + setup_.rtt / 2;
    });
  }

  Setup setup_;
  sched::Options options_;
  Random rng_;
  EventQueue queue_;
  std::vector<ServerId> ids_;
  std::vector<Server> servers_;
  std::vector<Node> nodes_;
  std::vector<sched::LoadMemory> memories_;  // per compute node, across bursts
  std::vector<Nanos> finish_;  // per process, of the current burst
  uint64_t last_round_ = 0;
  uint64_t redirected_ = 0;
};

// Pre-existing queues for one burst: normal, rounded, at least zero, and
// times straggler_factor on round(ratio x n) servers chosen at random.
std::vector<uint32_t> preloads(const Setup& setup, double ratio, Random rng) {
  std::vector<uint32_t> out(setup.servers);
  for (uint32_t& l : out)
    l = static_cast<uint32_t>(std::max(0.0, std::round(rng.normal(setup.load_mean, setup.load_sd))));
  std::vector<uint32_t> order(setup.servers);
  for (uint32_t i = 0; i < setup.servers; ++i) order[i] = i;
  const auto stragglers = static_cast<uint32_t>(std::lround(ratio * setup.servers));
  for (uint32_t i = 0; i < stragglers; ++i) {
    std::swap(order[i], order[i + rng.below(setup.servers - i)]);
    out[order[i]] = static_cast<uint32_t>(std::lround(out[order[i]] * setup.straggler_factor));
  }
  return out;
}

double ms(Nanos t) {
  return std::chrono::duration<double, std::milli>(t).count();
}

// Streams of randomness, so every policy sees the same pre-existing loads.
enum Stream : uint64_t { kLoads = 1, kWarmup = 2, kPolicy = 3, kFigure = 4 };
uint64_t stream_id(Stream s, uint64_t a, uint64_t b = 0) {
  return (uint64_t{s} << 48) | (a << 24) | b;
}

Result<Setup> make_setup(const Params& p) {
  Setup s;
  if (p.integer("servers") < 2 || p.integer("servers") > 1'000'000)
    return Status(Errc::invalid_argument, "servers must be in [2, 1000000]");
  if (p.integer("processes") < 1 || p.integer("processes") > 10'000'000)
    return Status(Errc::invalid_argument, "processes must be in [1, 10000000]");
  if (p.integer("per_node") < 1) return Status(Errc::invalid_argument, "per_node must be >= 1");
  if (p.number("piece_mb") <= 0 || p.number("disk_mb_per_s") <= 0)
    return Status(Errc::invalid_argument, "piece_mb and disk_mb_per_s must be > 0");
  if (p.number("load_mean") < 0 || p.number("load_sd") < 0 || p.number("straggler_factor") < 1)
    return Status(Errc::invalid_argument, "need load_mean >= 0, load_sd >= 0, straggler_factor >= 1");
  if (p.number("rtt_ms") < 0 || p.number("start_window_ms") < 0 || p.number("margin_mb") < 0 ||
      p.number("load_ttl_ms") < 0 || p.number("skew_factor") < 0)
    return Status(Errc::invalid_argument,
                  "rtt_ms, start_window_ms, margin_mb, load_ttl_ms and skew_factor must be >= 0");
  for (double r : p.numbers("ratios"))
    if (r < 0 || r > 1) return Status(Errc::invalid_argument, "straggler ratios must be in [0, 1]");
  if (p.number("fig4_ratio") < 0 || p.number("fig4_ratio") > 1)
    return Status(Errc::invalid_argument, "fig4_ratio must be in [0, 1]");
  if (p.integer("repetitions") < 1 || p.integer("warmup") < 0)
    return Status(Errc::invalid_argument, "need repetitions >= 1 and warmup >= 0");
  s.servers = static_cast<uint32_t>(p.integer("servers"));
  s.processes = static_cast<uint32_t>(p.integer("processes"));
  s.per_node = static_cast<uint32_t>(p.integer("per_node"));
  s.piece_bytes = static_cast<uint64_t>(std::llround(p.number("piece_mb") * kMiB));
  s.load_mean = p.number("load_mean");
  s.load_sd = p.number("load_sd");
  s.straggler_factor = p.number("straggler_factor");
  s.rtt = Nanos(std::llround(p.number("rtt_ms") * 1e6));
  s.piece_service =
      Nanos(std::llround(static_cast<double>(s.piece_bytes) / (p.number("disk_mb_per_s") * 1e6) * 1e9));
  s.start_window = Nanos(std::llround(p.number("start_window_ms") * 1e6));
  s.margin_bytes = static_cast<uint64_t>(std::llround(p.number("margin_mb") * kMiB));
  s.load_ttl = Nanos(std::llround(p.number("load_ttl_ms") * 1e6));
  s.skew_factor = p.number("skew_factor");
  return s;
}

Result<std::vector<sched::Policy>> make_policies(const Params& p) {
  std::vector<sched::Policy> out;
  for (const std::string& name : p.words("policies")) {
    auto policy = sched::parse_policy(name);
    if (!policy) return Status(Errc::invalid_argument, "unknown dispatch policy '" + name + "'");
    out.push_back(*policy);
  }
  return out;
}

std::string column(sched::Policy p) {
  return std::string(sched::policy_name(p));
}

// Lets the preassign estimators of `cluster` learn from `warmup` earlier
// bursts at the same straggler ratio (the other policies keep no history).
void warm_up(Cluster& cluster, sched::Policy policy, const Setup& setup, double ratio, int64_t warmup,
             uint64_t seed, uint64_t key) {
  if (policy != sched::Policy::preassign) return;
  for (int64_t w = 0; w < warmup; ++w)
    (void)cluster.burst(
        preloads(setup, ratio, Random::stream(seed, stream_id(kWarmup, key, static_cast<uint64_t>(w)))));
}

Random policy_rng(uint64_t seed, uint64_t key, sched::Policy policy) {
  return Random::stream(seed, stream_id(kPolicy, key, static_cast<uint64_t>(policy)));
}

Result<Report> run(const Params& p, uint64_t seed) {
  auto setup_or = make_setup(p);
  if (!setup_or) return setup_or.status();
  auto policies_or = make_policies(p);
  if (!policies_or) return policies_or.status();
  const Setup& setup = *setup_or;
  const std::vector<sched::Policy>& policies = *policies_or;
  const std::vector<double> ratios = p.numbers("ratios");
  const int64_t reps = p.integer("repetitions");
  const int64_t warmup = p.integer("warmup");

  std::vector<std::string> cols{"ratio"};
  for (sched::Policy pol : policies) cols.push_back(column(pol) + "_ms");
  Table completion("completion", cols);
  Table raw("bursts", {"policy", "ratio", "repetition", "slowest_ms", "redirected"});
  std::vector<std::string> summary_cols{"ratio"};
  for (sched::Policy pol : policies) summary_cols.push_back(column(pol));
  const bool has_fixed = std::count(policies.begin(), policies.end(), sched::Policy::fixed) &&
                         std::count(policies.begin(), policies.end(), sched::Policy::preassign);
  if (has_fixed) summary_cols.push_back("preassign/fixed");
  Table summary("summary", summary_cols);

  for (size_t r = 0; r < ratios.size(); ++r) {
    std::vector<std::string> row{num(ratios[r], 2)};
    std::map<sched::Policy, double> mean_ms;
    for (sched::Policy pol : policies) {
      Cluster cluster(setup, pol, policy_rng(seed, r, pol));
      warm_up(cluster, pol, setup, ratios[r], warmup, seed, r);
      double sum = 0;
      for (int64_t rep = 0; rep < reps; ++rep) {
        const uint64_t before = cluster.redirected();
        const Nanos slowest = cluster.burst(preloads(
            setup, ratios[r], Random::stream(seed, stream_id(kLoads, r, static_cast<uint64_t>(rep)))));
        sum += ms(slowest);
        raw.add({column(pol), num(ratios[r], 2), num(rep), num(ms(slowest), 3),
                 num(cluster.redirected() - before)});
      }
      mean_ms[pol] = sum / static_cast<double>(reps);
      row.push_back(num(mean_ms[pol], 3));
    }
    completion.add(row);
    std::vector<std::string> srow{num(ratios[r], 2)};
    for (sched::Policy pol : policies) srow.push_back(num(mean_ms[pol], 1));
    if (has_fixed) srow.push_back(num(mean_ms[sched::Policy::preassign] / mean_ms[sched::Policy::fixed], 2));
    summary.add(srow);
  }

  // Fig. 4: one burst per policy on the same loads; per load level, how
  // many servers have it and the most pieces any of them received.
  const double fig_ratio = p.number("fig4_ratio");
  const std::vector<uint32_t> loads = preloads(setup, fig_ratio, Random::stream(seed, stream_id(kFigure, 0)));
  std::map<uint32_t, uint32_t> servers_at;
  for (uint32_t l : loads) ++servers_at[l];
  std::map<sched::Policy, std::map<uint32_t, uint32_t>> max_placed;
  for (sched::Policy pol : policies) {
    Cluster cluster(setup, pol, policy_rng(seed, 1000, pol));
    warm_up(cluster, pol, setup, fig_ratio, warmup, seed, 1000);
    (void)cluster.burst(loads);
    for (uint32_t s = 0; s < setup.servers; ++s) {
      uint32_t& m = max_placed[pol][loads[s]];
      m = std::max(m, cluster.placed(s));
    }
  }
  std::vector<std::string> pcols{"load", "servers"};
  for (sched::Policy pol : policies) pcols.push_back(column(pol) + "_max_placed");
  Table placement("placement", pcols);
  for (const auto& [level, count] : servers_at) {
    std::vector<std::string> row{num(level), num(count)};
    for (sched::Policy pol : policies) row.push_back(num(max_placed[pol][level]));
    placement.add(row);
  }

  Report report;
  report.summary = summary;
  report.notes.push_back(fmt::format(
      "completion time (ms) of the slowest of {} 1 MiB writes on {} servers, mean of {} bursts per ratio",
      setup.processes, setup.servers, reps));
  report.notes.push_back(
      fmt::format("figure 4 data (placement.csv) at straggler ratio {}", num(fig_ratio, 3)));

  std::string plot = "set multiplot layout 1,2\n";
  plot +=
      "set title 'Slowest write of a synchronized burst (Fig. 3)'\n"
      "set xlabel 'straggler ratio'\nset ylabel 'completion time (ms)'\nset key top left\nset grid\n"
      "plot ";
  for (size_t i = 0; i < policies.size(); ++i)
    plot +=
        fmt::format("{0}'completion.csv' skip 1 using 1:{1} with linespoints lw 2 lc {2} pt {2} title '{3}'",
                    i ? ", \\\n     " : "", i + 2, i + 1, column(policies[i]));
  plot += "\n";
  plot += fmt::format(
      "set title 'Placed requests by pre-existing server load, straggler ratio {} (Fig. 4)'\n"
      "set xlabel 'server load (queued requests before the burst)'\nset ylabel 'max requests placed on a "
      "server'\n"
      "set y2label 'servers'\nset y2tics\nset ytics nomirror\nset style fill solid 0.3 noborder\nset "
      "boxwidth 0.8\n"
      "set key top right\nplot 'placement.csv' skip 1 using 1:2 axes x1y2 with boxes lc rgb 'gray' title "
      "'servers'",
      num(fig_ratio, 3));
  for (size_t i = 0; i < policies.size(); ++i)
    plot += fmt::format(
        ", \\\n     'placement.csv' skip 1 using 1:{0} with linespoints lw 2 lc {1} pt {1} title '{2}'",
        i + 3, i + 1, column(policies[i]));
  plot += "\n";
  report.plot = plot;
  report.plot_width = 1600;
  report.plot_height = 700;
  report.csv = {completion, placement, raw};
  return report;
}

}  // namespace

Scenario two_choice_stragglers() {
  Scenario s;
  s.name = "two-choice-stragglers";
  s.title = "two-choice paper Fig. 3-4: slowest write of a burst vs straggler ratio, per dispatch policy";
  s.params = {
      {"servers", ParamType::integer, "1000", "100", "storage servers"},
      {"processes", ParamType::integer, "10000", "1000", "writing processes, one piece each"},
      {"per_node", ParamType::integer, "8", "", "processes per compute node (pieces per dispatch round)"},
      {"piece_mb", ParamType::number, "1", "", "size of each write (MiB)"},
      {"load_mean", ParamType::number, "10", "", "mean pre-existing queue per server (pieces)"},
      {"load_sd", ParamType::number, "2", "", "standard deviation of the pre-existing queue (pieces)"},
      {"straggler_factor", ParamType::number, "5", "", "a straggler's queue is this many times longer"},
      {"ratios", ParamType::numbers, "0,0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5", "0,0.1,0.3,0.5",
       "straggler ratios swept"},
      {"policies", ParamType::words, "fixed,random,two-choice,collab,preassign", "",
       "dispatch policies compared"},
      {"repetitions", ParamType::integer, "5", "2",
       "bursts per ratio and policy (the figure shows their mean)"},
      {"warmup", ParamType::integer, "2", "1", "earlier bursts the preassign estimators learn from"},
      {"rtt_ms", ParamType::number, "5", "", "client-server round trip (ms)"},
      {"start_window_ms", ParamType::number, "1", "", "nodes start the burst within this window (ms)"},
      {"disk_mb_per_s", ParamType::number, "100", "", "server disk bandwidth (MB/s)"},
      {"margin_mb", ParamType::number, "1", "", "dispatcher margin: stay home unless lighter by this (MiB)"},
      {"skew_factor", ParamType::number, "2", "",
       "preassign: stay home unless home's queue is more than this x the round's lower quartile "
       "(redirect_skew_factor; 0: the paper's rule)"},
      {"load_ttl_ms", ParamType::number, "300", "",
       "how long a load heard stays fresh, in the client's memory and the servers' (load_ttl_ms)"},
      {"fig4_ratio", ParamType::number, "0.01", "0.05", "straggler ratio of the placement figure"},
  };
  s.run = run;
  return s;
}

}  // namespace pvfs::sim
