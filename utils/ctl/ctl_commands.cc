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
#include <memory>
#include <set>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fs/layout_xattr.h"
#include "config/config.h"
#include "shared/secret.h"
#include "utils/common/daemon_probe.h"
#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/ctl_format.h"
#include "utils/ctl/genconfig.h"
#include "utils/ctl/iosched_view.h"

namespace pvfs::ctl {

namespace {

using std::chrono::milliseconds;

// The name pvfsmount serves layouts under (fs/client.h's kLayoutXattr; the
// client library's header is not included for one constant).
constexpr const char* kLayoutXattr = "user.pvfs.layout";
// And the file set of an inode (fs/client.h's kFileSetXattr).
constexpr const char* kFileSetXattr = "user.pvfs.fileset";

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
  std::optional<std::vector<JobIoTimes>> io;
  if (auto sched = iosched_status(cluster->config, cluster->key, cluster->timeout)) {
    io.emplace();
    std::set<std::string> holding, waiting;
    for (const auto& s : sched->active) holding.insert(s.job);
    for (const auto& s : sched->pending) waiting.insert(s.job);
    for (const auto& j : sched->jobs)
      io->push_back({j.job, j.io_ms, j.wait_ms,
                     holding.contains(j.job) ? "holding" : waiting.contains(j.job) ? "waiting" : ""});
  } else {
    error("jobs: I/O times and token waits unknown: {}", sched.status().to_string());
    status = 1;
  }
  if (!per_daemon) {
    std::fputs(render_jobs(merge_jobs(answered), io).c_str(), stdout);
    return status;
  }
  bool first = true;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!reports[i]) continue;
    std::fputs(fmt::format("{}{} ({})\n", first ? "" : "\n", targets[i].name,
                           targets[i].address.to_string()).c_str(), stdout);
    // The scheduler's times are the cluster's, not one daemon's: only in the sum.
    std::fputs(render_jobs(merge_jobs({*reports[i]}), std::vector<JobIoTimes>{}).c_str(), stdout);
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
    // Checked before making anything: outside pvfs nothing is left behind.
    auto path = std::filesystem::path(dir).lexically_normal();
    if (!path.has_filename()) path = path.parent_path();  // "proj/"
    std::string parent = path.parent_path().string();
    if (parent.empty()) parent = ".";
    struct stat st {};
    const bool exists = ::stat(dir.c_str(), &st) == 0;
    if (!on_pvfs(exists ? dir : parent)) {
      error("fileset create {}: not on a pvfs file system", dir);
      status = 1;
      continue;
    }
    // Like `lfs mkdir`: a missing directory is made first.
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      error("fileset create {}: {}", dir, std::strerror(errno));
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
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      const int err = errno;
      // `fileset show X`, `fileset list`: a guess at a subcommand, read as a path.
      const bool word = err == ENOENT && (path == "show" || path == "list" || path == "status");
      error("fileset {}: {}{}", path, std::strerror(err),
            word ? " (pvfs-ctl fileset PATH... shows the file set of each PATH)" : "");
      status = 1;
      continue;
    }
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

void add_getstripe(Commands& commands) {
  auto paths = std::make_shared<std::vector<std::string>>();
  auto* get = commands.add("getstripe", "show the layout of files and directories on a mounted pvfs",
                           [paths](const DaemonOptions&) { return getstripe(*paths); });
  get->add_option("path", *paths, "files or directories")->required();
}

void add_setstripe(Commands& commands) {
  struct Options {
    SetstripeOptions set;
    uint64_t stripe_size = 0;
    uint32_t stripe_count = 0;
    CLI::Option* size = nullptr;
    CLI::Option* count = nullptr;
  };
  auto o = std::make_shared<Options>();
  auto* setc = commands.add(
      "setstripe", "set the layout policy of a directory, or the layout of an empty (or new) file",
      [o](const DaemonOptions&) {
        if (o->size->count()) o->set.stripe_size = o->stripe_size;
        if (o->count->count()) o->set.stripe_count = o->stripe_count;
        return setstripe(o->set);
      });
  o->size = setc->add_option("-S,--stripe-size", o->stripe_size,
                             "bytes per stripe, a multiple of 4K; K, M, G suffixes; 0 = cluster default")
                ->transform(size_transform());
  o->count = setc->add_option("-c,--stripe-count", o->stripe_count, "objects (servers) per file; 0 = cluster default");
  auto* servers = setc->add_option("-s,--servers", o->set.servers,
                                   "storage server ids to stripe over, in order (1,3,5)")
                      ->check(server_list_check());
  setc->add_flag("-d,--delete", o->set.reset, "return to the cluster default layout")
      ->excludes(o->size)
      ->excludes(o->count)
      ->excludes(servers);
  setc->add_option("path", o->set.path, "directory or file")->required();
}

void add_fileset(Commands& commands) {
  struct Options {
    std::vector<std::string> paths, new_roots;
    CLI::App* create = nullptr;
  };
  auto o = std::make_shared<Options>();
  auto* fileset = commands.add(
      "fileset", "the file sets of a mounted pvfs: show which one paths are in, or make new ones",
      [o](const DaemonOptions&) {
        if (*o->create) return fileset_create(o->new_roots);
        if (o->paths.empty()) {
          std::fprintf(stderr, "pvfs-ctl: fileset needs paths, or the command create (see pvfs-ctl --help)\n");
          return 2;
        }
        return fileset_show(o->paths);
      });
  fileset->add_option("path", o->paths, "files or directories to show");
  o->create = fileset->add_subcommand(
      "create", "make empty (or new) directories the roots of new file sets (root only)");
  o->create->add_option("dir", o->new_roots, "directories")->required();
}

