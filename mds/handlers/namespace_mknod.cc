// mknod: a regular file (create, with the layout its directory's policy
// chooses), FIFO, socket or device.
#include "mds/handlers/call.h"

#include <sys/stat.h>

namespace pvfs::mds::handlers {

asio::awaitable<Status> mknod(Call& c) {
  auto r = c.req.getMknod();
  auto s = c.at(r.getParent());
  if (!s) co_return s.status();
  Layout layout;
  if (S_ISREG(r.getMode())) {
    auto chosen = c.mds.layout_for_new_file(**s, InodeId(r.getParent()));
    if (!chosen) co_return chosen.status();
    layout = std::move(*chosen);
  }
  auto made = (*s)->mknod(c.caller, InodeId(r.getParent()), text(r.getName()), r.getMode(), r.getRdev(), layout,
                          c.now);
  // A create: the client has the new file open.
  if (made && S_ISREG(made->mode)) c.mds.file_opened(made->ino, c.conn.get());
  co_return c.with_parent_attr(r.getParent(), c.attr_or(std::move(made)));
}

}  // namespace pvfs::mds::handlers
