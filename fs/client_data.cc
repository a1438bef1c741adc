// File data: open/create, striped reads and writes fanned out to the
// storage servers in parallel, size publication (flush) and the writer
// announcement that lets the MDS recover sizes a dead client never
// published, fsync (data and metadata durable), release.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "fs/client_impl.h"
#include "shared/log.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/frame.h"

namespace pvfs {

namespace mp = proto::mds;
namespace sp = proto::storage;

namespace {

uint32_t access_mask(int flags) {
  switch (flags & O_ACCMODE) {
    case O_WRONLY: return 2;
    case O_RDWR: return 6;
    default: return (flags & O_TRUNC) ? 6 : 4;
  }
}

// Reads [offset, offset + length) of one object into `*out`: asks home,
// which answers with its bytes and where redirected parts live, then fetches
// those from their servers in parallel into the same buffer. The reply's own
// buffer becomes `*out`, so the bytes are not copied again. A fragment may
// vanish between the answer and the fetch (a maintainer pulled it home):
// then home is asked again. `*short_read` is set when home had fewer bytes
// than asked for (a hole, or the file is gone).
asio::awaitable<Status> read_piece(Client::Impl& impl, ServerId server, InodeId ino, uint32_t index,
                                   uint64_t offset, size_t length, Buffer* out, rpc::Origin origin,
                                   bool* short_read) {
  constexpr int kAttempts = 5;
  Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    rpc::OutMessage request;
    rpc::stamp(request.envelope(), origin);
    auto r = request.init_body<sp::Request>().initRead();
    set_object(r.initObject(), ino, index);
    r.setOffset(offset);
    r.setLength(static_cast<uint32_t>(length));
    if (impl.overloaded(server)) {
      r.setUrgent(true);
      r.setMaxServiceMs(impl.config.urgent_max_service_ms);
    }
    auto reply = co_await impl.call_storage(server, request, {});
    if (!reply) co_return reply.status();
    Buffer& data = (*reply)->data();
    const size_t got = std::min(data.size(), length);
    data.resize(length);
    // Past the end of the object (a hole at the file's tail, or never written).
    if (got < length) {
      std::memset(data.data() + got, 0, length - got);
      *short_read = true;
    }
    *out = std::move(data);
    auto redirected = (*reply)->body<sp::Reply>().getRead().getRedirected();
    if (redirected.size() == 0) co_return Status{};
    std::span<std::byte> out_bytes = out->span();
    std::vector<asio::awaitable<Status>> fetches;
    for (auto part : redirected) {
      const uint64_t at = part.getOffset(), part_length = part.getLength();
      if (at < offset || at + part_length > offset + length || part_length > rpc::kMaxDataBytes)
        co_return Status(Errc::io, fmt::format("server {} answered a read with a bad redirect", server.value));
      fetches.push_back([](Client::Impl& impl, ServerId holder, InodeId ino, uint32_t index,
                           uint64_t fragment, uint64_t fragment_offset,
                           std::span<std::byte> dest, rpc::Origin origin) -> asio::awaitable<Status> {
        rpc::OutMessage out;
        rpc::stamp(out.envelope(), origin);
        auto f = out.init_body<sp::Request>().initReadFragment();
        set_object(f.initObject(), ino, index);
        f.setFragment(fragment);
        f.setOffset(fragment_offset);
        f.setLength(static_cast<uint32_t>(dest.size()));
        auto reply = co_await impl.call_storage(holder, out, {});
        if (!reply) co_return reply.status();
        const Buffer& bytes = (*reply)->data();
        if (bytes.size() != dest.size())
          co_return Status(Errc::not_found, fmt::format("fragment {:x} on server {} is short", fragment,
                                                        holder.value));
        std::memcpy(dest.data(), bytes.data(), dest.size());
        co_return Status{};
      }(impl, ServerId(part.getServer()), ino, index, part.getFragment(), part.getFragmentOffset(),
        out_bytes.subspan(at - offset, part_length), origin));
    }
    last = co_await rpc::run_all(std::move(fetches));
    if (last.code() != Errc::not_found) co_return last;
  }
  co_return last;
}

asio::awaitable<Status> object_request(Client::Impl& impl, ServerId server, InodeId ino,
                                       uint32_t index, bool fsync, uint64_t size, rpc::Origin origin) {
  rpc::OutMessage out;
  rpc::stamp(out.envelope(), origin);
  auto req = out.init_body<sp::Request>();
  if (fsync) {
    set_object(req.initFsync(), ino, index);
  } else {
    auto t = req.initTruncate();
    set_object(t.initObject(), ino, index);
    t.setSize(size);
  }
  auto reply = co_await impl.call_storage(server, out, {});
  co_return reply.status();
}

}  // namespace

