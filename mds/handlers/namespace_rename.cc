// rename within one file set (between file sets as between file systems:
// cross_device, and mv copies). A file replaced by its last link becomes an orphan.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> rename(Call& c) {
  auto r = c.req.getRename();
  if (InodeId(r.getParent()).fileset() != InodeId(r.getNewParent()).fileset())
    co_return Status(Errc::cross_device, "another file set");
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  auto result = (*s)->rename(c.caller, InodeId(r.getParent()), text(r.getName()), InodeId(r.getNewParent()),
                             text(r.getNewName()), r.getFlags(), c.now, r.getKeepOpen());
  if (!result) co_return result.status();
  if (result->replaced_orphan) {
    if (r.getKeepOpen()) c.mds.hold_orphan(*result->replaced_orphan);
    else c.mds.keep_if_open_elsewhere(**s, *result->replaced_orphan, c.conn.get());
  }
  c.reply.setNone();
  c.mds.wake_orphan_collector();
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
