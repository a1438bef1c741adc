// The subcommands of pvfs-ctl (see pvfs-ctl(1)), apart from option parsing
// (utils/ctl/pvfs_ctl.cc). getstripe/setstripe work on a mounted pvfs through
// the virtual xattr user.pvfs.layout; jobs/ping/servers/sched/inject/elevator talk to
// the daemons of a config over the real protocol (utils/common/daemon_probe.h). Each prints results
// on stdout and every error as one line "pvfs-ctl: ..." on stderr, and
// returns the process exit status (0 or 1). Blocking; not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pvfs::ctl {

// How to reach the daemons: the config file (empty: none was given) and the
// connect-and-answer timeout (0: the config's timeouts.connect_ms).
struct DaemonOptions {
  std::string config_path;
  std::chrono::milliseconds timeout{0};
};

// Prints the layout of each path (a file's stripes and servers, or a
// directory's policy). Exit 1 when any path fails.
int getstripe(const std::vector<std::string>& paths);

struct SetstripeOptions {
  std::string path;
  std::optional<uint64_t> stripe_size;  // bytes; unset = cluster default
  std::optional<uint32_t> stripe_count;  // unset = cluster default
  std::string servers;                   // "1,3"; empty = any
  bool reset = false;                    // back to the cluster default
};

// Sets the layout policy of a directory, or the layout of an empty file;
// creates `path` as an empty file with that layout when it does not exist.
int setstripe(const SetstripeOptions& options);

// Makes each of `dirs` (created when missing; it must be empty) the root of
// a new file set and prints its id. Root only. Exit 1 when any fails.
int fileset_create(const std::vector<std::string>& dirs);
// Prints the file set each of `paths` is in. Exit 1 when any fails.
int fileset_show(const std::vector<std::string>& paths);

// Per-job counters from every daemon, summed per job (or, with
// `per_daemon`, one table per daemon). Exit 1 when a daemon did not answer
// (the table then holds the others).
int jobs(const DaemonOptions& options, bool per_daemon);

// Probes every daemon; exit 1 naming those that are not reachable,
// authenticated and who the config says they are.
int ping(const DaemonOptions& options);

// The storage servers the metadata server knows, with their space.
int servers(const DaemonOptions& options);

// The two-choice scheduling state of the storage servers `ids` (empty: all
// in the config), as a table or, with `json`, a JSON array. Exit 1 when an
// id is not in the config (nothing is asked) or naming each server that did
// not answer (the output then holds the others).
int sched(const DaemonOptions& options, const std::vector<uint32_t>& ids, bool json);

// Tells storage server `id` to serve data requests `delay_factor` times
// slower for `seconds` (0: until changed; factor 1 ends a delay) and prints
// one line saying so. Exit 1 when the id is not in the config or the server
// refuses (factors outside 1..1000) or does not answer.
int inject(const DaemonOptions& options, uint32_t id, double delay_factor, uint32_t seconds);

// The elevators of the storage servers `ids` (empty: all in the config), as
// a table or, with `json`, a JSON array; with a `policy` ("obrr" or "fcfs";
// empty: none), each is first switched to it. Exit 1 when an id is not in
// the config (nothing is asked), or naming each server that did not answer
// or refused the policy (the output then holds the others).
int elevator(const DaemonOptions& options, const std::vector<uint32_t>& ids,
             const std::string& policy, bool json);

}  // namespace pvfs::ctl
