// open: checks the caller may open an inode as asked; its attributes. An
// unlinked file still open somewhere opens only for a client that holds it.
// A regular file opened starts the client's open lease on it.
#include "mds/handlers/call.h"

#include <sys/stat.h>

namespace pvfs::mds::handlers {

asio::awaitable<Status> open(Call& c) {
  auto r = c.req.getOpen();
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_await c.mds.settle_dead_writer(InodeId(r.getIno()));
  auto attr = (*s)->check_open(c.caller, InodeId(r.getIno()), r.getMask(), r.getHeldHere());
  if (attr && S_ISREG(attr->mode)) c.mds.file_opened(attr->ino, c.conn.get());
  co_return c.attr_or(std::move(attr));
}

}  // namespace pvfs::mds::handlers
