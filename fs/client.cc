// Client setup, the storage RPC helpers and every namespace operation.
// Metadata calls (routing by file set) are in client_mds.cc, file data
// (open/read/write/flush/fsync/release) in client_data.cc.
#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "fs/client_impl.h"
#include "fs/layout_xattr.h"
#include "shared/log.h"
#include "shared/rpc/convert.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {
std::vector<MdsId> mds_ids(const Config& config) {
  std::vector<MdsId> ids;
  for (const auto& m : config.mds) ids.push_back(MdsId(m.id));
  return ids;
}
}  // namespace

Client::Impl::Impl(asio::io_context& io_, const Config& config_, const Secret& key_)
    : io(io_),
      config(config_),
      key(key_),
      timeout(config_.rpc_timeout_ms),
      busy_limit(config_.rpc_busy_limit_ms),
      router(mds_ids(config_), config_.mds_placement),
      behind_wake(io_, asio::steady_timer::time_point::max()) {
  for (const auto& m : config_.mds)
    mds_peers[m.id] = std::make_unique<rpc::Peer>(io_.get_executor(), m.address,
                                                  rpc::Auth(key_, {}, config_.encrypt),
                                                  milliseconds(config_.connect_timeout_ms));
  serve_mds_requests();
  dispatch.min_bytes = config_.dispatch_min_bytes;
  dispatch.margin_bytes = config_.redirect_margin_bytes;
  dispatch.skew_factor = config_.redirect_skew_factor;
  writer_timer = std::make_shared<asio::steady_timer>(io_);
  std::random_device rd;
  while (client_id == 0) client_id = (uint64_t{rd()} << 32) | rd();
}

// Background coroutines hold `alive` and the timer, not the Impl: they
// check `alive` after every wait.
Client::Impl::~Impl() {
  *alive = false;
  writer_timer->cancel();
  behind_wake.cancel();
}

mp::Request::Builder Client::Impl::begin_mds(rpc::OutMessage& out, const Credentials& who) {
  rpc::stamp(out.envelope(), origin_of(who));
  auto req = out.init_body<mp::Request>();
  rpc::to_wire(who.caller, req.initCaller());
  req.getCaller().setPid(who.pid);
  return req;
}

namespace {
// How long to wait between attempts to reach a storage server that is down.
constexpr milliseconds kRetryPause{200};
}  // namespace

asio::awaitable<void> pause(milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  asio::error_code ec;
  co_await t.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> Client::Impl::call_storage(
    ServerId server, rpc::OutMessage& out, std::span<const std::byte> data) {
  co_return co_await call_storage(server, out, data, timeout);
}

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> Client::Impl::call_storage(
    ServerId server, rpc::OutMessage& out, std::span<const std::byte> data, milliseconds timeout) {
  if (!servers.count(server.value)) {
    Status st = co_await refresh_servers();
    if (!st.ok()) co_return st;
    if (!servers.count(server.value))
      co_return Status(Errc::io, fmt::format("storage server {} is unknown to the MDS", server.value));
  }
  // Held by this call: refresh_servers() may replace the map's entry
  // while it waits.
  const std::shared_ptr<rpc::Peer> held = servers.at(server.value);
  rpc::Peer& peer = *held;
  const auto began = rpc::Clock::now();
  auto deadline = began + timeout;
  const milliseconds busy = timeout < Impl::timeout ? milliseconds(0) : busy_limit;
  // Time a server held a call it then lost (saying it was busy meanwhile)
  // does not count against the timeout of reconnecting, up to the busy limit.
  const auto latest = began + std::max(timeout, busy);
  // A server this client could not reach a moment ago fails the call at
  // once (ServerReachability): a dead server costs one timeout, not one
  // per call (and the kernel retries a failed read).
  auto how = reachability.how(server.value, rpc::Clock::now());
  if (how == ServerReachability::Try::not_at_all)
    co_return Status(Errc::io, fmt::format("storage server {} ({}) is unreachable (failed just before)",
                                           server.value, peer.address().to_string()));
  bool refused = false;  // a connection attempt failed: not merely slow
  for (;;) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - rpc::Clock::now());
    if (left <= milliseconds(0)) {
      if (refused) reachability.unreachable(server.value, rpc::Clock::now());
      co_return Status(Errc::io, fmt::format("storage server {} ({}) did not answer in time",
                                             server.value, peer.address().to_string()));
    }
    auto conn = co_await peer.connection();
    if (!conn) {
      if (conn.code() == Errc::access_denied) co_return conn.status();
      refused = true;
      if (how == ServerReachability::Try::once) {
        reachability.unreachable(server.value, rpc::Clock::now());
        co_return Status(Errc::io, fmt::format("storage server {} ({}) is unreachable: {}", server.value,
                                               peer.address().to_string(), conn.status().to_string()));
      }
      co_await pause(std::min(kRetryPause, left));
      continue;
    }
    const auto sent = rpc::Clock::now();
    auto reply = co_await (*conn)->call(out, data, left, busy);
    // Answered after its timeout: a busy server kept it waiting. Without a
    // busy limit nothing can, and a reply that came at its deadline is not
    // one (the deadline's own wake-up runs after the reply's).
    if (busy.count() > 0 && reply.code() != Errc::timeout && rpc::Clock::now() - sent > left)
      ++mount_stats.busy_waits;
    if (reply.code() == Errc::unavailable) {
      deadline = std::min(latest, deadline + (rpc::Clock::now() - sent));
      left = std::chrono::duration_cast<milliseconds>(deadline - rpc::Clock::now());
      co_await pause(std::min(kRetryPause, left));
      continue;
    }
    reachability.reached(server.value);
    if (reply.code() == Errc::timeout)
      co_return Status(Errc::io, fmt::format("storage server {} ({}): {}", server.value,
                                             peer.address().to_string(), reply.status().to_string()));
    co_return reply;
  }
}

