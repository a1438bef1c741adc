// A cluster on six hosts, for real, on one machine: the test makes six
// network namespaces (an MDS, four storage servers, a client) joined by veth
// pairs to a bridge in a seventh, with private 10.213.0.x addresses that
// exist only inside them (nothing in the host namespace, no route out).
// `pvfs-ctl genconfig` writes the config; every daemon runs in its own
// namespace without --id (it finds its entry by its address); pvfsmount
// mounts in the client namespace (the mount is visible here, since only the
// network namespace differs); a 64 MiB file striped over all four servers
// is written and read back; `pvfs-ctl ping` from the client names all five
// daemons, and names a storage server killed with SIGKILL. Everything is
// torn down (unmount, processes, namespaces) even when a check fails.
// A second test runs one host whose config names an IPv6 literal and a host
// name, which the daemons must bind and recognise as their own.
// Needs root, iproute2 and /dev/fuse; with CI=true a missing one fails.
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/netns_hosts.h"
#include "tests/support/run_tool.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"

namespace netns_test {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using pvfs::test::built;
using pvfs::test::Hosts;
using pvfs::test::Outcome;
using pvfs::test::run_in;
using pvfs::test::slurp;
using pvfs::test::start_daemon;
using pvfs::test::wait_exit;

constexpr int kServers = 4;
constexpr const char* kSubnet = pvfs::test::kNetnsSubnet;
constexpr const char* kMdsPort = "7000";
constexpr const char* kServerPort = "7100";
constexpr size_t kFileBytes = size_t{64} << 20;

// The line of `text` whose first word is `first_word`, or "".
std::string line_of(const std::string& text, const std::string& first_word) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, first_word.size() + 1, first_word + " ") == 0)
      return line;
  }
  return "";
}

uint64_t bytes_under(const fs::path& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec))
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

