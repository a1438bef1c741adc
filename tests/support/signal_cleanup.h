// Test and benchmark support: what a program made outside its own process
// (daemons, FUSE mounts, network namespaces) is undone when the program is
// stopped by SIGTERM, SIGINT or SIGHUP instead of running to its end. meson
// sends SIGTERM on a timeout or a Ctrl-C, and SIGKILL 0.5 s later, so an
// undo must be quick: kill with SIGKILL and unmount lazily, no graceful
// stop. Daemons that LocalCluster starts run in sessions of their own, so
// a Ctrl-C in the terminal does not reach them either.
//
// doctest takes SIGINT and SIGTERM over while each test case runs; a
// listener (signal_cleanup_listener.cc, linked with doctest's main) puts
// our handler back at every case's start, so doctest saves it, reports the
// case as crashed, restores it and raises the signal again. No doctest here:
// benchmarks (tests/bench/anu_bench.cc) use this too.
//
// The handler only writes the signal's number to a pipe; a thread started
// with the first registration reads it and runs every registered undo, the
// latest first, then dies of the same signal (the exit status still says
// which). The undos run while the test's own threads go on, so what they
// read must be safe to read then (a folder fixed at construction, or state
// under the owner's lock).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace pvfs::test {

class CleanupOnSignal {
 public:
  CleanupOnSignal() = default;
  // Registers `undo` until this object is destroyed or reset.
  explicit CleanupOnSignal(std::function<void()> undo);
  ~CleanupOnSignal() { reset(); }
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;
  CleanupOnSignal(CleanupOnSignal&& other) noexcept : id_(std::exchange(other.id_, 0)) {}
  CleanupOnSignal& operator=(CleanupOnSignal&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, 0);
    }
    return *this;
  }

  // Unregisters (waits for an undo that is running, so the owner may free
  // what it reads afterwards).
  void reset();

 private:
  uint64_t id_ = 0;
};

// Puts the handlers back after someone else took the signals over; nothing
// before the first registration.
void reinstall_cleanup_handlers();

// The processes whose arguments mention `needle` (any part of any one).
std::vector<pid_t> processes_mentioning(const std::string& needle);

// The undo for a folder a program ran a local cluster in: detaches every
// mount under `dir` (deepest first), SIGKILLs every pvfs daemon whose pid
// file is in a run/ folder under it or whose arguments name a path under
// it, waits (at most a second) until they have stopped, then removes `dir`
// when `remove`. Again, up to three times, while something under `dir`
// remains: the program's own threads may have started a daemon meanwhile.
void undo_folder(const std::filesystem::path& dir, bool remove);

}  // namespace pvfs::test
