// A newcomer's wrong turns, as commands typed at a shell: every program run
// as a real process (paths from meson: $PVFS_CTL, $PVFS_CLUSTER, $PVFS_MDS,
// $PVFS_SERVER, $PVFSMOUNT, $PVFS_BENCH, $PVFS_SIM), each case asserting the
// one line it prints and its exit status (issue 20). The cluster cases
// start real daemons with `pvfs-cluster up` and, where they mount, need
// /dev/fuse; `pvfs-cluster down` runs at the end of each even when it fails.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"

namespace {

namespace fs = std::filesystem;
using pvfs::test::Outcome;
using pvfs::test::run_tool;
using pvfs::test::TempDir;

struct Program {
  const char* var;   // the environment variable meson sets to its path
  const char* name;  // what it calls itself
};

constexpr Program kPrograms[] = {
    {"PVFS_CTL", "pvfs-ctl"},       {"PVFS_CLUSTER", "pvfs-cluster"}, {"PVFS_MDS", "pvfs-mds"},
    {"PVFS_SERVER", "pvfs-server"}, {"PVFSMOUNT", "pvfsmount"},       {"PVFS_BENCH", "pvfs-bench"},
    {"PVFS_SIM", "pvfs-sim"},
};

size_t lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// How many pvfs mounts the kernel has on `mount_point` itself.
int pvfs_mounts_at(const fs::path& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point == mount_point.string() && contains(line, " - fuse.pvfs ")) ++n;
  }
  return n;
}

// A config that parses but names a daemon nobody runs, plus `extra`.
fs::path write_config(const fs::path& dir, const std::string& extra) {
  const fs::path file = dir / "pvfs.toml";
  std::ofstream(file) << "secret_file = \"secret.key\"\n"
                         "[[mds]]\n"
                         "address = \"127.0.0.1:1\"\n"
                         "data_dir = \"mds0\"\n"
                         "[[server]]\n"
                         "address = \"127.0.0.1:2\"\n"
                         "data_dir = \"server0\"\n"
                      << extra;
  return file;
}

// `pvfs-cluster down --dir DIR` when it goes out of scope, so a failed
// check leaves no daemon or mount behind.
class Down {
 public:
  Down(const fs::path& scratch, fs::path dir) : scratch_(scratch), dir_(std::move(dir)) {}
  ~Down() { run_tool("PVFS_CLUSTER", scratch_, {"down", "--dir", dir_.string()}); }

 private:
  fs::path scratch_, dir_;
};

}  // namespace

TEST_CASE("every program prints its version for --version and exits 0") {
  TempDir scratch;
  for (const auto& p : kPrograms) {
    CAPTURE(p.name);
    auto o = run_tool(p.var, scratch.path(), {"--version"});
    CAPTURE(o);
    CHECK(o.status == 0);
    CHECK(o.out == PVFS_VERSION "\n");
  }
}

TEST_CASE("a usage error is one line naming the program, with exit status 2") {
  TempDir scratch;
  for (const auto& p : kPrograms) {
    CAPTURE(p.name);
    auto o = run_tool(p.var, scratch.path(), {"--no-such-option"});
    CAPTURE(o);
    CHECK(o.status == 2);
    CHECK(lines(o.err) == 1);
    CHECK(o.err.rfind(std::string(p.name) + ": ", 0) == 0);
    CHECK(contains(o.err, "(see " + std::string(p.name) + " --help)"));
  }
  // A missing argument, and a mistyped command.
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up"});
  CAPTURE(up);
  CHECK(up.status == 2);
  CHECK(up.err == "pvfs-cluster: --dir is required (see pvfs-cluster --help)\n");
  auto typo = run_tool("PVFS_CTL", scratch.path(), {"pnig"});
  CAPTURE(typo);
  CHECK(typo.status == 2);
  CHECK(typo.err == "pvfs-ctl: unknown command 'pnig' (did you mean 'ping'?) (see pvfs-ctl --help)\n");
}

