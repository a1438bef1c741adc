#include "utils/cluster/local_cluster.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "policy/placement/policy.h"
#include "shared/mount_table.h"
#include "shared/secret.h"
#include "shared/text_format.h"
#include "utils/common/daemon_probe.h"
#include "utils/common/mds_status.h"

namespace pvfs {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// The lowest port the kernel hands out for connect() and bind(0)
// (net.ipv4.ip_local_port_range), 32768 when it cannot be read.
uint16_t ephemeral_floor() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned low = 0;
  if (in >> low && low > 0 && low <= 65535) return static_cast<uint16_t>(low);
  return 32768;
}

// Whether nobody is bound to 127.0.0.1:`port` right now (bind, release).
// `port` 0 asks the kernel for one; the port bound is returned.
Result<uint16_t> try_port(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::from_errno(errno, "socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    return Status::from_errno(err, "cannot find a free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A port nobody listens on right now, below the ephemeral range when there
// is room: a port of that range may be taken by any process's outgoing
// connection while its daemon is down, and a daemon restarted on its
// configured port (a test's kill and restart, a second test's cluster
// beside it) would then fail to bind. Random, so two clusters set up at
// once rarely try the same ports; bind(0) when nothing below is free.
Result<uint16_t> free_port() {
  static std::mt19937 pick{std::random_device{}()};
  constexpr uint16_t kLowest = 10000;
  const uint16_t floor = ephemeral_floor();
  if (floor > kLowest + 1000) {
    std::uniform_int_distribution<uint32_t> port(kLowest, floor - 1u);
    for (int attempt = 0; attempt < 64; ++attempt)
      if (auto p = try_port(static_cast<uint16_t>(port(pick)))) return p;
  }
  return try_port(0);
}

// The size of `file`, 0 when it does not exist yet.
uintmax_t size_of(const fs::path& file) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(file, ec);
  return ec ? 0 : size;
}

// The last `lines` non-empty lines written to the (appended) `file` after
// its first `from` bytes, joined by "; ": what one run said, without the
// lines of earlier runs.
std::string said_since(const fs::path& file, uintmax_t from, size_t lines) {
  std::ifstream in(file);
  in.seekg(static_cast<std::streamoff>(from));
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) all.push_back(line);
  std::string out;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += (out.empty() ? "" : "; ") + all[i];
  return out.empty() ? "(nothing in its log)" : out;
}

// Whether a pvfs file system is mounted on `mount_point` itself.
bool pvfs_mounted_at(const std::string& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  return has_mount_at(text.str(), fs::path(mount_point).lexically_normal().string(), kPvfsMountType);
}

int read_pid(const fs::path& file) {
  std::ifstream in(file);
  int pid = 0;
  in >> pid;
  return pid;
}

// Starts `argv` with stdin from /dev/null and stdout/stderr appended to
// `log`. A daemon gets its own session, so it outlives the launcher and can
// be killed as a group. Returns the child's pid, or -1.
pid_t spawn(const std::vector<std::string>& argv, const fs::path& log, bool daemon) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (daemon) ::setsid();
  int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (null >= 0) ::dup2(null, 0);
  if (fd >= 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
  ::_exit(127);
}

// Runs a program and waits for it; returns its exit status (or -1).
int run_and_wait(const std::vector<std::string>& argv, const fs::path& log) {
  pid_t pid = spawn(argv, log, false);
  if (pid < 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The state letter of /proc/.../stat (R, S, D, Z, X, ...), or 0 when it
// cannot be read (the task is gone).
char task_state(const fs::path& stat_file) {
  std::ifstream stat(stat_file);
  std::string line;
  if (!std::getline(stat, line)) return 0;
  const size_t paren = line.rfind(')');  // the name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : 0;
}

}  // namespace

bool process_alive(int pid) {
  if (pid <= 0) return false;
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == pid) return false;  // our child, and it has exited (now reaped)
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  // Alive while any of its threads is. A daemon whose launcher has exited
  // belongs to init, which may leave it a zombie for a while (or for good,
  // in a container): dead all the same. But after SIGKILL the main thread
  // can be a zombie while others still exit, holding the process's files
  // (and its data directory's lock, which a restart would then find taken).
  // (The increments take an error code too: the range-for's would throw
  // if the process went while its task directory was read.)
  const fs::path tasks = fmt::format("/proc/{}/task", pid);
  std::error_code ec;
  for (fs::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
    const char state = task_state(it->path() / "stat");
    if (state != 0 && state != 'Z' && state != 'X') return true;
  }
  // kill() found it: if its threads cannot be listed, take it for alive.
  return ec && fs::exists(tasks.parent_path());
}