asio::awaitable<Status> Client::Impl::truncate_objects(InodeId ino, const Layout& layout,
                                                       uint64_t size, const rpc::Origin& origin) {
  std::vector<asio::awaitable<Status>> tasks;
  for (uint32_t i = 0; i < layout.stripe_count(); ++i)
    tasks.push_back(object_request(*this, layout.servers[i], ino, i, false,
                                   object_size_for_file_size(layout, i, size), origin));
  co_return co_await rpc::run_all(std::move(tasks));
}

std::shared_ptr<OpenFile> Client::Impl::track_open(const Attr& attr, int flags) {
  auto state = open_state(attr.ino);
  if (!state) {
    state = std::make_shared<InodeState>();
    state->ino = attr.ino;
    open_inodes[attr.ino] = state;
  }
  state->layout = attr.layout;
  if (!state->size_dirty) state->size = state->base = attr.size;  // close-to-open: fresh from the MDS
  ++state->open_count;
  open_note();
  auto file = std::make_shared<OpenFile>();
  file->inode = state;
  file->flags = flags;
  return file;
}

asio::awaitable<Result<std::shared_ptr<OpenFile>>> Client::open(const Credentials& who, InodeId ino,
                                                                int flags) {
  rpc::OutMessage out;
  auto o = impl_->begin_mds(out, who).initOpen();
  o.setIno(ino.value);
  o.setMask(access_mask(flags));
  // Reopening a file this mount unlinked while holding it (/proc/PID/fd/N)
  // works, as on a local file system. One another client removed, though
  // still open here, is reached this way through a name the kernel still
  // has cached: that name leads elsewhere now (ESTALE makes the kernel look
  // it up again), so it does not open.
  const auto held = impl_->open_state(ino);
  o.setHeldHere(held && held->unlinked);
  auto reply = stale_if_gone(co_await impl_->call_mds(out, true));
  if (!reply) co_return reply.status();
  Attr attr = rpc::from_wire((*reply)->body<mp::Reply>().getAttr());
  if (S_ISDIR(attr.mode) && (flags & O_ACCMODE) != O_RDONLY) co_return Status(Errc::is_dir);
  if (attr.written_elsewhere) co_await impl_->glimpse_size(attr, origin_of(who));

  auto file = impl_->track_open(attr, flags);
  auto state = file->inode;

  // Linux truncates for O_RDONLY|O_TRUNC too (access_mask() asked for write
  // permission), and with atomic O_TRUNC the kernel leaves it to us.
  if ((flags & O_TRUNC) && S_ISREG(attr.mode) && std::max(attr.size, state->size) > 0) {
    SetAttr change;
    change.mask = kSetSize;
    change.size = 0;
    auto truncated = co_await setattr(who, ino, change);
    if (!truncated) {
      co_await release(who, file);
      co_return truncated.status();
    }
  }
  co_return file;
}

