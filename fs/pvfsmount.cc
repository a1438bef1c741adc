// pvfsmount: mounts a pvfs file system through FUSE. Parses the command line
// (also in the argument order mount(8) and mount.fuse3 use for helpers),
// builds the Config, starts the client (failing before the mount if the MDS
// cannot be reached), goes to the background and serves until unmounted.
// Wiring only: the work is in fs/fuse_bridge.* and fs/client.*.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/syslog_sink.h>

#include "fs/client.h"
#include "fs/fuse_bridge.h"
#include "fs/job_id.h"
#include "fs/mount_options.h"
#include "config/config.h"
#include "shared/log.h"
#include "shared/mount_table.h"
#include "shared/rpc/io_context.h"
#include "shared/usage_error.h"

namespace pvfs {
namespace {

// The kernel caps a FUSE mount's readahead at the block-device default
// (128 KiB) whatever max_readahead INIT asks for, which turns a 1 MiB
// sequential read into eight round trips. Raise the mount's bdi readahead
// (root only; a failure just leaves the default). This runs before INIT,
// which then keeps the smaller of this and max_readahead (on_init in
// fs/fuse_bridge.cc). The device number comes from mountinfo: stat() on
// the mount point would wait for INIT.
void raise_readahead(const std::filesystem::path& mountpoint, unsigned kib) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  std::string device;
  const std::string target = std::filesystem::absolute(mountpoint).lexically_normal().string();
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    if (point == target) device = dev;  // the last match is the newest mount
  }
  if (device.empty()) return;
  std::ofstream knob("/sys/class/bdi/" + device + "/read_ahead_kb");
  knob << kib << "\n";
  knob.flush();
  if (!knob) spdlog::debug("cannot raise readahead of {} (not root?)", target);
}


constexpr const char* kProgram = "pvfsmount";

// Whether a pvfs file system is mounted on `mountpoint` (absolute) itself.
// Only its parent is resolved: a dead mount answers ENOTCONN to a stat.
bool already_mounted(std::filesystem::path mountpoint) {
  mountpoint = mountpoint.lexically_normal();
  if (!mountpoint.has_filename()) mountpoint = mountpoint.parent_path();  // "mnt/"
  std::error_code ec;
  auto canonical = std::filesystem::canonical(mountpoint.parent_path(), ec) / mountpoint.filename();
  if (ec) return false;
  std::ifstream in("/proc/self/mountinfo");
  std::stringstream text;
  text << in.rdbuf();
  return has_mount_at(text.str(), canonical.string(), kPvfsMountType);
}

// What an error says: its detail, which names what failed, or the code alone.
std::string message_of(const Status& status) {
  return status.detail().empty() ? status.to_string() : status.detail();
}

int fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", kProgram, message.c_str());
  return 1;
}

struct CommandLine {
  std::string config;
  std::string mountpoint;
  std::vector<std::string> option_lists;
  bool foreground = false;
  bool debug = false;
  // mount(8) helper flags: -n (no mtab), -s (sloppy), -v (verbose), -t TYPE.
  bool helper_flag = false;
  std::string helper_type;
};

// The cluster configuration: CONFIG is a TOML file, or host:port of a
// metadata server together with -o secret=FILE.
Result<Config> make_config(const std::string& arg, const MountOptions& options) {
  std::error_code ec;
  const bool is_file = std::filesystem::exists(arg, ec);
  Result<Endpoint> address = parse_endpoint(arg);
  Config config;
  if (!is_file && address.ok() && arg.find('/') == std::string::npos) {
    if (options.secret_file.empty())
      return Status(Errc::invalid_argument, arg + " is a metadata server address: "
                                                  "give the cluster secret with -o secret=FILE");
    config.mds.push_back(DaemonEntry{0, *address, {}});
  } else {
    if (!is_file)
      return Status(Errc::not_found,
                    "cannot read config file " + arg + ": " + std::strerror(ENOENT) +
                        " (CONFIG is a TOML file or host:port of a metadata server)");
    auto loaded = Config::load(arg);
    if (!loaded.ok()) return loaded.status();
    config = std::move(*loaded);
  }
  // Resolve now: the daemon later changes to "/".
  if (!options.secret_file.empty())
    config.secret_file = std::filesystem::absolute(options.secret_file);
  if (options.rpc_timeout_ms) config.rpc_timeout_ms = *options.rpc_timeout_ms;
  return config;
}

