// Keeping the files this client has open at the MDS, so that their data
// outlives their names as POSIX asks, and no longer than that:
// - a file this client unlinked while open is held under a lease
//   (mds/orphan_holds.h), renewed with holdOrphan, so the data of a file a
//   dead client had open does not stay on the storage servers for good;
// - every file open here has an open lease (mds/open_leases.h), renewed
//   with openFiles, so a file another client removes stays readable and
//   writable here until this client closes it.
// Both loops renew every third of their lease while there is something to
// renew. Runs on the client's io thread.
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

void Client::Impl::open_note() {
  if (open_renewing) return;
  open_renewing = true;
  asio::co_spawn(io, open_loop(alive), asio::detached);
}

namespace {
// Files per openFiles request (the MDS takes up to 4096).
constexpr size_t kOpenFilesPerRequest = 4096;
}  // namespace

asio::awaitable<void> Client::Impl::open_loop(std::shared_ptr<bool> alive_flag) {
  for (;;) {
    const milliseconds lease = open_lease.count() > 0 ? open_lease : milliseconds(config.open_lease_ms);
    co_await pause(std::max(lease / 3, milliseconds(50)));
    if (!*alive_flag) co_return;
    // By file set: each request goes to the member that holds its set.
    std::map<uint16_t, std::vector<uint64_t>> by_set;
    for (const auto& [ino, weak] : open_inodes)
      if (!weak.expired()) by_set[ino.fileset().value].push_back(ino.value);
    if (by_set.empty()) break;
    for (const auto& [set, inos] : by_set) {
      for (size_t from = 0; from < inos.size(); from += kOpenFilesPerRequest) {
        const size_t n = std::min(kOpenFilesPerRequest, inos.size() - from);
        rpc::OutMessage out;
        Credentials nobody;  // named, not a temporary: see lock_loop()
        auto list = begin_mds(out, nobody).initOpenFiles().initInos(static_cast<unsigned>(n));
        for (size_t i = 0; i < n; ++i) list.set(static_cast<unsigned>(i), inos[from + i]);
        auto reply = co_await call_mds(out, true);
        if (!*alive_flag) co_return;
        if (!reply) {
          spdlog::warn("renewing the open leases of {} files in file set {}: {} (a file another node removes "
                       "meanwhile may be deleted under its readers here)",
                       n, set, reply.status().to_string());
          continue;
        }
        auto body = (*reply)->body<mp::Reply>();
        if (body.isOpenFiles() && body.getOpenFiles().getLeaseMs() > 0)
          open_lease = milliseconds(body.getOpenFiles().getLeaseMs());
      }
    }
  }
  if (*alive_flag) open_renewing = false;
}

asio::awaitable<Result<bool>> Client::Impl::gone_at_mds(InodeId ino) {
  rpc::OutMessage out;
  Credentials nobody;
  auto request = begin_mds(out, nobody).initOpenFiles();
  request.initInos(1).set(0, ino.value);
  request.setCheck(true);
  auto reply = co_await call_mds(out, true);
  if (!reply) co_return reply.status();
  auto body = (*reply)->body<mp::Reply>();
  if (!body.isOpenFiles()) co_return Status(Errc::io, "the metadata server answered openFiles with something else");
  co_return body.getOpenFiles().getGone().size() > 0;
}

}  // namespace pvfs
