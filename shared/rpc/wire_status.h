// The one place where status codes cross to and from the wire enum.
// Pure; thread-safe.
#pragma once

#include "shared/proto/common.capnp.h"
#include "shared/status.h"

namespace pvfs::rpc {

proto::Errc to_wire(Errc code);
// Unknown wire values (a newer peer) become Errc::io.
Errc from_wire(proto::Errc code);

}  // namespace pvfs::rpc
