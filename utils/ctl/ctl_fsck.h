// pvfs-ctl fsck (see pvfs-ctl(1)): walks the metadata server and every
// storage server of a config (utils/ctl/fsck.h), judges what they list
// (utils/ctl/fsck_check.h), prints one line per problem and a summary, and with
// `repair` fixes what is safe, saying what it did. Progress goes to
// standard error (utils/common/progress.h). Blocking; not thread-safe.
#pragma once

#include <chrono>

#include "utils/ctl/ctl_commands.h"

namespace pvfs::ctl {

struct FsckOptions {
  bool repair = false;
  // Fragments without a redirect entry younger than this are writes in flight.
  std::chrono::seconds grace{60};
};

// Exit status: 0 when nothing is wrong or every problem was repaired; 1
// when problems remain, a repair failed or a daemon did not answer (named
// on stderr; the servers that answered are still checked).
int fsck(const DaemonOptions& options, const FsckOptions& fsck_options);

}  // namespace pvfs::ctl
