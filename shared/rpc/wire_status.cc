#include "shared/rpc/wire_status.h"

namespace pvfs::rpc {

// The wire enum is declared in the same order as Errc; these asserts keep
// the two in step (one per end of the range is enough to catch a shift).
static_assert(static_cast<int>(proto::Errc::NOT_FOUND) == static_cast<int>(Errc::not_found));
static_assert(static_cast<int>(proto::Errc::STALE_MAP) == static_cast<int>(Errc::stale_map));
static_assert(static_cast<int>(proto::Errc::STALE) == static_cast<int>(Errc::stale));

proto::Errc to_wire(Errc code) { return static_cast<proto::Errc>(code); }

Errc from_wire(proto::Errc code) {
  auto v = static_cast<uint16_t>(code);
  if (v > static_cast<uint16_t>(Errc::kLast)) return Errc::io;
  return static_cast<Errc>(v);
}

}  // namespace pvfs::rpc