TEST_CASE("--help shows the program's name, not the path it was run by") {
  TempDir scratch;
  for (const auto& p : kPrograms) {
    CAPTURE(p.name);
    auto o = run_tool(p.var, scratch.path(), {"--help"});
    CAPTURE(o);
    CHECK(o.status == 0);
    CHECK(contains(o.out, "Usage: " + std::string(p.name) + " "));
    CHECK_FALSE(contains(o.out, "Usage: /"));
  }
}

TEST_CASE("pvfsmount --help lists every -o option, dispatch= and log= included") {
  TempDir scratch;
  auto o = run_tool("PVFSMOUNT", scratch.path(), {"--help"});
  CAPTURE(o);
  CHECK(o.status == 0);
  for (const char* option : {"attr_timeout=", "entry_timeout=", "writeback_cache", "direct_io", "allow_other",
                             "no_default_permissions", "ro, rw", "jobid_var=", "secret=", "dispatch=", "log=",
                             "max_threads=", "max_background=", "fsname=", "timeout="}) {
    CAPTURE(option);
    CHECK(contains(o.out, "  " + std::string(option)));
  }
}

TEST_CASE("a missing config file is one line naming it, from every program that reads one") {
  TempDir scratch;
  const std::string absent = (scratch.path() / "absent.toml").string();
  const std::string line = "cannot read config " + absent + ": No such file or directory\n";
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"ping", "-c", absent}, {"-c", absent, "ping"}, {"sched", "-c", absent}}) {
    auto o = run_tool("PVFS_CTL", scratch.path(), args);
    CAPTURE(o);
    CHECK(o.status == 1);
    CHECK(o.err == "pvfs-ctl: " + line);
  }
  auto fsck = run_tool("PVFS_CTL", scratch.path(), {"fsck", "-c", absent});
  CAPTURE(fsck);
  CHECK(fsck.status == 1);
  CHECK(fsck.err == "pvfs-ctl: fsck: " + line);
  auto mds = run_tool("PVFS_MDS", scratch.path(), {"-c", absent});
  CAPTURE(mds);
  CHECK(mds.status == 1);
  CHECK(mds.err == "pvfs-mds: " + line);
  auto server = run_tool("PVFS_SERVER", scratch.path(), {"-c", absent});
  CAPTURE(server);
  CHECK(server.status == 1);
  CHECK(server.err == "pvfs-server: " + line);
  auto mount = run_tool("PVFSMOUNT", scratch.path(), {absent, scratch.path().string()});
  CAPTURE(mount);
  CHECK(mount.status == 1);
  CHECK(lines(mount.err) == 1);
  CHECK(contains(mount.err, absent + ": No such file or directory"));
  CHECK_FALSE(contains(mount.err, ":0:0:"));
}

TEST_CASE("a misspelt section or key in the config is refused by every program that reads it") {
  TempDir scratch;
  const fs::path section = write_config(scratch.path(), "[timeout]\nrpc_ms = 500\n");
  const std::string why = section.string() + ": unknown section '[timeout]' (did you mean [timeouts]?)\n";
  auto ctl = run_tool("PVFS_CTL", scratch.path(), {"-c", section.string(), "ping"});
  CAPTURE(ctl);
  CHECK(ctl.status == 1);
  CHECK(ctl.err == "pvfs-ctl: " + why);
  auto mds = run_tool("PVFS_MDS", scratch.path(), {"-c", section.string()});
  CAPTURE(mds);
  CHECK(mds.status == 1);
  CHECK(mds.err == "pvfs-mds: " + why);
  auto server = run_tool("PVFS_SERVER", scratch.path(), {"-c", section.string()});
  CAPTURE(server);
  CHECK(server.status == 1);
  CHECK(server.err == "pvfs-server: " + why);
  auto mount = run_tool("PVFSMOUNT", scratch.path(), {section.string(), scratch.path().string()});
  CAPTURE(mount);
  CHECK(mount.status == 1);
  CHECK(mount.err == "pvfsmount: " + why);

  const fs::path key = write_config(scratch.path(), "[layout]\nstripe_sise = 65536\n");
  auto typo = run_tool("PVFS_CTL", scratch.path(), {"stats", "-c", key.string()});
  CAPTURE(typo);
  CHECK(typo.status == 1);
  CHECK(typo.err == "pvfs-ctl: " + key.string() +
                        ": unknown key 'layout.stripe_sise' (did you mean 'layout.stripe_size'?)\n");
}

