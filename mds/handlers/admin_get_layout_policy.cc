// getLayoutPolicy (pvfs-ctl layout get): a directory's policy for new files.
#include "mds/handlers/call.h"

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> get_layout_policy(Call& c) {
  const uint64_t ino = c.req.getGetLayoutPolicy().getIno();
  auto s = c.at(ino);
  if (!s) co_return s.status();
  auto policy = (*s)->get_layout_policy(InodeId(ino));
  if (!policy) co_return policy.status();
  rpc::to_wire(*policy, c.reply.initLayoutPolicy());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
