// Scenario obrr-deadlines: the OBRR paper's deadline experiment (Qian et
// al., §4, Fig. 6). One storage server, a thousand clients writing with a
// few requests in flight and starts spread over 20 s, plus clients issuing
// urgent writes with a 5 s maximum service time. The server's queue is the
// daemon's elevator with its dynamic and mandatory deadlines
// (policy/elevator) over an emulated disk; this file models the clients.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "utils/sim/elevator_server.h"
#include "utils/sim/random.h"
#include "utils/sim/scenario.h"

namespace pvfs::sim {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

struct Setup {
  uint32_t clients = 0;
  uint64_t bytes_per_client = 0;
  uint64_t transfer = 0;
  uint32_t in_flight = 0;
  Nanos skew{0};
  uint32_t urgent_clients = 0;
  Nanos urgent_interval{0};
  Nanos urgent_max{0};
  elevator::ElevatorOptions elevator;
  elevator::EmulatedDiskOptions disk;
  Nanos latency{0};
  double link_bytes_per_s = 0;
  Nanos sample{0};
};

double seconds(Nanos t) {
  return std::chrono::duration<double>(t).count();
}

// A request in the server, as the figure needs it.
struct Sent {
  uint32_t client = 0;
  bool urgent = false;
  uint64_t length = 0;
  Nanos arrival{0};
  Nanos expiration{0};  // normal: deadline - arrival
};

struct Sample {
  Nanos completion;
  Nanos response;
  Nanos expiration;
};

class Run {
 public:
  Run(const Setup& setup, Random rng)
      : setup_(setup), server_(queue_, setup.elevator, setup.disk, [this](uint64_t id) { done(id); }) {
    const uint32_t all = setup.clients + setup.urgent_clients;
    next_offset_.assign(all, 0);
    link_free_.assign(all, Nanos(0));
    for (uint32_t c = 0; c < setup.clients; ++c) {
      const Nanos start(static_cast<int64_t>(rng.uniform() * static_cast<double>(setup.skew.count())));
      queue_.at(start, [this, c] {
        for (uint32_t i = 0; i < setup_.in_flight; ++i) send(c);
      });
    }
    for (uint32_t u = 0; u < setup.urgent_clients; ++u) {
      const Nanos start(
          static_cast<int64_t>(rng.uniform() * static_cast<double>(setup.urgent_interval.count())));
      queue_.at(start, [this, c = setup.clients + u] { send(c); });
    }
    normal_left_ = setup.clients;
    queue_.at(Nanos(0), [this] { sample(); });
  }

  void run() { queue_.run(); }

  std::vector<std::pair<Nanos, uint64_t>> queue_length;  // (time, requests in the server)
  std::vector<Sample> normal;
  std::vector<Sample> urgent;
  Nanos finish{0};

  const ElevatorServer& server() const { return server_; }

 private:
  bool is_urgent(uint32_t c) const { return c >= setup_.clients; }

  void sample() {
    queue_length.emplace_back(queue_.now(), server_.elevator().queued() + server_.elevator().in_service());
    if (normal_left_ > 0) queue_.after(setup_.sample, [this] { sample(); });
  }

  void send(uint32_t c) {
    const bool urgent = is_urgent(c);
    if (!urgent && next_offset_[c] >= setup_.bytes_per_client) return;
    if (urgent && normal_left_ == 0) return;  // the experiment is over
    const uint64_t offset = next_offset_[c];
    const uint64_t length =
        urgent ? setup_.transfer : std::min(setup_.transfer, setup_.bytes_per_client - offset);
    next_offset_[c] += length;
    const Nanos leaves = std::max(queue_.now(), link_free_[c]);
    link_free_[c] = leaves + Nanos(std::llround(static_cast<double>(length) / setup_.link_bytes_per_s * 1e9));
    elevator::Request r;
    r.id = next_id_++;
    r.object = ObjectId{InodeId::make(FileSetId(1), c + 1), 0};
    r.write = true;
    r.offset = offset;
    r.length = length;
    if (urgent) {
      r.cls = elevator::Class::urgent;
      r.max_service = setup_.urgent_max;
    }
    queue_.at(link_free_[c] + setup_.latency, [this, r, c, urgent] {
      sent_.emplace(r.id, Sent{c, urgent, r.length, queue_.now(), Nanos(0)});
      server_.submit(r);
      const Nanos deadline = server_.deadline_of(r.id);
      if (!urgent && deadline != Nanos::max()) sent_.at(r.id).expiration = deadline - queue_.now();
    });
  }

  void done(uint64_t id) {
    auto it = sent_.find(id);
    PVFS_CHECK(it != sent_.end());
    const Sent s = it->second;
    sent_.erase(it);
    const Nanos now = queue_.now();
    (s.urgent ? urgent : normal).push_back(Sample{now, now - s.arrival, s.expiration});
    if (!s.urgent) {
      acked_[s.client] += s.length;
      if (acked_[s.client] == setup_.bytes_per_client) {
        --normal_left_;
        finish = std::max(finish, now);
      }
    }
    // The reply travels back; an urgent client waits its interval before
    // the next urgent write, a normal one sends its next at once.
    const Nanos next = setup_.latency + (s.urgent ? setup_.urgent_interval : Nanos(0));
    queue_.after(next, [this, c = s.client] { send(c); });
  }

