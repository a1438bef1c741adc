// setattr: chmod, chown, truncate and utimes of one inode.
#include "mds/handlers/call.h"

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> setattr(Call& c) {
  auto r = c.req.getSetattr();
  SetAttr change;
  change.mask = r.getMask();
  change.mode = r.getMode();
  change.uid = r.getUid();
  change.gid = r.getGid();
  change.size = r.getSize();
  change.atime = rpc::from_wire(r.getAtime());
  change.mtime = rpc::from_wire(r.getMtime());
  if (change.mask & kSetSize)
    if (Status st = check_file_size(change.size); !st.ok()) co_return st;
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.attr_or((*s)->setattr(c.caller, InodeId(r.getIno()), change, c.now));
}

}  // namespace pvfs::mds::handlers