void add_jobs(Commands& commands) {
  auto per_daemon = std::make_shared<bool>(false);
  auto* jobs_command = commands.add("jobs", "per-job operations and bytes, summed over all daemons, with each job's I/O "
                                    "time and token wait from the I/O-step scheduler",
                                    [per_daemon](const DaemonOptions& d) { return jobs(d, *per_daemon); });
  commands.add_daemon_options(jobs_command);
  jobs_command->add_flag("--per-daemon", *per_daemon, "one table per daemon instead of the sum");
}

void add_ping(Commands& commands) {
  commands.add_daemon_options(commands.add(
      "ping", "check that every daemon answers and authenticates (exit 1 naming those that do not)",
      [](const DaemonOptions& d) { return ping(d); }));
}

void add_servers(Commands& commands) {
  commands.add_daemon_options(commands.add("servers", "the storage servers the metadata server knows",
                                           [](const DaemonOptions& d) { return servers(d); }));
}

void add_sched(Commands& commands) {
  struct Options {
    std::vector<uint32_t> ids;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "sched",
      "the storage servers' write scheduling: load, redirects, fragments, pull-backs, "
      "delays (exit 1 naming those that do not answer)",
      [o](const DaemonOptions& d) { return sched(d, o->ids, o->json); });
  commands.add_daemon_options(command);
  command->add_option("server", o->ids, "storage servers: ids (3) or names (server3) [all in the config]")
      ->transform(server_name_transform());
  command->add_flag("--json", o->json, "a JSON array of objects with the raw numbers instead of the table");
}

void add_inject(Commands& commands) {
  struct Options {
    uint32_t id = 0;
    double delay_factor = 1;
    bool clear = false;
    uint32_t seconds = 0;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "inject", "make a storage server serve data requests slower, to test straggler handling",
      [o](const DaemonOptions& d) { return inject(d, o->id, o->clear ? 1.0 : o->delay_factor, o->seconds); });
  commands.add_daemon_options(command);
  command->add_option("server", o->id, "storage server: its id (3) or name (server3)")
      ->required()
      ->transform(server_name_transform());
  // One of the two: how much slower, or back to normal.
  auto* delay = command->add_option_group("delay", "-f FACTOR or --clear");
  delay->add_option("-f,--delay-factor", o->delay_factor, "this many times slower, 1 to 1000 (1 ends a delay)");
  delay->add_flag("--clear", o->clear, "end the delay in force (as --delay-factor 1)");
  delay->require_option(1);
  command->add_option("--for", o->seconds, "seconds the delay lasts; 0 = until changed")->capture_default_str();
}

void add_elevator(Commands& commands) {
  struct Options {
    uint32_t id = 0;
    std::string policy;
    bool json = false;
    CLI::Option* id_option = nullptr;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "elevator",
      "the storage servers' disk elevators: queues, seeks, deadlines, service times, "
      "dispatched sizes; or switch one between fcfs and obrr",
      [o](const DaemonOptions& d) {
        std::vector<uint32_t> ids;
        if (o->id_option->count()) ids.push_back(o->id);
        return elevator(d, ids, o->policy, o->json);
      });
  commands.add_daemon_options(command);
  o->id_option = command->add_option("server", o->id, "storage server: id (3) or name (server3) [all in the config]")
                     ->transform(server_name_transform());
  // Not checked here: the server names the policies it knows when refusing one.
  command->add_option("policy", o->policy, "switch the server to this elevator: fcfs or obrr");
  command->add_flag("--json", o->json, "a JSON array of objects with the raw numbers instead of the table");
}

void add_genconfig(Commands& commands) {
  auto gen = std::make_shared<GenconfigOptions>();
  auto* command = commands.add(
      "genconfig", "write the config of a cluster on several hosts (pvfs.toml) and a fresh secret key",
      [gen](const DaemonOptions&) { return genconfig(*gen); });
  command->add_option("--mds", gen->mds, "metadata servers: host:port[,host:port...] or ID=host:port")->required();
  command
      ->add_option("--servers", gen->servers,
                   "storage servers: host:port[,host:port...] or ID=host:port; ids from 0 in order unless given")
      ->required();
  command
      ->add_option("--data-dir", gen->data_dir, "absolute folder on each host; daemons use DIR/mdsN and DIR/serverN")
      ->required();
  command->add_option("-o,--out", gen->out, "config file to write")->capture_default_str();
  command->add_option("--key", gen->key, "secret key file to write [secret.key beside --out]");
  command
      ->add_option("-S,--stripe-size", gen->stripe_size,
                   "default bytes per stripe, a multiple of 4K; K, M, G suffixes [1M]")
      ->transform(size_transform());
  command->add_option("-C,--stripe-count", gen->stripe_count, "default servers per file; 0 = all")
      ->capture_default_str();
  command->add_flag("-f,--force", gen->force, "overwrite the config and key files if they exist");
}

}  // namespace pvfs::ctl