LocalCluster::LocalCluster(fs::path dir, fs::path bin_dir, Config config)
    : dir_(std::move(dir)), bin_dir_(std::move(bin_dir)), config_(std::move(config)) {}

fs::path LocalCluster::binary(const std::string& program) const {
  std::vector<fs::path> candidates;
  if (!bin_dir_.empty()) candidates.push_back(bin_dir_);
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  if (!ec) {
    // The build tree keeps each component's programs in its own folder;
    // an install puts them in bin/ and sbin/.
    for (const char* rel : {".", "../server", "../mds", "../fs", "../../server", "../../mds",
                            "../../fs", "../sbin", "../bin"})
      candidates.push_back(self / rel);
  }
  for (const auto& c : candidates)
    if (fs::exists(c / program, ec)) return fs::weakly_canonical(c / program, ec);
  return program;  // rely on $PATH
}

Status validate(const ClusterOptions& options) {
  if (options.servers == 0) return Status(Errc::invalid_argument, "--servers must be at least 1");
  if (options.mds == 0) return Status(Errc::invalid_argument, "--mds must be at least 1");
  for (double f : options.mds_slowdown)
    if (!(f >= 1.0 && f <= 1000.0))
      return Status(Errc::invalid_argument, fmt::format("--mds-slowdown factor {} is not in [1, 1000]", f));
  if (!placement::parse_policy(options.mds_placement))
    return Status(Errc::invalid_argument,
                  fmt::format("unknown MDS placement '{}': use {}", options.mds_placement,
                              choices(placement::kPolicies, placement::policy_name)));
  if (options.mds_tune_interval_ms == 0)
    return Status(Errc::invalid_argument, "the MDS tune interval must be at least 1 ms");
  if (options.stripe_size < 4096 || options.stripe_size % 4096 != 0)
    return Status(Errc::invalid_argument,
                  fmt::format("--stripe-size {} is not a multiple of 4096 (4K)", options.stripe_size));
  return {};
}

namespace {

// Undoes the part of a first `up` that failed: the config, the key it made
// and the daemons' data folders, so that the next `up` in the folder starts
// afresh instead of failing on what this one left. The logs stay.
void forget_new_cluster(const fs::path& dir, bool made_key) {
  std::error_code ec;
  fs::remove(dir / "pvfs.toml", ec);
  if (made_key) fs::remove(dir / "secret.key", ec);
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool data = (name.starts_with("mds") && name.size() > 3 &&
                       name.find_first_not_of("0123456789", 3) == std::string::npos) ||
                      (name.starts_with("server") && name.size() > 6 &&
                       name.find_first_not_of("0123456789", 6) == std::string::npos);
    if (data && entry.is_directory(ec)) fs::remove_all(entry.path(), ec);
  }
  for (const auto& entry : fs::directory_iterator(dir / "run", ec))
    if (entry.path().extension() == ".args") fs::remove(entry.path(), ec);
}

// A new cluster's ports are picked free when its config is written and
// bound as each daemon starts; another program (a cluster set up beside it
// at the same moment, as by two tests running side by side) may take one
// in between. Such a start is made again from scratch, with new ports.
constexpr int kFreshStartAttempts = 3;

bool lost_a_port(const Status& st) { return st.detail().find("Address already in use") != std::string::npos; }

}  // namespace