asio::awaitable<Result<std::pair<Attr, std::shared_ptr<OpenFile>>>> Client::create(
    const Credentials& who, InodeId parent, std::string name, uint32_t mode, int flags) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name);
  rpc::OutMessage out;
  auto m = impl_->begin_mds(out, who).initMknod();
  m.setParent(parent.value);
  m.setName(name);
  m.setMode(S_IFREG | (mode & 07777));
  m.setExclusive(true);
  auto reply = co_await impl_->call_mds(out, false);
  if (reply) {
    // The creator may open what it just made: no permission check, no
    // truncation, and the attributes came with the reply (one round trip).
    auto body = (*reply)->body<mp::Reply>();
    impl_->learn_parent_attr(body);
    Attr attr = rpc::from_wire(body.getAttr());
    co_return std::make_pair(attr, impl_->track_open(attr, flags));
  }
  if (reply.code() != Errc::exists || (flags & O_EXCL)) co_return reply.status();
  // Raced with another creator: open what is there, as open(O_CREAT) does.
  auto existing = co_await lookup(who, parent, name);
  if (!existing) co_return existing.status();
  auto file = co_await open(who, existing->ino, flags);
  if (!file) co_return file.status();
  auto attr = co_await getattr(who, existing->ino);
  if (!attr) co_return attr.status();
  co_return std::make_pair(*attr, *file);
}

void Client::set_write_behind(uint64_t bytes_per_file) {
  impl_->behind_per_file = bytes_per_file;
  impl_->behind_per_mount = 16 * bytes_per_file;
}

bool Client::has_writes_behind() const { return impl_->behind_bytes > 0; }

asio::awaitable<uint64_t> Client::finish_writes_behind() {
  const uint64_t waiting = impl_->behind_bytes;
  while (impl_->behind_bytes > 0) co_await impl_->wait_for_behind();
  co_return waiting;
}

asio::awaitable<Result<size_t>> Client::write(const Credentials& who, OpenFile& file, uint64_t offset,
                                              std::span<const std::byte> data) {
  if (file.flags & O_APPEND) co_return co_await write_append(who, file, data);
  if (impl_->any_behind()) co_await impl_->wait_overlapping_behind(*file.inode, offset, data.size());
  co_return co_await write_now(who, file, offset, data);
}

asio::awaitable<Result<size_t>> Client::write_append(const Credentials& who, OpenFile& file,
                                                     std::span<const std::byte> data) {
  if (data.empty()) co_return size_t{0};
  auto& state = *file.inode;
  // This node's writes behind count in the size it tells the MDS.
  if (impl_->any_behind()) co_await impl_->drain_behind(state);
  if (Status lost = state.behind.error(); !lost.ok()) co_return lost;
  rpc::OutMessage out;
  auto a = impl_->begin_mds(out, who).initAppendAt();
  a.setIno(state.ino.value);
  a.setLength(data.size());
  a.setKnownSize(state.size);
  // Not idempotent: a lost answer must not reserve the bytes twice.
  auto reply = co_await impl_->call_mds(out, false);
  if (!reply) co_return reply.status();
  const uint64_t offset = (*reply)->body<mp::Reply>().getAppendAt();
  ++impl_->mount_stats.appends;
  co_return co_await write_now(who, file, offset, data, false);
}

