// mkdir; in the root directory with fileset_per_top_directory, a new file
// set's root.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> mkdir(Call& c) {
  auto r = c.req.getMkdir();
  if (r.getParent() == kRootInode.value && c.mds.config().fileset_per_top_directory)
    co_return c.attr_or(c.mds.mkdir_fileset(c.caller, text(r.getName()), r.getMode(), c.now));
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  co_return c.with_parent_attr(
      r.getParent(), c.attr_or((*s)->mkdir(c.caller, InodeId(r.getParent()), text(r.getName()), r.getMode(), c.now)));
}

}  // namespace pvfs::mds::handlers