TEST_CASE("pvfs-ctl takes a server as 3 or server3 in sched, inject and elevator, and top -n/-d as top(1)") {
  TempDir scratch;
  const std::string absent = (scratch.path() / "absent.toml").string();
  // Accepted by the parser: they fail only on the missing config (exit 1, not 2).
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"sched", "server3", "1", "-c", absent},
           {"inject", "server3", "-f", "2", "-c", absent},
           {"elevator", "server3", "-c", absent},
           {"stats", "server3", "-c", absent},
           {"loglevel", "3", "debug", "-c", absent},
           {"top", "-n", "2", "-d", "0.5", "-c", absent},
           {"top", "--iterations", "2", "--interval", "0.5", "-c", absent},  // deprecated spellings
           {"top", "-i", "3", "-c", absent}}) {
    auto o = run_tool("PVFS_CTL", scratch.path(), args);
    CAPTURE(o);
    CHECK(o.status == 1);
    CHECK(contains(o.err, "cannot read config"));
  }
  auto bad = run_tool("PVFS_CTL", scratch.path(), {"sched", "srv3", "-c", absent});
  CAPTURE(bad);
  CHECK(bad.status == 2);
  CHECK(contains(bad.err, "not a storage server: 'srv3' (give its id, 3, or its name, server3)"));
  // -n counts frames now: a fraction is refused.
  auto old = run_tool("PVFS_CTL", scratch.path(), {"top", "-n", "0.5", "-c", absent});
  CAPTURE(old);
  CHECK(old.status == 2);
}

