// MdsCluster: moving file sets. A member that holds a file set the map
// gives to another stops serving it (admit() says stale_map), waits for
// the requests in progress on it, flushes it, and ships its LMDB file in
// chunks; the new owner writes them beside its own sets, syncs, and only
// then opens and serves the set, after which the old owner deletes its
// copy. A failed member's sets are copied from its data directory by the
// members they now hash to (the failover storage, see pvfs-mds(8)), each
// under the set's lock (mds/fileset_lock.h): a member that is alive, even
// paused, keeps its sets until it lets go of them.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "mds/cluster/mds_cluster.h"
#include "mds/fileset_lock.h"
#include "mds/wall_clock.h"
#include "shared/buffer.h"
#include "shared/log.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/message.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;

namespace {

constexpr uint64_t kChunkBytes = uint64_t{4} << 20;
constexpr const char* kDataFile = "data.mdb";

uint32_t ms_since(const Clock& clock, SteadyTime t) {
  return static_cast<uint32_t>(std::chrono::duration_cast<milliseconds>(clock.now() - t).count());
}

std::string errno_text(const std::string& what) {
  return fmt::format("{}: {}", what, std::strerror(errno));
}

// Reads up to `max` bytes of `file` at `offset`.
Result<Buffer> read_chunk(const std::filesystem::path& file, uint64_t offset, uint64_t max) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status(Errc::io, errno_text("open " + file.string()));
  Buffer buf(max);
  size_t got = 0;
  while (got < max) {
    ssize_t n = ::pread(fd, buf.data() + got, max - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      ::close(fd);
      return Status(Errc::io, errno_text("read " + file.string()));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  buf.resize(got);
  return buf;
}

// Writes `data` at `offset` of `file` (created if needed); fsyncs when `sync`.
Status write_chunk(const std::filesystem::path& file, uint64_t offset, std::span<const std::byte> data,
                   bool sync) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status(Errc::io, errno_text("open " + file.string()));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      Status st(errno == ENOSPC ? Errc::no_space : Errc::io, errno_text("write " + file.string()));
      ::close(fd);
      return st;
    }
    done += static_cast<size_t>(n);
  }
  if (sync && ::fsync(fd) != 0) {
    Status st(Errc::io, errno_text("fsync " + file.string()));
    ::close(fd);
    return st;
  }
  ::close(fd);
  return {};
}

