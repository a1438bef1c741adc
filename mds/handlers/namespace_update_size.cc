// updateSize: a writing client publishes the size and mtime of a file, and
// says when it starts or stops writing it (see MdsService::writer_starts).
// Sizes only grow here, but a writer's size may predate another client's
// truncation (it knew the file longer when it opened it): when the file is
// now shorter than the writer's view began (`base`), the storage servers
// say what is left of its bytes, and no more is taken.
#include "mds/handlers/call.h"

#include <sys/stat.h>

#include <algorithm>

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
  uint64_t size = r.getSize();
  if (attr && S_ISREG(attr->mode) && size > attr->size && r.getBase() > attr->size && attr->layout.valid()) {
    auto held = co_await c.mds.data_on_servers(ino, attr->layout);
    // Unanswered, the writer's size stands, as before this check.
    if (held) size = std::min(size, held->end);
    s = c.at(ino.value);
    if (!s) co_return s.status();
    attr = (*s)->getattr(ino);
  }
  if (attr && (!S_ISREG(attr->mode) || size > attr->size || r.getTouchMtime() ||
               (blocks && blocks != attr->blocks)))
    attr = (*s)->update_size(ino, size, r.getTouchMtime(), c.now, blocks);
  if (attr && r.getWriter() == mp::Request::UpdateSize::Writer::STARTS) c.mds.writer_starts(c.conn, ino);
  if (attr && r.getWriter() == mp::Request::UpdateSize::Writer::STOPS) c.mds.writer_stops(c.conn.get(), ino);
  co_return c.attr_or(std::move(attr));
}

}  // namespace pvfs::mds::handlers