asio::awaitable<Status> Client::Impl::refresh_servers() {
  rpc::OutMessage out;
  Credentials root;
  begin_mds(out, root).setGetServers();
  auto reply = co_await call_mds(out, true);
  if (!reply) co_return reply.status();
  for (auto s : (*reply)->body<mp::Reply>().getServers()) {
    StorageServer info = rpc::from_wire(s);
    auto ep = parse_endpoint(info.address);
    if (!ep) continue;
    auto it = servers.find(info.id.value);
    if (it == servers.end() || !(it->second->address() == *ep)) {
      if (it != servers.end()) it->second->close();
      reachability.reached(info.id.value);  // a new address: nothing known of it
      servers[info.id.value] = std::make_shared<rpc::Peer>(io.get_executor(), *ep,
                                                           rpc::Auth(key, {}, config.encrypt),
                                                           milliseconds(config.connect_timeout_ms));
    }
    server_info[info.id.value] = info;
  }
  co_return Status{};
}

std::shared_ptr<InodeState> Client::Impl::open_state(InodeId ino) const {
  auto it = open_inodes.find(ino);
  return it == open_inodes.end() ? nullptr : it->second.lock();
}

Attr Client::Impl::merge_local(Attr attr) {
  if (auto state = open_state(attr.ino)) {
    // Writes behind, still on their way to the servers, count: the caller
    // was told they were done.
    attr.size = std::max(attr.size, state->behind.end());
    if (state->size_dirty)
      attr.size = std::max(attr.size, state->size);
    else
      state->size = state->base = attr.size;
  }
  return attr;
}

const Client::Impl::CachedXattr* Client::Impl::cached_xattr(InodeId ino,
                                                            const std::string& name) const {
  auto it = xattr_cache.find({ino, name});
  if (it == xattr_cache.end() || it->second.expires < rpc::Clock::now()) return nullptr;
  return &it->second;
}

rpc::Clock::duration Client::Impl::attr_ttl() const {
  return std::chrono::duration_cast<rpc::Clock::duration>(
      std::chrono::duration<double>(config.attr_timeout_s));
}

void Client::Impl::remember_xattr(InodeId ino, const std::string& name,
                                  std::optional<std::string> value) {
  const auto ttl = attr_ttl();
  if (ttl <= rpc::Clock::duration::zero()) return;
  if (xattr_cache.size() >= kMaxCachedXattrs) xattr_cache.clear();
  xattr_cache[{ino, name}] = CachedXattr{std::move(value), rpc::Clock::now() + ttl};
}

void Client::Impl::learn_parent_attr(mp::Reply::Reader reply) {
  if (!reply.hasParentAttr()) return;
  const auto ttl = attr_ttl();
  if (ttl <= rpc::Clock::duration::zero()) return;
  Attr dir = rpc::from_wire(reply.getParentAttr());
  if (!S_ISDIR(dir.mode)) return;
  if (post_op_dirs.size() >= kMaxPostOpDirs) post_op_dirs.clear();
  post_op_dirs[dir.ino] = PostOpAttr{std::move(dir), rpc::Clock::now() + ttl};
}

