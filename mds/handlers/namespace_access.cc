// access: whether the caller may read, write or search an inode.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> access(Call& c) {
  auto r = c.req.getAccess();
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.none_or((*s)->access(c.caller, InodeId(r.getIno()), r.getMask()).status());
}

}  // namespace pvfs::mds::handlers