Result<LocalCluster> LocalCluster::up(const ClusterOptions& options) {
  if (Status st = validate(options); !st.ok()) return st;
  std::error_code ec;
  fs::create_directories(options.dir / "run", ec);
  fs::create_directories(options.dir / "logs", ec);
  if (ec) return Status(Errc::io, fmt::format("cannot create {}: {}", options.dir.string(), ec.message()));
  const fs::path dir = fs::canonical(options.dir);
  const fs::path config_file = dir / "pvfs.toml";
  const bool fresh = !fs::exists(config_file);
  bool made_key = false;
  auto cluster = start(options, dir, fresh, made_key);
  for (int attempt = 2; !cluster && fresh && lost_a_port(cluster.status()) && attempt <= kFreshStartAttempts;
       ++attempt) {
    forget_new_cluster(dir, made_key);
    made_key = false;
    cluster = start(options, dir, fresh, made_key);
  }
  if (!cluster && fresh) forget_new_cluster(dir, made_key);
  return cluster;
}

Result<LocalCluster> LocalCluster::start(const ClusterOptions& options, const fs::path& dir, bool fresh,
                                         bool& made_key) {
  const fs::path config_file = dir / "pvfs.toml";
  if (fresh) {
    if (!options.mds_slowdown.empty() && options.mds_slowdown.size() != options.mds)
      return Status(Errc::invalid_argument,
                    fmt::format("--mds-slowdown gives {} factor(s) for {} metadata server(s)",
                                options.mds_slowdown.size(), options.mds));
    Config c;
    c.secret_file = dir / "secret.key";
    if (!fs::exists(c.secret_file)) {
      if (Status st = generate_secret(c.secret_file); !st.ok()) return st;
      made_key = true;
    }
    // Each port free now and not handed out before: the kernel may offer a
    // port again once its probe socket is closed.
    std::set<uint16_t> taken;
    auto unused_port = [&]() -> Result<uint16_t> {
      for (;;) {
        auto port = free_port();
        if (!port || taken.insert(*port).second) return port;
      }
    };
    for (uint32_t i = 0; i < options.mds; ++i) {
      auto port = unused_port();
      if (!port) return port.status();
      auto metrics_port = unused_port();
      if (!metrics_port) return metrics_port.status();
      c.mds.push_back({i, {"127.0.0.1", *port}, dir / fmt::format("mds{}", i),
                       Endpoint{"127.0.0.1", *metrics_port}});
    }
    for (uint32_t i = 0; i < options.servers; ++i) {
      auto port = unused_port();
      if (!port) return port.status();
      auto metrics_port = unused_port();
      if (!metrics_port) return metrics_port.status();
      c.servers.push_back({i, {"127.0.0.1", *port}, dir / fmt::format("server{}", i),
                           Endpoint{"127.0.0.1", *metrics_port}});
    }
    c.rpc_timeout_ms = options.rpc_timeout_ms;
    c.rpc_busy_limit_ms = options.rpc_busy_limit_ms;
    c.heartbeat_timeout_ms = options.heartbeat_timeout_ms;
    c.stripe_size = options.stripe_size;
    c.maintainer_threads = options.maintainer_threads;
    c.fileset_per_top_directory = options.fileset_per_top_directory;
    c.maintainer_interval_ms = options.maintainer_interval_ms;
    c.mds_placement = *placement::parse_policy(options.mds_placement);  // validate()d
    c.mds_tune_interval_ms = options.mds_tune_interval_ms;
    c.anu.backlog = options.mds_backlog;
    c.anu.busy = options.mds_busy;
    c.anu.overload_guard = options.mds_overload_guard;
    c.mds_dead_after_ms = options.mds_dead_after_ms;
    c.iosched_policy = options.iosched_policy;
    c.iosched_lease_ms = options.iosched_lease_ms;
    c.lock_lease_ms = options.lock_lease_ms;
    c.orphan_lease_ms = options.orphan_lease_ms;
    c.open_lease_ms = options.open_lease_ms;
    c.mds_reserve_mb = options.mds_reserve_mb;
    c.local_sockets = options.local_sockets;
    c.write_behind_bytes = options.write_behind_bytes;
    c.iosched_idle_ms = options.iosched_idle_ms;
    c.iosched_max_wait_s = options.iosched_max_wait_s;
    std::ofstream out(config_file);
    out << c.render();
    if (!out) return Status(Errc::io, "cannot write " + config_file.string());
  }
  auto config = Config::load(config_file);
  if (!config) return config.status();
  LocalCluster cluster(dir, options.bin_dir, *config);
  std::vector<std::string> missing;
  const DaemonState* running = nullptr;
  const auto states = cluster.daemons();
  for (const auto& d : states) {
    if (d.name == "mount") continue;
    if (d.running) running = &d;
    else missing.push_back(d.name);
  }
  if (missing.empty())
    return Status(Errc::busy, fmt::format("the cluster in {} is already up ({} has pid {}); "
                                          "`pvfs-cluster down --dir {}` stops it",
                                          dir.string(), running->name, running->pid, dir.string()));
  if (running) {
    // Some daemons died: start those alone, with the arguments they had,
    // and leave the others (and the mount) as they are.
    for (const auto& name : missing)
      if (Status st = cluster.start_daemon(name); !st.ok()) return st;
    if (Status st = cluster.wait_servers_registered(options.start_timeout); !st.ok()) return st;
    cluster.started_ = missing;
    return cluster;
  }
  // What each MDS is started with now (and on restart): --slowdown is
  // per position in the config, as --mds-slowdown lists them. Factor 1 is
  // passed too: the fastest member of an experiment is emulated as well.
  if (!options.mds_slowdown.empty() && options.mds_slowdown.size() != config->mds.size())
    return Status(Errc::invalid_argument,
                  fmt::format("--mds-slowdown gives {} factor(s) for {} metadata server(s)",
                              options.mds_slowdown.size(), config->mds.size()));
  for (size_t i = 0; i < config->mds.size(); ++i) {
    std::vector<std::string> args;
    if (i < options.mds_slowdown.size()) {
      args = {"--slowdown", fmt::format("{}", options.mds_slowdown[i])};
      if (options.mds_service_us) {
        args.push_back("--service-us");
        args.push_back(std::to_string(options.mds_service_us));
      }
    }
    if (Status st = cluster.write_args(fmt::format("mds{}", config->mds[i].id), args); !st.ok()) return st;
  }
  std::vector<std::string> names;
  for (const auto& m : config->mds) names.push_back(fmt::format("mds{}", m.id));
  for (const auto& s : config->servers) names.push_back(fmt::format("server{}", s.id));
  for (const auto& name : names) {
    Status st = cluster.start_daemon(name);
    if (!st.ok()) {
      (void)cluster.down();
      return st;
    }
  }
  if (Status st = cluster.wait_servers_registered(options.start_timeout); !st.ok()) {
    (void)cluster.down();
    return st;
  }
  // Until then every operation on a mount would time out.
  if (Status st = cluster.wait_root_served(options.start_timeout); !st.ok()) {
    (void)cluster.down();
    return st;
  }
  cluster.started_ = names;
  return cluster;
}