std::optional<Attr> Client::Impl::take_post_op_attr(InodeId dir) {
  auto it = post_op_dirs.find(dir);
  if (it == post_op_dirs.end()) return std::nullopt;
  std::optional<Attr> fresh;
  if (it->second.expires >= rpc::Clock::now()) fresh = std::move(it->second.attr);
  post_op_dirs.erase(it);
  return fresh;
}

void set_object(proto::storage::ObjectId::Builder b, InodeId ino, uint32_t index) {
  rpc::to_wire(ObjectId{ino, index}, b);
}

// ---------------------------------------------------------------------------

Client::Client(asio::io_context& io, const Config& config, const Secret& key)
    : io_(io), config_(config), impl_(std::make_unique<Impl>(io, config_, key)) {}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::create(asio::io_context& io, const Config& config) {
  if (config.mds.empty()) return Status(Errc::invalid_argument, "config names no metadata server");
  auto key = load_secret(config.secret_file);
  if (!key) return key.status();
  return std::make_unique<Client>(io, config, *key);
}

asio::awaitable<Status> Client::start() {
  Status st = co_await impl_->start_mds();
  if (!st.ok()) co_return st;
  co_return co_await impl_->refresh_servers();
}

namespace {
// Runs an MDS request whose reply is an Attr.
asio::awaitable<Result<Attr>> attr_reply(Client::Impl& impl, rpc::OutMessage& out, bool idempotent) {
  auto reply = co_await impl.call_mds(out, idempotent);
  if (!reply) co_return reply.status();
  auto body = (*reply)->body<mp::Reply>();
  impl.learn_parent_attr(body);
  co_return impl.merge_local(rpc::from_wire(body.getAttr()));
}

asio::awaitable<Status> none_reply(Client::Impl& impl, rpc::OutMessage& out, bool idempotent) {
  auto reply = co_await impl.call_mds(out, idempotent);
  if (!reply) co_return reply.status();
  impl.learn_parent_attr((*reply)->body<mp::Reply>());
  co_return Status{};
}
}  // namespace

asio::awaitable<Result<Attr>> Client::lookup(const Credentials& who, InodeId parent, std::string name) {
  auto found = co_await lookup_entry(who, parent, std::move(name));
  if (!found) co_return found.status();
  co_return std::move(found->attr);
}

namespace {
// One page of `dir` from the MDS, as it sent it.
asio::awaitable<Result<DirPage>> readdir_page(Client::Impl& impl, const Credentials& who,
                                              InodeId dir, uint64_t cookie, uint32_t max_entries,
                                              bool plus) {
  rpc::OutMessage out;
  auto r = impl.begin_mds(out, who).initReaddir();
  r.setIno(dir.value);
  r.setCookie(cookie);
  r.setMaxEntries(max_entries);
  r.setPlus(plus);
  auto reply = stale_if_gone(co_await impl.call_mds(out, true));
  if (!reply) co_return reply.status();
  co_return rpc::from_wire((*reply)->body<mp::Reply>().getReaddir());
}

// Fetches statahead's next window of `dir`: the entries after `after`,
// with their attributes. Best effort: a failure only means lookups go on
// asking the MDS.
asio::awaitable<void> fetch_window(Client::Impl& impl, const Credentials& who,
                                   Statahead::Walker walker, uint64_t after) {
  const auto asked_at = rpc::Clock::now();
  const uint64_t generation = impl.statahead.generation();
  auto page = co_await readdir_page(impl, who, walker.dir, after, Statahead::kWindow, true);
  if (!page) co_return;
  impl.statahead.keep(walker, after, std::move(page->entries), asked_at, generation);
}
}  // namespace

