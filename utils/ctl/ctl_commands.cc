#include "utils/ctl/ctl_commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fs/layout_xattr.h"
#include "shared/config.h"
#include "shared/secret.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/ctl_format.h"
#include "utils/common/daemon_probe.h"

namespace pvfs::ctl {

namespace {

using std::chrono::milliseconds;

// The name pvfsmount serves layouts under (fs/client.h's kLayoutXattr; the
// client library's header is not included for one constant).
constexpr const char* kLayoutXattr = "user.pvfs.layout";
// And the file set of an inode (fs/client.h's kFileSetXattr).
constexpr const char* kFileSetXattr = "user.pvfs.fileset";

// Whether `path` (which must exist) is on a pvfs mount, by the mount table:
// the layout xattr alone would not tell, since other file systems store
// user.* attributes of any name.
bool on_pvfs(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  if (ec) return false;
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream mountinfo;
  mountinfo << in.rdbuf();
  return mount_type_of(mountinfo.str(), canonical.string()) == kPvfsMountType;
}

// Whether `path` is a regular file or a directory, the kinds that have a layout.
bool has_layout(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode));
}

// The value of user.pvfs.layout of `path`, or nullopt with `err` set to errno.
std::optional<std::string> read_layout_xattr(const std::string& path, int& err) {
  std::string value(256, '\0');
  for (int attempt = 0; attempt < 8; ++attempt) {
    ssize_t n = ::getxattr(path.c_str(), kLayoutXattr, value.data(), value.size());
    if (n >= 0) {
      value.resize(static_cast<size_t>(n));
      return value;
    }
    if (errno != ERANGE) break;
    // A layout over many servers: ask for the size (it may change again before the next read).
    ssize_t size = ::getxattr(path.c_str(), kLayoutXattr, nullptr, 0);
    if (size < 0) break;
    value.assign(static_cast<size_t>(size) + 64, '\0');
  }
  err = errno;
  return std::nullopt;
}

// The getstripe text of `path`, or nullopt after printing the error.
std::optional<std::string> getstripe_one(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error("getstripe {}: {}", path, std::strerror(errno));
    return std::nullopt;
  }
  if (!on_pvfs(path)) {
    error("getstripe {}: not on a pvfs file system", path);
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    error("getstripe {}: only files and directories have a layout", path);
    return std::nullopt;
  }
  int err = 0;
  auto value = read_layout_xattr(path, err);
  if (!value) {
    error("getstripe {}: {}", path, std::strerror(err));
    return std::nullopt;
  }
  auto layout = parse_policy(*value);
  if (!layout) {
    error("getstripe {}: unexpected layout '{}': {}", path, *value, layout.status().detail());
    return std::nullopt;
  }
  return render_layout(path, *layout, S_ISDIR(st.st_mode));
}

// What the operator should know about an errno from setting a layout.
std::string setstripe_hint(const std::string& path, int err) {
  switch (err) {
    case EBUSY: return " (the file is not empty)";
    case EINVAL:
      return " (the cluster has no such storage server, or fewer servers than the stripe count, or none "
             "of those named is alive; `pvfs-ctl servers` lists them)";
    case EPERM:
      return has_layout(path) ? " (only the owner or root may set a layout)"
                              : " (only files and directories have a layout)";
    default: return "";
  }
}

// Probes every target; results parallel to `targets`.
std::vector<Result<DaemonReport>> probe_all(const std::vector<DaemonTarget>& targets,
                                            const Cluster& cluster) {
  return ask_all<DaemonReport>(targets, [&](const DaemonTarget& t) {
    return probe_daemon(t.kind, t.address, cluster.key, cluster.timeout);
  });
}

// The storage servers `ids` of the config (all of them when empty), in the
// order given without repeats; nullopt after printing the error when an id
// is not in the config.
std::optional<std::vector<DaemonTarget>> storage_targets(const Cluster& cluster,
                                                         const std::vector<uint32_t>& ids,
                                                         const DaemonOptions& options,
                                                         const char* command) {
  std::vector<DaemonTarget> all;
  for (const auto& t : daemon_targets(cluster.config))
    if (t.kind == DaemonKind::server) all.push_back(t);
  if (ids.empty()) return all;
  std::vector<DaemonTarget> chosen;
  for (uint32_t id : ids) {
    auto it = std::find_if(all.begin(), all.end(), [&](const DaemonTarget& t) { return t.id == id; });
    if (it == all.end()) {
      error("{}: no storage server {} in {}", command, id, options.config_path);
      return std::nullopt;
    }
    const bool repeated = std::any_of(chosen.begin(), chosen.end(),
                                      [&](const DaemonTarget& t) { return t.id == id; });
    if (!repeated) chosen.push_back(*it);
  }
  return chosen;
}

}  // namespace

int getstripe(const std::vector<std::string>& paths) {
  int status = 0;
  bool printed = false;
  for (const auto& path : paths) {
    auto text = getstripe_one(path);
    if (!text) {
      status = 1;
      continue;
    }
    std::fputs(fmt::format("{}{}", printed ? "\n" : "", *text).c_str(), stdout);
    printed = true;
  }
  return status;
}

