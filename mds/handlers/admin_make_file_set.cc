// makeFileSet (pvfs-ctl fileset create): an empty directory becomes the root
// of a new file set.
#include "mds/handlers/call.h"

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> make_file_set(Call& c) {
  auto made = c.mds.make_fileset(c.caller, InodeId(c.req.getMakeFileSet().getIno()), c.now);
  if (!made) co_return made.status();
  auto f = c.reply.initFileSet();
  f.setParent(made->parent.value);
  f.setName(made->name);
  rpc::to_wire(made->root, f.initRoot());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
