// Bounds on request fields that a daemon keeps beyond one request, shared by
// the clients (which cut their values to fit) and the daemons (which refuse
// requests past them with invalid_argument). The frame and message limits
// are in shared/rpc/frame.h; names, symlink targets and xattrs are checked
// by the metadata store (mds/namespace_store.h).
#pragma once

#include <cstddef>

namespace pvfs {

// Longest job id a request may carry (bytes; no control characters).
inline constexpr size_t kMaxJobIdBytes = 64;

// Most servers a layout policy may name (and most stripes it may ask
// for): a directory's policy is stored with it and copied into the layout
// of every file made in it.
inline constexpr size_t kMaxStripeCount = 4096;

// Longest "host:port" address (a 253-byte DNS name, ':' and a port, with
// room to spare), in the config and in a storage server's registration.
inline constexpr size_t kMaxAddressBytes = 260;

}  // namespace pvfs
