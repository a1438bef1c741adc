// pvfs-ctl end to end: the real binary (path in $PVFS_CTL, set by meson)
// against a real local cluster, through a real FUSE mount for the layout,
// jobs and sched commands. Each test starts its own cluster.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace ctl_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::TestCluster;

using pvfs::test::Outcome;
using pvfs::test::slurp;

// Runs `pvfs-ctl ARGS` (with `env`, "NAME=value ...", in front), capturing
// stdout and stderr in `scratch`.
Outcome ctl(const fs::path& scratch, const std::vector<std::string>& args, const std::string& env = {}) {
  return pvfs::test::run_tool("PVFS_CTL", scratch, args, env);
}

// The server ids of the object lines of getstripe's output for a file.
std::vector<std::string> object_servers(const std::string& getstripe_out) {
  std::istringstream in(getstripe_out);
  std::vector<std::string> servers;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string index, server;
    words >> index >> server;
    if (index == "index") in_table = true;
    else if (in_table && !server.empty()) servers.push_back(server);
  }
  return servers;
}

using pvfs::test::skip_without_fuse;

// The objects of `pvfs-ctl sched --json` as key -> number (arrays left
// out). Enough JSON for that output: flat objects of numbers and arrays.
std::vector<std::map<std::string, double>> sched_objects(const std::string& json) {
  std::vector<std::map<std::string, double>> objects;
  for (size_t open = json.find('{'); open != std::string::npos; open = json.find('{', open + 1)) {
    const size_t close = json.find('}', open);
    if (close == std::string::npos) break;
    const std::string body = json.substr(open + 1, close - open - 1);
    std::map<std::string, double> object;
    for (size_t at = body.find('"'); at != std::string::npos;) {
      const size_t key_end = body.find('"', at + 1);
      const std::string key = body.substr(at + 1, key_end - at - 1);
      size_t value = body.find_first_not_of(": ", key_end + 1);
      if (body[value] == '[') value = body.find(']', value);
      else object[key] = std::strtod(body.c_str() + value, nullptr);
      at = body.find('"', value);
    }
    objects.push_back(std::move(object));
  }
  return objects;
}

// `key` of each server in sched JSON objects, by server id.
std::map<int, double> by_server(const std::vector<std::map<std::string, double>>& objects,
                                const std::string& key) {
  std::map<int, double> out;
  for (const auto& o : objects) out[static_cast<int>(o.at("server"))] = o.at(key);
  return out;
}

// The cell of each row of a right-aligned table column headed `name`, by
// the row's first word: the word that ends where the header ends.
std::map<std::string, std::string> column(const std::string& table, const std::string& name) {
  std::istringstream lines(table);
  std::string header;
  std::getline(lines, header);
  const size_t end = header.find(name) + name.size();
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(lines, line);) {
    if (line.size() < end || header.find(name) == std::string::npos) continue;
    const size_t start = line.rfind(' ', end - 1);
    std::istringstream words(line);
    std::string first;
    words >> first;
    out[first] = line.substr(start + 1, end - start - 1);
  }
  return out;
}

// The fields of each object of `pvfs-ctl elevator --json` (one object per
// line) as key -> raw JSON text of the value ("\"obrr\"", "12", "[1, 0, 0]",
// "{\"1048576\": 4}"), by server id.
std::map<int, std::map<std::string, std::string>> elevator_objects(const std::string& json) {
  std::map<int, std::map<std::string, std::string>> out;
  std::istringstream lines(json);
  for (std::string line; std::getline(lines, line);) {
    const size_t open = line.find('{');
    if (open == std::string::npos) continue;
    std::map<std::string, std::string> fields;
    size_t at = open + 1;
    while ((at = line.find('"', at)) != std::string::npos) {
      const size_t key_end = line.find('"', at + 1);
      const std::string key = line.substr(at + 1, key_end - at - 1);
      const size_t start = line.find_first_not_of(": ", key_end + 1);
      size_t end = start;
      int depth = 0;
      bool quoted = false;
      for (; end < line.size(); ++end) {
        const char c = line[end];
        if (quoted) {
          if (c == '\\') ++end;
          else if (c == '"') quoted = false;
        } else if (c == '"') {
          quoted = true;
        } else if (c == '[' || c == '{') {
          ++depth;
        } else if (c == ']' || c == '}') {
          if (depth == 0) break;
          --depth;
        } else if (c == ',' && depth == 0) {
          break;
        }
      }
      fields[key] = line.substr(start, end - start);
      at = line.find('"', end);
      if (at == std::string::npos) break;
    }
    out[std::stoi(fields["server"])] = std::move(fields);
  }
  return out;
}

