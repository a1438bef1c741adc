// scanFiles (pvfs-ctl fsck): one page of this member's regular files, linked
// or orphaned, in inode order over all its file sets.
#include "mds/handlers/call.h"

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> scan_files(Call& c) {
  auto r = c.req.getScanFiles();
  const uint32_t max = r.getMax() == 0 || r.getMax() > 4096 ? 4096 : r.getMax();
  const InodeId after(r.getAfter());
  // File set by file set: inode numbers order by their set first.
  FileScan page;
  bool complete = true;
  for (const auto& store : c.mds.filesets().stores()) {
    if (store->fileset() < after.fileset()) continue;
    if (page.files.size() == max) {
      complete = false;
      break;
    }
    const InodeId from = store->fileset() == after.fileset() ? after : InodeId::make(store->fileset(), 0);
    auto part = store->scan_files(from, max - static_cast<uint32_t>(page.files.size()));
    if (!part) co_return part.status();
    page.files.insert(page.files.end(), part->files.begin(), part->files.end());
    if (!part->eof) {
      complete = false;
      break;
    }
  }
  page.eof = complete;
  rpc::to_wire(page, c.reply.initFiles());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