TEST_CASE("six hosts in network namespaces: genconfig, daemons without --id, a striped file, ping") {
  if (!pvfs::test::can_run_netns()) return;
  pvfs::test::TempDir dir("pvfs-netns");
  const fs::path root = dir.path();
  const fs::path logs = root / "logs", etc = root / "etc", mnt = root / "mnt";
  for (const auto& d : {logs, etc, mnt}) fs::create_directories(d);
  const std::string ctl = built("utils/pvfs-ctl"), mds = built("mds/pvfs-mds"),
                    server = built("server/pvfs-server"), mount = built("fs/pvfsmount");

  std::vector<std::pair<std::string, int>> layout = {{"mds", 1}, {"cl", 100}};
  for (int i = 0; i < kServers; ++i) layout.push_back({"s" + std::to_string(i), 11 + i});
  Hosts hosts;
  const std::string made =
      hosts.create("pvfs" + std::to_string(::getpid()), layout, logs / "netns.log");
  if (!made.empty()) FAIL(made);
  const std::string client = hosts.name("cl");
  auto addr = [](int host, const char* port) { return kSubnet + std::to_string(host) + ":" + port; };

  // The config, by the real tool, as an administrator would write it.
  std::string server_list;
  for (int i = 0; i < kServers; ++i) server_list += (i ? "," : "") + addr(11 + i, kServerPort);
  const fs::path config = etc / "pvfs.toml";
  Outcome gen = run_in(hosts.bridge(),
                       {ctl, "genconfig", "--mds", addr(1, kMdsPort), "--servers", server_list,
                        "--data-dir", (root / "data").string(), "--out", config.string(),
                        "--stripe-size", "1M"},
                       root);
  CAPTURE(gen);
  REQUIRE(gen.status == 0);
  CHECK(gen.out.find("wrote " + config.string()) != std::string::npos);
  REQUIRE(fs::exists(etc / "secret.key"));

  {
    // Where no entry's address is local, a daemon without --id says so.
    Outcome lost = run_in(hosts.bridge(), {server, "--config", config.string()}, root);
    CAPTURE(lost);
    CHECK(lost.status == 1);
    CHECK(lost.err.find("no [[server]] entry of the config is on this machine") != std::string::npos);
    CHECK(lost.err.find("3=" + addr(14, kServerPort)) != std::string::npos);
    CHECK(lost.err.find("give --id") != std::string::npos);
    // A daemon told to be one whose address is elsewhere cannot bind it:
    // one line naming the address and the reason.
    Outcome misplaced = run_in(client, {mds, "--config", config.string(), "--id", "0"}, root);
    CAPTURE(misplaced);
    CHECK(misplaced.status == 1);
    CHECK(misplaced.err.find("cannot listen on " + addr(1, kMdsPort) + ": ") != std::string::npos);
    CHECK(std::count(misplaced.err.begin(), misplaced.err.end(), '\n') == 1);
  }

  // Every daemon in its own host, finding its entry by its address.
  auto start = [&](const std::string& host, const std::string& program, const std::string& label) {
    return start_daemon(hosts, hosts.name(host), program, config, root, label);
  };
  start("mds", mds, "mds0");
  std::vector<pid_t> servers;
  for (int i = 0; i < kServers; ++i)
    servers.push_back(start("s" + std::to_string(i), server, "server" + std::to_string(i)));

  // The MDS knows all four, at their configured addresses, alive.
  Outcome known;
  for (auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;) {
    known = run_in(client, {ctl, "servers", "-c", config.string()}, root);
    if (known.status == 0 && std::count(known.out.begin(), known.out.end(), '\n') == kServers + 1 &&
        known.out.find("unregistered") == std::string::npos &&
        known.out.find("dead") == std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CAPTURE(known);
  REQUIRE(known.status == 0);
  for (int i = 0; i < kServers; ++i) {
    const std::string row = line_of(known.out, std::to_string(i));
    CHECK(row.find(addr(11 + i, kServerPort)) != std::string::npos);
    CHECK(row.find("alive") != std::string::npos);
    // Each one took the entry of its own address (its log line "serving"
    // follows the ready file, so it is only looked for now).
    const std::string log = slurp(logs / ("server" + std::to_string(i) + ".log"));
    CAPTURE(log);
    CHECK(log.find("pvfs-server[" + std::to_string(i) + "]") != std::string::npos);
    CHECK(log.find("on " + addr(11 + i, kServerPort)) != std::string::npos);
  }

  // The client mounts from its own host; the mount shows up here.
  const Outcome mounted = run_in(client, {mount, config.string(), mnt.string()}, root);
  CAPTURE(mounted);
  REQUIRE(mounted.status == 0);
  hosts.mounted(mnt);
  CHECK(slurp("/proc/self/mountinfo").find(" " + mnt.string() + " ") != std::string::npos);

  std::vector<char> data(kFileBytes);
  std::mt19937_64 random(0x6d6e);
  for (size_t i = 0; i < data.size(); i += 8) {
    const uint64_t word = random();
    std::memcpy(&data[i], &word, 8);
  }
  const fs::path file = mnt / "striped";
  {
    std::ofstream out(file, std::ios::binary);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    REQUIRE(out.good());
  }
  {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> back(kFileBytes + 1);
    in.read(back.data(), static_cast<std::streamsize>(back.size()));
    REQUIRE(static_cast<size_t>(in.gcount()) == kFileBytes);
    back.resize(kFileBytes);
    CHECK(back == data);
  }
  const Outcome stripe = run_in(client, {ctl, "getstripe", file.string()}, root);
  CAPTURE(stripe);
  REQUIRE(stripe.status == 0);
  CHECK(stripe.out.find("stripe_count:  4\n") != std::string::npos);
  CHECK(stripe.out.find("stripe_size:   1048576\n") != std::string::npos);
  for (int i = 0; i < kServers; ++i) {
    // Every server holds a share of the file (objects, or fragments of others').
    const uint64_t held = bytes_under(root / "data" / ("server" + std::to_string(i)) / "objects") +
                          bytes_under(root / "data" / ("server" + std::to_string(i)) / "fragments");
    CAPTURE(i);
    CHECK(held >= (kFileBytes / kServers) / 4);
  }

  // ping from the client host: all five, reachable, authenticated, who the
  // config says, with their version and uptime.
  const Outcome ping = run_in(client, {ctl, "ping", "-c", config.string()}, root);
  CAPTURE(ping);
  CHECK(ping.status == 0);
  std::vector<std::string> names = {"mds0"};
  for (int i = 0; i < kServers; ++i) names.push_back("server" + std::to_string(i));
  for (const auto& n : names) {
    const std::string row = line_of(ping.out, n);
    CAPTURE(n);
    CHECK(row.find(" ok ") != std::string::npos);
    CHECK(row.find(PVFS_VERSION) != std::string::npos);
  }
  CHECK(line_of(ping.out, "mds0").find(addr(1, kMdsPort)) != std::string::npos);

  // A storage server killed outright: ping fails and names it.
  ::kill(servers[2], SIGKILL);
  wait_exit(servers[2]);
  const Outcome after = run_in(client, {ctl, "ping", "-c", config.string()}, root);
  CAPTURE(after);
  CHECK(after.status == 1);
  CHECK(line_of(after.out, "server2").find(" down ") != std::string::npos);
  CHECK(line_of(after.out, "server1").find(" ok ") != std::string::npos);
  CHECK(after.err.find("1 of 5 daemons not ok: server2") != std::string::npos);

  // Unmount before the teardown kills the daemons, as an administrator would.
  CHECK(::umount2(mnt.c_str(), 0) == 0);
  hosts.mounted({});
}

}  // namespace

namespace {

TEST_CASE("an IPv6 literal and a host name in the config: daemons bind there and find their entries") {
  if (!pvfs::test::can_run_netns()) return;
  pvfs::test::TempDir dir("pvfs-netns6");
  const fs::path root = dir.path(), config = root / "pvfs.toml";
  fs::create_directories(root / "logs");
  const std::string ctl = built("utils/pvfs-ctl");
  Hosts hosts;  // one host: the bridge namespace alone, with only its loopback
  const std::string made = hosts.create("pvfs" + std::to_string(::getpid()) + "x", {},
                                        root / "logs" / "netns.log");
  if (!made.empty()) FAIL(made);
  const std::string host = hosts.bridge();
  Outcome gen = run_in(host,
                       {ctl, "genconfig", "--mds", "[::1]:7000", "--servers", "localhost:7100",
                        "--data-dir", (root / "data").string(), "--out", config.string()},
                       root);
  CAPTURE(gen);
  REQUIRE(gen.status == 0);
  start_daemon(hosts, host, built("mds/pvfs-mds"), config, root, "mds0");
  start_daemon(hosts, host, built("server/pvfs-server"), config, root, "server0");

  Outcome known;
  for (auto deadline = Clock::now() + std::chrono::seconds(10); Clock::now() < deadline;) {
    known = run_in(host, {ctl, "servers", "-c", config.string()}, root);
    if (known.status == 0 && known.out.find("alive") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CAPTURE(known);
  CHECK(line_of(known.out, "0").find("localhost:7100") != std::string::npos);
  CHECK(line_of(known.out, "0").find("alive") != std::string::npos);
  const Outcome ping = run_in(host, {ctl, "ping", "-c", config.string()}, root);
  CAPTURE(ping);
  CHECK(ping.status == 0);
  CHECK(line_of(ping.out, "mds0").find("[::1]:7000") != std::string::npos);
  CHECK(line_of(ping.out, "mds0").find(" ok ") != std::string::npos);
  CHECK(line_of(ping.out, "server0").find(" ok ") != std::string::npos);
}

}  // namespace

}  // namespace netns_test