Result<LocalCluster> LocalCluster::attach(const fs::path& dir, const fs::path& bin_dir) {
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec || !fs::exists(canonical / "pvfs.toml", ec))
    return Status(Errc::not_found, fmt::format("no cluster in {} (no pvfs.toml there; `pvfs-cluster up --dir {}` "
                                               "makes one)", dir.string(), dir.string()));
  auto config = Config::load(canonical / "pvfs.toml");
  if (!config) return config.status();
  return LocalCluster(canonical, bin_dir, *config);
}

Status LocalCluster::start_daemon(const std::string& name) {
  const bool is_mds = name.rfind("mds", 0) == 0;
  const std::string id = name.substr(is_mds ? 3 : 6);
  const fs::path ready = dir_ / "run" / (name + ".ready");
  const fs::path log = dir_ / "logs" / (name + ".log");
  std::error_code ec;
  fs::remove(ready, ec);
  std::vector<std::string> argv = {binary(is_mds ? "pvfs-mds" : "pvfs-server").string(),
                                   "--config", config_path().string(), "--id", id,
                                   "--ready-file", ready.string()};
  for (auto& a : read_args(name)) argv.push_back(std::move(a));
  const uintmax_t log_before = size_of(log);
  pid_t pid = spawn(argv, log, true);
  if (pid < 0) return Status::from_errno(errno, "fork");
  {
    std::ofstream(dir_ / "run" / (name + ".pid")) << pid << "\n";
  }
  return wait_ready(name, pid, milliseconds(15000), log_before);
}

