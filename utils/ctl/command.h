// How pvfs-ctl's subcommands declare themselves. Each one has an `add_...`
// function, beside its implementation, that declares its name, help text
// and options on the program's Commands and says what runs it once the
// command line is parsed; utils/ctl/pvfs_ctl.cc lists them in the order of
// --help. Adding a subcommand: one such function, declared at the end of
// this file, and one entry in that list. (A list, not registration by
// static constructors: no globals, and the order of --help is written down.)
// Not thread-safe; one Commands per process.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "utils/ctl/ctl_commands.h"

namespace pvfs::ctl {

// Runs a parsed subcommand with the daemon options (-c, -t, $PVFS_CONFIG)
// and returns the process exit status.
using Run = std::function<int(const DaemonOptions&)>;

class Commands {
 public:
  // Gives `app` the daemon options too, so that they may come before the
  // subcommand (`pvfs-ctl -c pvfs.toml ping`, as lctl and beegfs-ctl users
  // type them) as well as after it.
  explicit Commands(CLI::App& app);

  // Declares the subcommand `name`; `run` runs it if it is the one chosen.
  CLI::App* add(const std::string& name, const std::string& description, Run run);
  // Gives `command` the options of the commands that talk to daemons:
  // -c/--config and -t/--timeout.
  void add_daemon_options(CLI::App* command);

  // Parses the command line and runs the chosen subcommand: its exit status;
  // 0 after --help or --version; 2 on bad usage, with one line
  // "pvfs-ctl: ... (see pvfs-ctl --help)" on stderr (an unknown command
  // also says which known one it resembles).
  int run(int argc, char** argv);

 private:
  CLI::App& app_;
  DaemonOptions daemon_;
  unsigned timeout_ms_ = 0;
  std::vector<std::pair<CLI::App*, Run>> commands_;
};

// Option checks that several subcommands use: "4M"-style sizes (the option
// gets bytes), and server id lists ("1,3,5").
CLI::Validator size_transform();
CLI::Validator server_list_check();
// A storage server named as its id ("3") or as the other commands and the
// logs name it ("server3"); the option gets the id.
CLI::Validator server_name_transform();

// The subcommands, in the order of --help.
void add_getstripe(Commands& commands);   // ctl_commands.cc
void add_setstripe(Commands& commands);   // ctl_commands.cc
void add_fileset(Commands& commands);     // ctl_commands.cc
void add_jobs(Commands& commands);        // ctl_commands.cc
void add_ping(Commands& commands);        // ctl_commands.cc
void add_servers(Commands& commands);     // ctl_commands.cc
void add_sched(Commands& commands);       // ctl_commands.cc
void add_inject(Commands& commands);      // ctl_commands.cc
void add_elevator(Commands& commands);    // ctl_commands.cc
void add_genconfig(Commands& commands);   // ctl_commands.cc
void add_fsck(Commands& commands);        // ctl_fsck.cc
void add_stats(Commands& commands);       // ctl_metrics.cc
void add_top(Commands& commands);         // ctl_metrics.cc
void add_loglevel(Commands& commands);    // ctl_metrics.cc
void add_mds(Commands& commands);         // ctl_mds.cc
void add_iosched(Commands& commands);     // ctl_iosched.cc
void add_iostep(Commands& commands);      // ctl_iosched.cc
void add_health(Commands& commands);      // ctl_health.cc
void add_client(Commands& commands);      // ctl_client.cc
void add_locks(Commands& commands);       // ctl_locks.cc
void add_qos(Commands& commands);         // ctl_qos.cc

}  // namespace pvfs::ctl