int setstripe(const SetstripeOptions& options) {
  const std::string& path = options.path;
  LayoutPolicy policy;
  if (!options.reset) {
    policy.stripe_size = options.stripe_size.value_or(0);
    policy.stripe_count = options.stripe_count.value_or(0);
    if (policy.stripe_size % 4096 != 0) {
      error("setstripe {}: stripe size {} is not a multiple of 4096 (4K)", path, policy.stripe_size);
      return 1;
    }
    if (!options.servers.empty()) {
      auto servers = parse_server_list(options.servers);
      if (!servers) {
        error("setstripe {}: {}", path, servers.status().detail());
        return 1;
      }
      policy.servers = std::move(*servers);
      if (policy.stripe_count > policy.servers.size()) {
        error("setstripe {}: stripe count {} is more than the {} server(s) listed", path,
              policy.stripe_count, policy.servers.size());
        return 1;
      }
    }
  }

  // Like `lfs setstripe`, a missing path becomes an empty file with the layout.
  bool created = false;
  struct stat st {};
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) {
    error("setstripe {}: {}", path, std::strerror(errno));
    return 1;
  }
  std::string where = exists ? path : std::filesystem::path(path).parent_path().string();
  if (where.empty()) where = ".";
  if (!exists && ::stat(where.c_str(), &st) != 0) {
    error("setstripe {}: {}", path, std::strerror(errno));
    return 1;
  }
  if (!on_pvfs(where)) {
    error("setstripe {}: not on a pvfs file system", path);
    return 1;
  }
  if (!exists) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      error("setstripe {}: cannot create: {}", path, std::strerror(errno));
      return 1;
    }
    ::close(fd);
    created = true;
  }

  const std::string value = format_policy(policy);
  if (::setxattr(path.c_str(), kLayoutXattr, value.data(), value.size(), 0) != 0) {
    const int err = errno;
    error("setstripe {}: {}{}", path, std::strerror(err), setstripe_hint(path, err));
    if (created) ::unlink(path.c_str());
    return 1;
  }
  return 0;
}

int jobs(const DaemonOptions& options, bool per_daemon) {
  auto cluster = open_cluster(options, "jobs");
  if (!cluster) return 1;
  const auto targets = daemon_targets(cluster->config);
  const auto reports = probe_all(targets, *cluster);
  int status = 0;
  std::vector<DaemonReport> answered;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (reports[i]) {
      answered.push_back(*reports[i]);
      continue;
    }
    error("jobs: {} ({}): {}", targets[i].name, targets[i].address.to_string(),
          reports[i].status().to_string());
    status = 1;
  }
  if (answered.empty()) return status;
  if (!per_daemon) {
    std::fputs(render_jobs(merge_jobs(answered)).c_str(), stdout);
    return status;
  }
  bool first = true;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!reports[i]) continue;
    std::fputs(fmt::format("{}{} ({})\n", first ? "" : "\n", targets[i].name,
                           targets[i].address.to_string()).c_str(), stdout);
    std::fputs(render_jobs(merge_jobs({*reports[i]})).c_str(), stdout);
    first = false;
  }
  return status;
}

int ping(const DaemonOptions& options) {
  auto cluster = open_cluster(options, "ping");
  if (!cluster) return 1;
  const auto targets = daemon_targets(cluster->config);
  const auto reports = probe_all(targets, *cluster);
  std::vector<PingResult> verdicts;
  std::vector<std::string> failed;
  for (size_t i = 0; i < targets.size(); ++i) {
    verdicts.push_back(judge_ping(targets[i], reports[i]));
    if (!verdicts.back().ok) failed.push_back(targets[i].name);
  }
  std::fputs(render_ping(targets, reports, verdicts).c_str(), stdout);
  if (failed.empty()) return 0;
  std::fflush(stdout);
  error("ping: {} of {} daemons not ok: {}", failed.size(), targets.size(),
        fmt::join(failed, ", "));
  return 1;
}

int servers(const DaemonOptions& options) {
  auto cluster = open_cluster(options, "servers");
  if (!cluster) return 1;
  std::vector<std::string> failures;
  for (const auto& mds : cluster->config.mds) {
    auto known = list_servers(mds.address, cluster->key, cluster->timeout);
    if (known) {
      std::fputs(render_servers(*known, cluster->config.servers).c_str(), stdout);
      return 0;
    }
    failures.push_back(fmt::format("mds{}: {}", mds.id, known.status().to_string()));
  }
  error("servers: no metadata server answered: {}", fmt::join(failures, "; "));
  return 1;
}

