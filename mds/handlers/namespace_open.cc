// open: checks the caller may open an inode as asked; its attributes. An
// unlinked file still open somewhere opens only for a client that holds it.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> open(Call& c) {
  auto r = c.req.getOpen();
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.attr_or((*s)->check_open(c.caller, InodeId(r.getIno()), r.getMask(), r.getHeldHere()));
}

}  // namespace pvfs::mds::handlers
