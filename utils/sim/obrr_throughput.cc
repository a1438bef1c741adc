// Scenario obrr-throughput: the OBRR paper's throughput experiment (Qian et
// al., §4, Fig. 5 and Table 1). Thousands of IOR clients, file per
// process, each writing its own object on one storage server with a few
// requests in flight; every server orders them with the daemon's elevator
// (policy/elevator, FCFS or OBRR) for an emulated disk with seeks. The
// servers share nothing, so each is simulated on its own and the results
// added up; what this file models is the clients and their network links.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "utils/sim/elevator_server.h"
#include "utils/sim/random.h"
#include "utils/sim/scenario.h"

namespace pvfs::sim {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = kKiB * kKiB;

struct Setup {
  uint32_t clients = 0;
  uint32_t servers = 0;
  uint64_t bytes_per_client = 0;
  uint32_t in_flight = 0;
  elevator::ElevatorOptions elevator;
  elevator::EmulatedDiskOptions disk;
  Nanos latency{0};             // one way, client to server
  double link_bytes_per_s = 0;  // a client's link; its requests queue on it
  Nanos start_spread{0};
};

// What one server's run measured.
struct ServerResult {
  Nanos finish{0};  // when its last client's last write was acknowledged
  uint64_t bytes = 0;
  uint64_t seeks = 0;
  uint64_t dispatches = 0;
  std::array<uint64_t, elevator::SizeHistogram::kBuckets> sizes{};
};

// An IOR client writing its own object sequentially, `in_flight`
// requests outstanding.
struct Client {
  ObjectId object;
  uint64_t next_offset = 0;
  uint64_t acked = 0;
  Nanos link_free{0};
};

class ServerRun {
 public:
  ServerRun(const Setup& setup, elevator::Policy policy, uint64_t transfer, uint32_t clients,
            uint32_t first_client, Random rng)
      : setup_(setup),
        transfer_(transfer),
        server_(queue_, with_policy(setup.elevator, policy), setup.disk, [this](uint64_t id) { done(id); }) {
    clients_.resize(clients);
    for (uint32_t c = 0; c < clients; ++c) {
      clients_[c].object = ObjectId{InodeId::make(FileSetId(1), first_client + c + 1), 0};
      const Nanos start(
          static_cast<int64_t>(rng.uniform() * static_cast<double>(setup.start_spread.count())));
      queue_.at(start, [this, c] {
        for (uint32_t i = 0; i < setup_.in_flight; ++i) send(c);
      });
    }
  }

  ServerResult run() {
    queue_.run();
    ServerResult r;
    r.finish = last_ack_;
    r.bytes = server_.disk().bytes();
    r.seeks = server_.disk().seeks();
    const elevator::ElevatorStats stats = server_.elevator().stats();
    r.dispatches = stats.dispatches;
    r.sizes = stats.dispatched_sizes;
    return r;
  }

 private:
  static elevator::ElevatorOptions with_policy(elevator::ElevatorOptions o, elevator::Policy p) {
    o.policy = p;
    return o;
  }

  // The next transfer of client c leaves when its link is free and arrives
  // a latency after its last byte left.
  void send(uint32_t c) {
    Client& client = clients_[c];
    if (client.next_offset >= setup_.bytes_per_client) return;
    const uint64_t offset = client.next_offset;
    const uint64_t length = std::min(transfer_, setup_.bytes_per_client - offset);
    client.next_offset += length;
    const Nanos leaves = std::max(queue_.now(), client.link_free);
    client.link_free =
        leaves + Nanos(std::llround(static_cast<double>(length) / setup_.link_bytes_per_s * 1e9));
    elevator::Request r;
    r.id = (uint64_t{c} << 32) | (offset / transfer_);
    r.object = client.object;
    r.write = true;
    r.offset = offset;
    r.length = length;
    queue_.at(client.link_free + setup_.latency, [this, r] { server_.submit(r); });
  }

  void done(uint64_t id) {
    const auto c = static_cast<uint32_t>(id >> 32);
    const uint64_t length = std::min(transfer_, setup_.bytes_per_client - (id & 0xffffffff) * transfer_);
    queue_.after(setup_.latency, [this, c, length] {
      clients_[c].acked += length;
      last_ack_ = std::max(last_ack_, queue_.now());
      send(c);
    });
  }