// Makes `dir`'s new entries durable.
void sync_dir(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

asio::awaitable<void> MdsCluster::reconcile_loop() {
  while (!stopped_) {
    reconcile_wanted_ = false;
    // First the file sets of members that left the map, which nobody
    // serves: taken over from their data dirs (once a member that was
    // alive when it left, paused or cut off, lets go of their locks).
    for (const auto& m : config_.mds) {
      if (stopped_) co_return;
      if (MdsId(m.id) != self_ && !map_.contains(MdsId(m.id)) && fence_ == Fence::serving)
        co_await take_over(MdsId(m.id));
    }
    const std::vector<uint16_t> held = filesets_.ids();  // named: it outlives the co_awaits below
    for (uint16_t set : held) {
      if (stopped_) co_return;
      if (fence_ != Fence::serving || !filesets_.has(FileSetId(set))) break;
      MdsId to = owner(set);
      // Shipped with the answer lost: only the member it went to can say
      // whether it has it, whatever the map says now.
      if (auto it = ship_to_.find(set); committed_.count(set) && it != ship_to_.end()) to = it->second;
      if (to == self_) continue;
      co_await ship(set, to);
    }
    if (reconcile_wanted_) continue;
    reconcile_timer_.expires_after(milliseconds(config_.heartbeat_interval_ms));
    asio::error_code ec;
    co_await reconcile_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<bool> MdsCluster::ship(uint16_t set, MdsId to) {
  const auto started = clock_.now();
  if (!filesets_.has(FileSetId(set))) co_return false;
  ++shipping_;
  struct Done {
    int& n;
    ~Done() { --n; }
  } done{shipping_};
  leaving_.insert(set);
  // Requests already admitted finish first; no new ones are admitted.
  for (int i = 0; in_flight_[set] > 0; ++i) {
    asio::steady_timer t(io_, milliseconds(2));
    asio::error_code ec;
    co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (i > 5000) {
      spdlog::warn("file set {}: requests still in progress after 10 s; not moving it now", set);
      leaving_.erase(set);
      co_return false;
    }
  }
  if (before_leaving) co_await before_leaving(FileSetId(set));
  auto abandon = [&](const Status& why) {
    if (!committed_.count(set)) leaving_.erase(set);  // nothing was handed over: serve it again if ours
    spdlog::warn("moving file set {} to mds {}: {} (will retry)", set, to.value, why.to_string());
    remember_move({set, self_, to, clock_.unix_ms(), 0, ms_since(clock_, started), why.to_string()});
    return false;
  };
  // Looked up after the wait, and held: the set may be closed meanwhile
  // (deleted, or lost by a fence) and this keeps using it across waits.
  const std::shared_ptr<NamespaceStore> store = filesets_.shared(FileSetId(set));
  if (!store) {
    if (!committed_.count(set)) leaving_.erase(set);
    co_return false;
  }
  // No write runs on the set from here: flushed, its file is a consistent copy.
  Status synced = co_await rpc::run_blocking(disk_pool_, [s = store.get()] { return s->sync(); });
  if (!synced.ok()) co_return abandon(synced);
  if (filesets_.find(FileSetId(set)) != store.get()) co_return abandon(Status(Errc::again, "closed meanwhile"));
  const auto file = filesets_.dir_of(FileSetId(set)) / kDataFile;
  std::error_code ec;
  const uint64_t total = std::filesystem::file_size(file, ec);
  if (ec) co_return abandon(Status(Errc::io, "size of " + file.string() + ": " + ec.message()));
  // A copy, not a reference into ship_ids_: it is used across awaits.
  uint64_t& stored_id = ship_ids_[set];
  if (!committed_.count(set) || stored_id == 0) stored_id = rng_() | 1;
  const uint64_t ship_id = stored_id;
  uint64_t offset = 0;
  for (;;) {
    const uint64_t want = std::min(kChunkBytes, total - offset);
    auto chunk = co_await rpc::run_blocking(disk_pool_, [&] { return read_chunk(file, offset, want); });
    if (!chunk) co_return abandon(chunk.status());
    if (chunk->size() != want) co_return abandon(Status(Errc::io, file.string() + " changed while shipping"));
    const bool last = offset + want == total;
    rpc::OutMessage out;
    auto req = out.init_body<mp::Request>();
    req.initCaller();
    auto c = req.initShipFileSet();
    c.setSet(set);
    c.setShipId(ship_id);
    c.setOffset(offset);
    c.setTotalBytes(total);
    c.setLast(last);
    if (last) {
      committed_.insert(set);
      ship_to_[set] = to;
    }
    auto reply = co_await peer(to).call(out, chunk->span(), milliseconds(config_.rpc_timeout_ms));
    if (!reply) {
      if (last && reply.code() == Errc::exists) {
        // It holds a file set of this id that did not come from this copy.
        spdlog::error("file set {}: mds {} already holds another copy; keeping ours unserved",
                      set, to.value);
      }
      co_return abandon(reply.status());
    }
    offset += want;
    if (last) break;
  }
  // It serves the set now: our copy goes.
  committed_.erase(set);
  leaving_.erase(set);
  ship_ids_.erase(set);
  ship_to_.erase(set);
  if (Status st = filesets_.destroy(FileSetId(set)); !st.ok())
    spdlog::warn("deleting the shipped copy of file set {}: {}", set, st.to_string());
  ++moves_out_;
  spdlog::info("file set {} moved to mds {} ({} bytes, {} ms)", set, to.value, total, ms_since(clock_, started));
  remember_move({set, self_, to, clock_.unix_ms(), total, ms_since(clock_, started), "shipped"});
  co_return true;
}

asio::awaitable<Status> MdsCluster::receive_chunk(mp::Request::ShipChunk::Reader chunk,
                                                  std::span<const std::byte> data) {
  const uint16_t set = chunk.getSet();
  const uint64_t ship_id = chunk.getShipId();
  if (filesets_.has(FileSetId(set))) {
    auto it = received_.find(set);
    if (chunk.getLast() && it != received_.end() && it->second == ship_id) co_return Status{};  // answer lost
    co_return Status(Errc::exists, fmt::format("mds {} already holds file set {}", self_.value, set));
  }
  const auto dir = filesets_.data_dir() / fmt::format("fileset-{}.incoming-{:x}", set, ship_id);
  const auto file = dir / kDataFile;
  Incoming& in = incoming_[set];  // not used across the await below
  if (chunk.getOffset() == 0) {
    if (in.ship_id != 0 && in.ship_id != ship_id) {
      std::error_code ec;
      std::filesystem::remove_all(filesets_.data_dir() / fmt::format("fileset-{}.incoming-{:x}", set, in.ship_id), ec);
    }
    in = Incoming{ship_id, 0, {}};
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    std::filesystem::create_directories(dir, ec);
    if (ec) co_return Status(Errc::io, "cannot create " + dir.string() + ": " + ec.message());
    auto lock = FileSetLock::acquire(dir);
    if (!lock) co_return lock.status();
    in.lock = std::move(*lock);
  }
  if (in.ship_id != ship_id || in.received != chunk.getOffset())
    co_return Status(Errc::invalid_argument,
                     fmt::format("file set {}: chunk at {} of ship {:x} out of order", set,
                                 chunk.getOffset(), ship_id));
  const bool last = chunk.getLast();
  const uint64_t offset = chunk.getOffset();
  Status wrote = co_await rpc::run_blocking(disk_pool_, [&] { return write_chunk(file, offset, data, last); });
  // Another chunk of this set (a retry that started the ship over, or one
  // whose write failed) may have replaced or erased the entry meanwhile.
  auto now_in = incoming_.find(set);
  if (now_in == incoming_.end() || now_in->second.ship_id != ship_id || now_in->second.received != offset)
    co_return Status(Errc::again, fmt::format("file set {}: ship {:x} was started over meanwhile", set, ship_id));
  if (!wrote.ok()) {
    incoming_.erase(now_in);
    co_return wrote;
  }
  now_in->second.received += data.size();
  if (!last) co_return Status{};
  const uint64_t total = chunk.getTotalBytes();
  FileSetLock lock = std::move(now_in->second.lock);
  incoming_.erase(now_in);
  std::error_code ec;
  if (offset + data.size() != total) {
    std::filesystem::remove_all(dir, ec);
    co_return Status(Errc::invalid_argument, fmt::format("file set {}: got {} of {} bytes", set,
                                                         offset + data.size(), total));
  }
  // Checked again after the write: a member paused meanwhile may have been
  // declared failed, and its sender has then taken the set back.
  if (fence_ != Fence::serving || !membership_.lease_valid(map_, clock_.now())) {
    std::filesystem::remove_all(dir, ec);
    co_return Status(Errc::again, fmt::format("mds {} holds no lease: not installing file set {}",
                                              self_.value, set));
  }
  const auto final_dir = filesets_.dir_of(FileSetId(set));
  std::filesystem::remove_all(final_dir, ec);
  std::filesystem::rename(dir, final_dir, ec);
  if (ec) co_return Status(Errc::io, "cannot rename " + dir.string() + ": " + ec.message());
  sync_dir(filesets_.data_dir());
  auto opened = filesets_.adopt(FileSetId(set), wall_now(clock_), std::move(lock));
  if (!opened) co_return opened.status();
  received_[set] = ship_id;
  ++moves_in_;
  spdlog::info("file set {} arrived ({} bytes); serving it", set, total);
  remember_move({set, MdsId(0xffffffff), self_, clock_.unix_ms(), total, 0, "received"});
  co_return Status{};
}

asio::awaitable<void> MdsCluster::take_over(MdsId failed) {
  const DaemonEntry* entry = config_.find_mds(failed.value);
  if (!entry || entry->data_dir.empty() || fence_ != Fence::serving) co_return;
  const auto dir = entry->data_dir;
  std::error_code ec;
  if (std::filesystem::equivalent(dir, filesets_.data_dir(), ec)) co_return;
  if (!std::filesystem::is_directory(dir, ec)) {
    if (unreachable_dirs_.insert(failed).second)
      spdlog::warn("mds {} failed; its data dir {} is not reachable from here, so its file sets "
                   "wait for it to come back", failed.value, dir.string());
    co_return;
  }
  unreachable_dirs_.erase(failed);
  settle_ships_to(failed, dir);
  std::vector<uint16_t> sets;
  for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
    auto id = FileSetCatalog::parse_dir_name(item.path().filename().string());
    if (id && item.is_directory()) sets.push_back(*id);
  }
  for (uint16_t set : sets) {
    if (owner(set) != self_ || filesets_.has(FileSetId(set)) || map_.contains(failed) ||
        fence_ != Fence::serving)
      continue;
    const auto started = clock_.now();
    const auto source = dir / fmt::format("fileset-{}", set);
    // Held by its member while that is alive, paused or not: copying it
    // then could miss changes it acknowledges after the copy.
    auto lock = FileSetLock::acquire(source);
    if (!lock) {
      if (held_elsewhere_.insert(set).second)
        spdlog::warn("file set {} of failed mds {}: {}; taking it over once that process lets go "
                     "(it is alive: paused or cut off)",
                     set, failed.value, lock.status().to_string());
      continue;
    }
    held_elsewhere_.erase(set);
    const auto staging = filesets_.data_dir() / fmt::format("fileset-{}.incoming-takeover", set);
    Result<uint64_t> copied = co_await rpc::run_blocking(disk_pool_, [&]() -> Result<uint64_t> {
      std::error_code e;
      std::filesystem::remove_all(staging, e);
      std::filesystem::create_directories(staging, e);
      if (e) return Status(Errc::io, "cannot create " + staging.string() + ": " + e.message());
      const auto from = source / kDataFile;
      const uint64_t total = std::filesystem::file_size(from, e);
      if (e) return Status(Errc::io, "size of " + from.string() + ": " + e.message());
      for (uint64_t off = 0; off < total; off += kChunkBytes) {
        auto chunk = read_chunk(from, off, std::min(kChunkBytes, total - off));
        if (!chunk) return chunk.status();
        const bool last = off + kChunkBytes >= total;
        if (Status st = write_chunk(staging / kDataFile, off, chunk->span(), last); !st.ok()) return st;
      }
      if (total == 0) return Status(Errc::corrupt, from.string() + " is empty");
      // The failed member must not serve it if it comes back.
      std::filesystem::rename(source, dir / fmt::format("fileset-{}.taken-by-{}", set, self_.value), e);
      if (e) return Status(Errc::io, "cannot rename " + source.string() + ": " + e.message());
      sync_dir(dir);
      return total;
    });
    if (!copied) {
      spdlog::error("taking over file set {} of failed mds {}: {}", set, failed.value,
                    copied.status().to_string());
      remember_move({set, failed, self_, clock_.unix_ms(), 0, ms_since(clock_, started), copied.status().to_string()});
      continue;
    }
    if (filesets_.has(FileSetId(set))) {  // it arrived by another way while copying
      std::filesystem::remove_all(staging, ec);
      continue;
    }
    std::filesystem::remove_all(filesets_.dir_of(FileSetId(set)), ec);
    std::filesystem::rename(staging, filesets_.dir_of(FileSetId(set)), ec);
    sync_dir(filesets_.data_dir());
    auto opened = filesets_.adopt(FileSetId(set), wall_now(clock_));
    if (!opened) {
      spdlog::error("taking over file set {}: {}", set, opened.status().to_string());
      continue;
    }
    ++moves_in_;
    spdlog::info("took over file set {} of failed mds {} ({} bytes, {} ms)", set, failed.value, *copied,
                 ms_since(clock_, started));
    remember_move({set, failed, self_, clock_.unix_ms(), *copied, ms_since(clock_, started), "taken over"});
  }
}

void MdsCluster::settle_ships_to(MdsId failed, const std::filesystem::path& dir) {
  std::vector<uint16_t> lost;  // shipped to `failed`, the answer to the last chunk lost
  for (const auto& [set, to] : ship_to_)
    if (to == failed && committed_.count(set)) lost.push_back(set);
  for (uint16_t set : lost) {
    std::error_code ec;
    const auto installed = dir / fmt::format("fileset-{}", set);
    if (std::filesystem::exists(installed / kDataFile, ec)) {
      // It arrived and may have been written to since: that copy is the
      // set now, taken over from `dir` like the failed member's own sets.
      spdlog::warn("file set {}: mds {} failed after it arrived there; our copy goes, its copy is "
                   "taken over", set, failed.value);
      committed_.erase(set);
      leaving_.erase(set);
      ship_ids_.erase(set);
      ship_to_.erase(set);
      if (Status st = filesets_.destroy(FileSetId(set)); !st.ok())
        spdlog::warn("deleting the shipped copy of file set {}: {}", set, st.to_string());
      continue;
    }
    // Never installed: whatever it received of it must never be, so each
    // partial copy is locked (it is not being received: that holder would
    // keep the lock) and renamed out of the way before ours serves again.
    bool receiving = false;
    const std::string prefix = fmt::format("fileset-{}.incoming-", set);
    std::vector<std::filesystem::path> partial;  // listed first: renamed below
    for (const auto& item : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = item.path().filename().string();
      if (name.starts_with(prefix) && name != prefix + "takeover" && name.find(".abandoned-by-") == std::string::npos)
        partial.push_back(item.path());
    }
    for (const auto& path : partial) {
      const std::string name = path.filename().string();
      auto lock = FileSetLock::acquire(path);
      if (!lock) {
        receiving = true;
        continue;
      }
      std::error_code rename_ec;
      std::filesystem::rename(path, dir / (name + ".abandoned-by-" + std::to_string(self_.value)), rename_ec);
      if (rename_ec) receiving = true;
    }
    if (receiving) {
      if (held_elsewhere_.insert(set).second)
        spdlog::warn("file set {}: mds {} failed while receiving it and still holds the copy; "
                     "serving it again once that process lets go", set, failed.value);
      continue;
    }
    held_elsewhere_.erase(set);
    sync_dir(dir);
    spdlog::warn("file set {}: mds {} failed before it arrived there; ours again", set, failed.value);
    committed_.erase(set);
    leaving_.erase(set);
    ship_ids_.erase(set);
    ship_to_.erase(set);
  }
}

}  // namespace pvfs::mds
