// What the MDS does so that acknowledged work survives crashes: syncs a
// file set's LMDB environment when a client fsyncs (one sync shared by the
// fsyncs that arrive together: group commit), and, when a client that said
// it writes a file loses its connection, sets the file's size from the
// storage servers (the client died before publishing it). Does not decide
// what a commit writes (NamespaceStore) nor when clients publish sizes
// (fs/client_data.cc). Runs on the network thread; syncs on the sync pool.
#include <sys/stat.h>
#include <time.h>

#include <algorithm>

#include <fmt/format.h>

#include "mds/mds_service.h"
#include "mds/wall_clock.h"
#include "shared/log.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/fan_out.h"

namespace pvfs::mds {

using std::chrono::milliseconds;

namespace {

// How often connections of writers are checked: bounds how long a dead
// client's file shows a stale size.
constexpr milliseconds kWriterCheck{200};

}  // namespace

MdsService::FileSetSync::FileSetSync(asio::io_context& io)
    : wake(io, asio::steady_timer::time_point::max()) {}

asio::awaitable<Status> MdsService::sync_fileset(FileSetId set) {
  auto& slot = syncs_[set.value];
  if (!slot) slot = std::make_shared<FileSetSync>(io_);
  const std::shared_ptr<FileSetSync> sync = slot;  // no reference into syncs_ across an await
  const uint64_t ticket = sync->commits.arrive();
  if (sync->commits.should_start()) {
    sync->commits.start();
    asio::co_spawn(io_, run_syncs(set, sync), asio::detached);
  }
  while (!sync->commits.done(ticket)) {
    asio::error_code ec;
    co_await sync->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  // A later sync than the ticket's also covers this caller: its outcome counts.
  co_return sync->last;
}

asio::awaitable<void> MdsService::run_syncs(FileSetId set, std::shared_ptr<FileSetSync> sync) {
  for (;;) {
    // Held by this pointer while the pool syncs it, even if the set goes.
    // Captured by reference below: a by-value shared_ptr capture passed
    // through run_blocking() reached the pool thread dangling (GCC 12).
    std::shared_ptr<NamespaceStore> store = filesets_.share(set);
    Status st;
    // A set shipped away was synced before it left (cluster/fileset_moves.cc).
    if (store) st = co_await rpc::run_blocking(sync_pool_, [&store] { return store->sync(); });
    sync->commits.finish();
    sync->last = st;
    if (st.ok()) ++fsync_syncs_[set.value];
    else spdlog::error("sync of file set {} for fsync failed: {}", set.value, st.to_string());
    sync->wake.cancel();
    if (!sync->commits.should_start()) break;
    sync->commits.start();
  }
}

void MdsService::writer_starts(const std::shared_ptr<rpc::Connection>& conn, InodeId ino) {
  auto& w = writers_[conn.get()];
  // The address of a connection gone unnoticed, now reused: its files first.
  if (w.conn.lock() != conn) {
    for (InodeId file : w.files) {
      unreconciled_.emplace(file, false);
      forget_writer_of(file, conn.get());
    }
    w.files.clear();
    w.conn = conn;
  }
  if (w.files.insert(ino).second) writers_of_[ino].push_back(conn.get());
}

void MdsService::writer_stops(const rpc::Connection* conn, InodeId ino) {
  auto it = writers_.find(conn);
  if (it == writers_.end()) return;
  if (it->second.files.erase(ino)) forget_writer_of(ino, conn);
  if (it->second.files.empty()) writers_.erase(it);
}

void MdsService::writer_gone(const rpc::Connection* conn) {
  auto it = writers_.find(conn);
  if (it == writers_.end()) return;
  for (InodeId file : it->second.files) {
    unreconciled_.emplace(file, false);
    forget_writer_of(file, conn);
  }
  writers_.erase(it);
}

void MdsService::forget_writer_of(InodeId ino, const rpc::Connection* conn) {
  auto it = writers_of_.find(ino);
  if (it == writers_of_.end()) return;
  std::erase(it->second, conn);
  if (it->second.empty()) writers_of_.erase(it);
}

bool MdsService::written_by_other(InodeId ino, const rpc::Connection* asker) const {
  auto it = writers_of_.find(ino);
  if (it == writers_of_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [asker](const auto* c) { return c != asker; });
}

asio::awaitable<void> MdsService::settle_dead_writer(InodeId ino) {
  if (!unreconciled_.contains(ino)) co_return;
  Status st = co_await reconcile_size(ino);
  if (st.ok()) unreconciled_.erase(ino);
}

asio::awaitable<void> MdsService::writer_loop() {
  while (!stopped_) {
    writer_timer_.expires_after(kWriterCheck);
    asio::error_code ec;
    co_await writer_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) break;
    std::vector<const rpc::Connection*> gone;
    for (const auto& [key, w] : writers_) {
      auto conn = w.conn.lock();
      if (!conn || !conn->is_open()) gone.push_back(key);
    }
    for (const auto* key : gone) writer_gone(key);
    // A copy: the set changes while the servers are asked.
    std::vector<InodeId> todo;
    for (const auto& [ino, warned] : unreconciled_) todo.push_back(ino);
    for (InodeId ino : todo) {
      Status st = co_await reconcile_size(ino);
      if (stopped_) co_return;
      auto it = unreconciled_.find(ino);
      if (it == unreconciled_.end()) continue;
      if (st.ok()) {
        unreconciled_.erase(it);
      } else if (st.code() != Errc::again && !it->second) {
        it->second = true;  // once per file: the retries every tick stay quiet
        spdlog::warn("size of inode {:#x} from the storage servers: {} (trying again until they "
                     "answer)", ino.value, st.to_string());
      }
    }
  }
}

asio::awaitable<Result<MdsService::DataOnServers>> MdsService::data_on_servers(InodeId ino, const Layout& layout) {
  std::vector<uint64_t> ends(layout.stripe_count(), 0);
  std::vector<uint64_t> blocks(layout.stripe_count(), 0);
  std::vector<asio::awaitable<Status>> asks;
  for (uint32_t i = 0; i < layout.stripe_count(); ++i) {
    std::shared_ptr<rpc::Peer> peer = storage_peer(layout.servers[i]);
    if (!peer)
      co_return Status(Errc::unavailable,
                       fmt::format("storage server {} is unknown", layout.servers[i].value));
    asks.push_back([](std::shared_ptr<rpc::Peer> p, InodeId ino, Layout layout, uint32_t index,
                      uint64_t& end, uint64_t& blocks, milliseconds timeout) -> asio::awaitable<Status> {
      rpc::OutMessage out;
      auto o = out.init_body<proto::storage::Request>().initStat();
      o.setIno(ino.value);
      o.setIndex(index);
      auto reply = co_await p->call(out, {}, timeout);
      if (!reply) co_return reply.status();
      // An object whose every piece went elsewhere has no file at home,
      // only redirect entries: dataEnd counts them either way.
      auto stat = (*reply)->body<proto::storage::Reply>().getStat();
      end = file_size_for_object_size(layout, index, std::max(stat.getSize(), stat.getDataEnd()));
      blocks = stat.getBlocks();
      co_return Status{};
    }(peer, ino, layout, i, ends[i], blocks[i], milliseconds(config_.rpc_timeout_ms)));
  }
  if (Status st = co_await rpc::run_all(std::move(asks)); !st.ok()) co_return st;
  DataOnServers held;
  held.end = *std::max_element(ends.begin(), ends.end());
  for (uint64_t b : blocks) held.blocks += b;
  co_return held;
}

asio::awaitable<Status> MdsService::reconcile_size(InodeId ino) {
  if (cluster_.moving(ino.fileset())) co_return Status(Errc::again);
  NamespaceStore* store = filesets_.find(ino);
  if (!store) {
    spdlog::warn("inode {:#x}: its writer died but file set {} is no longer here; its size is "
                 "left as published", ino.value, ino.fileset().value);
    co_return Status{};
  }
  auto attr = store->getattr(ino);
  if (!attr) co_return attr.code() == Errc::not_found ? Status{} : attr.status();
  if (!S_ISREG(attr->mode) || !attr->layout.valid()) co_return Status{};
  const Attr asked = *attr;
  auto held = co_await data_on_servers(ino, attr->layout);
  if (!held) co_return held.status();
  const uint64_t end = held->end;
  // The set may have moved or gone while the servers answered.
  if (cluster_.moving(ino.fileset())) co_return Status(Errc::again);
  store = filesets_.find(ino);
  if (!store) co_return Status{};
  auto now = store->getattr(ino);
  if (!now) co_return now.code() == Errc::not_found ? Status{} : now.status();
  if (end <= now->size) co_return Status{};
  // Changed meanwhile (another client truncated or wrote it): the answers
  // may predate that change, so ask again.
  if (now->size != asked.size || now->mtime != asked.mtime || now->ctime != asked.ctime)
    co_return Status(Errc::again);
  auto grown = store->update_size(ino, end, true, wall_now(clock_), held->blocks);
  if (!grown) co_return grown.status();
  ++sizes_reconciled_;
  spdlog::info("inode {:#x}: its writer's connection ended before it published the size; set it "
               "from the storage servers: {} -> {} bytes", ino.value, now->size, end);
  co_return Status{};
}

}  // namespace pvfs::mds
