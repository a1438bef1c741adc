// Which file set a metadata request concerns: the client sends it to the
// member of the MDS cluster that owns that set, and the member checks it is
// the owner before serving it. One function for both sides, so they cannot
// disagree. Pure; thread-safe.
#pragma once

#include <optional>

#include "shared/ids.h"
#include "shared/proto/mds.capnp.h"

namespace pvfs::rpc {

// The file set of the inode a request names first (the parent for
// operations on a name, the inode otherwise; for link, the new parent).
// nullopt for requests any member answers (status, getServers, statfs,
// metrics, scans, the cluster's own messages).
std::optional<FileSetId> route_of(proto::mds::Request::Reader req);

}  // namespace pvfs::rpc
