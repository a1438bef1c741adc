// setxattr: sets one extended attribute.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> setxattr(Call& c) {
  auto r = c.req.getSetxattr();
  auto value = r.getValue();
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  co_return c.none_or((*s)->setxattr(
      c.caller, InodeId(r.getIno()), text(r.getName()),
      std::string_view(reinterpret_cast<const char*>(value.begin()), value.size()), r.getFlags()));
}

}  // namespace pvfs::mds::handlers
