// rmdir, which also removes an empty file set whose root the directory is.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> rmdir(Call& c) {
  auto r = c.req.getRmdir();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  co_return c.with_parent_attr(
      r.getParent(),
      c.none_or(co_await c.mds.rmdir(**s, c.caller, InodeId(r.getParent()), text(r.getName()), c.now, c.origin)));
}

}  // namespace pvfs::mds::handlers
