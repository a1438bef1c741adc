// pvfs-cluster: start, inspect and stop a whole pvfs cluster on this
// machine (see pvfs-cluster(1)). Wiring over utils/cluster/local_cluster.
#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "shared/secret.h"
#include "policy/health/health.h"
#include "shared/usage_error.h"
#include "utils/common/daemon_probe.h"
#include "utils/common/health_probe.h"
#include "utils/cluster/left_behind.h"
#include "utils/cluster/local_cluster.h"

namespace {

// One line: the detail names what failed (the code would add "I/O error").
int fail(const pvfs::Status& st) {
  std::fprintf(stderr, "pvfs-cluster: %s\n", st.detail().empty() ? st.to_string().c_str() : st.detail().c_str());
  return 1;
}

// "2 daemons and 1 mount"
std::string describe(const pvfs::LeftBehind& left) {
  std::string out;
  if (left.daemons > 0) out = fmt::format("{} daemon{}", left.daemons, left.daemons == 1 ? "" : "s");
  if (left.mounts > 0)
    out += fmt::format("{}{} mount{}", out.empty() ? "" : " and ", left.mounts, left.mounts == 1 ? "" : "s");
  return out;
}

// How the mount table names the cluster's mounts (left_behind.h).
std::string source_of(const pvfs::LocalCluster& cluster) {
  const auto& mds = cluster.config().mds;
  return mds.empty() ? std::string() : pvfs::mount_source_of(mds.front().address.to_string());
}

int status(const std::string& dir) {
  auto cluster = pvfs::LocalCluster::attach(dir);
  if (!cluster) {
    const pvfs::LeftBehind left = pvfs::find_left_behind(dir, {}, {});
    if (left.daemons + left.mounts == 0) return fail(cluster.status());
    std::fprintf(stderr, "pvfs-cluster: no pvfs.toml in %s, but %s still run from it "
                 "(`pvfs-cluster down --dir %s` stops them)\n", dir.c_str(), describe(left).c_str(), dir.c_str());
    return 1;
  }
  auto key = pvfs::load_secret(cluster->config().secret_file);
  if (!key) return fail(key.status());
  std::printf("%-10s %-8s %-22s %-22s %-9s %s\n", "DAEMON", "PID", "ADDRESS", "METRICS", "STATE", "DETAIL");
  std::vector<int> known;
  for (const auto& d : cluster->daemons()) {
    if (d.running) known.push_back(d.pid);
    std::string state = "stopped", detail;
    if (d.running) {
      auto ep = pvfs::parse_endpoint(d.address);
      auto kind = d.name.rfind("mds", 0) == 0 ? pvfs::DaemonKind::mds : pvfs::DaemonKind::server;
      auto report = pvfs::probe_daemon(kind, *ep, *key, std::chrono::milliseconds(2000));
      if (report) {
        state = "answers";
        detail = fmt::format("up {} s, {} requests", report->uptime_ms / 1000, report->requests);
        for (size_t i = 0; i + 1 < d.extra_args.size(); ++i)
          if (d.extra_args[i] == "--slowdown") detail += fmt::format(", slowdown {}x", d.extra_args[i + 1]);
      } else {
        state = "silent";
        detail = report.status().to_string();
      }
    }
    std::printf("%-10s %-8d %-22s %-22s %-9s %s\n", d.name.c_str(), d.running ? d.pid : 0,
                d.address.c_str(), d.metrics.empty() ? "-" : d.metrics.c_str(), state.c_str(),
                detail.c_str());
  }
  std::ifstream mount_file(cluster->dir() / "run" / "mountpoint");
  std::string mnt;
  if (std::getline(mount_file, mnt) && !mnt.empty()) std::printf("mounted at %s\n", mnt.c_str());
  // Processes of this cluster that run/ does not name (removed while they ran).
  if (const pvfs::LeftBehind left = pvfs::find_left_behind(cluster->dir(), known, mnt, source_of(*cluster));
      left.daemons + left.mounts > 0)
    std::printf("also running from this folder, not in its run/ files: %s (`pvfs-cluster down --dir %s` stops them)\n",
                describe(left).c_str(), dir.c_str());
  // The same verdict as pvfs-ctl health, with its default thresholds.
  const auto verdict = pvfs::health::judge(
      pvfs::gather_health(cluster->config(), *key, std::chrono::milliseconds(2000)), pvfs::health::Thresholds{});
  std::fputs(pvfs::health::render(verdict).c_str(), stdout);
  return static_cast<int>(verdict.level);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pvfs-cluster: run a whole pvfs cluster on this machine for trying it out.\n"
               "Data, config (pvfs.toml), key and logs live under --dir. See pvfs-cluster(1).",
               "pvfs-cluster"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PVFS_VERSION);
  pvfs::ClusterOptions options;
  std::string dir, mount_point, mount_options;