// Going to the background. The fork happens before any thread exists (the
// io thread, the invalidator's), so nothing has to survive a fork; the
// parent stays until the child has mounted, so errors still reach the
// terminal and the parent's exit status is the outcome.
class Background {
 public:
  // In the parent: waits, then exits 0 once the child called ready(), or
  // with the child's status if it ended first. In the child: returns.
  static Result<Background> fork_and_wait() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Status::from_errno(errno, "pipe");
    pid_t child = ::fork();
    if (child < 0) return Status::from_errno(errno, "fork");
    if (child > 0) {
      ::close(fds[1]);
      char byte = 0;
      ssize_t n;
      do n = ::read(fds[0], &byte, 1);
      while (n < 0 && errno == EINTR);
      if (n == 1) ::_exit(0);
      int status = 0;
      while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
      }
      ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
    }
    ::close(fds[0]);
    return Background(fds[1]);
  }

  // Child: the mount is up. Leaves the terminal's session, sends further log
  // messages (and anything written to stdout and stderr) to `log_fd` when it
  // is open, else to syslog, and releases the parent.
  void ready(int log_fd) {
    ::setsid();
    if (::chdir("/") != 0) {
      // Harmless: only keeps the old directory busy.
    }
    int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(log_fd >= 0 ? log_fd : null_fd, STDOUT_FILENO);
      ::dup2(log_fd >= 0 ? log_fd : null_fd, STDERR_FILENO);
      ::close(null_fd);
    }
    if (log_fd < 0) {
      auto logger = spdlog::syslog_logger_mt("pvfsmount-syslog", kProgram, LOG_PID, LOG_DAEMON);
      logger->set_level(spdlog::get_level());
      spdlog::set_default_logger(logger);
    }  // else the stderr logger of init_logging() now writes to the file
    char byte = 1;
    ssize_t n;
    do n = ::write(notify_fd_, &byte, 1);
    while (n < 0 && errno == EINTR);
    ::close(notify_fd_);
    notify_fd_ = -1;
  }

 private:
  explicit Background(int notify_fd) : notify_fd_(notify_fd) {}
  int notify_fd_;
};

// The client and the one thread that runs its io_context. Destruction stops
// the thread first, so the client is never touched by two threads at once.
struct Runtime {
  rpc::IoContext io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  std::unique_ptr<Client> client;
  std::thread thread;

  void start_thread() {
    thread = std::thread([this] { io.run(); });
  }
  // Stops the io thread, then unwinds the operations still waiting in the
  // io_context (a create waiting on a paused metadata server): they refer
  // to the client and to the mount, so this comes before either goes.
  void stop() {
    io.stop();
    if (thread.joinable()) thread.join();
    io.drop_suspended();
  }
  ~Runtime() {
    stop();
    client.reset();
  }
};

// Runs client.start() on the io thread and waits for it.
Status start_client(Runtime& rt) {
  try {
    return asio::co_spawn(rt.io, rt.client->start(), asio::use_future).get();
  } catch (const std::exception& e) {
    return Status(Errc::io, e.what());
  }
}

std::string start_error(const Config& config, const Status& status) {
  std::string mds = config.mds.size() > 1 ? "metadata servers " : "metadata server ";
  for (size_t i = 0; i < config.mds.size(); ++i)
    mds += (i ? ", " : "") + config.mds[i].address.to_string();
  switch (status.code()) {
    case Errc::unavailable:
    case Errc::timeout:
      return "cannot reach " + mds + ": " + status.to_string();
    case Errc::access_denied:
      // The status repeats "cannot reach" around the refusal: say it once.
      return mds + " refused the key in " + config.secret_file.string() +
             " (not the cluster's secret: use the key file beside the cluster's config)";
    default:
      return "cannot start the client for " + mds + ": " + status.to_string();
  }
}

