// unlink: a name goes; a file losing its last link (unless a client keeps it
// open) is handed to the orphan collector.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> unlink(Call& c) {
  auto r = c.req.getUnlink();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  auto result = (*s)->unlink(c.caller, InodeId(r.getParent()), text(r.getName()), r.getKeepOpen(), c.now);
  if (!result) co_return result.status();
  if (r.getKeepOpen() && result->nlink == 0) c.mds.hold_orphan(result->ino);
  auto u = c.reply.initUnlink();
  u.setIno(result->ino.value);
  u.setNlink(result->nlink);
  c.add_parent_attr(r.getParent());
  c.mds.wake_orphan_collector();
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
