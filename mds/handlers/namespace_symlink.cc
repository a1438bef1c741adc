// symlink: a new symbolic link.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> symlink(Call& c) {
  auto r = c.req.getSymlink();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  co_return c.with_parent_attr(
      r.getParent(),
      c.attr_or((*s)->symlink(c.caller, InodeId(r.getParent()), text(r.getName()), text(r.getTarget()), c.now)));
}

}  // namespace pvfs::mds::handlers