asio::awaitable<Result<size_t>> Client::write_behind(const Credentials& who, std::shared_ptr<OpenFile> file,
                                                     uint64_t offset, std::span<const std::byte> data,
                                                     std::shared_ptr<const void> keep) {
  auto& state = *file->inode;
  const uint64_t per_file = impl_->behind_per_file;
  if (per_file == 0 || (file->flags & (O_SYNC | O_DSYNC | O_APPEND)) || data.empty())
    co_return co_await write(who, *file, offset, data);
  if (!state.behind.error().ok()) co_return state.behind.error();
  // Waits for room in the file's window and the mount's, and for no
  // earlier write of these bytes in flight.
  auto must_wait = [&] {
    return !state.behind.may_start(offset, data.size(), per_file) ||
           (impl_->behind_bytes > 0 && impl_->behind_bytes + data.size() > impl_->behind_per_mount);
  };
  if (must_wait()) ++impl_->mount_stats.behind_waits;
  while (must_wait()) {
    co_await impl_->wait_for_behind();
    if (!state.behind.error().ok()) co_return state.behind.error();
  }
  ++impl_->mount_stats.writes_behind;
  state.behind.start(offset, data.size());
  impl_->behind_bytes += data.size();
  asio::co_spawn(
      impl_->io,
      [](Client& client, Credentials who, std::shared_ptr<OpenFile> file, uint64_t offset,
         std::span<const std::byte> data, std::shared_ptr<const void> keep,
         std::shared_ptr<bool> alive) -> asio::awaitable<void> {
        auto wrote = co_await client.write_now(who, *file, offset, data);
        if (!*alive) co_return;  // the client is gone: touch nothing of it
        Status st = wrote ? Status{} : wrote.status();
        if (!st.ok()) {
          ++client.impl_->mount_stats.behind_failures;
          spdlog::warn("a write behind of {} bytes at {} of inode {:#x} failed (reported at the next write, "
                       "fsync or close): {}",
                       data.size(), offset, file->inode->ino.value, st.to_string());
        }
        file->inode->behind.finish(offset, data.size(), st);
        client.impl_->behind_bytes -= data.size();
        client.impl_->behind_wake.cancel();
        keep.reset();
      }(*this, who, file, offset, data, std::move(keep), impl_->alive),
      asio::detached);
  co_return data.size();
}