TEST_CASE("pvfs-ctl fileset create outside pvfs fails without making the directory") {
  TempDir scratch;
  const fs::path dir = scratch.path() / "proj";
  auto o = run_tool("PVFS_CTL", scratch.path(), {"fileset", "create", dir.string()});
  CAPTURE(o);
  CHECK(o.status == 1);
  CHECK(o.err == "pvfs-ctl: fileset create " + dir.string() + ": not on a pvfs file system\n");
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("pvfs-ctl fileset names a missing path as missing, and says how to show a file set") {
  TempDir scratch;
  const fs::path gone = scratch.path() / "gone";
  auto missing = run_tool("PVFS_CTL", scratch.path(), {"fileset", gone.string()});
  CAPTURE(missing);
  CHECK(missing.status == 1);
  CHECK(missing.err == "pvfs-ctl: fileset " + gone.string() + ": No such file or directory\n");
  // `fileset show PATH` reads "show" as a path.
  auto guessed = run_tool("PVFS_CTL", scratch.path(), {"fileset", "show", scratch.path().string()});
  CAPTURE(guessed);
  CHECK(guessed.status == 1);
  CHECK(contains(guessed.err, "pvfs-ctl: fileset show: No such file or directory (pvfs-ctl fileset PATH... shows "
                              "the file set of each PATH)\n"));
  CHECK(contains(guessed.err, "pvfs-ctl: fileset " + scratch.path().string() + ": not on a pvfs file system\n"));
}

TEST_CASE("pvfs-ctl locks and iostep of a path off pvfs say so, before asking any daemon") {
  TempDir scratch;
  auto locks = run_tool("PVFS_CTL", scratch.path(), {"locks", scratch.path().string()});
  CAPTURE(locks);
  CHECK(locks.status == 1);
  CHECK(locks.err == "pvfs-ctl: locks: " + scratch.path().string() + ": not on a pvfs file system\n");
  auto step = run_tool("PVFS_CTL", scratch.path(), {"iostep", "begin", scratch.path().string()});
  CAPTURE(step);
  CHECK(step.status == 1);
  CHECK(step.err == "pvfs-ctl: iostep begin: " + scratch.path().string() + ": not on a pvfs file system\n");
}

TEST_CASE("pvfs-cluster down and status in a folder without a cluster say so in one line") {
  TempDir scratch;
  for (const char* command : {"down", "status"}) {
    auto o = run_tool("PVFS_CLUSTER", scratch.path(), {command, "--dir", scratch.path().string()});
    CAPTURE(o);
    CHECK(o.status == 1);
    CHECK(o.err == "pvfs-cluster: no cluster in " + scratch.path().string() + " (no pvfs.toml there; " +
                       "`pvfs-cluster up --dir " + scratch.path().string() + "` makes one)\n");
  }
}

TEST_CASE("a failed pvfs-cluster up leaves no broken config, and a corrected up then works") {
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  Down down(scratch.path(), dir);
  auto bad = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--stripe-size", "1000"});
  CAPTURE(bad);
  CHECK(bad.status == 1);
  CHECK(bad.err == "pvfs-cluster: --stripe-size 1000 is not a multiple of 4096 (4K)\n");
  CHECK_FALSE(fs::exists(dir / "pvfs.toml"));

  // A daemon that cannot start (its data folder is a file): the config,
  // key and data folders this up made go again.
  fs::create_directories(dir / "logs");
  std::ofstream(dir / "server1") << "in the way\n";
  std::ofstream(dir / "logs" / "server1.log") << "a stale line of an earlier start\n";
  auto failed = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--servers", "2"});
  CAPTURE(failed);
  CHECK(failed.status == 1);
  CHECK(failed.err == "pvfs-cluster: server1 exited during start: pvfs-server: not a directory: create data directory " +
                          (dir / "server1").string() + "\n");
  CHECK_FALSE(fs::exists(dir / "pvfs.toml"));
  CHECK_FALSE(fs::exists(dir / "secret.key"));
  CHECK_FALSE(fs::exists(dir / "mds0"));
  fs::remove(dir / "server1");

  auto good = run_tool("PVFS_CLUSTER", scratch.path(),
                       {"up", "--dir", dir.string(), "--servers", "2", "--stripe-size", "65536"});
  CAPTURE(good);
  REQUIRE(good.status == 0);
  CHECK(contains(good.out, "pvfs cluster up in " + dir.string() + ": 1 metadata server(s), 2 storage server(s)\n"));
  auto status = run_tool("PVFS_CLUSTER", scratch.path(), {"status", "--dir", dir.string()});
  CAPTURE(status);
  CHECK(status.status == 0);
}

TEST_CASE("pvfs-cluster up restarts only the daemon that died, and pvfs-ctl takes -c first") {
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  Down down(scratch.path(), dir);
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--servers", "2"});
  CAPTURE(up);
  REQUIRE(up.status == 0);
  const std::string config = (dir / "pvfs.toml").string();
  auto ping = run_tool("PVFS_CTL", scratch.path(), {"-c", config, "ping"});
  CAPTURE(ping);
  CHECK(ping.status == 0);
  auto sched = run_tool("PVFS_CTL", scratch.path(), {"-c", config, "sched", "server1", "--json"});
  CAPTURE(sched);
  CHECK(sched.status == 0);
  CHECK(contains(sched.out, "\"server\": 1"));
  CHECK_FALSE(contains(sched.out, "\"server\": 0"));

  int pid = 0;
  std::ifstream(dir / "run" / "server1.pid") >> pid;
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto again = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string()});
  CAPTURE(again);
  CHECK(again.status == 0);
  CHECK(contains(again.out, "pvfs cluster in " + dir.string() + ": restarted server1\n"));
  auto status = run_tool("PVFS_CLUSTER", scratch.path(), {"status", "--dir", dir.string()});
  CAPTURE(status);
  CHECK(status.status == 0);
  auto busy = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string()});
  CAPTURE(busy);
  CHECK(busy.status == 1);
  CHECK(contains(busy.err, "pvfs-cluster: the cluster in " + dir.string() + " is already up"));
  CHECK(lines(busy.err) == 1);
}

