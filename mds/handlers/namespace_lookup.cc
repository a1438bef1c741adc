// lookup: a name in a directory, with the attributes of another file set's
// root filled in, and the entry's readdir cookie (for the client's statahead).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> lookup(Call& c) {
  auto r = c.req.getLookup();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  uint64_t cookie = 0;
  auto found = (*s)->lookup(c.caller, InodeId(r.getParent()), text(r.getName()), &cookie);
  if (found) c.reply.setEntryCookie(cookie);
  co_return c.attr_or(co_await c.mds.with_root_attr((*s)->fileset(), std::move(found), c.origin));
}

}  // namespace pvfs::mds::handlers
