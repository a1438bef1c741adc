// releaseOrphan: an unlinked file a client held open is closed now; the
// orphan collector deletes its objects.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> release_orphan(Call& c) {
  const uint64_t ino = c.req.getReleaseOrphan().getIno();
  auto s = c.at(ino);
  if (!s) co_return s.status();
  if (Status st = (*s)->release_orphan(InodeId(ino)); !st.ok()) co_return st;
  c.mds.end_orphan_hold(InodeId(ino));
  c.reply.setNone();
  c.mds.wake_orphan_collector();
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