fs::path LocalCluster::args_file(const std::string& name) const { return dir_ / "run" / (name + ".args"); }

Status LocalCluster::write_args(const std::string& name, const std::vector<std::string>& args) const {
  std::error_code ec;
  if (args.empty()) {
    fs::remove(args_file(name), ec);
    return {};
  }
  std::ofstream out(args_file(name), std::ios::trunc);
  for (const auto& a : args) out << a << "\n";
  out.close();
  if (!out) return Status(Errc::io, "cannot write " + args_file(name).string());
  return {};
}

std::vector<std::string> LocalCluster::read_args(const std::string& name) const {
  std::vector<std::string> args;
  std::ifstream in(args_file(name));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) args.push_back(line);
  return args;
}

Status LocalCluster::wait_ready(const std::string& name, int pid, milliseconds timeout, uintmax_t log_before) {
  const fs::path ready = dir_ / "run" / (name + ".ready");
  const fs::path log = dir_ / "logs" / (name + ".log");
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (fs::exists(ready)) return {};
    if (!process_alive(pid))
      return Status(Errc::unavailable,
                    fmt::format("{} exited during start: {}", name, said_since(log, log_before, 3)));
    std::this_thread::sleep_for(milliseconds(20));
  }
  return Status(Errc::timeout, fmt::format("{} did not become ready in {} ms; it said: {}", name,
                                           timeout.count(), said_since(log, log_before, 3)));
}

Status LocalCluster::wait_servers_registered(milliseconds timeout) {
  auto key = load_secret(config_.secret_file);
  if (!key) return key.status();
  const auto deadline = Clock::now() + timeout;
  // Every metadata server chooses layouts for the files it creates, so each
  // must know every storage server.
  size_t alive = 0;
  const DaemonEntry* waiting = &config_.mds.front();
  while (Clock::now() < deadline) {
    bool all = true;
    for (const auto& m : config_.mds) {
      auto servers = list_servers(m.address, *key, milliseconds(2000));
      alive = 0;
      if (servers)
        for (const auto& s : *servers) alive += s.alive;
      if (alive < config_.servers.size()) {
        waiting = &m;
        all = false;
        break;
      }
    }
    if (all) return {};
    std::this_thread::sleep_for(milliseconds(50));
  }
  return Status(Errc::timeout, fmt::format("only {} of {} storage servers registered with mds{}",
                                           alive, config_.servers.size(), waiting->id));
}

