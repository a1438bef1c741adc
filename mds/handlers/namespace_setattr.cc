// setattr: chmod, chown, truncate and utimes of one inode.
#include "mds/handlers/call.h"

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> setattr(Call& c) {
  auto r = c.req.getSetattr();
  const SetAttr change = rpc::from_wire(r);
  if (change.mask & kSetSize)
    if (Status st = check_file_size(change.size); !st.ok()) co_return st;
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.attr_or((*s)->setattr(c.caller, InodeId(r.getIno()), change, c.now));
}

}  // namespace pvfs::mds::handlers
