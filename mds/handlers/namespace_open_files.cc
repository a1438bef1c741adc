// openFiles: a client still has these files open; renews its open lease on
// each (mds/open_leases.h), which keeps a file another client removed.
// With `check`, also names those that are gone: deleted, or unlinked and no
// longer kept (a reader then gets ESTALE rather than the holes of deleted
// objects).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> open_files(Call& c) {
  auto r = c.req.getOpenFiles();
  auto inos = r.getInos();
  if (inos.size() == 0) co_return Status(Errc::invalid_argument, "openFiles names no file");
  if (inos.size() > 4096) co_return Status(Errc::invalid_argument, "openFiles names more than 4096 files");
  auto s = c.at(inos[0]);
  if (!s) co_return s.status();
  const FileSetId set = InodeId(inos[0]).fileset();
  std::vector<uint64_t> gone;
  for (uint64_t value : inos) {
    const InodeId ino(value);
    if (ino.fileset() != set) continue;  // the client groups them by file set
    c.mds.file_opened(ino, c.conn.get());
    if (!r.getCheck()) continue;
    auto held = (*s)->orphan_held(ino);
    if (held && *held) continue;
    if (held || (*s)->getattr(ino).code() == Errc::not_found) gone.push_back(value);  // released, or deleted
  }
  auto reply = c.reply.initOpenFiles();
  reply.setLeaseMs(static_cast<uint32_t>(c.mds.open_lease().count()));
  auto list = reply.initGone(static_cast<unsigned>(gone.size()));
  for (unsigned i = 0; i < gone.size(); ++i) list.set(i, gone[i]);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
