// pvfs-ctl: the administrator's tool (see pvfs-ctl(1)). Each subcommand
// declares its options and what runs it beside its implementation
// (utils/ctl/command.h); this file lists them in the order of --help.
// Exit status: 0 success, 1 failure (one "pvfs-ctl: ..." line per error),
// 2 bad usage. -c and -t may come before the subcommand or after it.
#include <CLI/CLI.hpp>

#include "utils/ctl/command.h"

namespace {

constexpr void (*kCommands[])(pvfs::ctl::Commands&) = {
    pvfs::ctl::add_getstripe, pvfs::ctl::add_setstripe, pvfs::ctl::add_fileset,  pvfs::ctl::add_jobs,
    pvfs::ctl::add_health,    pvfs::ctl::add_ping,      pvfs::ctl::add_servers,   pvfs::ctl::add_sched,    pvfs::ctl::add_inject,
    pvfs::ctl::add_elevator,  pvfs::ctl::add_genconfig, pvfs::ctl::add_fsck,     pvfs::ctl::add_stats,
    pvfs::ctl::add_top,       pvfs::ctl::add_loglevel,  pvfs::ctl::add_mds,      pvfs::ctl::add_iosched,
    pvfs::ctl::add_iostep,    pvfs::ctl::add_qos,       pvfs::ctl::add_client,    pvfs::ctl::add_locks,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pvfs-ctl: administer a pvfs cluster: file and directory layouts, per-job\n"
               "counters, the health of the daemons, the storage servers' write\n"
               "scheduling (redirects, fragments, injected delays), their disk\n"
               "elevators, and how the metadata servers share the file sets. See pvfs-ctl(1).",
               "pvfs-ctl"};
  app.require_subcommand(1);
  app.set_version_flag("--version", PVFS_VERSION);
  pvfs::ctl::Commands commands(app);
  for (auto add : kCommands) add(commands);
  return commands.run(argc, argv);
}