// Binds the port of the last daemon address in `config` once the file
// names `daemons` of them, as another program starting at the same moment
// might; returns the listening socket (-1 if the file never did).
int take_last_port(const fs::path& config, size_t daemons, uint16_t& port) {
  const std::regex address(R"(address = '127\.0\.0\.1:(\d+)')");
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < give_up) {
    const std::string text = pvfs::test::slurp(config);
    std::vector<uint16_t> ports;
    for (std::sregex_iterator it(text.begin(), text.end(), address), end; it != end; ++it)
      ports.push_back(static_cast<uint16_t>(std::stoi((*it)[1])));
    if (ports.size() >= daemons) {
      port = ports.back();
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in at{};
      at.sin_family = AF_INET;
      at.sin_port = htons(port);
      at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0 && ::listen(fd, 1) == 0) return fd;
      ::close(fd);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return -1;
}

TEST_CASE("pvfs-cluster up starts a new cluster again with new ports when another program takes one") {
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  Down down(scratch.path(), dir);
  uint16_t taken = 0;
  int fd = -1;
  // The last of four storage servers starts after the MDS and three
  // servers answer: hundreds of milliseconds for the thread to take its port.
  std::thread thief([&] { fd = take_last_port(dir / "pvfs.toml", 5, taken); });
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--servers", "4"});
  thief.join();
  CAPTURE(up);
  REQUIRE(fd >= 0);
  CHECK(up.status == 0);
  CHECK_FALSE(contains(pvfs::test::slurp(dir / "pvfs.toml"), "127.0.0.1:" + std::to_string(taken) + "'"));
  auto ping = run_tool("PVFS_CTL", scratch.path(), {"-c", (dir / "pvfs.toml").string(), "ping"});
  CAPTURE(ping);
  CHECK(ping.status == 0);
  ::close(fd);
}

TEST_CASE("the delegate's commands work as soon as pvfs-cluster up returns, while the members settle") {
  // Three metadata servers started again take about a second after they
  // answer to agree on a delegate; a script's next line must not fail
  // meanwhile.
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  Down down(scratch.path(), dir);
  auto first = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--mds", "3", "--servers", "1"});
  CAPTURE(first);
  REQUIRE(first.status == 0);
  REQUIRE(run_tool("PVFS_CLUSTER", scratch.path(), {"down", "--dir", dir.string()}).status == 0);
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string()});
  CAPTURE(up);
  REQUIRE(up.status == 0);
  const std::string config = (dir / "pvfs.toml").string();
  auto policy = run_tool("PVFS_CTL", scratch.path(), {"-c", config, "qos", "policy", "average"});
  CAPTURE(policy);
  CHECK(policy.status == 0);
  CHECK(contains(policy.out, "policy average"));
  auto iosched = run_tool("PVFS_CTL", scratch.path(), {"-c", config, "iosched", "policy", "fcfs"});
  CAPTURE(iosched);
  CHECK(iosched.status == 0);
  CHECK(contains(iosched.out, "policy fcfs"));
  // With every member gone the command still fails at once, one line.
  auto down_now = run_tool("PVFS_CLUSTER", scratch.path(), {"down", "--dir", dir.string()});
  REQUIRE(down_now.status == 0);
  const auto asked = std::chrono::steady_clock::now();
  auto none = run_tool("PVFS_CTL", scratch.path(), {"-c", config, "-t", "5000", "qos", "status"});
  CAPTURE(none);
  CHECK(none.status == 1);
  CHECK(contains(none.err, "mds 2: "));
  CHECK(lines(none.err) == 1);
  CHECK(std::chrono::steady_clock::now() - asked < std::chrono::seconds(4));
}

