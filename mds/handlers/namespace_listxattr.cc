// listxattr: the names of an inode's extended attributes.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> listxattr(Call& c) {
  const uint64_t ino = c.req.getListxattr().getIno();
  auto s = c.at(ino);
  if (!s) co_return s.status();
  auto names = (*s)->listxattr(c.caller, InodeId(ino));
  if (!names) co_return names.status();
  auto list = c.reply.initXattrNames(static_cast<unsigned>(names->size()));
  for (size_t i = 0; i < names->size(); ++i) list.set(i, (*names)[i]);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