int sched(const DaemonOptions& options, const std::vector<uint32_t>& ids, bool json) {
  auto cluster = open_cluster(options, "sched");
  if (!cluster) return 1;
  const auto targets = storage_targets(*cluster, ids, options, "sched");
  if (!targets) return 1;
  const auto views = ask_all<SchedView>(*targets, [&](const DaemonTarget& t) {
    return sched_status(t.address, cluster->key, cluster->timeout);
  });
  int status = 0;
  std::vector<SchedView> answered;
  for (size_t i = 0; i < targets->size(); ++i) {
    const DaemonTarget& t = (*targets)[i];
    if (!views[i]) {
      error("sched: {} ({}): {}", t.name, t.address.to_string(), views[i].status().to_string());
      status = 1;
    } else if (views[i]->server != t.id) {
      error("sched: {} ({}): answers as server {}, the config says {}", t.name,
            t.address.to_string(), views[i]->server, t.id);
      status = 1;
    } else {
      answered.push_back(*views[i]);
    }
  }
  if (json) std::fputs(render_sched_json(answered).c_str(), stdout);
  else if (!answered.empty()) std::fputs(render_sched(answered).c_str(), stdout);
  return status;
}

int inject(const DaemonOptions& options, uint32_t id, double delay_factor, uint32_t seconds) {
  auto cluster = open_cluster(options, "inject");
  if (!cluster) return 1;
  const auto targets = storage_targets(*cluster, {id}, options, "inject");
  if (!targets) return 1;
  const DaemonTarget& t = targets->front();
  const std::chrono::seconds duration(seconds);
  Status st = pvfs::inject(t.address, cluster->key, cluster->timeout, delay_factor, duration);
  if (!st.ok()) {
    error("inject: {} ({}): {}", t.name, t.address.to_string(), st.to_string());
    return 1;
  }
  std::fputs((describe_inject(id, delay_factor, duration) + "\n").c_str(), stdout);
  return 0;
}

int elevator(const DaemonOptions& options, const std::vector<uint32_t>& ids,
             const std::string& policy, bool json) {
  auto cluster = open_cluster(options, "elevator");
  if (!cluster) return 1;
  const auto targets = storage_targets(*cluster, ids, options, "elevator");
  if (!targets) return 1;
  auto views = ask_all<ElevatorView>(*targets, [&](const DaemonTarget& t) {
    return elevator_status(t.address, cluster->key, cluster->timeout, policy);
  });
  int status = 0;
  std::vector<ElevatorView> answered;
  for (size_t i = 0; i < targets->size(); ++i) {
    const DaemonTarget& t = (*targets)[i];
    if (!views[i]) {
      error("elevator: {} ({}): {}", t.name, t.address.to_string(), views[i].status().to_string());
      status = 1;
      continue;
    }
    views[i]->server = t.id;  // the reply does not say who answered
    answered.push_back(*views[i]);
  }
  if (json) std::fputs(render_elevator_json(answered).c_str(), stdout);
  else if (!answered.empty()) std::fputs(render_elevator(answered).c_str(), stdout);
  return status;
}

namespace {

// The file set `path` is in, or nullopt with the error printed.
std::optional<std::string> fileset_of(const char* command, const std::string& path) {
  char value[32];
  ssize_t n = ::getxattr(path.c_str(), kFileSetXattr, value, sizeof value - 1);
  if (n < 0) {
    error("{} {}: {}", command, path, std::strerror(errno));
    return std::nullopt;
  }
  return std::string(value, static_cast<size_t>(n));
}

}  // namespace

int fileset_create(const std::vector<std::string>& dirs) {
  int status = 0;
  for (const auto& dir : dirs) {
    // Like `lfs mkdir`: a missing directory is made first.
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      error("fileset create {}: {}", dir, std::strerror(errno));
      status = 1;
      continue;
    }
    if (!on_pvfs(dir)) {
      error("fileset create {}: not on a pvfs file system", dir);
      status = 1;
      continue;
    }
    const auto before = fileset_of("fileset create", dir);
    if (!before) {
      status = 1;
      continue;
    }
    static constexpr char kCreate[] = "create";
    if (::setxattr(dir.c_str(), kFileSetXattr, kCreate, sizeof kCreate - 1, 0) != 0) {
      const int err = errno;
      const char* why = err == ENOTEMPTY ? "the directory is not empty"
                        : err == EPERM   ? "only root makes file sets"
                        : err == EBUSY   ? "it is already the root of a file set"
                                         : std::strerror(err);
      error("fileset create {}: {}", dir, why);
      status = 1;
      continue;
    }
    // The mount makes the kernel forget the old directory just after the
    // call returns; wait for that (well under the attribute timeout), so
    // what follows this command sees the file set.
    std::optional<std::string> id;
    for (int attempt = 0; attempt < 100; ++attempt) {
      id = fileset_of("fileset create", dir);
      if (!id || *id != before) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!id) {
      status = 1;
      continue;
    }
    std::printf("%s: file set %s\n", dir.c_str(), id->c_str());
  }
  return status;
}

int fileset_show(const std::vector<std::string>& paths) {
  int status = 0;
  for (const auto& path : paths) {
    if (!on_pvfs(path)) {
      error("fileset {}: not on a pvfs file system", path);
      status = 1;
      continue;
    }
    auto id = fileset_of("fileset", path);
    if (!id) {
      status = 1;
      continue;
    }
    std::printf("%s: file set %s\n", path.c_str(), id->c_str());
  }
  return status;
}

}  // namespace pvfs::ctl