asio::awaitable<void> Client::Impl::wait_for_behind() {
  asio::error_code ec;
  co_await behind_wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<void> Client::Impl::drain_behind(InodeState& state) {
  while (!state.behind.idle()) co_await wait_for_behind();
}

asio::awaitable<void> Client::Impl::drain_behind(InodeId ino) {
  if (auto state = open_state(ino)) co_await drain_behind(*state);
}

asio::awaitable<void> Client::Impl::wait_overlapping_behind(InodeState& state, uint64_t offset,
                                                            uint64_t length) {
  while (!state.behind.may_start(offset, length, UINT64_MAX)) co_await wait_for_behind();
}

asio::awaitable<Result<size_t>> Client::write_now(const Credentials& who, OpenFile& file, uint64_t offset,
                                                  std::span<const std::byte> data, bool announce) {
  LocalChange local_change(*impl_);
  local_change.inode(file.inode->ino);
  auto& state = *file.inode;
  if (data.empty()) co_return size_t{0};
  if (!state.layout.valid()) co_return Status(Errc::io, "file has no layout");
  if (offset + data.size() < offset) co_return Status(Errc::too_big);
  // A job in an I/O step writes only while it holds the token.
  impl_->qos_announce(who.job_id, who.qos_runtime_ms);
  const bool in_step = co_await impl_->io_admit(who.job_id, state.layout, data.size(), true, who.iostep_bytes);
  const bool sync = file.flags & (O_SYNC | O_DSYNC);
  bool timed = false;
  const rpc::Origin origin = impl_->data_origin(who, timed);
  std::vector<asio::awaitable<Status>> tasks;
  const std::vector<Piece> pieces = split_range(state.layout, offset, data.size());
  for (const Piece& p : pieces) {
    tasks.push_back(impl_->write_piece(state, p.object_index, p.object_offset,
                                       data.subspan(p.buffer_offset, p.length), sync, origin));
    state.objects_made.insert(p.object_index);
  }
  if (offset > state.size) impl_->make_hole_objects(file.inode, offset, pieces, origin, tasks);
  // Acknowledged bytes must outlive this client: the MDS learns that it
  // writes the file before the first write returns (pvfs-mds(8)).
  if (announce && impl_->must_announce(state)) tasks.push_back(impl_->announce_writer(who, file.inode));
  ++state.writes_in_flight;
  Status st = co_await rpc::run_all(std::move(tasks));
  --state.writes_in_flight;
  if (timed) impl_->job_io_end(who.job_id);
  if (in_step) impl_->io_done(who.job_id);
  if (!st.ok()) co_return st;
  const uint64_t size_before = state.size;
  state.size = std::max(state.size, offset + data.size());
  state.size_dirty = true;
  ++state.writes;
  if (sync) {
    Status published = co_await publish(who, file, false, false);
    if (!published.ok()) co_return published;
    // O_SYNC and O_DSYNC: a size the data needs must be durable too.
    if (state.size > size_before) {
      Status synced = co_await fsync_dir(who, file.inode->ino);
      if (!synced.ok()) co_return synced;
    }
  }
  co_return data.size();
}

asio::awaitable<Result<ReadData>> Client::read_buffers(const Credentials& who, OpenFile& file,
                                                       uint64_t offset, size_t length) {
  auto& state = *file.inode;
  if (impl_->any_behind()) co_await impl_->drain_behind(state);
  ReadData got;
  if (offset >= state.size || length == 0) co_return got;
  if (!state.layout.valid()) co_return Status(Errc::io, "file has no layout");
  length = static_cast<size_t>(std::min<uint64_t>(length, state.size - offset));
  impl_->qos_announce(who.job_id, who.qos_runtime_ms);
  const bool in_step = co_await impl_->io_admit(who.job_id, state.layout, length, false);
  const auto pieces = split_range(state.layout, offset, length);
  got.buffers.resize(pieces.size());  // not resized again: the tasks write into it
  auto short_read = std::make_shared<bool>(false);
  bool timed = false;
  const rpc::Origin origin = impl_->data_origin(who, timed);
  std::vector<asio::awaitable<Status>> tasks;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    tasks.push_back(read_piece(*impl_, state.layout.servers[p.object_index], state.ino,
                               p.object_index, p.object_offset, p.length, &got.buffers[i], origin,
                               short_read.get()));
  }
  Status st = co_await rpc::run_all(std::move(tasks));
  if (timed) impl_->job_io_end(who.job_id);
  if (in_step) impl_->io_done(who.job_id);
  if (!st.ok()) co_return st;
  // Fewer bytes than the size promises: a hole, or another client removed
  // the file (its objects deleted under this open file). The second must
  // not read as zeros: ask the MDS, at most once an attribute timeout.
  if (*short_read && rpc::Clock::now() - state.confirmed_at > impl_->attr_ttl()) {
    rpc::OutMessage out;
    impl_->begin_mds(out, who).initGetattr().setIno(state.ino.value);
    auto reply = stale_if_gone(co_await impl_->call_mds(out, true));
    if (!reply) co_return reply.status();
    // Unlinked: its data lasts while the MDS keeps the file for a client
    // that has it open, this one included (client_orphans.cc); then its
    // objects are on their way out.
    if ((*reply)->body<mp::Reply>().getAttr().getNlink() == 0) {
      if (state.hold_lost) co_return Status(Errc::stale, "the metadata server no longer keeps this unlinked file");
      auto gone = co_await impl_->gone_at_mds(state.ino);
      if (!gone) co_return gone.status();
      if (*gone) co_return Status(Errc::stale, "file was removed by another client");
    }
    state.confirmed_at = rpc::Clock::now();
  }
  co_return got;
}

asio::awaitable<Result<size_t>> Client::read(const Credentials& who, OpenFile& file, uint64_t offset,
                                             std::span<std::byte> out) {
  auto got = co_await read_buffers(who, file, offset, out.size());
  if (!got) co_return got.status();
  size_t done = 0;
  for (const Buffer& b : got->buffers) {
    std::memcpy(out.data() + done, b.data(), b.size());
    done += b.size();
  }
  co_return done;
}