// `key` of each server in elevator JSON objects, by server id.
std::map<int, std::string> elevator_field(const std::string& json, const std::string& key) {
  std::map<int, std::string> out;
  for (const auto& [id, fields] : elevator_objects(json)) out[id] = fields.at(key);
  return out;
}

// The first two words of each row of a table below its header: id -> word 2.
std::map<std::string, std::string> second_words(const std::string& table) {
  std::istringstream lines(table);
  std::string header;
  std::getline(lines, header);
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first, second;
    words >> first >> second;
    out[first] = second;
  }
  return out;
}

pvfs::ClusterOptions three_servers() {
  pvfs::ClusterOptions options;
  options.servers = 3;
  return options;
}

}  // namespace

TEST_CASE("setstripe -c 2 on a directory gives new files two distinct servers") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path dir = cluster.mnt() / "two";
  fs::create_directory(dir);

  auto set = ctl(cluster.dir(), {"setstripe", "-c", "2", "-S", "64K", dir.string()});
  CAPTURE(set);
  REQUIRE(set.status == 0);
  CHECK(set.err.empty());

  auto policy = ctl(cluster.dir(), {"getstripe", dir.string()});
  CAPTURE(policy);
  REQUIRE(policy.status == 0);
  CHECK(policy.out.find("stripe_count:  2\n") != std::string::npos);
  CHECK(policy.out.find("stripe_size:   65536\n") != std::string::npos);
  CHECK(policy.out.find("servers:       any\n") != std::string::npos);

  { std::ofstream(dir / "file") << "x"; }
  auto file = ctl(cluster.dir(), {"getstripe", (dir / "file").string()});
  CAPTURE(file);
  REQUIRE(file.status == 0);
  CHECK(file.out.rfind((dir / "file").string() + "\n", 0) == 0);
  CHECK(file.out.find("stripe_count:  2\n") != std::string::npos);
  CHECK(file.out.find("stripe_size:   65536\n") != std::string::npos);
  auto servers = object_servers(file.out);
  REQUIRE(servers.size() == 2);
  CHECK(servers[0] != servers[1]);
}

TEST_CASE("setstripe with explicit servers and on a new path creates an empty file with them") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path file = cluster.mnt() / "placed";
  auto set = ctl(cluster.dir(), {"setstripe", "-s", "2,0", file.string()});
  CAPTURE(set);
  REQUIRE(set.status == 0);
  CHECK(fs::is_regular_file(file));
  auto got = ctl(cluster.dir(), {"getstripe", file.string()});
  CAPTURE(got);
  REQUIRE(got.status == 0);
  CHECK(object_servers(got.out) == std::vector<std::string>{"2", "0"});
}

TEST_CASE("setstripe on a file that has data fails with one clear line") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path file = cluster.mnt() / "full";
  { std::ofstream(file) << "some data"; }
  auto set = ctl(cluster.dir(), {"setstripe", "-c", "1", file.string()});
  CAPTURE(set);
  CHECK(set.status == 1);
  CHECK(set.out.empty());
  CHECK(set.err == "pvfs-ctl: setstripe " + file.string() +
                       ": Device or resource busy (the file is not empty)\n");
}

TEST_CASE("getstripe on a path outside pvfs says so in one line") {
  pvfs::test::TempDir elsewhere("pvfs-ctl");
  auto got = ctl(elsewhere.path(), {"getstripe", elsewhere.path().string()});
  CAPTURE(got);
  CHECK(got.status == 1);
  CHECK(got.err == "pvfs-ctl: getstripe " + elsewhere.path().string() +
                       ": not on a pvfs file system\n");
  auto missing = ctl(elsewhere.path(), {"getstripe", (elsewhere.path() / "nope").string()});
  CAPTURE(missing);
  CHECK(missing.status == 1);
  CHECK(missing.err.find("No such file or directory") != std::string::npos);
  auto usage = ctl(elsewhere.path(), {"setstripe", "-S", "4Q", "x"});
  CAPTURE(usage);
  CHECK(usage.status == 2);
  CHECK(usage.err.rfind("pvfs-ctl: ", 0) == 0);
}

