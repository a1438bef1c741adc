// Decoding of mds.capnp Reply.ClusterState into utils/common/mds_status.h's plain
// values: one function, apart from the call, so a test can decode a
// message it built. Field access on a malformed message throws
// kj::Exception (the caller catches it). Pure; thread-safe.
#pragma once

#include "shared/proto/mds.capnp.h"
#include "utils/common/mds_status.h"

namespace pvfs {

MdsClusterView cluster_view_from_wire(proto::mds::Reply::ClusterState::Reader state);

}  // namespace pvfs
