// What the pvfs-ctl commands that talk to daemons share: the one-line
// error format, opening a cluster's config and key, asking many daemons
// at once, and telling whether a path is on a pvfs mount. Blocking; not
// thread-safe (ask_all runs its calls on threads of
// its own, which must share nothing but their result slot).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"
#include "utils/ctl/ctl_commands.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs::ctl {

// Prints "pvfs-ctl: <message>" on stderr.
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  std::fprintf(stderr, "pvfs-ctl: %s\n", fmt::format(format, std::forward<Args>(args)...).c_str());
}

// A cluster's config and key, and how long to wait for each daemon.
struct Cluster {
  Config config;
  Secret key{};
  std::chrono::milliseconds timeout{0};
};

// Loads the config of `options` and its key (timeout: the option, or the
// config's connect timeout); prints "pvfs-ctl: COMMAND: why" and returns
// nullopt on failure.
std::optional<Cluster> open_cluster(const DaemonOptions& options, const char* command);

// Whether `path` (which must exist) is on a pvfs mount, by the mount table
// (/proc/self/mountinfo): the layout xattr alone would not tell, since
// other file systems store user.* attributes of any name.
bool on_pvfs(const std::string& path);

// Daemons asked at once, each on a thread of its own.
inline constexpr size_t kMaxParallelProbes = 32;

// Calls `ask(target)` for every target, kMaxParallelProbes at a time;
// results parallel to `targets`.
template <typename T, typename Ask>
std::vector<Result<T>> ask_all(const std::vector<DaemonTarget>& targets, Ask ask) {
  std::vector<Result<T>> results(targets.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < targets.size(); i = next++) results[i] = ask(targets[i]);
  };
  std::vector<std::thread> threads;
  for (size_t i = 0; i < std::min(targets.size(), kMaxParallelProbes); ++i) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace pvfs::ctl