TEST_CASE("jobs shows the bytes a job wrote through the mount") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path file = cluster.mnt() / "by-job42";
  const std::string dd = "env PVFS_JOBID=job42 dd if=/dev/zero of=" + pvfs::test::shell_quote(file.string()) +
                         " bs=64k count=16 conv=fsync status=none";
  REQUIRE(std::system(dd.c_str()) == 0);

  auto jobs = ctl(cluster.dir(), {"jobs", "-c", cluster.cluster().config_path().string()});
  CAPTURE(jobs);
  REQUIRE(jobs.status == 0);
  CHECK(jobs.out.rfind("JOB", 0) == 0);
  std::istringstream lines(jobs.out);
  bool found = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("job42 ", 0) != 0) continue;
    found = true;
    // JOB OPS READ WRITTEN I/O-TIME TOKEN-WAIT STEP: 16 x 64 KiB written,
    // nothing read; no I/O step (the cluster schedules none).
    CHECK(line.find("0 B  1.0 MiB") != std::string::npos);
    CHECK(line.substr(line.size() - 4) == "-  -");
  }
  CHECK(found);
  // The storage servers' heartbeats to the MDS are the daemons' own
  // traffic, named as such, not an "unknown" job.
  CHECK(jobs.out.find("\n(daemons) ") != std::string::npos);
  CHECK(jobs.out.find("unknown") == std::string::npos);

  auto per_daemon = ctl(cluster.dir(), {"jobs", "--per-daemon"},
                        "PVFS_CONFIG=" + pvfs::test::shell_quote(cluster.cluster().config_path().string()));
  CAPTURE(per_daemon);
  REQUIRE(per_daemon.status == 0);
  CHECK(per_daemon.out.find("mds0 (") != std::string::npos);
  CHECK(per_daemon.out.find("server2 (") != std::string::npos);
  CHECK(per_daemon.out.find("job42") != std::string::npos);
}

TEST_CASE("ping passes with every daemon up and names the one that was killed") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  auto all_up = ctl(cluster.dir(), {"ping", "-c", config});
  CAPTURE(all_up);
  CHECK(all_up.status == 0);
  CHECK(all_up.err.empty());
  for (const char* name : {"mds0", "server0", "server1", "server2"})
    CHECK(all_up.out.find(name) != std::string::npos);
  // -c wins over PVFS_CONFIG.
  auto flag_first = ctl(cluster.dir(), {"ping", "-c", config}, "PVFS_CONFIG=/nonexistent.toml");
  CAPTURE(flag_first);
  CHECK(flag_first.status == 0);

  REQUIRE(cluster.cluster().kill_daemon("server1", SIGKILL).ok());
  auto one_down = ctl(cluster.dir(), {"ping"}, "PVFS_CONFIG=" + pvfs::test::shell_quote(config));
  CAPTURE(one_down);
  CHECK(one_down.status == 1);
  CHECK(one_down.err == "pvfs-ctl: ping: 1 of 4 daemons not ok: server1\n");
  std::istringstream lines(one_down.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("server1 ", 0) == 0) CHECK(line.find(" down ") != std::string::npos);
}

TEST_CASE("servers lists every storage server as alive with its space") {
  TestCluster cluster(three_servers());
  auto listed = ctl(cluster.dir(), {"servers", "-c", cluster.cluster().config_path().string()});
  CAPTURE(listed);
  REQUIRE(listed.status == 0);
  std::istringstream lines(listed.out);
  std::set<std::string> alive;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string id, address, state;
    words >> id >> address >> state;
    if (state == "alive") alive.insert(id);
  }
  CHECK(alive == std::set<std::string>{"0", "1", "2"});
}

TEST_CASE("sched lists every server of a fresh cluster with no redirect entries") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  auto table = ctl(cluster.dir(), {"sched", "-c", config});
  CAPTURE(table);
  REQUIRE(table.status == 0);
  CHECK(table.err.empty());
  CHECK(table.out.rfind("ID ", 0) == 0);
  CHECK(column(table.out, "REDIR-ENTRIES") ==
        std::map<std::string, std::string>{{"0", "0"}, {"1", "0"}, {"2", "0"}});
  CHECK(column(table.out, "REDIRECTS") ==
        std::map<std::string, std::string>{{"0", "0"}, {"1", "0"}, {"2", "0"}});

  auto json = ctl(cluster.dir(), {"sched", "--json"}, "PVFS_CONFIG=" + pvfs::test::shell_quote(config));
  CAPTURE(json);
  REQUIRE(json.status == 0);
  CHECK(json.out.rfind("[\n", 0) == 0);
  const auto objects = sched_objects(json.out);
  CHECK(by_server(objects, "redirect_entries") == std::map<int, double>{{0, 0}, {1, 0}, {2, 0}});
  CHECK(by_server(objects, "fragments") == std::map<int, double>{{0, 0}, {1, 0}, {2, 0}});

  auto one = ctl(cluster.dir(), {"sched", "-c", config, "--json", "2"});
  CAPTURE(one);
  REQUIRE(one.status == 0);
  CHECK(by_server(sched_objects(one.out), "redirects") == std::map<int, double>{{2, 0}});

  auto unknown = ctl(cluster.dir(), {"sched", "-c", config, "0", "7"});
  CAPTURE(unknown);
  CHECK(unknown.status == 1);
  CHECK(unknown.out.empty());
  CHECK(unknown.err == "pvfs-ctl: sched: no storage server 7 in " + config + "\n");
}

