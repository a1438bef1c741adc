// getxattr: the value of one extended attribute.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> getxattr(Call& c) {
  auto r = c.req.getGetxattr();
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  auto value = (*s)->getxattr(c.caller, InodeId(r.getIno()), text(r.getName()));
  if (!value) co_return value.status();
  c.reply.setXattr(kj::arrayPtr(reinterpret_cast<const kj::byte*>(value->data()), value->size()));
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
