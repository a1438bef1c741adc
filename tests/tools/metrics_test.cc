// pvfs-ctl stats, top and loglevel and the daemons' /metrics endpoints, end
// to end: the real pvfs-ctl (path in $PVFS_CTL, set by meson) against a
// real local cluster written to through a real FUSE mount, and /metrics
// fetched over real sockets with a hand-written HTTP GET.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/http_client.h"

#include "shared/metrics/prometheus.h"
#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace metrics_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::Outcome;
using pvfs::test::TestCluster;

constexpr double kMiB = 1024.0 * 1024.0;

Outcome ctl(const fs::path& scratch, const std::vector<std::string>& args) {
  return pvfs::test::run_tool("PVFS_CTL", scratch, args);
}

using pvfs::test::skip_without_fuse;
using pvfs::test::http_exchange;
using pvfs::test::http_get;
using pvfs::test::HttpReply;

// The Prometheus text of one daemon's /metrics, parsed; fails the test
// when the answer is not a 200 with the exposition content type.
pvfs::metrics::Families scrape(uint16_t port) {
  const HttpReply r = http_get(port, "/metrics");
  CAPTURE(r.status_line);
  CAPTURE(r.headers);
  REQUIRE(r.status_line == "HTTP/1.1 200 OK");
  CHECK(r.headers.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(r.headers.find("Content-Length: " + std::to_string(r.body.size())) != std::string::npos);
  auto parsed = pvfs::metrics::parse_prometheus(r.body);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().to_string());
  return *parsed;
}

// Writes `mib` MiB of zeros to `file` with dd (job `job`), flushed.
void write_file(const fs::path& file, int mib, const std::string& job) {
  const std::string dd = "env PVFS_JOBID=" + job + " dd if=/dev/zero of=" +
                         pvfs::test::shell_quote(file.string()) + " bs=1M count=" + std::to_string(mib) +
                         " conv=fsync status=none";
  REQUIRE(std::system(dd.c_str()) == 0);
}

// Keeps rewriting a file through the mount until destroyed.
class BackgroundWriter {
 public:
  explicit BackgroundWriter(fs::path file)
      : thread_([this, file] {
          const std::string block(1 << 20, 'w');
          while (!stop_) {
            std::ofstream out(file, std::ios::binary | std::ios::trunc);
            for (int i = 0; i < 8 && !stop_; ++i) out.write(block.data(), static_cast<std::streamsize>(block.size()));
          }
        }) {}
  ~BackgroundWriter() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

pvfs::ClusterOptions three_servers() {
  pvfs::ClusterOptions options;
  options.servers = 3;
  return options;
}

}  // namespace

TEST_CASE("stats and every server's /metrics count the MiB written through the mount") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const std::string config = cluster.cluster().config_path().string();
  constexpr int kWrittenMiB = 8;
  write_file(cluster.mnt() / "eight", kWrittenMiB, "statsjob");

  auto text = ctl(cluster.dir(), {"stats", "-c", config});
  CAPTURE(text);
  REQUIRE(text.status == 0);
  CHECK(text.err.empty());
  for (const auto& s : cluster.config().servers) {
    const std::string title = "server" + std::to_string(s.id) + " (" + s.address.to_string() + "): storage server";
    const size_t at = text.out.find(title);
    REQUIRE(at != std::string::npos);
    const size_t end = text.out.find("\nserver", at + 1);
    const std::string block = text.out.substr(at, end == std::string::npos ? end : end - at);
    CHECK(block.find("\nwrite ") != std::string::npos);
    CHECK(block.find("\nnormal ") != std::string::npos);        // the elevator's queue of that class
    CHECK(block.find("\nstatsjob ") != std::string::npos);      // the job that wrote
  }
  CHECK(text.out.find("mds0 (") != std::string::npos);

  auto prom = ctl(cluster.dir(), {"stats", "-c", config, "--prometheus"});
  CAPTURE(prom);
  REQUIRE(prom.status == 0);
  auto all = pvfs::metrics::parse_prometheus(prom.out);
  REQUIRE_MESSAGE(all.ok(), all.status().to_string());
  const double written = pvfs::metrics::sum(*all, "pvfs_server_received_bytes_total", {{"type", "write"}});
  CHECK(written >= kWrittenMiB * kMiB);
  CHECK(pvfs::metrics::sum(*all, "pvfs_server_requests_total", {{"type", "write"}}) > 0);
  CHECK(pvfs::metrics::sum(*all, "pvfs_server_job_written_bytes_total", {{"job", "statsjob"}}) >=
        kWrittenMiB * kMiB);
  CHECK(pvfs::metrics::sum(*all, "pvfs_mds_requests_total", {{"type", "mknod"}}) >= 1);

  // The same counter, per server, over each daemon's own HTTP endpoint.
  double scraped_total = 0;
  for (const auto& s : cluster.config().servers) {
    REQUIRE(s.metrics);
    const auto families = scrape(s.metrics->port);
    const double mine = pvfs::metrics::sum(families, "pvfs_server_received_bytes_total", {{"type", "write"}});
    CHECK(mine == pvfs::metrics::sum(*all, "pvfs_server_received_bytes_total",
                                     {{"daemon", "server" + std::to_string(s.id)}, {"type", "write"}}));
    scraped_total += mine;
  }
  CHECK(scraped_total == written);
  const auto mds = scrape(cluster.config().mds[0].metrics->port);
  CHECK(pvfs::metrics::sum(mds, "pvfs_mds_filesets") == 1);
  CHECK(pvfs::metrics::sum(mds, "pvfs_mds_storage_servers_alive") == 3);

  auto only = ctl(cluster.dir(), {"stats", "-c", config, "--json", "1"});
  CAPTURE(only);
  REQUIRE(only.status == 0);
  CHECK(only.out.find("\"daemon\": \"server1\"") != std::string::npos);
  CHECK(only.out.find("\"daemon\": \"server0\"") == std::string::npos);
  auto unknown = ctl(cluster.dir(), {"stats", "-c", config, "server9"});
  CHECK(unknown.status == 1);
  CHECK(unknown.err == "pvfs-ctl: stats: no daemon 'server9' in the config (want mdsN, serverN, a server "
                       "number or all)\n");
}