  const Setup& setup_;
  uint64_t transfer_;
  EventQueue queue_;
  ElevatorServer server_;
  std::vector<Client> clients_;
  Nanos last_ack_{0};
};

// Everything one (policy, transfer size) point measured over all servers.
struct Point {
  Nanos finish{0};
  uint64_t bytes = 0;
  uint64_t seeks = 0;
  uint64_t dispatches = 0;
  ServerResult first;  // server 0, for Table 1
};

Point run_point(const Setup& setup, elevator::Policy policy, uint64_t transfer, uint64_t seed) {
  Point p;
  uint32_t first_client = 0;
  for (uint32_t s = 0; s < setup.servers; ++s) {
    // File per process with one stripe: client i's file is on server i mod n.
    const uint32_t clients = setup.clients / setup.servers + (s < setup.clients % setup.servers ? 1 : 0);
    // The same clients start at the same times under either policy.
    ServerRun run(setup, policy, transfer, clients, first_client,
                  Random::stream(seed, (uint64_t{transfer} << 20) | s));
    const ServerResult r = run.run();
    first_client += clients;
    p.finish = std::max(p.finish, r.finish);
    p.bytes += r.bytes;
    p.seeks += r.seeks;
    p.dispatches += r.dispatches;
    if (s == 0) p.first = r;
  }
  return p;
}

Result<Setup> make_setup(const Params& p) {
  Setup s;
  if (p.integer("servers") < 1 || p.integer("clients") < p.integer("servers"))
    return Status(Errc::invalid_argument, "need servers >= 1 and clients >= servers");
  if (p.integer("clients") > 10'000'000) return Status(Errc::invalid_argument, "clients must be <= 10000000");
  if (p.number("mb_per_client") <= 0 || p.integer("in_flight") < 1)
    return Status(Errc::invalid_argument, "need mb_per_client > 0 and in_flight >= 1");
  if (p.number("disk_mb_per_s") <= 0 || p.number("seek_ms") < 0 || p.number("link_mb_per_s") <= 0)
    return Status(Errc::invalid_argument, "need disk_mb_per_s > 0, seek_ms >= 0, link_mb_per_s > 0");
  if (p.number("latency_us") < 0 || p.number("start_spread_ms") < 0)
    return Status(Errc::invalid_argument, "latency_us and start_spread_ms must be >= 0");
  for (double kb : p.numbers("sizes_kb"))
    if (kb < 4 || kb > 64 * 1024 || kb != std::floor(kb))
      return Status(Errc::invalid_argument, "transfer sizes must be whole KiB in [4, 65536]");
  s.clients = static_cast<uint32_t>(p.integer("clients"));
  s.servers = static_cast<uint32_t>(p.integer("servers"));
  s.bytes_per_client = static_cast<uint64_t>(std::llround(p.number("mb_per_client") * kMiB));
  s.in_flight = static_cast<uint32_t>(p.integer("in_flight"));
  s.elevator.quantum = static_cast<uint64_t>(std::max<int64_t>(0, p.integer("quantum")));
  s.elevator.max_merge_bytes = static_cast<uint64_t>(std::max<int64_t>(0, p.integer("max_merge_kb"))) * kKiB;
  s.elevator.lambda = p.number("lambda");
  if (Status st = elevator::validate(s.elevator); !st.ok()) return st;
  s.disk.bytes_per_second = static_cast<uint64_t>(std::llround(p.number("disk_mb_per_s") * 1e6));
  s.disk.seek = Nanos(std::llround(p.number("seek_ms") * 1e6));
  s.latency = Nanos(std::llround(p.number("latency_us") * 1e3));
  s.link_bytes_per_s = p.number("link_mb_per_s") * 1e6;
  s.start_spread = Nanos(std::llround(p.number("start_spread_ms") * 1e6));
  return s;
}

std::string size_label(uint64_t bytes) {
  return bytes >= kMiB ? fmt::format("{}M", bytes / kMiB) : fmt::format("{}K", bytes / kKiB);
}

Result<Report> run(const Params& p, uint64_t seed) {
  auto setup_or = make_setup(p);
  if (!setup_or) return setup_or.status();
  const Setup& setup = *setup_or;
  std::vector<elevator::Policy> policies;
  for (const std::string& name : p.words("policies")) {
    auto policy = elevator::parse_policy(name);
    if (!policy) return Status(Errc::invalid_argument, "unknown elevator policy '" + name + "'");
    policies.push_back(*policy);
  }
  std::vector<uint64_t> sizes;
  for (double kb : p.numbers("sizes_kb")) sizes.push_back(static_cast<uint64_t>(kb) * kKiB);
  const uint64_t table_size = sizes.back();  // Table 1 is at the largest (1 MiB by default)

  std::vector<std::string> cols{"transfer_kb"};
  for (elevator::Policy pol : policies) {
    const std::string n(elevator::policy_name(pol));
    for (const char* m : {"_gb_per_s", "_seeks_per_server", "_seeks_per_s", "_mean_dispatch_kb"})
      cols.push_back(n + m);
  }
  Table bandwidth("bandwidth", cols);
  std::vector<std::string> scols{"transfer"};
  for (elevator::Policy pol : policies) {
    const std::string n(elevator::policy_name(pol));
    scols.push_back(n + " GB/s");
    scols.push_back(n + " seeks/server");
    scols.push_back(n + " seeks/s");
  }
  if (policies.size() == 2)
    scols.push_back(
        fmt::format("{}/{}", elevator::policy_name(policies[1]), elevator::policy_name(policies[0])));
  Table summary("summary", scols);
  std::map<elevator::Policy, ServerResult> table1;

  for (uint64_t size : sizes) {
    std::vector<std::string> row{num(size / kKiB)};
    std::vector<std::string> srow{size_label(size)};
    std::vector<double> gbs;
    for (elevator::Policy pol : policies) {
      const Point pt = run_point(setup, pol, size, seed);
      const double seconds = std::chrono::duration<double>(pt.finish).count();
      const double gb_per_s = static_cast<double>(pt.bytes) / seconds / 1e9;
      const double seeks = static_cast<double>(pt.seeks) / setup.servers;
      const double seeks_per_s = seeks / seconds;
      gbs.push_back(gb_per_s);
      row.push_back(num(gb_per_s, 3));
      row.push_back(num(seeks, 1));
      row.push_back(num(seeks_per_s, 1));
      row.push_back(num(static_cast<double>(pt.bytes) / static_cast<double>(pt.dispatches) / kKiB, 1));
      srow.push_back(num(gb_per_s, 2));
      srow.push_back(num(seeks, 0));
      srow.push_back(num(seeks_per_s, 1));
      if (size == table_size) table1[pol] = pt.first;
    }
    if (policies.size() == 2) srow.push_back(num(gbs[1] / gbs[0], 2));
    bandwidth.add(row);
    summary.add(srow);
  }

  // Table 1: operations the disk received from server 0, by size (powers
  // of two: "1M" counts sizes in [1 MiB, 2 MiB)).
  std::vector<std::string> hcols{"size_bytes", "size"};
  for (elevator::Policy pol : policies) {
    const std::string n(elevator::policy_name(pol));
    hcols.push_back(n + "_count");
    hcols.push_back(n + "_percent");
  }
  Table histogram("dispatch_sizes", hcols);
  for (int k = 0; k < elevator::SizeHistogram::kBuckets; ++k) {
    bool any = false;
    for (elevator::Policy pol : policies) any = any || table1[pol].sizes[static_cast<size_t>(k)] > 0;
    if (!any) continue;
    std::vector<std::string> row{num(uint64_t{1} << k), size_label(uint64_t{1} << k)};
    for (elevator::Policy pol : policies) {
      const uint64_t count = table1[pol].sizes[static_cast<size_t>(k)];
      row.push_back(num(count));
      row.push_back(num(100.0 * static_cast<double>(count) /
                            static_cast<double>(std::max<uint64_t>(1, table1[pol].dispatches)),
                        1));
    }
    histogram.add(row);
  }

  Report report;
  report.summary = summary;
  report.notes.push_back(fmt::format(
      "{} clients x {} MiB on {} servers, {} in flight each; disk {} MB/s, {} ms seek; quantum {}",
      setup.clients, setup.bytes_per_client / kMiB, setup.servers, setup.in_flight,
      setup.disk.bytes_per_second / 1'000'000,
      num(std::chrono::duration<double, std::milli>(setup.disk.seek).count(), 1), setup.elevator.quantum));
  std::string hist_note = fmt::format("disk operations on server 0 at {} transfers:", size_label(table_size));
  for (const auto& row : histogram.rows()) {
    hist_note += fmt::format(" {}:", row[1]);
    for (size_t i = 0; i < policies.size(); ++i)
      hist_note += fmt::format(" {} {}%", elevator::policy_name(policies[i]), row[3 + 2 * i]);
    hist_note += ";";
  }
  report.notes.push_back(hist_note);

  std::string plot =
      "set multiplot layout 1,3\nset grid\nset key top left\nset style data linespoints\n"
      "set logscale x 2\nset xlabel 'transfer size (KiB)'\n";
  plot += "set title 'Aggregate write bandwidth (Fig. 5)'\nset ylabel 'GB/s'\nplot ";
  for (size_t i = 0; i < policies.size(); ++i)
    plot += fmt::format("{}'bandwidth.csv' skip 1 using 1:{} lw 2 title '{}'", i ? ", " : "", 2 + 4 * i,
                        elevator::policy_name(policies[i]));
  plot += "\nset title 'Disk seeks per server per second'\nset ylabel 'seeks/s'\nset key top right\nplot ";
  for (size_t i = 0; i < policies.size(); ++i)
    plot += fmt::format("{}'bandwidth.csv' skip 1 using 1:{} lw 2 title '{}'", i ? ", " : "", 4 + 4 * i,
                        elevator::policy_name(policies[i]));
  plot += fmt::format(
      "\nunset logscale x\nset title 'Disk operation sizes, one server, {} transfers (Table 1)'\n"
      "set xlabel 'operation size'\nset ylabel 'percent of operations'\nset style data histograms\n"
      "set style histogram clustered gap 1\nset style fill solid 0.6 border -1\nset key top left\nplot ",
      size_label(table_size));
  for (size_t i = 0; i < policies.size(); ++i)
    plot += fmt::format("{}'dispatch_sizes.csv' skip 1 using {}:xtic(2) title '{}'", i ? ", " : "", 4 + 2 * i,
                        elevator::policy_name(policies[i]));
  plot += "\n";
  report.plot = plot;
  report.plot_width = 1800;
  report.plot_height = 600;
  report.csv = {bandwidth, histogram};
  return report;
}

}  // namespace