TEST_CASE("a second mount on one directory is refused, and down leaves no pvfs mount behind, hand mounts included") {
  if (pvfs::test::skip_without_fuse()) return;
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  const fs::path mnt = scratch.path() / "mnt";
  Down down(scratch.path(), dir);
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--mount", mnt.string()});
  CAPTURE(up);
  REQUIRE(up.status == 0);
  CHECK(pvfs_mounts_at(mnt) == 1);
  // Its background messages go to the cluster's folder (there may be no syslog).
  CHECK(contains(pvfs::test::slurp(dir / "logs" / "mount.log"), "mounted pvfs:"));

  const std::string config = (dir / "pvfs.toml").string();
  auto twice = run_tool("PVFSMOUNT", scratch.path(), {config, mnt.string()});
  CAPTURE(twice);
  CHECK(twice.status == 1);
  CHECK(twice.err == "pvfsmount: " + mnt.string() + " is already a pvfs mount (unmount it first: fusermount3 -u " +
                         mnt.string() + ")\n");
  CHECK(pvfs_mounts_at(mnt) == 1);
  // A mount point that is not there: one line saying how to make it.
  const fs::path nowhere = scratch.path() / "nowhere";
  auto absent = run_tool("PVFSMOUNT", scratch.path(), {config, nowhere.string()});
  CAPTURE(absent);
  CHECK(absent.status == 1);
  CHECK(absent.err == "pvfsmount: mount point " + nowhere.string() + " does not exist (mkdir -p " + nowhere.string() +
                          ")\n");

  // A key that is not the cluster's: one line saying so.
  const fs::path other_key = scratch.path() / "other.key";
  std::ofstream(other_key) << std::string(64, 'a') << "\n";
  fs::permissions(other_key, fs::perms::owner_read | fs::perms::owner_write);
  const fs::path mnt2 = scratch.path() / "mnt2";
  fs::create_directories(mnt2);
  auto key = run_tool("PVFSMOUNT", scratch.path(), {"-o", "secret=" + other_key.string(), config, mnt2.string()});
  CAPTURE(key);
  CHECK(key.status == 1);
  CHECK(lines(key.err) == 1);
  CHECK(contains(key.err, "refused the key in " + other_key.string()));
  CHECK_FALSE(contains(key.err, "cannot reach"));
  CHECK(pvfs_mounts_at(mnt2) == 0);

  // A stripe over a server the cluster lacks: refused at once, and the
  // directory still takes new files.
  fs::create_directories(mnt / "d");
  auto stripe = run_tool("PVFS_CTL", scratch.path(), {"setstripe", "-s", "9", (mnt / "d").string()});
  CAPTURE(stripe);
  CHECK(stripe.status == 1);
  CHECK(contains(stripe.err, "pvfs-ctl: setstripe " + (mnt / "d").string() + ": Invalid argument (the cluster has no such storage server"));
  CHECK(std::ofstream(mnt / "d" / "f").good());
  auto named = run_tool("PVFS_CTL", scratch.path(), {"setstripe", "-s", "server1", (mnt / "d").string()});
  CAPTURE(named);
  CHECK(named.status == 0);
  auto shown = run_tool("PVFS_CTL", scratch.path(), {"getstripe", (mnt / "d").string()});
  CAPTURE(shown);
  CHECK(contains(shown.out, "servers:       1\n"));

  // The first command again after a storage server died: it comes back,
  // the mount stays as it was.
  int pid = 0;
  std::ifstream(dir / "run" / "server2.pid") >> pid;
  REQUIRE(pid > 0);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto again = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--mount", mnt.string()});
  CAPTURE(again);
  CHECK(again.status == 0);
  CHECK(contains(again.out, "restarted server2\n"));
  CHECK(pvfs_mounts_at(mnt) == 1);
  CHECK(std::ofstream(mnt / "after-restart").good());

  // A second mount by hand, with paths relative to where it was made.
  const fs::path by_hand = scratch.path() / "by-hand";
  fs::create_directories(by_hand);
  auto hand = run_tool("PVFSMOUNT", scratch.path(), {"cluster/pvfs.toml", "by-hand"},
                       "-C " + pvfs::test::shell_quote(scratch.path().string()));  // env(1) --chdir
  CAPTURE(hand);
  REQUIRE(hand.status == 0);
  CHECK(pvfs_mounts_at(by_hand) == 1);

  auto stop = run_tool("PVFS_CLUSTER", scratch.path(), {"down", "--dir", dir.string()});
  CAPTURE(stop);
  CHECK(stop.status == 0);
  CHECK(pvfs_mounts_at(mnt) == 0);
  CHECK(pvfs_mounts_at(by_hand) == 0);
}