  const Setup& setup_;
  EventQueue queue_;
  ElevatorServer server_;
  std::vector<uint64_t> next_offset_;
  std::vector<Nanos> link_free_;
  std::map<uint32_t, uint64_t> acked_;
  std::map<uint64_t, Sent> sent_;
  uint64_t next_id_ = 1;
  uint32_t normal_left_ = 0;
};

Result<Setup> make_setup(const Params& p) {
  Setup s;
  if (p.integer("clients") < 1 || p.integer("clients") > 1'000'000)
    return Status(Errc::invalid_argument, "clients must be in [1, 1000000]");
  if (p.integer("urgent_clients") < 0 || p.integer("in_flight") < 1)
    return Status(Errc::invalid_argument, "need urgent_clients >= 0 and in_flight >= 1");
  if (p.number("mb_per_client") <= 0 || p.integer("transfer_kb") < 4)
    return Status(Errc::invalid_argument, "need mb_per_client > 0 and transfer_kb >= 4");
  if (p.number("skew_s") < 0 || p.number("urgent_interval_ms") < 0 || p.number("urgent_max_s") <= 0)
    return Status(Errc::invalid_argument, "need skew_s >= 0, urgent_interval_ms >= 0, urgent_max_s > 0");
  if (p.number("disk_mb_per_s") <= 0 || p.number("seek_ms") < 0 || p.number("link_mb_per_s") <= 0 ||
      p.number("latency_us") < 0 || p.number("sample_ms") <= 0)
    return Status(Errc::invalid_argument,
                  "need disk_mb_per_s > 0, seek_ms >= 0, link_mb_per_s > 0, latency_us >= 0, sample_ms > 0");
  s.clients = static_cast<uint32_t>(p.integer("clients"));
  s.bytes_per_client = static_cast<uint64_t>(std::llround(p.number("mb_per_client") * kMiB));
  s.transfer = static_cast<uint64_t>(p.integer("transfer_kb")) * 1024;
  s.in_flight = static_cast<uint32_t>(p.integer("in_flight"));
  s.skew = Nanos(std::llround(p.number("skew_s") * 1e9));
  s.urgent_clients = static_cast<uint32_t>(p.integer("urgent_clients"));
  s.urgent_interval = Nanos(std::llround(p.number("urgent_interval_ms") * 1e6));
  s.urgent_max = Nanos(std::llround(p.number("urgent_max_s") * 1e9));
  s.elevator.policy = elevator::Policy::obrr;
  s.elevator.quantum = static_cast<uint64_t>(std::max<int64_t>(0, p.integer("quantum")));
  s.elevator.max_merge_bytes = static_cast<uint64_t>(std::max<int64_t>(0, p.integer("max_merge_kb"))) * 1024;
  s.elevator.lambda = p.number("lambda");
  if (Status st = elevator::validate(s.elevator); !st.ok()) return st;
  s.disk.bytes_per_second = static_cast<uint64_t>(std::llround(p.number("disk_mb_per_s") * 1e6));
  s.disk.seek = Nanos(std::llround(p.number("seek_ms") * 1e6));
  s.latency = Nanos(std::llround(p.number("latency_us") * 1e3));
  s.link_bytes_per_s = p.number("link_mb_per_s") * 1e6;
  s.sample = Nanos(std::llround(p.number("sample_ms") * 1e6));
  return s;
}

// The q-quantile (nearest rank) of `values`, which it sorts; 0 when empty.
double quantile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

Result<Report> run(const Params& p, uint64_t seed) {
  auto setup_or = make_setup(p);
  if (!setup_or) return setup_or.status();
  const Setup& setup = *setup_or;
  Run sim(setup, Random(seed));
  sim.run();

  Table queue("queue", {"time_s", "requests"});
  uint64_t max_queue = 0;
  for (const auto& [t, n] : sim.queue_length) {
    queue.add({num(seconds(t), 3), num(n)});
    max_queue = std::max(max_queue, n);
  }
  Table normal("normal", {"completion_s", "response_s", "expiration_s"});
  std::vector<double> rt, et;
  for (const Sample& s : sim.normal) {
    normal.add({num(seconds(s.completion), 4), num(seconds(s.response), 4), num(seconds(s.expiration), 4)});
    rt.push_back(seconds(s.response));
    et.push_back(seconds(s.expiration));
  }
  Table urgent("urgent", {"completion_s", "response_s"});
  std::vector<double> urt;
  uint64_t late = 0;
  for (const Sample& s : sim.urgent) {
    urgent.add({num(seconds(s.completion), 4), num(seconds(s.response), 4)});
    urt.push_back(seconds(s.response));
    if (s.response > setup.urgent_max) ++late;
  }

  const elevator::ElevatorStats stats = sim.server().elevator().stats();
  const double total_mb = static_cast<double>(sim.server().disk().bytes()) / 1e6;
  Table summary("summary", {"metric", "value"});
  summary.add({"most requests queued", num(max_queue)});
  summary.add({"normal requests", num(static_cast<uint64_t>(rt.size()))});
  summary.add({"normal response p50 / p99 / max (s)",
               fmt::format("{} / {} / {}", num(quantile(rt, 0.5), 2), num(quantile(rt, 0.99), 2),
                           num(quantile(rt, 1), 2))});
  summary.add({"normal expiration p50 / max (s)",
               fmt::format("{} / {}", num(quantile(et, 0.5), 2), num(quantile(et, 1), 2))});
  summary.add({"urgent requests", num(static_cast<uint64_t>(urt.size()))});
  summary.add({"urgent response p50 / max (s)",
               fmt::format("{} / {}", num(quantile(urt, 0.5), 2), num(quantile(urt, 1), 2))});
  summary.add({"urgent past their maximum", num(late)});
  summary.add({"dispatches for expired dynamic deadlines", num(stats.dynamic_expiries)});
  summary.add({"dispatches for due urgent requests", num(stats.mandatory_expiries)});
  summary.add({"disk seeks / operations", fmt::format("{} / {}", stats.seeks, stats.dispatches)});
  summary.add({"last normal write done (s)", num(seconds(sim.finish), 1)});
  summary.add({"throughput (MB/s)", num(total_mb / seconds(sim.finish), 1)});

  Report report;
  report.summary = summary;
  report.notes.push_back(fmt::format(
      "{} clients x {} MiB in {} KiB requests ({} in flight), starts over {} s; {} urgent clients, "
      "one {} KiB write each per {} ms after the last, {} s maximum; lambda {}",
      setup.clients, setup.bytes_per_client / kMiB, setup.transfer / 1024, setup.in_flight,
      num(seconds(setup.skew), 1), setup.urgent_clients, setup.transfer / 1024,
      num(std::chrono::duration<double, std::milli>(setup.urgent_interval).count(), 0),
      num(seconds(setup.urgent_max), 1), num(setup.elevator.lambda, 2)));
  report.plot = fmt::format(
      "set multiplot layout 1,2\nset grid\n"
      "set title 'Requests queued on the server (Fig. 6, left)'\nset xlabel 'time (s)'\nset ylabel "
      "'requests'\n"
      "plot 'queue.csv' skip 1 using 1:2 with lines lw 2 notitle\n"
      "set title 'Response and estimated expiration times (Fig. 6, right)'\nset xlabel 'completion time "
      "(s)'\n"
      "set ylabel 'seconds'\nset key top right\n"
      "plot 'normal.csv' skip 1 using 1:3 with points pt 7 ps 0.15 lc rgb '#999999' title 'ET(d): estimated "
      "expiration, "
      "normal', \\\n"
      "     'normal.csv' skip 1 using 1:2 with points pt 7 ps 0.15 lc rgb '#1f77b4' title 'RT(d): response, "
      "normal', \\\n"
      "     'urgent.csv' skip 1 using 1:2 with points pt 7 ps 0.4 lc rgb '#d62728' title 'RT(m): response, "
      "urgent', \\\n"
      "     {} with lines dt 2 lc rgb '#d62728' title 'urgent maximum'\n",
      num(seconds(setup.urgent_max), 3));
  report.plot_width = 1600;
  report.plot_height = 650;
  report.csv = {queue, normal, urgent};
  return report;
}

}  // namespace

