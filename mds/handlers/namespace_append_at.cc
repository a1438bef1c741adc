// appendAt: where an O_APPEND write's bytes go. The kernel of each client
// node appends at the size it has cached, so two nodes appending to one
// file would write over each other's lines; pvfsmount asks here instead.
// The answer is the end of the file as this MDS knows it, grown to the
// sender's known size and, while another client writes the file without
// appending (its bytes may be past the size it published), to the end of
// the data the storage servers hold. The size is grown past the new bytes
// in the same step, before the reply, so the next append lands after them
// whoever sends it. The reservation is committed: after an MDS restart the
// next append still lands after every one answered before.
#include "mds/handlers/call.h"

#include <sys/stat.h>

#include <algorithm>
#include <optional>

namespace pvfs::mds::handlers {

asio::awaitable<Status> append_at(Call& c) {
  auto r = c.req.getAppendAt();
  const InodeId ino(r.getIno());
  const uint64_t length = r.getLength();
  if (length == 0) co_return Status(Errc::invalid_argument, "an append of 0 bytes");
  auto s = c.at(ino.value);
  if (!s) co_return s.status();
  auto attr = (*s)->getattr(ino);
  if (!attr) co_return attr.status();
  if (S_ISDIR(attr->mode)) co_return Status(Errc::is_dir);
  if (!S_ISREG(attr->mode)) co_return Status(Errc::invalid_argument, "an append to a non-regular file");
  // A writer that died left its size to be set from the servers first.
  co_await c.mds.settle_dead_writer(ino);
  uint64_t end = r.getKnownSize();
  if (c.mds.written_by_other(ino, c.conn.get()) && attr->layout.valid()) {
    auto held = co_await c.mds.data_on_servers(ino, attr->layout);
    if (!held) co_return held.status();
    end = std::max(end, held->end);
  }
  // From here to the commit nothing waits: appends answered meanwhile have
  // grown the size already, and this one lands after them.
  s = c.at(ino.value);
  if (!s) co_return s.status();
  auto now = (*s)->getattr(ino);
  if (!now) co_return now.status();
  end = std::max(end, now->size);
  if (end + length < end) co_return Status(Errc::too_big);
  if (Status st = check_file_size(end + length); !st.ok()) co_return st;
  auto grown = (*s)->update_size(ino, end + length, true, c.now, std::nullopt);
  if (!grown) co_return grown.status();
  c.reply.setAppendAt(end);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