Status LocalCluster::wait_root_served(milliseconds timeout) {
  if (config_.mds.size() < 2) return {};  // a lone member makes it at start
  auto key = load_secret(config_.secret_file);
  if (!key) return key.status();
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    for (const auto& m : config_.mds) {
      auto view = mds_cluster_status(m.address, *key, milliseconds(2000));
      if (!view || !view->serving) continue;
      for (const auto& member : view->members)
        if (member.id == view->self &&
            std::find(member.file_sets.begin(), member.file_sets.end(), 0) != member.file_sets.end())
          return {};
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  return Status(Errc::timeout, fmt::format("no metadata server serves the namespace root after {} ms: "
                                           "see the mds*.log files in {}",
                                           timeout.count(), (dir_ / "logs").string()));
}

Status LocalCluster::mount(const fs::path& mountpoint, const std::string& options) {
  std::error_code ec;
  // Mounted there by this cluster already (an `up --mount` repeated to
  // restart a dead daemon): nothing to do.
  const std::string where = fs::absolute(mountpoint).lexically_normal().string();
  std::string recorded;
  std::ifstream recorded_file(dir_ / "run" / "mountpoint");
  std::getline(recorded_file, recorded);
  if (recorded == where && pvfs_mounted_at(where)) return {};
  fs::create_directories(mountpoint, ec);
  const fs::path log = dir_ / "logs" / "mount.log";
  // In the background pvfsmount logs to the folder, not to a syslog that
  // may not exist here; options given later (a log= of the caller's) win.
  std::vector<std::string> argv = {binary("pvfsmount").string(), "-o", "log=" + log.string()};
  if (!options.empty()) {
    argv.push_back("-o");
    argv.push_back(options);
  }
  argv.push_back(config_path().string());
  argv.push_back(fs::absolute(mountpoint).string());
  const uintmax_t before = size_of(log);
  int rc = run_and_wait(argv, log);
  if (rc != 0)  // only what this pvfsmount wrote: every mount appends to the log
    return Status(Errc::io, fmt::format("cannot mount at {}: {}", fs::absolute(mountpoint).string(),
                                        said_since(log, before, 3)));
  std::ofstream(dir_ / "run" / "mountpoint") << where << "\n";
  return {};
}

Status LocalCluster::down() {
  Status result;
  const fs::path mount_file = dir_ / "run" / "mountpoint";
  if (fs::exists(mount_file)) {
    std::string mnt;
    std::ifstream in(mount_file);
    std::getline(in, mnt);
    // Every pvfs mount there (mounted twice by an older pvfsmount, each
    // unmount uncovers the next), so none is left stale once the daemons stop.
    for (int i = 0; !mnt.empty() && i < 8 && pvfs_mounted_at(mnt); ++i) {
      if (run_and_wait({"fusermount3", "-u", mnt}, dir_ / "logs" / "mount.log") != 0 &&
          run_and_wait({"umount", "-l", mnt}, dir_ / "logs" / "mount.log") != 0) {
        result = Status(Errc::busy, fmt::format("cannot unmount {} (in use?)", mnt));
        break;
      }
    }
    std::error_code ec;
    fs::remove(mount_file, ec);
  }
  std::vector<std::pair<std::string, int>> running;
  for (const auto& d : daemons()) {
    if (d.name == "mount" || !d.running) continue;
    ::kill(d.pid, SIGTERM);
    running.emplace_back(d.name, d.pid);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (const auto& [name, pid] : running) {
    while (process_alive(pid) && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(20));
    if (process_alive(pid)) {
      ::kill(pid, SIGKILL);
      while (process_alive(pid)) std::this_thread::sleep_for(milliseconds(10));
    }
    std::error_code ec;
    fs::remove(dir_ / "run" / (name + ".pid"), ec);
    fs::remove(dir_ / "run" / (name + ".ready"), ec);
  }
  return result;
}

std::vector<DaemonState> LocalCluster::daemons() const {
  std::vector<DaemonState> out;
  auto add = [&](const std::string& name, const DaemonEntry& entry) {
    DaemonState d;
    d.name = name;
    d.pid = read_pid(dir_ / "run" / (name + ".pid"));
    d.running = process_alive(d.pid);
    d.address = entry.address.to_string();
    if (entry.metrics) d.metrics = entry.metrics->to_string();
    d.log = dir_ / "logs" / (name + ".log");
    d.extra_args = read_args(name);
    out.push_back(d);
  };
  for (const auto& m : config_.mds) add(fmt::format("mds{}", m.id), m);
  for (const auto& s : config_.servers) add(fmt::format("server{}", s.id), s);
  return out;
}

Status LocalCluster::kill_daemon(const std::string& name, int signal) {
  for (const auto& d : daemons()) {
    if (d.name != name) continue;
    if (!d.running) return Status(Errc::not_found, name + " is not running");
    if (::kill(d.pid, signal) != 0) return Status::from_errno(errno, "kill " + name);
    if (signal == SIGKILL || signal == SIGTERM) {
      const auto deadline = Clock::now() + std::chrono::seconds(5);
      while (process_alive(d.pid) && Clock::now() < deadline)
        std::this_thread::sleep_for(milliseconds(10));
    }
    return {};
  }
  return Status(Errc::not_found, "no daemon named " + name);
}

Status LocalCluster::restart_daemon(const std::string& name) {
  for (const auto& d : daemons())
    if (d.name == name && d.running) return Status(Errc::busy, name + " is still running");
  return start_daemon(name);
}

}  // namespace pvfs
