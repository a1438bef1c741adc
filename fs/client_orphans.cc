// Keeping unlinked files this client has open: the MDS holds each under a
// lease (mds/orphan_holds.h), so the data of a file a dead client had open
// does not stay on the storage servers for good; this client renews its
// holds every third of the lease while any such file is open. Runs on the
// client's io thread.
#include "fs/client_impl.h"
#include "shared/log.h"

namespace pvfs {

namespace mp = proto::mds;

void Client::Impl::orphan_note() {
  if (orphan_renewing) return;
  orphan_renewing = true;
  asio::co_spawn(io, orphan_loop(alive), asio::detached);
}

asio::awaitable<void> Client::Impl::orphan_loop(std::shared_ptr<bool> alive_flag) {
  for (;;) {
    const milliseconds lease = orphan_lease.count() > 0 ? orphan_lease : milliseconds(config.orphan_lease_ms);
    co_await pause(std::max(lease / 3, milliseconds(50)));
    if (!*alive_flag) co_return;
    std::vector<InodeId> held;
    for (const auto& [ino, weak] : open_inodes) {
      auto state = weak.lock();
      if (state && state->unlinked && !state->hold_lost) held.push_back(ino);
    }
    if (held.empty()) break;
    for (InodeId ino : held) {
      rpc::OutMessage out;
      Credentials nobody;  // named, not a temporary: see lock_loop()
      begin_mds(out, nobody).initHoldOrphan().setIno(ino.value);
      auto reply = co_await call_mds(out, true);
      if (!*alive_flag) co_return;
      if (reply) {
        auto body = (*reply)->body<mp::Reply>();
        if (body.isOrphanLease() && body.getOrphanLease() > 0) orphan_lease = milliseconds(body.getOrphanLease());
        continue;
      }
      if (reply.code() == Errc::not_found) {
        // Gone: the MDS heard nothing from this client for a whole lease.
        // Reads of it fail with ESTALE from now on (Client::read_buffers).
        if (auto state = open_state(ino)) state->hold_lost = true;
        spdlog::warn("inode {:#x}: unlinked and still open here, but the metadata server no longer keeps "
                     "it (this client could not renew its hold for a whole lease)",
                     ino.value);
        continue;
      }
      spdlog::warn("inode {:#x}: renewing the hold on this unlinked open file: {} (its data goes if this "
                   "lasts a lease)",
                   ino.value, reply.status().to_string());
    }
  }
  if (*alive_flag) orphan_renewing = false;
}

}  // namespace pvfs