int run(const CommandLine& cl) {
  std::string joined;
  for (const auto& list : cl.option_lists) joined += list + ",";
  auto options = parse_mount_options(joined);
  if (!options.ok()) return fail(options.status().detail());

  auto config = make_config(cl.config, *options);
  if (!config.ok()) return fail(config.status().detail().empty() ? config.status().to_string()
                                                                 : config.status().detail());

  std::error_code ec;
  const auto mountpoint = std::filesystem::absolute(cl.mountpoint, ec);
  // A second mount on the same directory would hide the first, which then
  // outlives every `umount` but one.
  if (!ec && already_mounted(mountpoint))
    return fail(mountpoint.lexically_normal().string() +
                " is already a pvfs mount (unmount it first: fusermount3 -u " + cl.mountpoint + ")");
  if (!ec && !std::filesystem::exists(mountpoint, ec) && !ec)
    return fail("mount point " + cl.mountpoint + " does not exist (mkdir -p " + cl.mountpoint + ")");
  if (ec || !std::filesystem::is_directory(mountpoint, ec))
    return fail("mount point " + cl.mountpoint + " is not a directory");

  int log_fd = -1;
  if (!options->log_file.empty()) {
    log_fd = ::open(options->log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (log_fd < 0) return fail("cannot open log file " + options->log_file + ": " + std::strerror(errno));
  }

  const bool foreground = cl.foreground || cl.debug;
  init_logging(kProgram, cl.debug);
  std::optional<Background> background;
  if (!foreground) {
    auto bg = Background::fork_and_wait();
    if (!bg.ok()) return fail("cannot go to the background: " + bg.status().to_string());
    background.emplace(std::move(*bg));
  }

  // The client's own caches (post-op attributes, listings fetched ahead,
  // statahead) live no longer than the kernel's.
  if (options->attr_timeout_s) config->attr_timeout_s = *options->attr_timeout_s;
  if (options->entry_timeout_s) config->entry_timeout_s = *options->entry_timeout_s;
  Runtime rt;
  auto client = Client::create(rt.io, *config);
  if (!client.ok()) return fail(message_of(client.status()));
  rt.client = std::move(*client);
  rt.client->set_dispatch_policy(options->dispatch);
  rt.client->set_write_behind(options->write_behind.value_or(config->write_behind_bytes));
  rt.start_thread();
  if (Status s = start_client(rt); !s.ok()) return fail(start_error(*config, s));

  JobIdCache jobs(options->jobid_var);
  FuseMountParams params;
  params.mountpoint = mountpoint;
  params.options = *options;
  params.attr_timeout_s = options->attr_timeout_s.value_or(config->attr_timeout_s);
  params.entry_timeout_s = options->entry_timeout_s.value_or(config->entry_timeout_s);
  params.default_fsname = "pvfs:" + config->mds.front().address.to_string();
  params.debug = cl.debug;
  auto mounted = FuseMount::mount(*rt.client, jobs, params);
  if (!mounted.ok()) return fail(message_of(mounted.status()));
  raise_readahead(mountpoint, kReadAheadBytes / 1024);
  if (background) background->ready(log_fd);
  spdlog::info("mounted {} on {}", params.options.fsname.empty() ? params.default_fsname
                                                                 : params.options.fsname,
               mountpoint.string());
  if (params.options.writeback_cache)
    spdlog::warn("writeback_cache: this node does not see other nodes' writes past the size it has cached, and "
                 "two nodes writing parts of one page of a file overwrite each other's bytes; use it only for "
                 "files one node writes and reads at a time (pvfsmount(8))");

  Status served = (*mounted)->serve();
  // Stop the io thread before unmounting: no completion may reply on a
  // session that is being destroyed.
  rt.stop();
  mounted->reset();
  if (!served.ok()) {
    spdlog::error("{}", served.to_string());
    return 1;
  }
  spdlog::info("unmounted {}", mountpoint.string());
  return 0;
}

}  // namespace
}  // namespace pvfs

