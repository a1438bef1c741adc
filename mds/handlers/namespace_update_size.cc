// updateSize: a writing client publishes the size and mtime of a file, and
// says when it starts or stops writing it (see MdsService::writer_starts).
#include "mds/handlers/call.h"

#include <sys/stat.h>

namespace pvfs::mds::handlers {

asio::awaitable<Status> update_size(Call& c) {
  auto r = c.req.getUpdateSize();
  if (Status st = check_file_size(r.getSize()); !st.ok()) co_return st;
  auto s = c.at(r.getIno());
  if (!s) co_return s.status();
  const InodeId ino(r.getIno());
  // Nothing to record (a writer only announcing itself): no commit.
  std::optional<uint64_t> blocks;
  if (r.getBlocks() >= 0) blocks = static_cast<uint64_t>(r.getBlocks());
  auto attr = (*s)->getattr(ino);
  if (attr && (!S_ISREG(attr->mode) || r.getSize() > attr->size || r.getTouchMtime() ||
               (blocks && blocks != attr->blocks)))
    attr = (*s)->update_size(ino, r.getSize(), r.getTouchMtime(), c.now, blocks);
  if (attr && r.getWriter() == mp::Request::UpdateSize::Writer::STARTS) c.mds.writer_starts(c.conn, ino);
  if (attr && r.getWriter() == mp::Request::UpdateSize::Writer::STOPS) c.mds.writer_stops(c.conn.get(), ino);
  co_return c.attr_or(std::move(attr));
}

}  // namespace pvfs::mds::handlers
