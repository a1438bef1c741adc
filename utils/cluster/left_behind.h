// Daemons and mounts still running from a local cluster's folder that the
// folder no longer knows of: its run/ files (pids, mount point) or its
// whole pvfs.toml were removed while they ran, as an `rm -rf` of the
// folder does before it fails on the busy mount point. `pvfs-cluster down`
// stops them too, so that "is down" holds.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace pvfs {

struct LeftBehind {
  int daemons = 0;  // pvfs-mds and pvfs-server processes stopped
  int mounts = 0;   // pvfsmount processes stopped (each unmounts first)
};

// The fsname pvfsmount gives its mounts of a cluster by default (its
// first metadata server's address): how the mount table names them.
inline std::string mount_source_of(const std::string& first_mds_address) { return "pvfs:" + first_mds_address; }

// Counts the pvfs-mds, pvfs-server and pvfsmount processes whose command
// line names DIR/pvfs.toml, leaving out the daemons whose pids are in
// `known_pids` and the pvfsmount of `known_mount` (what the folder's run/
// files name). With `source` (mount_source_of(), when the config is
// there to read) the mount table's pvfs mounts of that name count too: a
// hand mount made with a relative config path has no command line that
// names the folder.
LeftBehind find_left_behind(const std::filesystem::path& dir, const std::vector<int>& known_pids,
                            const std::string& known_mount, const std::string& source = {});

// Stops every pvfs-mds, pvfs-server and pvfsmount whose command line names
// DIR/pvfs.toml: pvfsmount first (SIGTERM makes it unmount), then the
// daemons; SIGKILL for any still running 5 s later, and a lazy unmount of a
// mount point a killed pvfsmount left behind. With `source`, every pvfs
// mount of that name is unmounted too (its pvfsmount then exits), before
// the daemons stop.
LeftBehind stop_left_behind(const std::filesystem::path& dir, const std::string& source = {});

}  // namespace pvfs
