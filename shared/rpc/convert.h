// Conversions between the plain values (shared/attr.h, shared/layout.h,
// shared/ids.h) and their Cap'n Proto wire forms. Pure; thread-safe.
// Readers may throw kj::Exception on malformed input; the service dispatch
// catches it (rpc/connection.cc).
#pragma once

#include "shared/attr.h"
#include "shared/layout.h"
#include "shared/proto/common.capnp.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"

namespace pvfs::rpc {

Timespec from_wire(proto::Timespec::Reader r);
void to_wire(const Timespec& t, proto::Timespec::Builder b);

Layout from_wire(proto::Layout::Reader r);
void to_wire(const Layout& l, proto::Layout::Builder b);

LayoutPolicy from_wire(proto::LayoutPolicy::Reader r);
void to_wire(const LayoutPolicy& p, proto::LayoutPolicy::Builder b);

Caller from_wire(proto::Caller::Reader r);
void to_wire(const Caller& c, proto::Caller::Builder b);

Attr from_wire(proto::mds::Attr::Reader r);
void to_wire(const Attr& a, proto::mds::Attr::Builder b);

ObjectId from_wire(proto::storage::ObjectId::Reader r);
void to_wire(ObjectId o, proto::storage::ObjectId::Builder b);

}  // namespace pvfs::rpc
