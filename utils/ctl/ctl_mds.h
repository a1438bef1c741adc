// pvfs-ctl mds (see pvfs-ctl(1)): asks every metadata server of a config
// for its view of the MDS cluster (utils/common/mds_status.h), in parallel, and
// prints what utils/ctl/mds_view.h makes of the answers. Blocking; not
// thread-safe.
#pragma once

#include "utils/ctl/ctl_commands.h"

namespace pvfs::ctl {

// Prints the map, the members, the delegate's tuning steps and the moves
// as tables (with `verbose`, each member's file set ids) or, with `json`,
// one JSON object. Exit 1 naming each member that did not answer (the
// output then holds what the others said), or when none did.
int mds(const DaemonOptions& options, bool json, bool verbose);

}  // namespace pvfs::ctl
