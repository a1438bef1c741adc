// The MDS's table from request kind to handler (mds/handlers/table.cc).
// Read by MdsService::handle on the network thread; immutable.
#pragma once

#include <span>

#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

struct Entry {
  mp::Request::Which kind;
  Handler* handler;
  // Whether a routed request's latency is a sample of this member's load
  // for placement (ANU tuning, mds/cluster/).
  bool load_sample = true;
  // Whether the time it waits unanswered is this member's backlog (ANU
  // tuning): not for a request that waits for other clients (a held
  // F_SETLKW), which says nothing of this member's load.
  bool backlog = true;
  // Whether it adds to the namespace (a name, a link, an xattr): refused
  // with no_space while the data directory's disk has less free than
  // [mds_tuning] reserve_mb, which removals keep (mds/mds_space.cc).
  bool needs_room = false;
};

// Every request kind this MDS serves, each once. A kind not in it (a newer
// peer's) is answered not_supported.
std::span<const Entry> table();

}  // namespace pvfs::mds::handlers
