// lookup: a name in a directory, with the attributes of another file set's
// root filled in.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> lookup(Call& c) {
  auto r = c.req.getLookup();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  auto found = (*s)->lookup(c.caller, InodeId(r.getParent()), text(r.getName()));
  co_return c.attr_or(co_await c.mds.with_root_attr((*s)->fileset(), std::move(found), c.origin));
}

}  // namespace pvfs::mds::handlers
