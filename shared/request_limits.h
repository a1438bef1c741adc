// Bounds on request fields that a daemon keeps beyond one request, shared by
// the clients (which cut their values to fit) and the daemons (which refuse
// requests past them with invalid_argument). The frame and message limits
// are in shared/rpc/frame.h; names, symlink targets and xattrs are checked
// by the metadata store (mds/namespace_store.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace pvfs {

// Longest job id a request may carry (bytes; no control characters).
inline constexpr size_t kMaxJobIdBytes = 64;

// The largest file size (st_size is a signed off_t): the MDS refuses a
// size past it with too_big, the client a range reaching past it.
inline constexpr uint64_t kMaxFileBytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Most servers a layout policy may name (and most stripes it may ask
// for): a directory's policy is stored with it and copied into the layout
// of every file made in it.
inline constexpr size_t kMaxStripeCount = 4096;

// Longest "host:port" address (a 253-byte DNS name, ':' and a port, with
// room to spare), in the config and in a storage server's registration.
inline constexpr size_t kMaxAddressBytes = 260;

}  // namespace pvfs