bool Client::Impl::must_announce(InodeState& state) {
  const auto& a = state.writer;
  if (!a || !a->done) return true;
  auto conn = a->conn.lock();
  if (conn && conn->is_open() && a->map_version == router.map().version()) return false;
  state.writer.reset();
  return true;
}

asio::awaitable<Status> Client::Impl::announce_writer(const Credentials& who,
                                                      std::shared_ptr<InodeState> state) {
  std::shared_ptr<WriterAnnouncement> a = state->writer;
  if (!a) {
    a = std::make_shared<WriterAnnouncement>(io);
    state->writer = a;
    a->map_version = router.map().version();
    rpc::OutMessage out;
    auto u = begin_mds(out, who).initUpdateSize();
    u.setIno(state->ino.value);
    u.setWriter(proto::mds::Request::UpdateSize::Writer::STARTS);
    auto reply = co_await call_mds(out, true, &a->conn);
    a->status = reply.status();
    a->done = true;
    if (!a->status.ok() && state->writer == a) state->writer.reset();
    a->wake.cancel();
    if (a->status.ok() && !watching_writers) {
      watching_writers = true;
      asio::co_spawn(io, watch_writers(alive, writer_timer), asio::detached);
    }
    co_return a->status;
  }
  while (!a->done) {
    asio::error_code ec;
    co_await a->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return a->status;
}

asio::awaitable<void> Client::Impl::watch_writers(std::shared_ptr<bool> alive,
                                                 std::shared_ptr<asio::steady_timer> timer) {
  for (;;) {
    timer->expires_after(milliseconds(500));
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (!*alive) co_return;  // the client is gone: touch nothing of it
    std::vector<std::shared_ptr<InodeState>> writing, stale;
    for (const auto& [ino, weak] : open_inodes)
      if (auto state = weak.lock(); state && state->writer) writing.push_back(state);
    if (writing.empty()) {
      watching_writers = false;
      co_return;
    }
    for (const auto& state : writing)
      if (state->writer->done && must_announce(*state)) stale.push_back(state);
    for (auto& state : stale)
      asio::co_spawn(io, [](Impl& impl, std::shared_ptr<bool> alive,
                            std::shared_ptr<InodeState> state) -> asio::awaitable<void> {
        if (!*alive) co_return;
        // Named: GCC 12 mishandles a temporary living across a co_await.
        const Credentials who;
        Status st = co_await impl.announce_writer(who, state);
        if (!st.ok() && *alive)
          spdlog::warn("telling the metadata server again that inode {:#x} is being written: {}",
                       state->ino.value, st.to_string());
      }(*this, alive, std::move(state)), asio::detached);
  }
}

asio::awaitable<Status> Client::flush(const Credentials& who, OpenFile& file) {
  co_return co_await publish(who, file, file.inode->open_count <= 1);
}

asio::awaitable<Status> Client::publish(const Credentials& who, OpenFile& file, bool closing,
                                        bool count_blocks) {
  if (impl_->any_behind()) co_await impl_->drain_behind(*file.inode);
  Status lost = file.inode->behind.take_error();
  Status st = co_await publish_size(who, file, closing, count_blocks);
  co_return lost.ok() ? st : lost;
}

asio::awaitable<Status> Client::publish_size(const Credentials& who, OpenFile& file, bool closing,
                                             bool count_blocks) {
  LocalChange local_change(*impl_);
  local_change.inode(file.inode->ino);
  auto state = file.inode;
  // Writes still in flight keep the announcement: they may not be published yet.
  const bool stops = closing && state->writer && state->writes_in_flight == 0;
  if (!state->size_dirty && !state->blocks_dirty && !stops) co_return Status{};
  const uint64_t writes_seen = state->writes;
  const bool dirty = state->size_dirty;
  std::optional<uint64_t> blocks;
  if ((dirty || state->blocks_dirty) && count_blocks) {
    // Counted after the writes were acknowledged, so the servers have
    // allocated for them. Without a count the MDS keeps its old one: `du`
    // is then stale, nothing else.
    state->blocks_dirty = false;
    auto counted = co_await allocated_blocks(who, state, impl_->blocks_timeout());
    if (counted)
      blocks = *counted;
    else
      state->blocks_dirty = true;
  }
  // Cleared before sending: a write that starts meanwhile announces itself again.
  if (stops && state->writes_in_flight == 0) state->writer.reset();
  const bool stopping = stops && !state->writer;
  if (!dirty && !blocks && !stopping) co_return Status{};
  rpc::OutMessage out;
  auto u = impl_->begin_mds(out, who).initUpdateSize();
  u.setIno(state->ino.value);
  u.setSize(state->size);
  u.setBase(state->base);
  u.setTouchMtime(dirty);
  if (blocks) u.setBlocks(static_cast<int64_t>(std::min<uint64_t>(*blocks, INT64_MAX)));
  if (stopping) u.setWriter(mp::Request::UpdateSize::Writer::STOPS);
  auto reply = co_await impl_->call_mds(out, true);
  // Only the announcement ending, lost: nothing of the caller's is at
  // stake (the MDS drops it with the connection), so close succeeds.
  if (!reply) {
    if (blocks) state->blocks_dirty = true;
    co_return dirty ? reply.status() : Status{};
  }
  if (dirty && state->writes == writes_seen) state->size_dirty = false;
  // The MDS's size now (it may have taken less than `sent`, above).
  state->base = (*reply)->body<mp::Reply>().getAttr().getSize();
  co_return Status{};
}

asio::awaitable<Status> Client::fsync_dir(const Credentials& who, InodeId dir) {
  rpc::OutMessage out;
  impl_->begin_mds(out, who).initSyncFileSet().setIno(dir.value);
  auto reply = co_await impl_->call_mds(out, true);
  co_return reply.status();
}

asio::awaitable<Status> Client::fsync(const Credentials& who, OpenFile& file) {
  Status st = co_await publish(who, file, false);
  if (!st.ok()) co_return st;
  const auto& layout = file.inode->layout;
  std::vector<asio::awaitable<Status>> tasks;
  // The size just published, the name and the parent: all in the file set.
  tasks.push_back(fsync_dir(who, file.inode->ino));
  for (uint32_t i = 0; i < layout.stripe_count(); ++i)
    tasks.push_back(object_request(*impl_, layout.servers[i], file.inode->ino, i, true, 0, origin_of(who)));
  // Redirected writes live in fragments on other servers until pulled home.
  auto fragment_servers = std::move(file.inode->fragment_servers);
  file.inode->fragment_servers.clear();
  for (const auto& [index, server] : fragment_servers)
    tasks.push_back(object_request(*impl_, ServerId(server), file.inode->ino, index, true, 0, origin_of(who)));
  Status st2 = co_await rpc::run_all(std::move(tasks));
  if (!st2.ok()) file.inode->fragment_servers.insert(fragment_servers.begin(), fragment_servers.end());
  co_return st2;
}

asio::awaitable<Status> Client::release(const Credentials& who, std::shared_ptr<OpenFile> file) {
  LocalChange local_change(*impl_);
  local_change.inode(file->inode->ino);
  auto state = file->inode;
  Status st = co_await publish(who, *file, state->open_count <= 1);
  if (--state->open_count > 0) co_return st;
  impl_->open_inodes.erase(state->ino);
  if (state->unlinked) {
    rpc::OutMessage out;
    impl_->begin_mds(out, who).initReleaseOrphan().setIno(state->ino.value);
    auto reply = co_await impl_->call_mds(out, true);
    // Not kept any more: its hold lapsed (client_orphans.cc), nothing to free.
    if (st.ok() && !(state->hold_lost && reply.code() == Errc::not_found)) st = reply.status();
  }
  co_return st;
}

}  // namespace pvfs
