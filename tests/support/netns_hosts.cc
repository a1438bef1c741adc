#include "tests/support/netns_hosts.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <doctest/doctest.h>

#include "tests/support/test_cluster.h"

namespace pvfs::test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string built(const std::string& relative) {
  const char* root = std::getenv("PVFS_BUILD_ROOT");
  if (!root || !*root) FAIL("PVFS_BUILD_ROOT is not set: run this test through `meson test`");
  const fs::path path = fs::path(root) / relative;
  if (!fs::exists(path)) FAIL(path.string(), " is missing: build it first");
  return path.string();
}

int shell(const std::string& command) {
  const int raw = std::system(command.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

pid_t spawn_in(const std::string& ns, const std::vector<std::string>& argv, const fs::path& out,
               const fs::path& err) {
  const std::string ns_path = "/run/netns/" + ns;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  int fd = ::open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) ::_exit(126);
  ::setpgid(0, 0);
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (null < 0 || o < 0 || e < 0) ::_exit(126);
  ::dup2(null, 0);
  ::dup2(o, 1);
  ::dup2(e, 2);
  ::execv(args[0], args.data());
  ::_exit(127);
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Outcome run_in(const std::string& ns, const std::vector<std::string>& argv, const fs::path& scratch) {
  const fs::path out = scratch / "run.out", err = scratch / "run.err";
  fs::remove(out);
  fs::remove(err);
  Outcome o;
  o.status = wait_exit(spawn_in(ns, argv, out, err));
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

std::string wait_ready(pid_t pid, const fs::path& ready, const fs::path& log) {
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  while (Clock::now() < deadline) {
    if (fs::exists(ready)) return "";
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) return "exited early:\n" + slurp(log);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "not ready after 15 s:\n" + slurp(log);
}

bool can_run_netns() {
  std::string missing;
  if (::geteuid() != 0) missing = "root";
  else if (shell("ip -V >/dev/null 2>&1") != 0) missing = "iproute2 (ip)";
  else if (!fuse_available()) missing = "/dev/fuse";
  if (missing.empty()) return true;
  if (fuse_required()) FAIL("this test needs ", missing, ", and CI=true requires it to run");
  MESSAGE("skipped: this test needs ", missing);
  return false;
}

std::string Hosts::create(const std::string& prefix, const std::vector<std::pair<std::string, int>>& hosts,
                          const fs::path& log) {
  if (!created_.empty()) return "these hosts exist already";
  prefix_ = prefix;
  bridge_ = prefix + "-br";
  std::vector<std::string> namespaces = {bridge_};
  for (const auto& h : hosts) namespaces.push_back(name(h.first));
  std::string script = "set -e\n";
  {
    std::lock_guard lock(mutex_);
    for (const std::string& ns : namespaces) {
      script += "ip netns add " + ns + "\n";
      created_.push_back(ns);  // deleted even if a later step fails
    }
  }
  on_signal_ = CleanupOnSignal([this] { undo(false); });
  script += "ip -n " + bridge_ + " link set lo up\n";
  script += "ip -n " + bridge_ + " link add br0 type bridge\n";
  script += "ip -n " + bridge_ + " link set br0 up\n";
  for (size_t i = 0; i < hosts.size(); ++i) {
    const std::string ns = name(hosts[i].first);
    const std::string veth = "v" + std::to_string(i);
    ports_[hosts[i].first] = veth;
    script += "ip -n " + bridge_ + " link add " + veth + " type veth peer name eth0 netns " + ns + "\n";
    script += "ip -n " + bridge_ + " link set " + veth + " master br0 up\n";
    script +=
        "ip -n " + ns + " addr add " + kNetnsSubnet + std::to_string(hosts[i].second) + "/24 dev eth0\n";
    script += "ip -n " + ns + " link set eth0 up\n";
    script += "ip -n " + ns + " link set lo up\n";
  }
  std::ofstream(log.parent_path() / "netns.sh") << script;
  if (shell("sh " + shell_quote((log.parent_path() / "netns.sh").string()) + " >" +
            shell_quote(log.string()) + " 2>&1") != 0)
    return "cannot create the network namespaces:\n" + slurp(log);
  return "";
}

std::string Hosts::set_port(const std::string& host, const char* state) {
  const auto it = ports_.find(host);
  if (it == ports_.end()) return "no host " + host;
  const std::string command = "ip -n " + bridge_ + " link set " + it->second + " " + state;
  if (shell(command + " 2>&1") != 0) return "failed: " + command;
  return "";
}

std::string Hosts::cut(const std::string& host) { return set_port(host, "down"); }
std::string Hosts::heal(const std::string& host) { return set_port(host, "up"); }

void Hosts::own(pid_t daemon) {
  std::lock_guard lock(mutex_);
  daemons_.push_back(daemon);
}

void Hosts::mounted(const fs::path& mountpoint) {
  std::lock_guard lock(mutex_);
  mountpoint_ = mountpoint;
}

void Hosts::undo(bool reap) {
  std::lock_guard lock(mutex_);
  if (!mountpoint_.empty()) ::umount2(mountpoint_.c_str(), MNT_DETACH);
  for (pid_t pid : daemons_) ::kill(-pid, SIGKILL);
  if (reap)
    for (pid_t pid : daemons_) wait_exit(pid);
  // Whatever else runs in our namespaces (the background pvfsmount).
  for (const auto& ns : created_)
    shell("ip netns pids " + ns + " 2>/dev/null | xargs -r kill -9 2>/dev/null");
  for (const auto& ns : created_) shell("ip netns del " + ns + " 2>/dev/null");
}

Hosts::~Hosts() {
  on_signal_.reset();
  undo(true);
}

pid_t start_daemon(Hosts& hosts, const std::string& ns, const std::string& program, const fs::path& config,
                   const fs::path& root, const std::string& label) {
  const fs::path ready = root / (label + ".ready"), log = root / "logs" / (label + ".log");
  const pid_t pid =
      spawn_in(ns, {program, "--config", config.string(), "--ready-file", ready.string()}, log, log);
  hosts.own(pid);
  const std::string problem = wait_ready(pid, ready, log);
  if (!problem.empty()) FAIL(label, " ", problem);
  return pid;
}

}  // namespace pvfs::test
