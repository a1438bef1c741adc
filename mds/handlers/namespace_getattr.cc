// getattr: the attributes of one inode.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> getattr(Call& c) {
  const uint64_t ino = c.req.getGetattr().getIno();
  auto s = c.at(ino);
  if (!s) co_return s.status();
  co_return c.attr_or((*s)->getattr(InodeId(ino)));
}

}  // namespace pvfs::mds::handlers
