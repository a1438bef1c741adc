// What an MDS request handler (mds/handlers/*.cc) works with: the request,
// the reply it fills in, who asks, and the MdsService whose parts it runs
// the request against. A handler decodes its request, does the work and
// either fills in the reply and returns ok, or returns the failure (the
// envelope in MdsService::handle replies with it). Handlers run on the
// MDS's network thread; one Call lives for one request.
#pragma once

#include <cstdint>
#include <string_view>

#include <asio.hpp>

#include "mds/mds_service.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/origin.h"

namespace pvfs::mds::handlers {

namespace mp = proto::mds;

struct Call {
  MdsService& mds;
  const std::shared_ptr<rpc::Connection>& conn;
  rpc::InMessage& msg;
  mp::Request::Reader req;
  mp::Reply::Builder reply;
  Caller caller;      // root squashed where [security] root_squash says so
  Timespec now;       // the wall clock when the request arrived
  rpc::Origin origin;  // passed on to other members asked on its behalf

  // The store of the file set `ino` is in. Errors: not_found when this
  // member holds no such file set.
  Result<NamespaceStore*> at(uint64_t ino) const;
  // The reply is `attr`, or its failure is returned.
  Status attr_or(Result<Attr> attr);
  // The reply is none, or `st` is returned.
  Status none_or(Status st);
  // After a change in directory `parent` that succeeded: its attributes as
  // they are now go into the reply's parentAttr, so the client need not ask
  // for them (the kernel does, after every create or unlink). A hint: a
  // failure to read them leaves the field unset.
  void add_parent_attr(uint64_t parent);
  // `st`, after add_parent_attr(parent) when it is ok.
  Status with_parent_attr(uint64_t parent, Status st) {
    if (st.ok()) add_parent_attr(parent);
    return st;
  }
};

// A handler: see the file comment. The table (mds/handlers/table.cc) maps
// each request kind to one.
using Handler = asio::awaitable<Status>(Call&);

// Whether a file may have `size` bytes (setattr, updateSize). Errors:
// too_big past kMaxFileBytes (shared/request_limits.h).
Status check_file_size(uint64_t size);

using rpc::text;

}  // namespace pvfs::mds::handlers
