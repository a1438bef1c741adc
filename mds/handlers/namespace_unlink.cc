// unlink: a name goes; a file losing its last link is handed to the orphan
// collector, unless a client has it open (the caller, or another client
// whose open lease runs: mds/open_leases.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> unlink(Call& c) {
  auto r = c.req.getUnlink();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  auto result = (*s)->unlink(c.caller, InodeId(r.getParent()), text(r.getName()), r.getKeepOpen(), c.now);
  if (!result) co_return result.status();
  if (result->nlink == 0) {
    if (r.getKeepOpen()) c.mds.hold_orphan(result->ino);
    else c.mds.keep_if_open_elsewhere(**s, result->ino, c.conn.get());
  }
  auto u = c.reply.initUnlink();
  u.setIno(result->ino.value);
  u.setNlink(result->nlink);
  c.add_parent_attr(r.getParent());
  c.mds.wake_orphan_collector();
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