TEST_CASE("a failed up --mount says what failed in one line, without stale lines of the log") {
  if (pvfs::test::skip_without_fuse()) return;
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  const fs::path mnt = scratch.path() / "mnt";
  Down down(scratch.path(), dir);
  fs::create_directories(dir / "logs");
  std::ofstream(dir / "logs" / "mount.log") << "a stale line of an earlier mount\n";
  auto up = run_tool("PVFS_CLUSTER", scratch.path(),
                     {"up", "--dir", dir.string(), "--mount", mnt.string(), "-o", "no_such_option"});
  CAPTURE(up);
  CHECK(up.status == 1);
  CHECK(up.out.empty());  // nothing claims the cluster is up
  CHECK(up.err == "pvfs-cluster: cannot mount at " + mnt.string() +
                      ": pvfsmount: unknown mount option 'no_such_option'\n");
  CHECK(pvfs_mounts_at(mnt) == 0);
  // The daemons this up started are stopped again.
  auto status = run_tool("PVFS_CLUSTER", scratch.path(), {"status", "--dir", dir.string()});
  CAPTURE(status);
  CHECK(status.status == 2);  // HEALTH_ERR: every daemon is down
  CHECK(contains(status.out, "\nHEALTH_ERR\n"));
  CHECK_FALSE(contains(status.out, "answers"));
}

TEST_CASE("pvfs-cluster status shows, and down stops, what still runs from a folder whose files were removed") {
  if (pvfs::test::skip_without_fuse()) return;
  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  const fs::path mnt = scratch.path() / "mnt";
  Down down(scratch.path(), dir);
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--mount", mnt.string()});
  CAPTURE(up);
  REQUIRE(up.status == 0);
  std::vector<int> pids;
  for (const char* name : {"mds0", "server0", "server1", "server2", "server3"}) {
    int pid = 0;
    std::ifstream(dir / "run" / (std::string(name) + ".pid")) >> pid;
    REQUIRE(pid > 0);
    pids.push_back(pid);
  }
  auto whole = run_tool("PVFS_CLUSTER", scratch.path(), {"status", "--dir", dir.string()});
  CAPTURE(whole);
  CHECK(whole.status == 0);
  CHECK_FALSE(contains(whole.out, "also running"));
  // What `rm -rf` of the folder takes before it fails on the busy mount
  // point: the run/ folder (pids, mount point), then the config too.
  fs::remove_all(dir / "run");
  auto seen = run_tool("PVFS_CLUSTER", scratch.path(), {"status", "--dir", dir.string()});
  CAPTURE(seen);
  CHECK(contains(seen.out, "also running from this folder, not in its run/ files: 5 daemons and 1 mount (`pvfs-cluster "
                           "down --dir " + dir.string() + "` stops them)\n"));
  auto partly = run_tool("PVFS_CLUSTER", scratch.path(), {"down", "--dir", dir.string()});
  CAPTURE(partly);
  CHECK(partly.status == 0);
  CHECK(partly.out == "pvfs cluster in " + fs::canonical(dir).string() +
                          " is down (also stopped 5 daemons and 1 mount that its run/ folder did not list)\n");
  CHECK(pvfs_mounts_at(mnt) == 0);
  for (int pid : pids) CHECK_FALSE(pvfs::process_alive(pid));

  up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--mount", mnt.string()});
  REQUIRE(up.status == 0);
  fs::remove_all(dir / "run");
  fs::remove(dir / "pvfs.toml");
  auto lost = run_tool("PVFS_CLUSTER", scratch.path(), {"status", "--dir", dir.string()});
  CAPTURE(lost);
  CHECK(lost.status == 1);
  CHECK(lost.err == "pvfs-cluster: no pvfs.toml in " + dir.string() + ", but 5 daemons and 1 mount still run from it " +
                        "(`pvfs-cluster down --dir " + dir.string() + "` stops them)\n");
  auto gone = run_tool("PVFS_CLUSTER", scratch.path(), {"down", "--dir", dir.string()});
  CAPTURE(gone);
  CHECK(gone.status == 0);
  CHECK(gone.out == "pvfs cluster in " + dir.string() +
                        " is down: stopped 5 daemons and 1 mount that still ran from it without its pvfs.toml\n");
  CHECK(pvfs_mounts_at(mnt) == 0);
  // Nothing left: the usual one line.
  auto again = run_tool("PVFS_CLUSTER", scratch.path(), {"down", "--dir", dir.string()});
  CAPTURE(again);
  CHECK(again.status == 1);
  CHECK(contains(again.err, "no cluster in " + dir.string()));
}

