// Conversions between the plain values (shared/attr.h, shared/layout.h,
// shared/ids.h) and their Cap'n Proto wire forms, the one place both ends
// (daemons, client, tools) convert them. Pure; thread-safe.
// Readers may throw kj::Exception on malformed input; the service dispatch
// catches it (rpc/connection.cc).
#pragma once

#include <string_view>

#include "shared/attr.h"
#include "shared/layout.h"
#include "shared/proto/common.capnp.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"

namespace pvfs::rpc {

// A Cap'n Proto text field as a view (valid while its message is).
inline std::string_view text(capnp::Text::Reader t) { return {t.begin(), t.size()}; }

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

// setattr's change (the request's fields but its inode).
SetAttr from_wire(proto::mds::Request::Setattr::Reader r);
void to_wire(const SetAttr& s, proto::mds::Request::Setattr::Builder b);

DirEntry from_wire(proto::mds::DirEntry::Reader r);
void to_wire(const DirEntry& e, proto::mds::DirEntry::Builder b);

DirPage from_wire(proto::mds::Reply::ReaddirReply::Reader r);
void to_wire(const DirPage& p, proto::mds::Reply::ReaddirReply::Builder b);

FileInfo from_wire(proto::mds::Reply::FileSummary::Reader r);
void to_wire(const FileInfo& f, proto::mds::Reply::FileSummary::Builder b);

FileScan from_wire(proto::mds::Reply::FileList::Reader r);
void to_wire(const FileScan& s, proto::mds::Reply::FileList::Builder b);

ServerInfo from_wire(proto::ServerInfo::Reader r);
void to_wire(const ServerInfo& s, proto::ServerInfo::Builder b);

ObjectId from_wire(proto::storage::ObjectId::Reader r);
void to_wire(ObjectId o, proto::storage::ObjectId::Builder b);

}  // namespace pvfs::rpc
