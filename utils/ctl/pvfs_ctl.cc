// pvfs-ctl: the administrator's tool (see pvfs-ctl(1)). Parses options and
// hands each subcommand to utils/ctl/ctl_commands. Exit status: 0 success,
// 1 failure (one "pvfs-ctl: ..." line per error), 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "utils/ctl/ctl_commands.h"
#include "utils/ctl/ctl_format.h"
#include "utils/ctl/genconfig.h"
#include "utils/ctl/ctl_fsck.h"
#include "utils/ctl/ctl_iosched.h"
#include "utils/ctl/ctl_mds.h"
#include "utils/ctl/ctl_metrics.h"

namespace {

// Accepts "4M" style sizes and hands the option its value in bytes.
CLI::Validator size_transform() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto bytes = pvfs::ctl::parse_size(text);
        if (!bytes) return bytes.status().detail();
        text = std::to_string(*bytes);
        return {};
      },
      "SIZE");
}

CLI::Validator server_list_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto ids = pvfs::ctl::parse_server_list(text);
        return ids ? std::string() : ids.status().detail();
      },
      "IDS");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pvfs-ctl: administer a pvfs cluster: file and directory layouts, per-job\n"
               "counters, the health of the daemons, the storage servers' write\n"
               "scheduling (redirects, fragments, injected delays), their disk\n"
               "elevators, and how the metadata servers share the file sets. See pvfs-ctl(1)."};
  app.require_subcommand(1);
  app.set_version_flag("--version", PVFS_VERSION);

  pvfs::ctl::DaemonOptions daemon;
  unsigned timeout_ms = 0;
  auto add_daemon_options = [&](CLI::App* command) {
    // Not CLI11's envname: it would also apply the variable through the
    // options of the commands not run, which share daemon.config_path.
    command->add_option("-c,--config", daemon.config_path, "cluster config file (TOML) [$PVFS_CONFIG]");
    command->add_option("-t,--timeout", timeout_ms,
                        "ms to wait for each daemon [the config's timeouts.connect_ms]")
        ->check(CLI::Range(1u, 3600000u));
  };

  std::vector<std::string> get_paths;
  auto* get = app.add_subcommand(
      "getstripe", "show the layout of files and directories on a mounted pvfs");
  get->add_option("path", get_paths, "files or directories")->required();

  pvfs::ctl::SetstripeOptions set;
  uint64_t stripe_size = 0;
  uint32_t stripe_count = 0;
  auto* setc = app.add_subcommand(
      "setstripe",
      "set the layout policy of a directory, or the layout of an empty (or new) file");
  auto* size_opt = setc->add_option("-S,--stripe-size", stripe_size,
                                    "bytes per stripe, a multiple of 4K; K, M, G suffixes; "
                                    "0 = cluster default")
                       ->transform(size_transform());
  auto* count_opt = setc->add_option("-c,--stripe-count", stripe_count,
                                     "objects (servers) per file; 0 = cluster default");
  auto* servers_opt = setc->add_option("-s,--servers", set.servers,
                                       "storage server ids to stripe over, in order (1,3,5)")
                          ->check(server_list_check());
  setc->add_flag("-d,--delete", set.reset, "return to the cluster default layout")
      ->excludes(size_opt)
      ->excludes(count_opt)
      ->excludes(servers_opt);
  setc->add_option("path", set.path, "directory or file")->required();

  std::vector<std::string> fileset_paths;
  auto* fileset = app.add_subcommand(
      "fileset", "the file sets of a mounted pvfs: show which one paths are in, or make new ones");
  fileset->add_option("path", fileset_paths, "files or directories to show");
  std::vector<std::string> fileset_new;
  auto* fileset_create = fileset->add_subcommand(
      "create", "make empty (or new) directories the roots of new file sets (root only)");
  fileset_create->add_option("dir", fileset_new, "directories")->required();

  bool per_daemon = false;
  auto* jobs = app.add_subcommand("jobs", "per-job operations and bytes, summed over all daemons");
  add_daemon_options(jobs);
  jobs->add_flag("--per-daemon", per_daemon, "one table per daemon instead of the sum");

  auto* ping = app.add_subcommand(
      "ping", "check that every daemon answers and authenticates (exit 1 naming those that do not)");
  add_daemon_options(ping);

  auto* servers = app.add_subcommand("servers", "the storage servers the metadata server knows");
  add_daemon_options(servers);

  std::vector<uint32_t> sched_ids;
  bool sched_json = false;
  auto* sched = app.add_subcommand(
      "sched",
      "the storage servers' write scheduling: load, redirects, fragments, pull-backs, "
      "delays (exit 1 naming those that do not answer)");
  add_daemon_options(sched);
  sched->add_option("server", sched_ids, "storage server ids [all in the config]");
  sched->add_flag("--json", sched_json,
                  "a JSON array of objects with the raw numbers instead of the table");

  uint32_t inject_id = 0;
  double delay_factor = 1;
  uint32_t delay_seconds = 0;
  auto* inject = app.add_subcommand(
      "inject", "make a storage server serve data requests slower, to test straggler handling");
  add_daemon_options(inject);
  inject->add_option("server", inject_id, "storage server id")->required();
  inject->add_option("-f,--delay-factor", delay_factor,
                     "this many times slower, 1 to 1000 (1 ends a delay)")
      ->required();
  inject->add_option("--for", delay_seconds, "seconds the delay lasts; 0 = until changed")
      ->capture_default_str();

  uint32_t elevator_id = 0;
  std::string elevator_policy;
  bool elevator_json = false;
  auto* elevator = app.add_subcommand(
      "elevator",
      "the storage servers' disk elevators: queues, seeks, deadlines, service times, "
      "dispatched sizes; or switch one between fcfs and obrr");
  add_daemon_options(elevator);
  auto* elevator_id_opt =
      elevator->add_option("server", elevator_id, "storage server id [all in the config]");
  // Not checked here: the server names the policies it knows when refusing one.
  elevator->add_option("policy", elevator_policy, "switch the server to this elevator: fcfs or obrr");
  elevator->add_flag("--json", elevator_json,
                     "a JSON array of objects with the raw numbers instead of the table");

  std::vector<std::string> iosched_words;
  bool iosched_json = false;
  auto* iosched = app.add_subcommand(
      "iosched",
      "the metadata delegate's scheduler of jobs' I/O steps: who holds tokens, the queue in the "
      "order it will be served, per-job token wait and I/O time; or 'policy NAME' to switch it");
  add_daemon_options(iosched);
  iosched->add_option("policy", iosched_words, "policy NAME: switch to none, fcfs, sjf, sa-fcfs or sa-sjf")
      ->expected(0, 2);
  iosched->add_flag("--json", iosched_json, "one JSON object with the raw numbers instead of the tables");

  pvfs::ctl::IostepOptions iostep_options;
  uint64_t iostep_bytes = 0;
  auto* iostep = app.add_subcommand(
      "iostep",
      "open, end or show a job's I/O step on a mounted pvfs: the mount's client holds the job's "
      "writes until the scheduler grants it a token");
  iostep->add_option("action", iostep_options.verb, "begin, end or status")
      ->required()
      ->check(CLI::IsMember({"begin", "end", "status"}));
  iostep->add_option("paths", iostep_options.paths,
                     "files or directories on the mount the step writes (their layouts give its servers)")
      ->required();
  iostep->add_option("-j,--job", iostep_options.job, "the job id [the caller's: PVFS_JOBID, SLURM_JOB_ID, ...]");
  auto* iostep_bytes_opt =
      iostep->add_option("-b,--bytes", iostep_bytes, "begin: the bytes the step will write (for SJF), e.g. 64G")
          ->transform(size_transform());
  iostep->add_option("-s,--servers", iostep_options.servers,
                     "begin: the storage servers it writes to, e.g. 1,3 [from the paths' layouts]")
      ->check(server_list_check());

  pvfs::ctl::GenconfigOptions gen;
  auto* genconfig = app.add_subcommand(
      "genconfig",
      "write the config of a cluster on several hosts (pvfs.toml) and a fresh secret key");
  genconfig->add_option("--mds", gen.mds, "metadata servers: host:port[,host:port...] or ID=host:port")
      ->required();
  genconfig->add_option("--servers", gen.servers,
                        "storage servers: host:port[,host:port...] or ID=host:port; ids from 0 "
                        "in order unless given")
      ->required();
  genconfig->add_option("--data-dir", gen.data_dir,
                        "absolute folder on each host; daemons use DIR/mdsN and DIR/serverN")
      ->required();
  genconfig->add_option("-o,--out", gen.out, "config file to write")->capture_default_str();
  genconfig->add_option("--key", gen.key, "secret key file to write [secret.key beside --out]");
  genconfig->add_option("-S,--stripe-size", gen.stripe_size,
                        "default bytes per stripe, a multiple of 4K; K, M, G suffixes [1M]")
      ->transform(size_transform());
  genconfig->add_option("-C,--stripe-count", gen.stripe_count,
                        "default servers per file; 0 = all")
      ->capture_default_str();
  genconfig->add_flag("-f,--force", gen.force, "overwrite the config and key files if they exist");
  pvfs::ctl::FsckOptions fsck_options;
  uint32_t fsck_grace_s = 60;
  auto* fsck = app.add_subcommand(
      "fsck",
      "check that the namespace and the storage servers agree: objects without a file, missing "
      "objects, stale redirects, orphan fragments, sizes below the data (exit 1 while problems "
      "remain); run it on a quiet cluster");
  add_daemon_options(fsck);
  fsck->add_flag("--repair", fsck_options.repair, "fix what is safe to fix, saying what was done");
  fsck->add_option("--grace", fsck_grace_s,
                   "seconds a fragment without a redirect entry may be a write in flight")
      ->capture_default_str()
      ->check(CLI::Range(0u, 86400u));

  std::vector<std::string> stats_names;
  bool stats_json = false, stats_prometheus = false;
  auto* stats = app.add_subcommand(
      "stats",
      "per-daemon counters: requests and bytes by type with p50/p99 latency, queue depths, "
      "scheduling counters, jobs (exit 1 naming daemons that do not answer)");
  add_daemon_options(stats);
  stats->add_option("daemon", stats_names, "mds0, server2, a storage server number, or all [all]");
  auto* stats_json_opt = stats->add_flag("--json", stats_json, "a JSON array: one object of raw samples per daemon");
  stats->add_flag("--prometheus", stats_prometheus,
                  "the Prometheus text format, each sample labelled daemon=\"...\"")
      ->excludes(stats_json_opt);

  double top_interval = 1.0;
  uint32_t top_iterations = 0;
  auto* top = app.add_subcommand(
      "top", "live view, redrawn every interval: servers (load, queue, MiB/s in/out, redirects "
             "held), metadata servers (ops/s, latency, file sets, inodes), busiest jobs");
  add_daemon_options(top);
  top->add_option("-n,--interval", top_interval, "seconds between frames")
      ->capture_default_str()->check(CLI::Range(0.1, 3600.0));
  top->add_option("-i,--iterations", top_iterations, "stop after this many frames (0: until Ctrl-C)")
      ->capture_default_str();

  std::string loglevel_daemon, loglevel_level;
  auto* loglevel = app.add_subcommand(
      "loglevel", "change a daemon's log level while it runs (trace, debug, info, warn, error, off)");
  add_daemon_options(loglevel);
  loglevel->add_option("daemon", loglevel_daemon, "mds0, server2, a storage server number, or all")
      ->required();
  loglevel->add_option("level", loglevel_level, "trace, debug, info, warn, error or off")->required();

  bool mds_json = false, mds_verbose = false;
  auto* mds = app.add_subcommand(
      "mds", "the metadata server cluster: the ANU map (share and regions per member), each "
             "member's file sets, slowdown and last interval's latency, the delegate's tuning "
             "steps, file set moves (exit 1 naming members that do not answer)");
  add_daemon_options(mds);
  auto* mds_json_opt = mds->add_flag("--json", mds_json, "one JSON object with the raw numbers, all tuning steps and moves");
  mds->add_flag("-v,--verbose", mds_verbose, "list each member's file set ids")->excludes(mds_json_opt);

  // CLI11 would report a mistyped command as "a subcommand is required".
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* c) { return c->check_name(argv[1]); }).empty()) {
    std::fprintf(stderr, "pvfs-ctl: unknown command '%s' (see pvfs-ctl --help)\n", argv[1]);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "pvfs-ctl: %s (see pvfs-ctl --help)\n", e.what());
    return 2;
  }

  daemon.timeout = std::chrono::milliseconds(timeout_ms);
  if (const char* env = std::getenv("PVFS_CONFIG"); daemon.config_path.empty() && env)
    daemon.config_path = env;
  if (*genconfig) return pvfs::ctl::genconfig(gen);
  if (*get) return pvfs::ctl::getstripe(get_paths);
  if (*setc) {
    if (size_opt->count()) set.stripe_size = stripe_size;
    if (count_opt->count()) set.stripe_count = stripe_count;
    return pvfs::ctl::setstripe(set);
  }
  if (*fileset_create) return pvfs::ctl::fileset_create(fileset_new);
  if (*fileset) {
    if (fileset_paths.empty()) {
      std::fprintf(stderr, "pvfs-ctl: fileset needs paths, or the command create (see pvfs-ctl --help)\n");
      return 2;
    }
    return pvfs::ctl::fileset_show(fileset_paths);
  }
  if (*jobs) return pvfs::ctl::jobs(daemon, per_daemon);
  if (*ping) return pvfs::ctl::ping(daemon);
  if (*servers) return pvfs::ctl::servers(daemon);
  if (*sched) return pvfs::ctl::sched(daemon, sched_ids, sched_json);
  if (*inject) return pvfs::ctl::inject(daemon, inject_id, delay_factor, delay_seconds);
  if (*fsck) {
    fsck_options.grace = std::chrono::seconds(fsck_grace_s);
    return pvfs::ctl::fsck(daemon, fsck_options);
  }
  if (*elevator) {
    std::vector<uint32_t> ids;
    if (elevator_id_opt->count()) ids.push_back(elevator_id);
    return pvfs::ctl::elevator(daemon, ids, elevator_policy, elevator_json);
  }
  if (*stats)
    return pvfs::ctl::stats(daemon, stats_names,
                            stats_json         ? pvfs::ctl::StatsFormat::json
                            : stats_prometheus ? pvfs::ctl::StatsFormat::prometheus
                                               : pvfs::ctl::StatsFormat::text);
  if (*top) return pvfs::ctl::top(daemon, top_interval, top_iterations);
  if (*mds) return pvfs::ctl::mds(daemon, mds_json, mds_verbose);
  if (*iosched) {
    if (!iosched_words.empty() && (iosched_words.size() != 2 || iosched_words[0] != "policy")) {
      std::fprintf(stderr, "pvfs-ctl: iosched takes no argument, or 'policy NAME' (see pvfs-ctl --help)\n");
      return 2;
    }
    return pvfs::ctl::iosched(daemon, iosched_json, iosched_words.empty() ? std::string() : iosched_words[1]);
  }
  if (*iostep) {
    if (iostep_bytes_opt->count()) iostep_options.bytes = iostep_bytes;
    return pvfs::ctl::iostep(iostep_options);
  }
  if (*loglevel) return pvfs::ctl::loglevel(daemon, loglevel_daemon, loglevel_level);
  return 2;
}
