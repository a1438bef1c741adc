// readlink: the target of a symbolic link.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> readlink(Call& c) {
  const uint64_t ino = c.req.getReadlink().getIno();
  auto s = c.at(ino);
  if (!s) co_return s.status();
  auto target = (*s)->readlink(InodeId(ino));
  if (!target) co_return target.status();
  c.reply.setReadlink(*target);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
