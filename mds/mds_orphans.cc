// The orphan collector: deletes the objects of unlinked files on the storage
// servers, then forgets the files. Works in batches (one remove request per
// server per batch, all servers at once, one LMDB commit per batch) and goes
// through full batches back to back; it pauses only while less than a
// batch is waiting. Before each pass, files held open by a client whose
// lease lapsed are handed to it (mds/orphan_holds.h). Runs on the MDS's
// network thread.
#include <algorithm>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "mds/mds_service.h"
#include "shared/log.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/frame.h"

namespace pvfs::mds {

using std::chrono::milliseconds;

namespace {

// Unlinked files handed to the storage servers at a time. One batch is one
// LMDB read and one commit on the MDS and one request to each server.
constexpr uint32_t kOrphanBatch = 1024;
// Objects per remove request: keeps a request well below the frame limit.
constexpr size_t kObjectsPerRemove = 4096;
// With less than a batch waiting, the collector gathers for this long
// before it deletes: deleting after every unlink of an `rm -rf` would cost
// a round of requests per file.
constexpr milliseconds kOrphanGather{200};
// The longest pause between passes that found only files they could not
// delete.
constexpr milliseconds kOrphanRetryMax{5000};

}  // namespace

void MdsService::wake_orphan_collector() {
  // A full batch is waiting: no reason to gather longer.
  if (++orphans_arrived_ >= kOrphanBatch && orphans_idle_) orphan_timer_.cancel();
}

asio::awaitable<void> MdsService::orphan_loop() {
  milliseconds pause = kOrphanGather;
  while (!stopped_) {
    orphans_arrived_ = 0;
    expire_orphan_holds();
    OrphanPass pass;
    const auto stores = filesets_.stores();  // named: it must outlive the co_awaits below
    for (const auto& store : stores) {
      OrphanPass one = co_await collect_orphans(store);
      if (stopped_) co_return;
      pass.purged += one.purged;
      pass.left += one.left;
      if (!cluster_.moving(store->fileset()) && filesets_.find(store->fileset())) drop_if_detached(*store);
    }
    // A pass deletes every batch it finds, full ones back to back. What was
    // unlinked meanwhile waits for the next pass: at once when that is a
    // batch, else after the gathering time. When nothing could be deleted
    // (a server is down) the pause grows, so a large stuck backlog is not
    // read again five times a second.
    if (orphans_arrived_ >= kOrphanBatch) continue;
    pause = pass.left > 0 && pass.purged == 0 ? std::min(pause * 2, kOrphanRetryMax) : kOrphanGather;
    orphan_timer_.expires_after(pause);
    orphans_idle_ = true;
    asio::error_code ec;
    co_await orphan_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    orphans_idle_ = false;
  }
}

void MdsService::file_opened(InodeId ino, const rpc::Connection* conn) {
  const TimePoint now = clock_.now();
  open_leases_.opened(ino, reinterpret_cast<OpenLeases::Holder>(conn), now);
  if (orphan_holds_.held(ino)) orphan_holds_.hold_until(ino, now + open_leases_.lease());
}

void MdsService::keep_if_open_elsewhere(NamespaceStore& store, InodeId ino, const rpc::Connection* except) {
  const TimePoint now = clock_.now();
  TimePoint until = open_leases_.open_elsewhere_until(ino, reinterpret_cast<OpenLeases::Holder>(except), now);
  // Just loaded here with files in it (a restart, a take-over, a move):
  // clients renew their open leases here within a lease, and until then
  // any of its files may be open somewhere.
  auto adopted = holds_adopted_.find(store.fileset().value);
  if (adopted == holds_adopted_.end() || adopted->second.store.lock().get() != &store ||
      (adopted->second.files && now - adopted->second.at < open_leases_.lease()))
    until = std::max(until, now + open_leases_.lease());
  if (until <= now) return;
  // not_found: it was no regular file, and is gone already.
  if (Status st = store.hold_orphan(ino); !st.ok()) {
    if (st.code() != Errc::not_found)
      spdlog::warn("inode {:#x}: keeping it for the client that has it open failed: {}", ino.value, st.to_string());
    return;
  }
  orphan_holds_.hold_until(ino, until);
}

void MdsService::expire_orphan_holds() {
  const TimePoint now = clock_.now();
  open_leases_.prune(now);
  for (const auto& store : filesets_.stores()) {
    auto& adopted = holds_adopted_[store->fileset().value];
    if (adopted.store.lock() == store) continue;
    auto held = store->held_orphans();
    if (!held) {
      spdlog::error("listing the open unlinked files of file set {} failed: {}", store->fileset().value,
                    held.status().to_string());
      continue;
    }
    for (InodeId ino : *held) orphan_holds_.adopt(ino, now);
    auto inodes = store->inode_count();
    adopted = Adopted{store, now, !inodes || *inodes > 1};  // more than its root
  }
  for (InodeId ino : orphan_holds_.lapsed(now)) {
    const FileSetId set = ino.fileset();
    if (cluster_.moving(set)) continue;  // its new owner gives it a fresh lease
    auto store = filesets_.share(set);
    if (!store) {
      orphan_holds_.forget(ino);  // the set is no longer here
      continue;
    }
    Status st = store->release_orphan(ino);
    if (!st.ok() && st.code() != Errc::not_found) {
      spdlog::warn("inode {:#x}: releasing it after its lease lapsed failed: {}", ino.value, st.to_string());
      continue;
    }
    orphan_holds_.forget(ino);
    if (st.ok()) {
      ++orphan_holds_lapsed_;
      // Closed where it was open, or its client died or was cut off.
      spdlog::debug("inode {:#x}: unlinked, and no client renews a hold on it any more; its data is deleted now",
                    ino.value);
    }
  }
}

asio::awaitable<MdsService::OrphanPass> MdsService::collect_orphans(std::shared_ptr<NamespaceStore> store) {
  const FileSetId set = store->fileset();
  OrphanPass pass;
  std::optional<InodeId> after;
  for (;;) {
    if (stopped_ || cluster_.moving(set)) break;  // a moving file set is purged by its new owner
    auto orphans = store->list_orphans(kOrphanBatch, after);
    if (!orphans) {
      spdlog::error("listing unlinked files of file set {} failed: {}", set.value,
                    orphans.status().to_string());
      break;
    }
    if (orphans->empty()) break;
    after = orphans->back().ino;
    const bool last = orphans->size() < kOrphanBatch;
    const size_t listed = orphans->size();
    std::vector<InodeId> deleted = co_await delete_objects(std::move(*orphans));
    pass.left += listed - deleted.size();
    if (stopped_) break;
    // Its file may have started moving meanwhile: the new owner purges it.
    // The store is held by `store` even if its file set went meanwhile.
    if (cluster_.moving(set) || !filesets_.find(set)) break;
    if (!deleted.empty()) {
      auto purged = store->purge_many(deleted);
      if (!purged) {
        spdlog::warn("forgetting {} deleted files of file set {} failed: {}", deleted.size(), set.value,
                     purged.status().to_string());
        pass.left += deleted.size();
        break;
      }
      pass.purged += *purged;
      orphans_reclaimed_ += *purged;
    }
    if (last) break;
  }
  co_return pass;
}

asio::awaitable<std::vector<InodeId>> MdsService::delete_objects(std::vector<Orphan> orphans) {
  const auto now = clock_.now();
  // Files whose servers are all reachable now; the others wait for a later
  // pass rather than hold this batch up until a timeout.
  std::vector<const Orphan*> ready;
  std::map<ServerId, std::vector<ObjectId>> by_server;
  for (const auto& orphan : orphans) {
    const auto& servers = orphan.layout.servers;
    bool reachable = std::all_of(servers.begin(), servers.end(), [&](ServerId id) {
      return registry_.is_live(id, now) && storage_peer(id) != nullptr;
    });
    if (!reachable) continue;
    ready.push_back(&orphan);
    for (uint32_t i = 0; i < orphan.layout.stripe_count(); ++i)
      by_server[servers[i]].push_back(ObjectId{orphan.ino, i});
  }
  // One request (or a few) per server, all at once; each slot of `failed`
  // belongs to one server and is written by its task only.
  std::vector<ServerId> order;
  auto failed = std::make_shared<std::vector<bool>>(by_server.size(), false);
  std::vector<asio::awaitable<Status>> tasks;
  for (auto& [server, objects] : by_server) {
    order.push_back(server);
    tasks.push_back([](std::shared_ptr<rpc::Peer> peer, std::vector<ObjectId> objects, milliseconds timeout,
                       std::shared_ptr<std::vector<bool>> failed, size_t slot) -> asio::awaitable<Status> {
      for (size_t from = 0; from < objects.size(); from += kObjectsPerRemove) {
        const size_t n = std::min(kObjectsPerRemove, objects.size() - from);
        rpc::OutMessage out;
        auto list =
            out.init_body<proto::storage::Request>().initRemove().initObjects(static_cast<unsigned>(n));
        for (size_t i = 0; i < n; ++i) rpc::to_wire(objects[from + i], list[static_cast<unsigned>(i)]);
        auto reply = co_await peer->call(out, {}, timeout);
        if (!reply) {
          (*failed)[slot] = true;
          co_return Status{};
        }
      }
      co_return Status{};
    }(storage_peer(server), std::move(objects), milliseconds(config_.rpc_timeout_ms), failed,
                                    order.size() - 1));
  }
  (void)co_await rpc::run_all(std::move(tasks));
  std::vector<InodeId> deleted;
  for (const Orphan* orphan : ready) {
    const auto& servers = orphan->layout.servers;
    bool all_gone = std::none_of(servers.begin(), servers.end(), [&](ServerId id) {
      auto at = std::lower_bound(order.begin(), order.end(), id);
      return (*failed)[static_cast<size_t>(at - order.begin())];
    });
    if (all_gone) deleted.push_back(orphan->ino);
  }
  co_return deleted;
}

}  // namespace pvfs::mds