Scenario obrr_deadlines() {
  Scenario s;
  s.name = "obrr-deadlines";
  s.title = "OBRR paper Fig. 6: queue length, dynamic deadlines and urgent requests on one server";
  s.params = {
      {"clients", ParamType::integer, "1000", "200", "clients writing normal requests"},
      {"mb_per_client", ParamType::number, "32", "16", "MiB each client writes"},
      {"transfer_kb", ParamType::integer, "1024", "", "request size (KiB), normal and urgent"},
      {"in_flight", ParamType::integer, "8", "", "requests each client keeps outstanding"},
      {"skew_s", ParamType::number, "20", "2", "clients start within this window (s)"},
      {"urgent_clients", ParamType::integer, "50", "5", "clients writing urgent requests"},
      {"urgent_interval_ms", ParamType::number, "100", "",
       "an urgent client waits this long after each reply (ms)"},
      {"urgent_max_s", ParamType::number, "5", "1", "maximum service time of urgent requests (s)"},
      {"lambda", ParamType::number, "1.5", "", "dynamic deadline factor"},
      {"quantum", ParamType::integer, "8", "", "OBRR quantum (requests per object per round)"},
      {"max_merge_kb", ParamType::integer, "4096", "", "largest merged disk operation (KiB)"},
      {"disk_mb_per_s", ParamType::number, "450", "", "disk bandwidth (MB/s)"},
      {"seek_ms", ParamType::number, "10", "", "disk seek time (ms)"},
      {"latency_us", ParamType::number, "50", "", "one-way network latency (us)"},
      {"link_mb_per_s", ParamType::number, "1000", "", "each client's link bandwidth (MB/s)"},
      {"sample_ms", ParamType::number, "100", "", "queue length sampling interval (ms)"},
  };
  s.run = run;
  return s;
}

}  // namespace pvfs::sim