  auto* up = app.add_subcommand("up", "start the daemons (and optionally mount) and wait until they serve");
  up->add_option("-d,--dir", dir, "folder for config, data and logs")->required();
  up->add_option("-s,--servers", options.servers, "storage servers")->capture_default_str()
      ->check(CLI::Range(1, 64));
  up->add_option("-m,--mds", options.mds, "metadata servers (new clusters)")->capture_default_str()
      ->check(CLI::Range(1, 64));
  up->add_option("--mds-slowdown", options.mds_slowdown,
                 "for experiments: pvfs-mds --slowdown per MDS, in id order (1,3,5,7,9: the first "
                 "at full emulated speed, the last 9x slower); kept for restarts until the next up")
      ->delimiter(',')
      ->check(CLI::Range(1.0, 1000.0));
  up->add_option("--mds-service-us", options.mds_service_us,
                 "with --mds-slowdown: pvfs-mds --service-us, microseconds per request at factor 1 "
                 "[pvfs-mds's default]")
      ->check(CLI::Range(1u, 1000000u));
  up->add_option("--mds-placement", options.mds_placement,
                 "[mds_cluster] placement of a new config: anu, hash or round-robin")
      ->capture_default_str()
      ->check(CLI::IsMember({"anu", "hash", "round-robin"}));
  up->add_option("--mds-tune-interval-ms", options.mds_tune_interval_ms,
                 "[mds_cluster] tune_interval_ms of a new config: how often the delegate rescales the map")
      ->capture_default_str()
      ->check(CLI::Range(1u, 86400000u));
  up->add_option("--mds-dead-after-ms", options.mds_dead_after_ms,
                 "[mds_cluster] dead_after_ms of a new config: a member silent this long has failed")
      ->capture_default_str();
  up->add_option("--mount", mount_point, "mount the file system here with pvfsmount");
  up->add_option("-o,--mount-options", mount_options, "pvfsmount -o options for --mount");
  up->add_option("--stripe-size", options.stripe_size, "default stripe size in bytes (new clusters)")
      ->capture_default_str();

  auto* st = app.add_subcommand("status", "show each daemon and whether it answers, then the cluster's health as pvfs-ctl health "
                                "(exit 0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR)");
  st->add_option("-d,--dir", dir, "the cluster's folder")->required();

  auto* down = app.add_subcommand("down", "unmount, then stop every daemon (data is kept)");
  down->add_option("-d,--dir", dir, "the cluster's folder")->required();

  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* c) { return c->check_name(argv[1]); }).empty()) {
    std::fprintf(stderr, "pvfs-cluster: unknown command '%s': use up, status or down (see pvfs-cluster --help)\n",
                 argv[1]);
    return 2;
  }
  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app, argc, argv, "pvfs-cluster")) return *code;

  if (*up) {
    options.dir = dir;
    auto cluster = pvfs::LocalCluster::up(options);
    if (!cluster) return fail(cluster.status());
    const size_t all = cluster->config().mds.size() + cluster->config().servers.size();
    const bool restart = cluster->started().size() < all;
    if (!mount_point.empty()) {
      if (auto m = cluster->mount(mount_point, mount_options); !m.ok()) {
        // A cluster this command started goes down again; daemons that
        // were already running are left alone.
        if (!restart) (void)cluster->down();
        return fail(m);
      }
    }
    if (restart)
      std::printf("pvfs cluster in %s: restarted %s\n", cluster->dir().c_str(),
                  fmt::format("{}", fmt::join(cluster->started(), ", ")).c_str());
    else
      std::printf("pvfs cluster up in %s: %zu metadata server(s), %zu storage server(s)\n",
                  cluster->dir().c_str(), cluster->config().mds.size(), cluster->config().servers.size());
    std::printf("config: %s\n", cluster->config_path().c_str());
    if (!mount_point.empty()) std::printf("mounted at %s\n", mount_point.c_str());
    return 0;
  }
  if (*st) return status(dir);
  if (*down) {
    auto cluster = pvfs::LocalCluster::attach(dir);
    if (!cluster) {
      // No pvfs.toml: maybe removed while the cluster ran.
      const pvfs::LeftBehind left = pvfs::stop_left_behind(dir);
      if (left.daemons + left.mounts == 0) return fail(cluster.status());
      std::printf("pvfs cluster in %s is down: stopped %s that still ran from it without its pvfs.toml\n",
                  dir.c_str(), describe(left).c_str());
      return 0;
    }
    if (auto s = cluster->down(); !s.ok()) return fail(s);
    // Daemons whose pid files are gone (run/ removed while they ran), and
    // mounts made by hand.
    const pvfs::LeftBehind left = pvfs::stop_left_behind(cluster->dir(), source_of(*cluster));
    if (left.daemons + left.mounts > 0)
      std::printf("pvfs cluster in %s is down (also stopped %s that its run/ folder did not list)\n",
                  cluster->dir().c_str(), describe(left).c_str());
    else
      std::printf("pvfs cluster in %s is down\n", cluster->dir().c_str());
    return 0;
  }
  return 0;
}