TEST_CASE("sched names the server that does not answer and still shows the others") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  REQUIRE(cluster.cluster().kill_daemon("server1", SIGKILL).ok());
  auto got = ctl(cluster.dir(), {"sched", "-c", config, "--json"});
  CAPTURE(got);
  CHECK(got.status == 1);
  CHECK(got.err.rfind("pvfs-ctl: sched: server1 (", 0) == 0);
  CHECK(std::count(got.err.begin(), got.err.end(), '\n') == 1);
  CHECK(by_server(sched_objects(got.out), "redirects") == std::map<int, double>{{0, 0}, {2, 0}});
}

TEST_CASE("inject slows one server down until it is told to stop") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  auto slow = ctl(cluster.dir(), {"inject", "1", "--delay-factor", "5", "--for", "30", "-c", config});
  CAPTURE(slow);
  REQUIRE(slow.status == 0);
  CHECK(slow.out == "server 1: serving 5x slower for 30 s\n");
  CHECK(slow.err.empty());

  auto json = ctl(cluster.dir(), {"sched", "--json", "-c", config});
  CAPTURE(json);
  REQUIRE(json.status == 0);
  const auto objects = sched_objects(json.out);
  CHECK(by_server(objects, "delay_factor") == std::map<int, double>{{0, 1}, {1, 5}, {2, 1}});
  const auto remaining = by_server(objects, "delay_remaining_ms");
  CHECK(remaining.at(1) > 0);
  CHECK(remaining.at(1) <= 30000);
  CHECK(remaining.at(0) == 0);
  auto table = ctl(cluster.dir(), {"sched", "-c", config});
  CAPTURE(table);
  std::istringstream lines(table.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string id;
    words >> id;
    if (id == "1") CHECK(line.find("  5x, ") != std::string::npos);
    if (id == "0" || id == "2") CHECK(line.substr(line.size() - 3) == "  -");
  }

  auto forever = ctl(cluster.dir(), {"inject", "2", "-f", "2.5", "-c", config});
  CAPTURE(forever);
  CHECK(forever.status == 0);
  CHECK(forever.out == "server 2: serving 2.5x slower until changed\n");
  auto normal = ctl(cluster.dir(), {"inject", "1", "--delay-factor", "1", "-c", config});
  CAPTURE(normal);
  CHECK(normal.status == 0);
  CHECK(normal.out == "server 1: serving at normal speed\n");
  auto after = ctl(cluster.dir(), {"sched", "--json", "-c", config});
  CAPTURE(after);
  CHECK(by_server(sched_objects(after.out), "delay_factor") ==
        std::map<int, double>{{0, 1}, {1, 1}, {2, 2.5}});
  CHECK(by_server(sched_objects(after.out), "delay_remaining_ms") ==
        std::map<int, double>{{0, 0}, {1, 0}, {2, 0}});

  // --clear says the same as a factor of 1.
  auto cleared = ctl(cluster.dir(), {"inject", "server2", "--clear", "-c", config});
  CAPTURE(cleared);
  CHECK(cleared.status == 0);
  CHECK(cleared.out == "server 2: serving at normal speed\n");
  auto last = ctl(cluster.dir(), {"sched", "--json", "-c", config});
  CHECK(by_server(sched_objects(last.out), "delay_factor") == std::map<int, double>{{0, 1}, {1, 1}, {2, 1}});
}