int main(int argc, char** argv) {
  pvfs::CommandLine cl;
  const std::string name = std::filesystem::path(argc > 0 ? argv[0] : "pvfsmount").filename();
  const bool as_helper = name.starts_with("mount.");

  CLI::App app{"Mounts a pvfs parallel file system with FUSE.", "pvfsmount"};
  app.add_option("CONFIG", cl.config,
                 "cluster config file (TOML), or host:port of a metadata server "
                 "with -o secret=FILE")
      ->required();
  app.add_option("MOUNTPOINT", cl.mountpoint, "directory to mount on")->required();
  app.add_option("-o", cl.option_lists, "comma-separated mount options (may be repeated)")
      ->type_name("OPTIONS")
      ->allow_extra_args(false);
  app.add_flag("-f,--foreground", cl.foreground, "stay in the foreground");
  app.add_flag("-d,--debug", cl.debug, "log every request to stderr (implies -f)");
  app.add_flag("-n,-s,-v", cl.helper_flag, "mount(8) helper flags, ignored")->group("");
  app.add_option("-t", cl.helper_type, "mount(8) helper type, ignored")->group("");
  app.set_version_flag("--version", PVFS_VERSION);
  app.footer(
      "Mount options (-o; defaults in brackets, details in pvfsmount(8)):\n"
      "  attr_timeout=SECONDS    attribute cache lifetime [config [client] attr_timeout_s, 1]\n"
      "  entry_timeout=SECONDS   name cache lifetime [config [client] entry_timeout_s, 1]\n"
      "  writeback_cache         cache writes in the kernel; only for files one node\n"
      "                          writes and reads at a time [no_writeback_cache]\n"
      "  direct_io               bypass the page cache for all files [off]\n"
      "  write_behind=SIZE       bytes of each file's writes a write() may return\n"
      "                          before the storage servers have them; errors come at\n"
      "                          the next write, fsync or close; 0 = none\n"
      "                          [config [client] write_behind_bytes, 0]\n"
      "  allow_other             let other users use the mount [off]\n"
      "  no_default_permissions  let the kernel skip permission checks [default_permissions]\n"
      "  ro, rw                  read-only or read-write [rw]\n"
      "  security_label          keep SELinux labels (security.selinux) [no_security_label]\n"
      "  jobid_var=NAME          environment variable naming the job [PVFS_JOBID, SLURM_JOB_ID]\n"
      "  secret=FILE             cluster key file (needed when CONFIG is host:port)\n"
      "  dispatch=POLICY         where write pieces go: fixed, random, two-choice, collab,\n"
      "                          preassign [preassign]\n"
      "  log=FILE                in the background, append log messages here [syslog]\n"
      "  max_threads=N           accepted and ignored (no worker threads)\n"
      "  max_background=N        reads and writebacks in flight to the kernel [128]\n"
      "  fsname=NAME             name shown in mount tables [pvfs:MDS-ADDRESS]\n"
      "  timeout=MS              RPC timeout [config [timeouts] rpc_ms]\n"
      "  locks=cluster|local     fcntl/OFD/flock locks held by the metadata servers,\n"
      "                          coherent across nodes, or by this node's kernel [cluster]\n"
      "  also accepted: dev nodev suid nosuid exec noexec sync async dirsync noatime\n"
      "  nodiratime relatime auto noauto user nouser users _netdev defaults nofail\n"
      "\n"
      "Examples:\n"
      "  pvfsmount /etc/pvfs/cluster.toml /mnt/pvfs\n"
      "  pvfsmount -o secret=/etc/pvfs/secret.key,ro mds1:7000 /mnt/pvfs\n"
      "  mount -t fuse.pvfsmount mds1:7000 /mnt/pvfs -o secret=/etc/pvfs/secret.key\n"
      "    (mount(8) finds pvfsmount only once installed; see pvfsmount(8) for -t fuse.pvfs)");
  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app, argc, argv, "pvfsmount")) return *code;
  // For a mount helper, -f is mount(8)'s "fake": do everything but mount.
  if (as_helper && cl.foreground) return 0;
  return pvfs::run(cl);
}
