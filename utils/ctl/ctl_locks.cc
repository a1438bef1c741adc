// pvfs-ctl locks [PATH]: the fcntl, OFD and flock locks the metadata
// servers keep (pvfsmount(8), LOCKING), their holders and waiters, for one
// file on a mount or for the whole cluster.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/locks_view.h"

namespace pvfs::ctl {

namespace {

int locks(const DaemonOptions& options, const std::string& path) {
  uint64_t ino = 0;
  if (!path.empty()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      error("locks: {}: {}", path, std::strerror(errno));
      return 1;
    }
    // Elsewhere its inode number would name some pvfs file, or none.
    if (!on_pvfs(path)) {
      error("locks: {}: not on a pvfs file system", path);
      return 1;
    }
    ino = st.st_ino;
  }
  auto cluster = open_cluster(options, "locks");
  if (!cluster) return 1;
  auto view = locks_status(cluster->config, cluster->key, cluster->timeout, ino);
  if (!view) {
    error("locks: {}", view.status().to_string());
    return 1;
  }
  std::fputs(render_locks(*view, path).c_str(), stdout);
  return view->unreachable.empty() ? 0 : 1;
}

}  // namespace

void add_locks(Commands& commands) {
  auto path = std::make_shared<std::string>();
  auto* command = commands.add(
      "locks",
      "fcntl, OFD and flock locks across the cluster's clients: who holds which range of which file, "
      "and who waits for it, for one file on a mount (PATH) or for every file",
      [path](const DaemonOptions& d) { return locks(d, *path); });
  commands.add_daemon_options(command);
  command->add_option("path", *path, "a file on a pvfs mount [every file]");
}

}  // namespace pvfs::ctl