TEST_CASE("the README's pvfs-ctl lines work as written once PVFS_CONFIG names a cluster") {
  const char* root = std::getenv("PVFS_SOURCE_ROOT");
  REQUIRE_MESSAGE(root, "PVFS_SOURCE_ROOT is not set: run this test through `meson test`");
  std::ifstream readme(fs::path(root) / "README.md");
  std::vector<std::string> commands;
  bool in_block = false;
  for (std::string line; std::getline(readme, line);) {
    if (line.starts_with("export PVFS_CONFIG=/srv/pvfs/pvfs.toml")) in_block = true;
    else if (in_block && line.starts_with("```")) break;
    else if (in_block && line.starts_with("pvfs-ctl ")) {
      line = line.substr(0, line.find('#'));
      if (auto bracket = line.find(" ["); bracket != std::string::npos) line.erase(bracket);  // optional part
      // top runs until Ctrl-C; fileset create needs the mount of /mnt/pvfs.
      if (!contains(line, " top") && !contains(line, "/mnt/")) commands.push_back(line);
    }
  }
  REQUIRE(commands.size() >= 8);

  TempDir scratch;
  const fs::path dir = scratch.path() / "cluster";
  Down down(scratch.path(), dir);
  auto up = run_tool("PVFS_CLUSTER", scratch.path(), {"up", "--dir", dir.string(), "--servers", "4"});
  CAPTURE(up);
  REQUIRE(up.status == 0);
  const fs::path ctl_dir = fs::path(pvfs::test::tool_path("PVFS_CTL")).parent_path();
  for (const auto& command : commands) {
    CAPTURE(command);
    const std::string shell = "env PATH=" + pvfs::test::shell_quote(ctl_dir.string()) + ":/usr/bin:/bin PVFS_CONFIG=" +
                              pvfs::test::shell_quote((dir / "pvfs.toml").string()) + " sh -c " +
                              pvfs::test::shell_quote(command) + " >/dev/null 2>" +
                              pvfs::test::shell_quote((scratch.path() / "err").string());
    const int raw = std::system(shell.c_str());
    const std::string err = pvfs::test::slurp(scratch.path() / "err");
    CAPTURE(err);
    CHECK(WIFEXITED(raw));
    CHECK(WEXITSTATUS(raw) == 0);
  }
}