TEST_CASE("inject refuses bad factors and unknown servers in one line") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  auto fast = ctl(cluster.dir(), {"inject", "1", "--delay-factor", "0.5", "-c", config});
  CAPTURE(fast);
  CHECK(fast.status == 1);
  CHECK(fast.out.empty());
  CHECK(fast.err.rfind("pvfs-ctl: inject: server1 (", 0) == 0);
  CHECK(fast.err.find("delay factor must be between 1 and 1000") != std::string::npos);
  CHECK(std::count(fast.err.begin(), fast.err.end(), '\n') == 1);

  auto unknown = ctl(cluster.dir(), {"inject", "99", "--delay-factor", "5", "-c", config});
  CAPTURE(unknown);
  CHECK(unknown.status == 1);
  CHECK(unknown.out.empty());
  CHECK(unknown.err == "pvfs-ctl: inject: no storage server 99 in " + config + "\n");

  for (const std::vector<std::string>& usage :
       {std::vector<std::string>{"inject", "1", "-c", config},
        std::vector<std::string>{"inject", "one", "--delay-factor", "5", "-c", config},
        std::vector<std::string>{"inject", "1", "--delay-factor", "fast", "-c", config},
        std::vector<std::string>{"inject", "1", "--delay-factor", "5", "--for", "-3", "-c", config},
        std::vector<std::string>{"inject", "1", "--delay-factor", "5", "--clear", "-c", config},
        std::vector<std::string>{"sched", "x", "-c", config}}) {
    auto bad = ctl(cluster.dir(), usage);
    CAPTURE(bad);
    CHECK(bad.status == 2);
    CHECK(bad.err.rfind("pvfs-ctl: ", 0) == 0);
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  }
}

