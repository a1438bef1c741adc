// Unit tests of utils/ctl/metrics_view: choosing daemons by name, the stats
// tables and JSON, the merged Prometheus text, and top's rates and frame.
// Metric families are built by hand here; no daemons.
#include "utils/ctl/metrics_view.h"

#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include "shared/metrics/prometheus.h"

namespace pvfs::ctl::metrics_view_test {
namespace {

using metrics::Families;
using metrics::Type;

std::vector<DaemonTarget> cluster_targets() {
  return {{"mds0", DaemonKind::mds, 0, {"127.0.0.1", 7000}},
          {"server0", DaemonKind::server, 0, {"127.0.0.1", 7100}},
          {"server1", DaemonKind::server, 1, {"127.0.0.1", 7101}}};
}

// A storage server's families with the given byte counters and job counts.
Families server_families(double received, double sent, double job_ops, double job_written) {
  Families f;
  auto requests = metrics::make_family("pvfs_server_requests_total", "r", Type::counter);
  requests.samples.push_back({{{"type", "write"}}, job_ops, {}});
  f.push_back(requests);
  auto in = metrics::make_family("pvfs_server_received_bytes_total", "i", Type::counter);
  in.samples.push_back({{{"type", "write"}}, received, {}});
  f.push_back(in);
  auto out = metrics::make_family("pvfs_server_sent_bytes_total", "o", Type::counter);
  out.samples.push_back({{{"type", "read"}}, sent, {}});
  f.push_back(out);
  auto latency = metrics::make_family("pvfs_server_request_latency_seconds", "l", Type::summary);
  latency.samples.push_back({{{"type", "write"}, {"quantile", "0.5"}}, 0.000512, {}});
  latency.samples.push_back({{{"type", "write"}, {"quantile", "0.99"}}, 0.004096, {}});
  f.push_back(latency);
  metrics::add_single(f, "pvfs_server_load_requests", "l", Type::gauge, 3);
  auto queued = metrics::make_family("pvfs_server_elevator_queued", "q", Type::gauge);
  queued.samples.push_back({{{"class", "normal"}}, 5, {}});
  queued.samples.push_back({{{"class", "urgent"}}, 1, {}});
  f.push_back(queued);
  metrics::add_single(f, "pvfs_server_redirect_entries", "r", Type::gauge, 2);
  metrics::add_single(f, "pvfs_server_pulled_bytes_total", "p", Type::counter, 2097152);
  metrics::add_single(f, "pvfs_server_uptime_seconds", "u", Type::gauge, 187);
  auto jobs = metrics::make_family("pvfs_server_job_requests_total", "j", Type::counter);
  jobs.samples.push_back({{{"job", "job42"}}, job_ops, {}});
  f.push_back(jobs);
  auto written = metrics::make_family("pvfs_server_job_written_bytes_total", "w", Type::counter);
  written.samples.push_back({{{"job", "job42"}}, job_written, {}});
  f.push_back(written);
  return f;
}

Families mds_families(double requests, double latency_sum, double latency_count, double inodes) {
  Families f;
  auto r = metrics::make_family("pvfs_mds_requests_total", "r", Type::counter);
  r.samples.push_back({{{"type", "lookup"}}, requests, {}});
  f.push_back(r);
  auto latency = metrics::make_family("pvfs_mds_request_latency_seconds", "l", Type::summary);
  latency.samples.push_back({{{"type", "lookup"}, {"quantile", "0.5"}}, 0.0001, {}});
  latency.samples.push_back({{{"type", "lookup"}}, latency_sum, "_sum"});
  latency.samples.push_back({{{"type", "lookup"}}, latency_count, "_count"});
  f.push_back(latency);
  metrics::add_single(f, "pvfs_mds_filesets", "f", Type::gauge, 1);
  metrics::add_single(f, "pvfs_mds_inodes", "i", Type::gauge, inodes);
  return f;
}

}  // namespace

TEST_CASE("daemons are chosen by name, bare number or all, in the order given") {
  const auto all = cluster_targets();
  auto none = select_daemons(all, {});
  REQUIRE(none.ok());
  CHECK(none->size() == 3);
  auto some = select_daemons(all, {"1", "mds0", "server1"});
  REQUIRE(some.ok());
  REQUIRE(some->size() == 2);
  CHECK((*some)[0].name == "server1");
  CHECK((*some)[1].name == "mds0");
  auto every = select_daemons(all, {"all"});
  REQUIRE(every.ok());
  CHECK(every->size() == 3);
  auto bad = select_daemons(all, {"server7"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().detail() ==
        "no daemon 'server7' in the config (want mdsN, serverN, a server number or all)");
  CHECK_FALSE(select_daemons(all, {"mds"}).ok());
}

TEST_CASE("a counter's rate is its increase per second, from zero after a restart") {
  CHECK(counter_rate(100, 300, 2.0) == 100);
  CHECK(counter_rate(500, 40, 2.0) == 20);  // restarted: 40 since
  CHECK(std::isnan(counter_rate(1, 2, 0)));
}

TEST_CASE("top computes MiB/s, ops/s and mean latency from two polls") {
  const auto targets = cluster_targets();
  const double MiB = 1024 * 1024;
  std::vector<DaemonSnapshot> before = {
      {targets[0], mds_families(1000, 1.0, 1000, 10)},
      {targets[1], server_families(10 * MiB, 0, 100, 10 * MiB)},
      {targets[2], server_families(0, 0, 0, 0)}};
  std::vector<DaemonSnapshot> now = {
      {targets[0], mds_families(1500, 1.1, 1500, 12)},
      {targets[1], server_families(30 * MiB, 4 * MiB, 200, 30 * MiB)},
      {targets[2], std::nullopt}};
  const TopFrame frame = compute_top(before, now, 2.0, 10);
  REQUIRE(frame.servers.size() == 2);
  CHECK(frame.servers[0].in_mib_s == doctest::Approx(10));
  CHECK(frame.servers[0].out_mib_s == doctest::Approx(2));
  CHECK(frame.servers[0].load == 3);
  CHECK(frame.servers[0].queued == 6);
  CHECK(frame.servers[0].redirects_held == 2);
  CHECK(frame.servers[1].down);
  REQUIRE(frame.mds.size() == 1);
  CHECK(frame.mds[0].ops_s == doctest::Approx(250));
  CHECK(frame.mds[0].mean_latency_s == doctest::Approx(0.1 / 500));
  CHECK(frame.mds[0].inodes == 12);
  REQUIRE(frame.jobs.size() == 1);
  CHECK(frame.jobs[0].job == "job42");
  CHECK(frame.jobs[0].ops_s == doctest::Approx(50));
  CHECK(frame.jobs[0].mib_s == doctest::Approx(10));
}

TEST_CASE("top's frame has a row per daemon, down rows and dashes for rates not known yet") {
  const auto targets = cluster_targets();
  std::vector<DaemonSnapshot> before = {{targets[0], std::nullopt},
                                        {targets[1], server_families(0, 0, 0, 0)},
                                        {targets[2], server_families(0, 0, 0, 0)}};
  std::vector<DaemonSnapshot> now = {{targets[0], mds_families(10, 0, 10, 3)},
                                     {targets[1], server_families(1048576, 0, 1, 1048576)},
                                     {targets[2], std::nullopt}};
  const std::string text = render_top(compute_top(before, now, 1.0, 10), "pvfs top", 0);
  CHECK(text ==
        "pvfs top\n"
        "\n"
        "SERVER   LOAD  QUEUE  MiB/s-IN  MiB/s-OUT  REDIRECTS\n"
        "server0     3      6       1.0        0.0          2\n"
        "server1  down\n"
        "\n"
        "MDS   OPS/s  LATENCY  FILESETS  INODES\n"
        "mds0      -        -         1       3\n"
        "\n"
        "JOB    OPS/s  MiB/s\n"
        "job42    1.0    1.0\n");
  const std::string narrow = render_top(compute_top(before, now, 1.0, 10), "pvfs top", 12);
  for (size_t start = 0; start < narrow.size();) {
    const size_t end = narrow.find('\n', start);
    CHECK(end - start <= 12);
    start = end + 1;
  }
  CHECK(text.find("I/O tokens") == std::string::npos);  // no line while nobody holds one
  const std::string idle = render_top(TopFrame{}, "t", 0);
  CHECK(idle.find("(no active jobs)") != std::string::npos);
}

TEST_CASE("stats shows requests with bytes and percentiles, queues, other counters and jobs") {
  const auto targets = cluster_targets();
  const std::string text = render_stats(targets[1], server_families(3 * 1048576, 0, 48, 3 * 1048576));
  CAPTURE(text);
  CHECK(text.rfind("server0 (127.0.0.1:7100): storage server, up 3m07s\n", 0) == 0);
  CHECK(text.find("TYPE   REQUESTS  ERRORS       IN  OUT    P50    P99\n"
                  "write        48       0  3.0 MiB  0 B  512us  4.1ms\n") != std::string::npos);
  CHECK(text.find("CLASS   QUEUED  IN-SERVICE  COMPLETED  P50  P99\n"
                  "normal       5           0          0  0us  0us\n") != std::string::npos);
  CHECK(text.find("load_requests             3\n") != std::string::npos);
  CHECK(text.find("pulled_bytes_total  2.0 MiB\n") != std::string::npos);
  CHECK(text.find("JOB    REQUESTS  READ  WRITTEN\n"
                  "job42        48   0 B  3.0 MiB\n") != std::string::npos);
  const std::string mds = render_stats(targets[0], mds_families(5, 0.1, 5, 3));
  CAPTURE(mds);
  CHECK(mds.find("TYPE    REQUESTS  ERRORS    P50  P99\nlookup         5       0  100us  0us\n") !=
        std::string::npos);
  CHECK(mds.find("(no jobs)") != std::string::npos);
}

TEST_CASE("several daemons make one Prometheus text with a daemon label, and JSON keys name samples") {
  const auto targets = cluster_targets();
  std::vector<DaemonSnapshot> snaps = {{targets[1], server_families(100, 0, 1, 100)},
                                       {targets[2], server_families(200, 0, 2, 200)},
                                       {targets[0], std::nullopt}};
  const std::string text = metrics::render_prometheus(merge_with_daemon_label(snaps));
  CHECK(text.find("pvfs_server_received_bytes_total{daemon=\"server0\",type=\"write\"} 100\n"
                  "pvfs_server_received_bytes_total{daemon=\"server1\",type=\"write\"} 200\n") !=
        std::string::npos);
  auto parsed = metrics::parse_prometheus(text);
  REQUIRE(parsed.ok());
  CHECK(metrics::sum(*parsed, "pvfs_server_received_bytes_total") == 300);
  const std::string json = render_stats_json(snaps);
  CHECK(json.rfind("[\n{\"daemon\": \"server0\", \"address\": \"127.0.0.1:7100\", \"metrics\": {", 0) == 0);
  CHECK(json.find("\"pvfs_server_received_bytes_total{type=\\\"write\\\"}\": 200") != std::string::npos);
  CHECK(json.find("mds0") == std::string::npos);
}

TEST_CASE("top names the jobs holding I/O-step tokens on the delegate, and those waiting for one") {
  const auto targets = cluster_targets();
  metrics::Families mds = mds_families(10, 0, 10, 3);
  auto tokens = metrics::make_family("pvfs_mds_iosched_tokens", "t", Type::gauge);
  tokens.samples.push_back({{{"job", "ckpt-b"}}, 1.0, {}});
  tokens.samples.push_back({{{"job", "ckpt-a"}}, 1.0, {}});
  mds.push_back(tokens);
  auto waiting = metrics::make_family("pvfs_mds_iosched_waiting", "w", Type::gauge);
  waiting.samples.push_back({{{"job", "ckpt-c"}}, 1.0, {}});
  mds.push_back(waiting);
  std::vector<DaemonSnapshot> now = {{targets[0], mds}, {targets[1], std::nullopt}, {targets[2], std::nullopt}};
  const TopFrame frame = compute_top({}, now, 1.0, 10);
  CHECK(frame.token_holders == std::vector<std::string>{"ckpt-a", "ckpt-b"});
  CHECK(frame.token_waiters == std::vector<std::string>{"ckpt-c"});
  CHECK(render_top(frame, "t", 0).find("\nI/O tokens: ckpt-a ckpt-b; waiting: ckpt-c\n") != std::string::npos);
}

TEST_CASE("top marks the jobs behind their QoS goal on the delegate, and only those") {
  const auto targets = cluster_targets();
  metrics::Families mds = mds_families(10, 0, 10, 3);
  auto behind = metrics::make_family("pvfs_mds_qos_behind", "b", Type::gauge);
  behind.samples.push_back({{{"job", "late"}}, 1.0, {}});
  behind.samples.push_back({{{"job", "on-time"}}, 0.0, {}});
  mds.push_back(behind);
  std::vector<DaemonSnapshot> now = {{targets[0], mds}, {targets[1], std::nullopt}, {targets[2], std::nullopt}};
  const TopFrame frame = compute_top({}, now, 1.0, 10);
  CHECK(frame.behind_goal == std::vector<std::string>{"late"});
  CHECK(render_top(frame, "t", 0).find("\nBehind their QoS goal: late\n") != std::string::npos);
  const TopFrame none = compute_top({}, {{targets[0], mds_families(10, 0, 10, 3)}}, 1.0, 10);
  CHECK(render_top(none, "t", 0).find("QoS goal") == std::string::npos);
}

}  // namespace pvfs::ctl::metrics_view_test
