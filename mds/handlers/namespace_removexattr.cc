// removexattr: removes one extended attribute.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> removexattr(Call& c) {
  auto r = c.req.getRemovexattr();
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.none_or((*s)->removexattr(c.caller, InodeId(r.getIno()), text(r.getName())));
}

}  // namespace pvfs::mds::handlers
