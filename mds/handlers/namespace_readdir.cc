// readdir: one page of a directory (with attributes for readdirplus, those of
// other file sets' roots filled in).
#include "mds/handlers/call.h"

#include <algorithm>

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> readdir(Call& c) {
  auto r = c.req.getReaddir();
  uint32_t max = std::min<uint32_t>(r.getMaxEntries(), 4096);
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  auto page = (*s)->readdir(c.caller, InodeId(r.getIno()), r.getCookie(), max, r.getPlus());
  if (!page) co_return page.status();
  if (r.getPlus()) {
    c.mds.add_root_attrs(*page);
    for (DirEntry& e : page->entries)
      if (e.attr && S_ISREG(e.attr->mode)) e.attr->written_elsewhere = c.mds.written_by_other(e.ino, c.conn.get());
  }
  rpc::to_wire(*page, c.reply.initReaddir());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
