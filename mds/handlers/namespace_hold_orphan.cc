// holdOrphan: a client still has an unlinked file open and renews its hold
// (mds/orphan_holds.h); a client that stops renewing loses the file's data
// one lease later.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> hold_orphan(Call& c) {
  const InodeId ino(c.req.getHoldOrphan().getIno());
  auto s = c.at(ino.value);
  if (!s) co_return s.status();
  auto held = (*s)->orphan_held(ino);
  if (!held) co_return held.status();
  // Its lease lapsed and the collector has it (or is about to delete it).
  if (!*held) co_return Status(Errc::not_found, "the unlinked file is no longer kept");
  c.mds.hold_orphan(ino);
  c.reply.setOrphanLease(static_cast<uint32_t>(c.mds.orphan_lease().count()));
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