Scenario obrr_throughput() {
  Scenario s;
  s.name = "obrr-throughput";
  s.title = "OBRR paper Fig. 5, Table 1: aggregate bandwidth, seeks and disk operation sizes, FCFS vs OBRR";
  s.params = {
      {"clients", ParamType::integer, "8000", "400", "IOR clients, one file (object) each"},
      {"servers", ParamType::integer, "144", "8", "storage servers (OSSs)"},
      {"mb_per_client", ParamType::number, "32", "8", "MiB each client writes"},
      {"sizes_kb", ParamType::numbers, "64,128,256,512,1024", "64,256,1024", "transfer sizes swept (KiB)"},
      {"policies", ParamType::words, "fcfs,obrr", "", "elevator policies compared"},
      {"quantum", ParamType::integer, "8", "", "OBRR quantum (requests per object per round)"},
      {"max_merge_kb", ParamType::integer, "4096", "", "largest merged disk operation (KiB)"},
      {"lambda", ParamType::number, "1.5", "", "dynamic deadline factor"},
      {"in_flight", ParamType::integer, "8", "",
       "requests each client keeps outstanding (Lustre's max_rpcs_in_flight)"},
      {"disk_mb_per_s", ParamType::number, "450", "", "disk bandwidth (MB/s)"},
      {"seek_ms", ParamType::number, "10", "", "disk seek time (ms)"},
      {"latency_us", ParamType::number, "50", "", "one-way network latency (us)"},
      {"link_mb_per_s", ParamType::number, "1000", "", "each client's link bandwidth (MB/s)"},
      {"start_spread_ms", ParamType::number, "10", "", "clients start within this window (ms)"},
  };
  s.run = run;
  return s;
}

}  // namespace pvfs::sim