asio::awaitable<Result<Client::Looked>> Client::lookup_entry(const Credentials& who,
                                                             InodeId parent, std::string name) {
  const auto max_age = impl_->attr_ttl();
  const Statahead::Walker walker{parent, who.caller.uid, who.caller.gid};
  const bool statahead = max_age > rpc::Clock::duration::zero();
  if (statahead) {
    if (auto hit = impl_->statahead.take(walker, name, rpc::Clock::now(), max_age)) {
      Looked found{impl_->merge_local(std::move(hit->attr)), hit->age};
      if (found.attr.written_elsewhere) co_await impl_->glimpse_size(found.attr, origin_of(who));
      co_return found;
    }
  }
  if (impl_->dir_leases.absent(parent, name, who.caller.uid, who.caller.gid, SteadyClock::now())) {
    ++impl_->lookups_by_lease;
    impl_->maybe_renew_dir_lease(who, parent);
    co_return Status(Errc::not_found, "no such entry (directory lease)");
  }
  rpc::OutMessage out;
  auto l = impl_->begin_mds(out, who).initLookup();
  l.setParent(parent.value);
  l.setName(name);
  auto reply = co_await impl_->call_mds(out, true);
  if (!reply) {
    if (reply.code() == Errc::not_found) impl_->maybe_lease_dir(who, parent);
    co_return reply.status();
  }
  auto body = (*reply)->body<mp::Reply>();
  Looked found{impl_->merge_local(rpc::from_wire(body.getAttr())), {}};
  if (found.attr.written_elsewhere) co_await impl_->glimpse_size(found.attr, origin_of(who));
  if (statahead) {
    if (auto after = impl_->statahead.note_lookup(walker, body.getEntryCookie(), rpc::Clock::now()))
      co_await fetch_window(*impl_, who, walker, *after);
  }
  co_return found;
}

asio::awaitable<Result<Attr>> Client::getattr(const Credentials& who, InodeId ino) {
  if (impl_->any_behind()) co_await impl_->drain_behind(ino);  // the size must count them
  if (auto fresh = impl_->take_post_op_attr(ino)) co_return *fresh;
  rpc::OutMessage out;
  impl_->begin_mds(out, who).initGetattr().setIno(ino.value);
  auto attr = stale_if_gone(co_await attr_reply(*impl_, out, true));
  if (attr && attr->written_elsewhere) co_await impl_->glimpse_size(*attr, origin_of(who));
  co_return attr;
}

asio::awaitable<Status> Client::opendir(const Credentials& who, InodeId ino) {
  const auto max_age = impl_->attr_ttl();
  const bool ahead = max_age > rpc::Clock::duration::zero();
  const uint64_t epoch = impl_->local_changes;
  const auto asked_at = rpc::Clock::now();
  auto page = co_await readdir_page(*impl_, who, ino, 0, ahead ? ListingAhead::kAheadEntries : 1, true);
  if (!page) co_return page.status();
  if (ahead && epoch == impl_->local_changes) {
    const ListingAhead::Key key{ino, true, who.caller.uid, who.caller.gid};
    impl_->listing_ahead.keep(key, 0, std::move(page->entries), page->eof, epoch, asked_at);
  }
  co_return Status{};
}

asio::awaitable<Result<Attr>> Client::setattr(const Credentials& who, InodeId ino, SetAttr change) {
  // A truncate must land after them, an mtime be set after them.
  if (impl_->any_behind()) co_await impl_->drain_behind(ino);
  LocalChange local_change(*impl_);
  local_change.inode(ino);
  impl_->post_op_dirs.erase(ino);
  if (change.mask & kSetSize) {
    // Objects first: if we fail in between, the recorded size is still the
    // old one and no stale bytes can reappear past a later extension.
    auto current = co_await getattr(who, ino);
    if (!current) co_return current.status();
    if (S_ISDIR(current->mode)) co_return Status(Errc::is_dir);
    if (!S_ISREG(current->mode)) co_return Status(Errc::invalid_argument);
    auto state = impl_->open_state(ino);
    if (change.size < current->size && current->layout.valid()) {
      Status st = co_await impl_->truncate_objects(ino, current->layout, change.size, origin_of(who));
      if (!st.ok()) co_return st;
    }
    if (state) {
      state->size = state->base = change.size;
      state->size_dirty = false;
    }
  } else if (change.mask & (kSetMtime | kSetMtimeNow)) {
    // Publish writes made here first: publishing them later (at close)
    // would stamp mtime again and undo the time set now (tar, cp -p, rsync).
    // Only the size: the file stays open, so its writer's announcement
    // stands, and counting its blocks would ask every storage server (close
    // counts them). With writeback_cache the kernel's flusher sends such a
    // setattr for each file it writes back, and waits for it.
    if (auto state = impl_->open_state(ino); state && state->size_dirty) {
      OpenFile pending{state, 0};
      Status st = co_await publish(who, pending, false, false);
      if (!st.ok()) co_return st;
    }
  }
  rpc::OutMessage out;
  auto s = impl_->begin_mds(out, who).initSetattr();
  s.setIno(ino.value);
  rpc::to_wire(change, s);
  co_return stale_if_gone(co_await attr_reply(*impl_, out, true));
}