TEST_CASE("top shows every server with data flowing in while a writer runs, down daemons, and stops on Ctrl-C") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const std::string config = cluster.cluster().config_path().string();
  Outcome top;
  {
    BackgroundWriter writer(cluster.mnt() / "busy");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    top = ctl(cluster.dir(), {"top", "-c", config, "--iterations", "2", "--interval", "0.5"});
  }
  CAPTURE(top);
  REQUIRE(top.status == 0);
  // Two frames, a blank line between them.
  const size_t second = top.out.find("\n\npvfs top: ");
  REQUIRE(second != std::string::npos);
  CHECK(top.out.rfind("pvfs top: 3 storage server(s), 1 metadata server(s)", 0) == 0);
  CHECK(top.out.find("pvfs top: ", second + 2 + 1) == std::string::npos);
  const std::string frame = top.out.substr(second + 2);
  double in_total = 0;
  std::istringstream lines(frame);
  std::map<std::string, int> rows;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name, load, queue, in;
    words >> name >> load >> queue >> in;
    if (name.rfind("server", 0) == 0 || name.rfind("mds", 0) == 0) ++rows[name];
    if (name.rfind("server", 0) == 0) in_total += std::strtod(in.c_str(), nullptr);
  }
  CHECK(rows == std::map<std::string, int>{{"mds0", 1}, {"server0", 1}, {"server1", 1}, {"server2", 1}});
  CHECK(in_total > 0);

  REQUIRE(cluster.cluster().kill_daemon("server2", SIGKILL).ok());
  auto down = ctl(cluster.dir(), {"top", "-c", config, "-n", "1", "-d", "0.2"});
  CAPTURE(down);
  CHECK(down.status == 0);
  CHECK(down.out.find("\nserver2  down\n") != std::string::npos);
  // Ctrl-C ends it cleanly, between frames.
  const fs::path interrupted = cluster.dir() / "top-interrupted.out";
  const std::string command = "timeout --preserve-status -s INT 1.3 " +
                              pvfs::test::shell_quote(pvfs::test::tool_path("PVFS_CTL")) + " top -d 0.5 -c " +
                              pvfs::test::shell_quote(config) + " >" +
                              pvfs::test::shell_quote(interrupted.string()) + " 2>&1";
  const int raw = std::system(command.c_str());
  CHECK(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 0);
  const std::string shown = pvfs::test::slurp(interrupted);
  CAPTURE(shown);
  CHECK(shown.rfind("pvfs top: ", 0) == 0);
  CHECK(shown.find("\nserver2  down\n") != std::string::npos);

  auto stats = ctl(cluster.dir(), {"stats", "-c", config});
  CHECK(stats.status == 1);
  CHECK(stats.err.rfind("pvfs-ctl: stats: server2 (", 0) == 0);
  CHECK(stats.out.find("server1 (") != std::string::npos);
}

