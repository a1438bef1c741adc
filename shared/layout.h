// Striping arithmetic: how a byte range of a file maps onto objects and back.
// Pure functions over plain values; no I/O. Used by the client (fs/), the
// storage tools and the simulator.
#pragma once

#include <cstdint>
#include <vector>

#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs {

inline constexpr uint64_t kDefaultStripeSize = uint64_t{1} << 20;

// Where one regular file's bytes live. Stripe i (bytes [i*S, (i+1)*S) of the
// file) is object i mod n, stored on servers[i mod n] at object offset
// (i / n) * S + (offset within the stripe).
struct Layout {
  uint64_t stripe_size = kDefaultStripeSize;
  std::vector<ServerId> servers;

  uint32_t stripe_count() const { return static_cast<uint32_t>(servers.size()); }
  bool valid() const { return stripe_size > 0 && !servers.empty(); }
  bool operator==(const Layout&) const = default;
};

// What a directory hands down to files created in it; 0/empty = default.
struct LayoutPolicy {
  uint64_t stripe_size = 0;
  uint32_t stripe_count = 0;          // 0 = all live servers
  std::vector<ServerId> servers;      // explicit choice; empty = pick at random
  bool operator==(const LayoutPolicy&) const = default;
};

// A contiguous part of a file range that lies in one object.
struct Piece {
  uint32_t object_index = 0;   // which object (and which entry of Layout::servers)
  uint64_t object_offset = 0;  // where in the object
  uint64_t file_offset = 0;    // where in the file
  uint64_t length = 0;
  uint64_t buffer_offset = 0;  // where in the caller's buffer (file_offset - range start)
};

// Splits [offset, offset+length) into pieces in file order. Consecutive
// stripes of one object that are contiguous in it (stripe count 1) are merged.
// Requires layout.valid().
std::vector<Piece> split_range(const Layout& layout, uint64_t offset, uint64_t length);

// How many bytes object `index` holds when the file is `file_size` long:
// the size a truncate must give that object.
uint64_t object_size_for_file_size(const Layout& layout, uint32_t index, uint64_t file_size);
// The inverse: the smallest file size whose object `index` holds
// `object_bytes` bytes, i.e. the file offset just past the last byte of
// that object (0 when it holds none). Requires layout.valid().
uint64_t file_size_for_object_size(const Layout& layout, uint32_t index, uint64_t object_bytes);

// Resolves a directory's policy into a concrete layout for a new file.
// `live` lists the servers that may be used (in id order), `defaults` the
// cluster defaults, `random_start` any number (the caller's random draw) used
// to pick the first server. Returns an empty layout when no server is live.
Layout choose_layout(const LayoutPolicy& policy, const LayoutPolicy& defaults,
                     const std::vector<ServerId>& live, uint64_t random_start);

// Whether `policy` can be met by a cluster whose storage servers are
// `cluster` (any order): each server it lists must be one of them and be
// listed once, and its stripe count may not exceed the servers it could
// stripe over (those listed, else the whole cluster). A policy that passes
// may still be cut to the live servers when a file is created.
// Errors: invalid_argument, with a message naming the value at fault.
Status check_policy(const LayoutPolicy& policy, const std::vector<ServerId>& cluster);

}  // namespace pvfs