asio::awaitable<Result<Attr>> Client::mknod(const Credentials& who, InodeId parent, std::string name,
                                            uint32_t mode, uint32_t rdev) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name);
  rpc::OutMessage out;
  auto m = impl_->begin_mds(out, who).initMknod();
  m.setParent(parent.value);
  m.setName(name);
  m.setMode(mode);
  m.setRdev(rdev);
  m.setExclusive(true);
  co_return co_await attr_reply(*impl_, out, false);
}

asio::awaitable<Result<Attr>> Client::mkdir(const Credentials& who, InodeId parent, std::string name,
                                            uint32_t mode) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name);
  rpc::OutMessage out;
  auto m = impl_->begin_mds(out, who).initMkdir();
  m.setParent(parent.value);
  m.setName(name);
  m.setMode(mode);
  co_return co_await attr_reply(*impl_, out, false);
}

namespace {
// The open-file state of the file `name` in `parent` names, if this client
// has it open: unlink and rename must keep such a file's data until closed.
asio::awaitable<std::shared_ptr<InodeState>> open_here(Client& client, Client::Impl& impl,
                                                       const Credentials& who, InodeId parent,
                                                       std::string name) {
  if (impl.open_inodes.empty()) co_return nullptr;
  auto target = co_await client.lookup(who, parent, std::move(name));
  co_return target ? impl.open_state(target->ino) : nullptr;
}
}  // namespace

asio::awaitable<Status> Client::unlink(const Credentials& who, InodeId parent, std::string name) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name);
  // If the file is open here, its data must outlive the name (POSIX).
  auto state = co_await open_here(*this, *impl_, who, parent, name);
  rpc::OutMessage out;
  auto u = impl_->begin_mds(out, who).initUnlink();
  u.setParent(parent.value);
  u.setName(name);
  u.setKeepOpen(state != nullptr);
  auto reply = co_await impl_->call_mds(out, false);
  if (!reply) co_return reply.status();
  auto body = (*reply)->body<mp::Reply>();
  impl_->learn_parent_attr(body);
  if (state && body.getUnlink().getNlink() == 0) {
    state->unlinked = true;
    impl_->orphan_note();
  }
  co_return Status{};
}

asio::awaitable<Status> Client::rmdir(const Credentials& who, InodeId parent, std::string name) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name);
  impl_->post_op_dirs.clear();  // the directory removed may be among them
  rpc::OutMessage out;
  auto r = impl_->begin_mds(out, who).initRmdir();
  r.setParent(parent.value);
  r.setName(name);
  co_return stale_if_gone(co_await none_reply(*impl_, out, false));
}

asio::awaitable<Result<Attr>> Client::symlink(const Credentials& who, InodeId parent, std::string name,
                                              std::string target) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name);
  rpc::OutMessage out;
  auto s = impl_->begin_mds(out, who).initSymlink();
  s.setParent(parent.value);
  s.setName(name);
  s.setTarget(target);
  co_return co_await attr_reply(*impl_, out, false);
}

asio::awaitable<Result<std::string>> Client::readlink(const Credentials& who, InodeId ino) {
  rpc::OutMessage out;
  impl_->begin_mds(out, who).initReadlink().setIno(ino.value);
  auto reply = stale_if_gone(co_await impl_->call_mds(out, true));
  if (!reply) co_return reply.status();
  co_return std::string((*reply)->body<mp::Reply>().getReadlink().cStr());
}

asio::awaitable<Status> Client::rename(const Credentials& who, InodeId parent, std::string name,
                                       InodeId new_parent, std::string new_name, uint32_t flags) {
  LocalChange local_change(*impl_);
  local_change.name(parent, name).name(new_parent, new_name);
  // A file replaced while open here keeps its data until closed, as with unlink.
  std::shared_ptr<InodeState> replaced;
  if (!(flags & kRenameExchange))
    replaced = co_await open_here(*this, *impl_, who, new_parent, new_name);
  impl_->post_op_dirs.clear();  // both parents and a moved directory change
  rpc::OutMessage out;
  auto r = impl_->begin_mds(out, who).initRename();
  r.setParent(parent.value);
  r.setName(name);
  r.setNewParent(new_parent.value);
  r.setNewName(new_name);
  r.setFlags(flags);
  r.setKeepOpen(replaced != nullptr);
  Status st = co_await none_reply(*impl_, out, false);
  if (!st.ok() || !replaced) co_return st;
  // Renaming onto another name of the same file replaces nothing; otherwise
  // the file is an orphan now if that was its last link.
  auto after = co_await getattr(who, replaced->ino);
  if (after && after->nlink == 0) {
    replaced->unlinked = true;
    impl_->orphan_note();
  }
  co_return Status{};
}