TEST_CASE("random dispatch records redirects that the maintainers pull home when idle") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true, "dispatch=random");
  const std::string config = cluster.cluster().config_path().string();
  const fs::path file = cluster.mnt() / "scattered";
  std::string data(6 << 20, '\0');
  std::mt19937_64 random(42);
  for (char& c : data) c = static_cast<char>(random());
  {
    std::ofstream out(file, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    REQUIRE(out.good());
  }

  auto written = ctl(cluster.dir(), {"sched", "--json", "-c", config});
  CAPTURE(written);
  REQUIRE(written.status == 0);
  double redirects = 0;
  for (const auto& [id, n] : by_server(sched_objects(written.out), "redirects")) redirects += n;
  CHECK(redirects > 0);

  // The maintainers bring redirected data home once the servers are idle.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  Outcome polled;
  double entries = -1, pulled = 0;
  while (true) {
    polled = ctl(cluster.dir(), {"sched", "--json", "-c", config});
    REQUIRE(polled.status == 0);
    entries = pulled = 0;
    for (const auto& o : sched_objects(polled.out)) {
      entries += o.at("redirect_entries");
      pulled += o.at("pulled_bytes");
    }
    if (entries == 0 || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  CAPTURE(polled);
  CHECK(entries == 0);
  CHECK(pulled > 0);

  // Drop the kernel's cached pages so the read goes to the servers.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
  std::string back(data.size() + 1, '\0');
  size_t got = 0;
  for (ssize_t n; (n = ::read(fd, back.data() + got, back.size() - got)) > 0;)
    got += static_cast<size_t>(n);
  ::close(fd);
  back.resize(got);
  CHECK(back.size() == data.size());
  const bool identical = back == data;  // not CHECK(back == data): it would print 6 MiB
  CHECK(identical);
}

TEST_CASE("elevator shows obrr on every server of a fresh cluster and switches one server") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  const std::map<int, std::string> all_obrr = {{0, "\"obrr\""}, {1, "\"obrr\""}, {2, "\"obrr\""}};
  auto table = ctl(cluster.dir(), {"elevator", "-c", config});
  CAPTURE(table);
  REQUIRE(table.status == 0);
  CHECK(table.err.empty());
  CHECK(table.out.rfind("ID ", 0) == 0);
  CHECK(second_words(table.out) ==
        std::map<std::string, std::string>{{"0", "obrr"}, {"1", "obrr"}, {"2", "obrr"}});
  CHECK(column(table.out, "DISPATCHES") ==
        std::map<std::string, std::string>{{"0", "0"}, {"1", "0"}, {"2", "0"}});

  auto json = ctl(cluster.dir(), {"elevator", "--json"}, "PVFS_CONFIG=" + pvfs::test::shell_quote(config));
  CAPTURE(json);
  REQUIRE(json.status == 0);
  CHECK(json.out.rfind("[\n", 0) == 0);
  CHECK(elevator_field(json.out, "policy") == all_obrr);
  CHECK(elevator_field(json.out, "queued") ==
        std::map<int, std::string>{{0, "[0, 0, 0]"}, {1, "[0, 0, 0]"}, {2, "[0, 0, 0]"}});
  CHECK(elevator_field(json.out, "dispatched_sizes") ==
        std::map<int, std::string>{{0, "{}"}, {1, "{}"}, {2, "{}"}});

  auto to_fcfs = ctl(cluster.dir(), {"elevator", "1", "fcfs", "-c", config});
  CAPTURE(to_fcfs);
  REQUIRE(to_fcfs.status == 0);
  CHECK(to_fcfs.err.empty());
  CHECK(second_words(to_fcfs.out) == std::map<std::string, std::string>{{"1", "fcfs"}});
  auto after = ctl(cluster.dir(), {"elevator", "--json", "-c", config});
  CAPTURE(after);
  REQUIRE(after.status == 0);
  CHECK(elevator_field(after.out, "policy") ==
        std::map<int, std::string>{{0, "\"obrr\""}, {1, "\"fcfs\""}, {2, "\"obrr\""}});

  auto back = ctl(cluster.dir(), {"elevator", "--json", "1", "obrr", "-c", config});
  CAPTURE(back);
  REQUIRE(back.status == 0);
  CHECK(elevator_field(back.out, "policy") == std::map<int, std::string>{{1, "\"obrr\""}});
  auto again = ctl(cluster.dir(), {"elevator", "--json", "-c", config});
  CAPTURE(again);
  CHECK(elevator_field(again.out, "policy") == all_obrr);
}

TEST_CASE("elevator refuses an unknown policy and unknown servers in one line") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  auto bad = ctl(cluster.dir(), {"elevator", "1", "elevatorish", "-c", config});
  CAPTURE(bad);
  CHECK(bad.status == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("pvfs-ctl: elevator: server1 (", 0) == 0);
  CHECK(bad.err.find("unknown elevator 'elevatorish'") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  auto unchanged = ctl(cluster.dir(), {"elevator", "--json", "1", "-c", config});
  CAPTURE(unchanged);
  CHECK(elevator_field(unchanged.out, "policy") == std::map<int, std::string>{{1, "\"obrr\""}});

  auto unknown = ctl(cluster.dir(), {"elevator", "9", "fcfs", "-c", config});
  CAPTURE(unknown);
  CHECK(unknown.status == 1);
  CHECK(unknown.out.empty());
  CHECK(unknown.err == "pvfs-ctl: elevator: no storage server 9 in " + config + "\n");

  for (const std::vector<std::string>& usage :
       {std::vector<std::string>{"elevator", "fcfs", "-c", config},
        std::vector<std::string>{"elevator", "1", "fcfs", "extra", "-c", config}}) {
    auto wrong = ctl(cluster.dir(), usage);
    CAPTURE(wrong);
    CHECK(wrong.status == 2);
    CHECK(wrong.err.rfind("pvfs-ctl: ", 0) == 0);
    CHECK(std::count(wrong.err.begin(), wrong.err.end(), '\n') == 1);
  }
}

TEST_CASE("elevator counts the dispatches and their sizes after writes through the mount") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const std::string config = cluster.cluster().config_path().string();
  const std::string dd = "dd if=/dev/zero of=" + pvfs::test::shell_quote((cluster.mnt() / "some").string()) +
                         " bs=1M count=6 conv=fsync status=none";
  REQUIRE(std::system(dd.c_str()) == 0);

  auto json = ctl(cluster.dir(), {"elevator", "--json", "-c", config});
  CAPTURE(json);
  REQUIRE(json.status == 0);
  double dispatches = 0;
  bool sizes = false;
  for (const auto& [id, fields] : elevator_objects(json.out)) {
    dispatches += std::stod(fields.at("dispatches"));
    if (fields.at("dispatched_sizes") != "{}") sizes = true;
  }
  CHECK(dispatches > 0);
  CHECK(sizes);

  auto table = ctl(cluster.dir(), {"elevator", "-c", config});
  CAPTURE(table);
  REQUIRE(table.status == 0);
  std::istringstream lines(table.out);
  std::string header;
  std::getline(lines, header);
  int histograms = 0;  // rows whose SIZES (the last column) is not "-"
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 2 && line.substr(line.size() - 2) != " -") ++histograms;
  CHECK(histograms > 0);
}

}  // namespace ctl_test
