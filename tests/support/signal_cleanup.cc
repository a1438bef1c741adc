#include "tests/support/signal_cleanup.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "utils/cluster/local_cluster.h"

namespace pvfs::test {

namespace fs = std::filesystem;

namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

struct Registry {
  std::mutex mutex;
  std::map<uint64_t, std::function<void()>> undos;  // by id: registration order
  uint64_t next_id = 1;
  int pipe_write = -1;
  pid_t owner = 0;  // the process that installed the handler
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the watcher may outlive main's statics
  return *r;
}

void on_signal(int signal) {
  if (::getpid() != registry().owner) {
    // A child forked without exec: its parent's undos are not its business.
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  const unsigned char byte = static_cast<unsigned char>(signal);
  // Nothing else is safe here; a full pipe means a signal is pending already.
  [[maybe_unused]] ssize_t n = ::write(registry().pipe_write, &byte, 1);
}

[[noreturn]] void watch(int pipe_read) {
  unsigned char byte = 0;
  while (::read(pipe_read, &byte, 1) != 1) {
  }
  const int signal = byte;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);  // held until the end: no owner frees what an undo reads
  std::fprintf(stderr, "%s: stopped by signal %d: killing the daemons it started, unmounting\n",
               program_invocation_short_name, signal);
  for (auto it = r.undos.rbegin(); it != r.undos.rend(); ++it) {
    try {
      it->second();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cleanup after signal %d: %s\n", signal, e.what());
    }
  }
  std::signal(signal, SIG_DFL);
  std::raise(signal);
  std::_Exit(128 + signal);
}

void set_handlers() {
  for (int signal : kSignals) {
    struct sigaction action = {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(signal, &action, nullptr);
  }
}

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      std::perror("cleanup on signal: pipe2");
      return;
    }
    registry().pipe_write = fds[1];
    registry().owner = ::getpid();
    std::thread(watch, fds[0]).detach();
    set_handlers();
  });
}

// Mount points under `dir` from /proc/self/mountinfo (field 5), deepest first.
std::vector<std::string> mounts_under(const fs::path& dir) {
  const std::string prefix = dir.string() + "/";
  std::vector<std::string> found;
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point.rfind(prefix, 0) == 0) found.push_back(point);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return found;
}

// The arguments of a running process, empty when it is gone.
std::vector<std::string> arguments_of(pid_t pid) {
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> args;
  for (std::string arg; std::getline(cmdline, arg, '\0');) args.push_back(arg);
  return args;
}

// A pvfs daemon or mount (pvfs-mds, pvfs-server, pvfsmount), never this
// program: a benchmark built in a checkout called pvfs is not one.
bool is_pvfs_process(pid_t pid, const std::vector<std::string>& args) {
  return pid != ::getpid() && !args.empty() && fs::path(args[0]).filename().string().rfind("pvfs", 0) == 0;
}

// SIGKILLs every pvfs process that has a pid file in a run/ folder under
// `dir` or mentions `dir` in its arguments (one started a moment ago may
// not have its pid file yet), and returns them.
std::vector<pid_t> kill_daemons_under(const fs::path& dir) {
  std::vector<pid_t> killed;
  auto kill_one = [&](pid_t pid, const std::vector<std::string>& args) {
    if (pid <= 0 || !is_pvfs_process(pid, args) || std::find(killed.begin(), killed.end(), pid) != killed.end())
      return;
    ::kill(pid, SIGKILL);
    killed.push_back(pid);
  };
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& file = it->path();
    if (file.extension() != ".pid" || file.parent_path().filename() != "run") continue;
    pid_t pid = 0;
    std::ifstream(file) >> pid;
    kill_one(pid, arguments_of(pid));
  }
  for (pid_t pid : processes_mentioning(dir.string() + "/")) kill_one(pid, arguments_of(pid));
  return killed;
}

}  // namespace

void reinstall_cleanup_handlers() {
  if (registry().pipe_write >= 0) set_handlers();
}

std::vector<pid_t> processes_mentioning(const std::string& needle) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const auto args = arguments_of(pid);
    if (std::any_of(args.begin(), args.end(), [&](const std::string& a) { return a.find(needle) != std::string::npos; }))
      found.push_back(pid);
  }
  return found;
}

void undo_folder(const fs::path& dir, bool remove) {
  // A process sent SIGKILL may go on for a moment (on the other core, or to
  // the end of a system call) and create a file, so each pass waits until
  // all its threads have stopped (process_alive, local_cluster.h); and the
  // program's own threads go on meanwhile and may start a daemon or write a
  // file after a pass, so up to three passes.
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto& point : mounts_under(dir)) ::umount2(point.c_str(), MNT_DETACH);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (pid_t pid : kill_daemons_under(dir))
      while (process_alive(pid) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (!remove) return;
    std::error_code ec;
    fs::remove_all(dir, ec);
    if (!fs::exists(dir, ec)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

CleanupOnSignal::CleanupOnSignal(std::function<void()> undo) {
  install_once();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  id_ = r.next_id++;
  r.undos.emplace(id_, std::move(undo));
}

void CleanupOnSignal::reset() {
  if (id_ == 0) return;
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.undos.erase(id_);
  id_ = 0;
}

}  // namespace pvfs::test