asio::awaitable<Result<Attr>> Client::link(const Credentials& who, InodeId ino, InodeId new_parent,
                                           std::string new_name) {
  LocalChange local_change(*impl_);
  local_change.inode(ino).name(new_parent, new_name);
  rpc::OutMessage out;
  auto l = impl_->begin_mds(out, who).initLink();
  l.setIno(ino.value);
  l.setNewParent(new_parent.value);
  l.setNewName(new_name);
  co_return co_await attr_reply(*impl_, out, false);
}

asio::awaitable<Result<ReaddirPage>> Client::readdir(const Credentials& who, InodeId dir,
                                                     uint64_t cookie, uint32_t max_entries,
                                                     bool plus) {
  // The kernel lists a few KiB at a time; the client asks the MDS for
  // ListingAhead::kAheadEntries at once and answers the next calls from
  // them, for at most the attribute timeout (no read-ahead when that is 0).
  const auto max_age = impl_->attr_ttl();
  const bool ahead = max_age > rpc::Clock::duration::zero();
  const ListingAhead::Key key{dir, plus, who.caller.uid, who.caller.gid};
  auto finish = [&](DirPage page, rpc::Clock::duration age) {
    for (DirEntry& entry : page.entries) {
      // A file another client is writing: the kernel looks it up, and the
      // lookup asks the storage servers for its size (glimpse_size).
      if (!plus || (entry.attr && entry.attr->written_elsewhere)) entry.attr.reset();
      else if (entry.attr) entry.attr = impl_->merge_local(*entry.attr);
    }
    return ReaddirPage{std::move(page), age};
  };
  if (ahead) {
    auto kept = impl_->listing_ahead.take(key, cookie, max_entries, impl_->local_changes,
                                          rpc::Clock::now(), max_age);
    // A plain listing may go on from a plus one (the kernel's first
    // READDIR, at opendir's offset 0, is always plus; its next ones need
    // not be): the same entries, their attributes dropped in finish().
    if (!kept && !plus) {
      kept = impl_->listing_ahead.take({dir, true, who.caller.uid, who.caller.gid}, cookie, max_entries,
                                       impl_->local_changes, rpc::Clock::now(), max_age);
    }
    if (kept) co_return finish(std::move(kept->page), kept->age);
  }
  const uint64_t epoch = impl_->local_changes;
  const auto asked_at = rpc::Clock::now();
  const uint32_t ask = ahead ? std::max(max_entries, ListingAhead::kAheadEntries) : max_entries;
  auto page = co_await readdir_page(*impl_, who, dir, cookie, ask, plus);
  if (!page) co_return page.status();
  if (!ahead || page->entries.size() <= max_entries) co_return finish(std::move(*page), {});
  if (epoch != impl_->local_changes) {
    // A change through this client ran meanwhile: the rest may predate it.
    page->entries.resize(max_entries);
    page->eof = false;
    co_return finish(std::move(*page), {});
  }
  // Keep the whole page and hand the kernel its first part: it may have
  // room for fewer entries than asked and come back for the others.
  impl_->listing_ahead.keep(key, cookie, std::move(page->entries), page->eof, epoch, asked_at);
  auto first = impl_->listing_ahead.take(key, cookie, max_entries, epoch, asked_at, max_age);
  if (!first) co_return Status(Errc::io, "listing read-ahead lost its page");
  co_return finish(std::move(first->page), {});
}

