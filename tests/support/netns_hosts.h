// Test support: hosts made of Linux network namespaces on this machine, for
// tests that run daemons as on a real cluster. Each host is a namespace
// with eth0 (one end of a veth pair) at a private address; the other ends
// are ports of a bridge in a namespace of its own. Nothing is added to the
// host namespace and there is no route out, so the tests' traffic stays on
// these addresses. Programs are started in a host with setns on its
// network namespace only: they share this process's files and mounts.
// Everything made (namespaces, processes, a mount) is undone by ~Hosts,
// whatever failed in between, and when the test program is stopped by a
// signal (CleanupOnSignal). Needs root and iproute2 (`ip`).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/run_tool.h"
#include "tests/support/signal_cleanup.h"

namespace pvfs::test {

// The hosts' addresses are kNetnsSubnet + their number (a /24).
inline constexpr const char* kNetnsSubnet = "10.213.0.";

// One program of the build tree ($PVFS_BUILD_ROOT, set by meson); fails the
// test when the variable is unset or the program is missing.
std::string built(const std::string& relative);

// Runs `command` through the shell; the exit status (-1 if it did not exit).
int shell(const std::string& command);

// Starts `argv` in network namespace `ns` (setns on /run/netns/NS, so the
// mount namespace stays ours, unlike `ip netns exec`), in its own process
// group, stdin from /dev/null, stdout and stderr appended to the files given.
pid_t spawn_in(const std::string& ns, const std::vector<std::string>& argv,
               const std::filesystem::path& out, const std::filesystem::path& err);

// Waits for `pid`; its exit status, or -1 when it did not exit normally.
int wait_exit(pid_t pid);

// Runs a program to completion in namespace `ns`; output in `scratch`.
Outcome run_in(const std::string& ns, const std::vector<std::string>& argv,
               const std::filesystem::path& scratch);

// Waits up to 15 s for a daemon's ready file; "" or why it is not ready.
std::string wait_ready(pid_t pid, const std::filesystem::path& ready, const std::filesystem::path& log);

// Whether this run may make namespaces and mounts (root, iproute2,
// /dev/fuse); otherwise says why and skips, or under CI=true fails.
bool can_run_netns();

// The namespaces, the processes started in them and the mount.
class Hosts {
 public:
  Hosts() = default;
  Hosts(const Hosts&) = delete;
  Hosts& operator=(const Hosts&) = delete;
  ~Hosts();

  // Creates namespace PREFIX-br holding bridge br0, and one namespace
  // PREFIX-NAME per host with eth0 (a veth to the bridge) at
  // kNetnsSubnet + NUMBER. The script and its output go beside `log`.
  // Returns "" or what failed.
  std::string create(const std::string& prefix, const std::vector<std::pair<std::string, int>>& hosts,
                     const std::filesystem::path& log);

  // Cuts `host` off the network as a pulled cable would (its port on the
  // bridge goes down; the host's own eth0 keeps its address and sees the
  // carrier go), or connects it again. "" or what failed.
  std::string cut(const std::string& host);
  std::string heal(const std::string& host);

  std::string name(const std::string& host) const { return prefix_ + "-" + host; }
  const std::string& bridge() const { return bridge_; }
  // Processes killed (their process group, with SIGKILL) by the destructor.
  void own(pid_t daemon);
  // A mount point unmounted (lazily) by the destructor, before the kills.
  void mounted(const std::filesystem::path& mountpoint);

 private:
  std::string set_port(const std::string& host, const char* state);
  // Unmounts, kills what runs in the namespaces and deletes them; waits
  // for the processes it started when `reap`.
  void undo(bool reap);

  std::mutex mutex_;  // created_, daemons_ and mountpoint_: undo runs on CleanupOnSignal's thread too

  std::string prefix_, bridge_;
  std::map<std::string, std::string> ports_;  // host -> its veth on the bridge
  std::vector<std::string> created_;
  std::vector<pid_t> daemons_;
  std::filesystem::path mountpoint_;
  CleanupOnSignal on_signal_;
};

// Starts daemon `program` (without --id) in namespace `ns`, owned by
// `hosts`, and waits until it serves (fails the test otherwise); logs in
// root/logs/LABEL.log, ready file root/LABEL.ready.
pid_t start_daemon(Hosts& hosts, const std::string& ns, const std::string& program,
                   const std::filesystem::path& config, const std::filesystem::path& root,
                   const std::string& label);

}  // namespace pvfs::test