TEST_CASE("loglevel turns on a server's debug log at run time, and refuses unknown levels") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  const auto& server0 = *cluster.config().find_server(0);
  const fs::path log = cluster.dir() / "cluster" / "logs" / "server0.log";
  REQUIRE(fs::exists(log));
  CHECK(http_get(server0.metrics->port, "/metrics").status_line == "HTTP/1.1 200 OK");
  CHECK(pvfs::test::slurp(log).find(" debug: ") == std::string::npos);

  auto set = ctl(cluster.dir(), {"loglevel", "-c", config, "server0", "debug"});
  CAPTURE(set);
  REQUIRE(set.status == 0);
  CHECK(set.out == "server0: log level debug\n");
  CHECK(http_get(server0.metrics->port, "/metrics").status_line == "HTTP/1.1 200 OK");
  const std::string after = pvfs::test::slurp(log);
  CHECK(after.find("log level changed from info to debug") != std::string::npos);
  CHECK(after.find(" debug: metrics endpoint: ") != std::string::npos);
  // Only the server asked changed.
  CHECK(http_get(cluster.config().find_server(1)->metrics->port, "/metrics").status_line == "HTTP/1.1 200 OK");
  CHECK(pvfs::test::slurp(cluster.dir() / "cluster" / "logs" / "server1.log").find(" debug: ") ==
        std::string::npos);

  auto bad = ctl(cluster.dir(), {"loglevel", "-c", config, "all", "loud"});
  CAPTURE(bad);
  CHECK(bad.status == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err == "pvfs-ctl: loglevel: unknown log level 'loud': use one of trace, debug, info, warn, error, off\n");

  auto all = ctl(cluster.dir(), {"loglevel", "-c", config, "all", "info"});
  CAPTURE(all);
  CHECK(all.status == 0);
  CHECK(all.out == "mds0: log level info\nserver0: log level info\nserver1: log level info\nserver2: log level info\n");
}

TEST_CASE("the metrics endpoint answers 404 and 400 to bad requests and the daemons stay up") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  const uint16_t port = cluster.config().find_server(1)->metrics->port;
  const uint16_t mds_port = cluster.config().mds[0].metrics->port;
  CHECK(http_get(port, "/").status_line == "HTTP/1.1 404 Not Found");
  CHECK(http_get(mds_port, "/metrics/../secret").status_line == "HTTP/1.1 404 Not Found");
  CHECK(http_exchange(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0) == 0);
  CHECK(http_exchange(port, "garbage\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  const char binary[] = "\0\xff\x01 / HTTP/9\r\n\r\n";
  CHECK(http_exchange(mds_port, std::string(binary, sizeof binary - 1)).rfind("HTTP/1.1 400 ", 0) == 0);
  // A head past the size limit is refused without reading on.
  CHECK(http_exchange(port, "GET /metrics HTTP/1.1\r\nX-Long: " + std::string(20000, 'a') + "\r\n\r\n")
            .rfind("HTTP/1.1 400 ", 0) == 0);
  // Connecting and leaving at once, or half a request and leaving.
  CHECK(http_exchange(port, "").empty());
  (void)http_exchange(mds_port, "GET /met");
  auto ping = ctl(cluster.dir(), {"ping", "-c", config});
  CAPTURE(ping);
  CHECK(ping.status == 0);
  CHECK(http_get(port, "/metrics?x=1").status_line == "HTTP/1.1 200 OK");
}

TEST_CASE("idle connections to the metrics endpoint do not keep a scrape out") {
  TestCluster cluster(three_servers());
  for (const uint16_t port : {cluster.config().find_server(1)->metrics->port, cluster.config().mds[0].metrics->port}) {
    CAPTURE(port);
    // 20 connections that never send a request (more than the endpoint
    // serves at once), left open while a scraper comes.
    std::vector<int> idle;
    for (int i = 0; i < 20; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      REQUIRE(fd >= 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(port);
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
      idle.push_back(fd);
    }
    // Let the daemon accept every one of them first.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto started = std::chrono::steady_clock::now();
    const HttpReply r = http_get(port, "/metrics");
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    MESSAGE("scrape beside 20 idle connections: ", r.status_line, " in ", took.count(), " ms");
    CHECK(r.status_line == "HTTP/1.1 200 OK");
    CHECK(r.body.find("_uptime_seconds") != std::string::npos);
    for (int fd : idle) ::close(fd);
  }
}

}  // namespace metrics_test