asio::awaitable<Result<StatFs>> Client::statfs(const Credentials& who) {
  auto decode = [](mp::Reply::StatfsReply::Reader s) {
    StatFs fs;
    fs.total_bytes = s.getTotalBytes();
    fs.free_bytes = s.getFreeBytes();
    fs.total_inodes = s.getTotalInodes();
    fs.free_inodes = s.getFreeInodes();
    fs.block_size = s.getBlockSize() ? s.getBlockSize() : 4096;
    fs.name_max = s.getNameMax() ? s.getNameMax() : 255;
    return fs;
  };
  // Each member of an MDS cluster counts the inodes of its own file sets:
  // ask every member (a second each; df must not hang on a dead one) and
  // add up what they use. The bytes are the storage servers', the same on all.
  std::optional<StatFs> sum;
  if (config_.mds.size() > 1) {
    uint64_t used = 0;
    for (const auto& member : config_.mds) {
      rpc::Peer* peer = impl_->mds_peer(MdsId(member.id));
      if (!peer) continue;
      rpc::OutMessage one;
      impl_->begin_mds(one, who).setStatfs();
      auto reply = co_await peer->call(one, {}, std::chrono::milliseconds(1000));
      if (!reply) continue;
      StatFs fs = decode((*reply)->body<mp::Reply>().getStatfs());
      used += fs.total_inodes - std::min(fs.total_inodes, fs.free_inodes);
      if (!sum) sum = fs;
    }
    if (sum) sum->free_inodes = sum->total_inodes - std::min(sum->total_inodes, used);
  }
  if (sum) co_return *sum;
  rpc::OutMessage out;
  impl_->begin_mds(out, who).setStatfs();
  auto reply = co_await impl_->call_mds(out, true);
  if (!reply) co_return reply.status();
  co_return decode((*reply)->body<mp::Reply>().getStatfs());
}

asio::awaitable<Status> Client::access(const Credentials& who, InodeId ino, uint32_t mask) {
  rpc::OutMessage out;
  auto a = impl_->begin_mds(out, who).initAccess();
  a.setIno(ino.value);
  a.setMask(mask);
  co_return stale_if_gone(co_await none_reply(*impl_, out, true));
}

// --- extended attributes (user.pvfs.layout is virtual) ------------------------

void Client::on_entry_replaced(EntryReplaced callback) { impl_->entry_replaced = std::move(callback); }

asio::awaitable<Status> Client::make_fileset(const Credentials& who, InodeId dir, std::string_view how) {
  LocalChange local_change(*impl_);
  local_change.inode(dir);
  if (how != "create" && how != "create\n")
    co_return Status(Errc::invalid_argument, "user.pvfs.fileset can only be set to \"create\"");
  rpc::OutMessage out;
  impl_->begin_mds(out, who).initMakeFileSet().setIno(dir.value);
  auto reply = co_await impl_->call_mds(out, false);
  if (!reply) co_return reply.status();
  auto made = (*reply)->body<mp::Reply>().getFileSet();
  if (impl_->entry_replaced) impl_->entry_replaced(InodeId(made.getParent()), made.getName().cStr());
  co_return Status{};
}

asio::awaitable<Status> Client::setxattr(const Credentials& who, InodeId ino, std::string name,
                                         std::string value, uint32_t flags) {
  LocalChange local_change(*impl_);
  local_change.inode(ino);
  if ((name == kDispatchStatsXattr || name == kClientStatsXattr) && ino == kRootInode)
    co_return Status(Errc::not_permitted, name + " is read-only");
  if (name == kFileSetXattr) co_return co_await make_fileset(who, ino, value);
  if (name == kIoStepXattr) co_return impl_->io_command(who.job_id, value);
  impl_->post_op_dirs.erase(ino);
  rpc::OutMessage out;
  auto req = impl_->begin_mds(out, who);
  if (name == kLayoutXattr) {
    auto policy = parse_policy(value);
    if (!policy) co_return policy.status();
    auto s = req.initSetLayout();
    s.setIno(ino.value);
    rpc::to_wire(*policy, s.initPolicy());
    co_return stale_if_gone(co_await none_reply(*impl_, out, true));
  }
  impl_->forget_xattr(ino, name);
  auto s = req.initSetxattr();
  s.setIno(ino.value);
  s.setName(name);
  s.setValue(kj::arrayPtr(reinterpret_cast<const kj::byte*>(value.data()), value.size()));
  s.setFlags(flags);
  co_return stale_if_gone(co_await none_reply(*impl_, out, false));
}

