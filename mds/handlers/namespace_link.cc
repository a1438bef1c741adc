// link: a new name for an inode, in the same file set.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> link(Call& c) {
  auto r = c.req.getLink();
  if (InodeId(r.getIno()).fileset() != InodeId(r.getNewParent()).fileset())
    co_return Status(Errc::cross_device, "another file set");
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.with_parent_attr(
      r.getNewParent(),
      c.attr_or((*s)->link(c.caller, InodeId(r.getIno()), InodeId(r.getNewParent()), text(r.getNewName()), c.now)));
}

}  // namespace pvfs::mds::handlers