asio::awaitable<Result<std::string>> Client::getxattr(const Credentials& who, InodeId ino,
                                                      std::string name) {
  if (name == kDispatchStatsXattr && ino == kRootInode) {
    const DispatchStats& d = impl_->stats;
    co_return fmt::format(
        "policy={} rounds={} stale_rounds={} probes={} probe_round_us={:.0f} pieces_home={} "
        "pieces_redirected={} fallbacks={}",
        sched::policy_name(impl_->dispatch.policy), d.rounds, d.stale_rounds, d.probes,
        d.rounds ? static_cast<double>(d.probe_ns) / d.rounds / 1000.0 : 0.0, d.pieces_home,
        d.pieces_redirected, d.fallbacks);
  }
  if (name == kClientStatsXattr && ino == kRootInode) {
    const DispatchStats& d = impl_->stats;
    co_return impl_->mount_stats.render(fmt::format(
        "pieces_home {}\npieces_redirected {}\nwrite_fallbacks {}\npieces_spilled {}\nprobe_rounds {}\n"
        "dir_leases_taken {}\nlookups_by_lease {}\n",
        d.pieces_home, d.pieces_redirected, d.fallbacks, d.pieces_spilled, d.rounds, impl_->dir_leases_taken,
        impl_->lookups_by_lease));
  }
  if (name == kIoStepXattr) co_return impl_->io_state(who.job_id);
  if (name.starts_with(std::string(kIoStepXattr) + ".")) co_return impl_->io_state(name.substr(17));
  if (name == kFileSetXattr) {
    // Asked of the MDS, so a stale handle to a directory that became a file
    // set fails (ESTALE, and the kernel looks it up again) instead of naming
    // the old set.
    auto attr = co_await getattr(who, ino);
    if (!attr) co_return attr.status();
    co_return std::to_string(ino.fileset().value);
  }
  if (name == kLayoutXattr) {
    auto attr = co_await getattr(who, ino);
    if (!attr) co_return attr.status();
    if (S_ISREG(attr->mode)) co_return format_layout(attr->layout);
    if (!S_ISDIR(attr->mode)) co_return Status(Errc::no_data);
    rpc::OutMessage out;
    impl_->begin_mds(out, who).initGetLayoutPolicy().setIno(ino.value);
    auto reply = co_await impl_->call_mds(out, true);
    if (!reply) co_return reply.status();
    co_return format_policy(rpc::from_wire((*reply)->body<mp::Reply>().getLayoutPolicy()));
  }
  if (const auto* cached = impl_->cached_xattr(ino, name)) {
    ++impl_->mount_stats.cache_hits;
    if (!cached->value) co_return Status(Errc::no_data);
    co_return *cached->value;
  }
  rpc::OutMessage out;
  auto g = impl_->begin_mds(out, who).initGetxattr();
  g.setIno(ino.value);
  g.setName(name);
  auto reply = stale_if_gone(co_await impl_->call_mds(out, true));
  if (reply.code() == Errc::no_data) impl_->remember_xattr(ino, name, std::nullopt);
  if (!reply) co_return reply.status();
  auto data = (*reply)->body<mp::Reply>().getXattr();
  std::string value(reinterpret_cast<const char*>(data.begin()), data.size());
  impl_->remember_xattr(ino, name, value);
  co_return value;
}

asio::awaitable<Result<std::vector<std::string>>> Client::listxattr(const Credentials& who,
                                                                    InodeId ino) {
  rpc::OutMessage out;
  impl_->begin_mds(out, who).initListxattr().setIno(ino.value);
  auto reply = stale_if_gone(co_await impl_->call_mds(out, true));
  if (!reply) co_return reply.status();
  std::vector<std::string> names;
  // user.pvfs.layout is deliberately not listed: cp -a, rsync -X and tar
  // --xattrs would copy it onto files that already hold data (EBUSY).
  for (auto n : (*reply)->body<mp::Reply>().getXattrNames()) names.emplace_back(n.cStr());
  co_return names;
}

asio::awaitable<Status> Client::removexattr(const Credentials& who, InodeId ino, std::string name) {
  LocalChange local_change(*impl_);
  local_change.inode(ino);
  if (name == kLayoutXattr) {
    // Removing a directory's layout returns it to the cluster defaults.
    co_return co_await setxattr(who, ino, name, "", 0);
  }
  impl_->forget_xattr(ino, name);
  impl_->post_op_dirs.erase(ino);
  rpc::OutMessage out;
  auto r = impl_->begin_mds(out, who).initRemovexattr();
  r.setIno(ino.value);
  r.setName(name);
  co_return stale_if_gone(co_await none_reply(*impl_, out, false));
}

asio::awaitable<Result<std::vector<StorageServer>>> Client::servers() {
  Status st = co_await impl_->refresh_servers();
  if (!st.ok()) co_return st;
  std::vector<StorageServer> out;
  for (auto& [id, info] : impl_->server_info) out.push_back(info);
  co_return out;
}

}  // namespace pvfs
