#include "mds/mds_service.h"
#include "mds/wall_clock.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "mds/permissions.h"
#include "shared/log.h"
#include "shared/log_level.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/request_limits.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/frame.h"
#include "shared/rpc/request_log.h"
#include "shared/rpc/metrics_wire.h"
#include "shared/rpc/mds_route.h"
#include "shared/rpc/origin.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;

namespace {

std::string_view text(capnp::Text::Reader t) { return {t.begin(), t.size()}; }

// The largest file size: st_size is a signed off_t.
constexpr uint64_t kMaxFileBytes = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

}  // namespace

MdsService::MdsService(asio::io_context& io, const Config& config, const Secret& key, uint32_t id,
                       FileSetCatalog& filesets, MdsCluster& cluster, asio::thread_pool& sync_pool)
    : io_(io),
      config_(config),
      key_(key),
      id_(id),
      filesets_(filesets),
      cluster_(cluster),
      sync_pool_(sync_pool),
      registry_(milliseconds(config.heartbeat_timeout_ms)),
      requests_(rpc::union_names(capnp::Schema::from<mp::Request>())),
      sync_timer_(io),
      orphan_timer_(io),
      writer_timer_(io),
      iosched_(io, config, cluster) {
  for (const auto& text : config.root_squash_except) {
    asio::error_code ec;
    auto addr = asio::ip::make_address(text, ec);
    if (!ec) squash_exempt_.push_back(addr);  // Config::load checked the syntax
  }
}

bool MdsService::squashes(const rpc::Connection& conn) const {
  if (!config_.root_squash || conn.peer_identity().kind != rpc::Kind::client) return false;
  asio::error_code ec;
  auto from = asio::ip::make_address(conn.peer_address(), ec);
  if (ec) return true;
  return std::find(squash_exempt_.begin(), squash_exempt_.end(), from) == squash_exempt_.end();
}

void MdsService::start() {
  // Servers we knew before a restart count as alive until their heartbeat
  // is overdue, so files can be created right away.
  cluster_.detach_local = [this](FileSetId set) { return detach(set); };
  // The registry is kept in file set 0 by the member that holds it; the
  // others learn the servers from their heartbeats within a second.
  NamespaceStore* root = filesets_.find(kRootInode);
  if (auto known = root ? root->load_servers() : Result<std::vector<StoredServer>>(std::vector<StoredServer>{})) {
    auto now = std::chrono::steady_clock::now();
    for (const auto& s : *known)
      registry_.heard_from({ServerId(s.id), s.address, s.capacity_bytes, s.free_bytes, {}}, now);
  }
  asio::co_spawn(io_, sync_loop(), asio::detached);
  asio::co_spawn(io_, orphan_loop(), asio::detached);
  asio::co_spawn(io_, writer_loop(), asio::detached);
  iosched_.start();
}

void MdsService::stop() {
  stopped_ = true;
  sync_timer_.cancel();
  orphan_timer_.cancel();
  writer_timer_.cancel();
  iosched_.stop();
  for (auto& [id, peer] : storage_peers_) peer->close();
}

asio::awaitable<void> MdsService::sync_loop() {
  while (!stopped_) {
    sync_timer_.expires_after(milliseconds(config_.mds_sync_interval_ms));
    asio::error_code ec;
    co_await sync_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    // mdb_env_sync only flushes the file; it may run beside the writer thread.
    // Each store is held by this copy of the list while it syncs, even if
    // its file set is deleted meanwhile.
    auto stores = filesets_.stores();
    Status st = co_await rpc::run_blocking(sync_pool_, [&stores] {
      Status first;
      for (const auto& s : stores)
        if (Status one = s->sync(); !one.ok() && first.ok()) first = one;
      return first;
    });
    if (!st.ok()) spdlog::error("metadata sync failed: {}", st.to_string());
  }
}

std::shared_ptr<rpc::Peer> MdsService::storage_peer(ServerId id) {
  const auto* entry = registry_.find(id);
  if (!entry) return nullptr;
  auto ep = parse_endpoint(entry->address);
  if (!ep) return nullptr;
  auto& peer = storage_peers_[id];
  if (!peer || !(peer->address() == *ep)) {
    if (peer) peer->close();
    peer = std::make_shared<rpc::Peer>(io_.get_executor(), *ep,
                                       rpc::Auth(key_, {rpc::Kind::mds, id_}, config_.encrypt),
                                       milliseconds(config_.connect_timeout_ms));
  }
  return peer;
}

std::vector<ServerId> MdsService::cluster_servers() const {
  std::vector<ServerId> out;
  for (const auto& s : config_.servers) out.push_back(ServerId(s.id));
  for (const auto& e : registry_.all())
    if (std::find(out.begin(), out.end(), e.id) == out.end()) out.push_back(e.id);
  return out;
}

Layout MdsService::layout_for_policy(const LayoutPolicy& policy) {
  LayoutPolicy defaults{config_.stripe_size, config_.stripe_count, {}};
  // Where the MDS chooses, a full server gets no part of a new file; a
  // layout that names its servers gets them while they are alive.
  const auto now = std::chrono::steady_clock::now();
  return choose_layout(policy, defaults,
                       policy.servers.empty() ? registry_.with_room(now, config_.full_percent)
                                              : registry_.live(now),
                       rng_());
}

Result<Layout> MdsService::layout_for_new_file(NamespaceStore& store, InodeId parent) {
  auto policy = store.get_layout_policy(parent);
  if (!policy) return policy.status();
  Layout layout = layout_for_policy(*policy);
  if (!layout.valid()) return Status(Errc::io, "no storage server is alive");
  return layout;
}

asio::awaitable<void> MdsService::handle(std::shared_ptr<rpc::Connection> conn,
                                         std::unique_ptr<rpc::InMessage> msg) {
  const uint64_t id = msg->id();
  const auto started = std::chrono::steady_clock::now();
  auto req = msg->body<mp::Request>();
  const rpc::Origin origin = rpc::origin_of(*msg);
  jobs_.count(text(msg->envelope().getJobId()), 0, 0);
  // Root squash applies to what clients ask, not to daemons' own requests.
  const Caller caller = squashes(*conn) ? squash_root(rpc::from_wire(req.getCaller()))
                                        : rpc::from_wire(req.getCaller());
  const Timespec now = wall_now();
  rpc::OutMessage out;
  auto reply = out.init_body<mp::Reply>();
  Status failure;

  auto attr_or = [&](Result<Attr> r) {
    if (r) rpc::to_wire(*r, reply.initAttr());
    else failure = r.status();
  };
  auto none_or = [&](Status st) {
    if (st.ok()) reply.setNone();
    else failure = st;
  };
  // The store of the file set `ino` is in; nullptr (and the failure set)
  // when this server holds no such file set.
  auto at = [&](uint64_t ino) -> NamespaceStore* {
    NamespaceStore* s = filesets_.find(InodeId(ino));
    if (!s) failure = Status(Errc::not_found, fmt::format("no file set {} here", InodeId(ino).fileset().value));
    return s;
  };

  // The file set the request concerns must be served here (the client
  // routes by the same function); a slowed member first makes it wait.
  const std::optional<FileSetId> route = rpc::route_of(req);
  std::optional<MdsCluster::InFlight> in_flight;
  if (route) {
    if (cluster_.emulating()) co_await cluster_.emulate(started);  // no coroutine frame when off
    if (Status admitted = cluster_.admit(*route); !admitted.ok()) {
      rpc::log_request(*msg, capnp::toDynamic(req), admitted, std::chrono::steady_clock::now() - started);
      co_return co_await conn->reply_error(id, admitted);
    }
    if (detached_.count(route->value)) {
      Status gone(Errc::not_found, fmt::format("file set {} was removed", route->value));
      co_return co_await conn->reply_error(id, gone);
    }
    in_flight.emplace(&cluster_, route->value);
  }
  if (MdsCluster::is_cluster_request(req)) failure = co_await cluster_.handle(req, *msg, reply);
  if (IoschedHost::is_iosched_request(req)) failure = iosched_.handle(req, reply);

  switch (req.which()) {
    case mp::Request::LOOKUP: {
      auto r = req.getLookup();
      if (auto* s = at(r.getParent())) {
        auto found = s->lookup(caller, InodeId(r.getParent()), text(r.getName()));
        attr_or(co_await with_root_attr(s->fileset(), std::move(found), origin));
      }
      break;
    }
    case mp::Request::GETATTR:
      if (auto* s = at(req.getGetattr().getIno())) attr_or(s->getattr(InodeId(req.getGetattr().getIno())));
      break;
    case mp::Request::SETATTR: {
      auto r = req.getSetattr();
      SetAttr change;
      change.mask = r.getMask();
      change.mode = r.getMode();
      change.uid = r.getUid();
      change.gid = r.getGid();
      change.size = r.getSize();
      change.atime = rpc::from_wire(r.getAtime());
      change.mtime = rpc::from_wire(r.getMtime());
      if ((change.mask & kSetSize) && change.size > kMaxFileBytes) {
        failure = Status(Errc::too_big, fmt::format("size {} is past the largest file size", change.size));
        break;
      }
      if (auto* s = at(r.getIno())) attr_or(s->setattr(caller, InodeId(r.getIno()), change, now));
      break;
    }
    case mp::Request::MKNOD: {
      auto r = req.getMknod();
      auto* s = at(r.getParent());
      if (!s) break;
      Layout layout;
      if (S_ISREG(r.getMode())) {
        auto chosen = layout_for_new_file(*s, InodeId(r.getParent()));
        if (!chosen) {
          failure = chosen.status();
          break;
        }
        layout = std::move(*chosen);
      }
      attr_or(s->mknod(caller, InodeId(r.getParent()), text(r.getName()), r.getMode(),
                           r.getRdev(), layout, now));
      break;
    }
    case mp::Request::MKDIR: {
      auto r = req.getMkdir();
      if (r.getParent() == kRootInode.value && config_.fileset_per_top_directory)
        attr_or(mkdir_fileset(caller, text(r.getName()), r.getMode(), now));
      else if (auto* s = at(r.getParent()))
        attr_or(s->mkdir(caller, InodeId(r.getParent()), text(r.getName()), r.getMode(), now));
      break;
    }
    case mp::Request::UNLINK: {
      auto r = req.getUnlink();
      auto* s = at(r.getParent());
      if (!s) break;
      auto result = s->unlink(caller, InodeId(r.getParent()), text(r.getName()),
                                  r.getKeepOpen(), now);
      if (!result) {
        failure = result.status();
        break;
      }
      auto u = reply.initUnlink();
      u.setIno(result->ino.value);
      u.setNlink(result->nlink);
      break;
    }
    case mp::Request::RMDIR: {
      auto r = req.getRmdir();
      if (auto* s = at(r.getParent()))
        none_or(co_await rmdir(*s, caller, InodeId(r.getParent()), text(r.getName()), now, origin));
      break;
    }
    case mp::Request::SYMLINK: {
      auto r = req.getSymlink();
      if (auto* s = at(r.getParent()))
        attr_or(s->symlink(caller, InodeId(r.getParent()), text(r.getName()),
                             text(r.getTarget()), now));
      break;
    }
    case mp::Request::READLINK: {
      auto* s = at(req.getReadlink().getIno());
      if (!s) break;
      auto target = s->readlink(InodeId(req.getReadlink().getIno()));
      if (target) reply.setReadlink(*target);
      else failure = target.status();
      break;
    }
    case mp::Request::RENAME: {
      auto r = req.getRename();
      // Between file sets as between file systems: mv copies.
      if (InodeId(r.getParent()).fileset() != InodeId(r.getNewParent()).fileset()) {
        failure = Status(Errc::cross_device, "another file set");
        break;
      }
      auto* s = at(r.getParent());
      if (!s) break;
      auto result = s->rename(caller, InodeId(r.getParent()), text(r.getName()),
                                  InodeId(r.getNewParent()), text(r.getNewName()), r.getFlags(), now,
                                  r.getKeepOpen());
      none_or(result.status());
      break;
    }
    case mp::Request::LINK: {
      auto r = req.getLink();
      if (InodeId(r.getIno()).fileset() != InodeId(r.getNewParent()).fileset()) {
        failure = Status(Errc::cross_device, "another file set");
        break;
      }
      if (auto* s = at(r.getIno()))
        attr_or(s->link(caller, InodeId(r.getIno()), InodeId(r.getNewParent()),
                          text(r.getNewName()), now));
      break;
    }
    case mp::Request::READDIR: {
      auto r = req.getReaddir();
      uint32_t max = std::min<uint32_t>(r.getMaxEntries(), 4096);
      auto* s = at(r.getIno());
      if (!s) break;
      auto page = s->readdir(caller, InodeId(r.getIno()), r.getCookie(), max, r.getPlus());
      if (!page) {
        failure = page.status();
        break;
      }
      if (r.getPlus()) add_root_attrs(*page);
      auto d = reply.initReaddir();
      d.setEof(page->eof);
      auto list = d.initEntries(static_cast<unsigned>(page->entries.size()));
      for (size_t i = 0; i < page->entries.size(); ++i) {
        const auto& e = page->entries[i];
        list[i].setName(e.name);
        list[i].setIno(e.ino.value);
        list[i].setMode(e.mode);
        list[i].setCookie(e.cookie);
        if (e.attr) rpc::to_wire(*e.attr, list[i].initAttr());
      }
      break;
    }
    case mp::Request::SETXATTR: {
      auto r = req.getSetxattr();
      auto value = r.getValue();
      if (auto* s = at(r.getIno()))
        none_or(s->setxattr(caller, InodeId(r.getIno()), text(r.getName()),
                              std::string_view(reinterpret_cast<const char*>(value.begin()),
                                               value.size()),
                              r.getFlags()));
      break;
    }
    case mp::Request::GETXATTR: {
      auto r = req.getGetxattr();
      auto* s = at(r.getIno());
      if (!s) break;
      auto value = s->getxattr(caller, InodeId(r.getIno()), text(r.getName()));
      if (value)
        reply.setXattr(kj::arrayPtr(reinterpret_cast<const kj::byte*>(value->data()), value->size()));
      else
        failure = value.status();
      break;
    }
    case mp::Request::LISTXATTR: {
      auto* s = at(req.getListxattr().getIno());
      if (!s) break;
      auto names = s->listxattr(caller, InodeId(req.getListxattr().getIno()));
      if (!names) {
        failure = names.status();
        break;
      }
      auto list = reply.initXattrNames(static_cast<unsigned>(names->size()));
      for (size_t i = 0; i < names->size(); ++i) list.set(i, (*names)[i]);
      break;
    }
    case mp::Request::REMOVEXATTR: {
      auto r = req.getRemovexattr();
      if (auto* s = at(r.getIno())) none_or(s->removexattr(caller, InodeId(r.getIno()), text(r.getName())));
      break;
    }
    case mp::Request::STATFS: {
      auto s = reply.initStatfs();
      uint64_t total = 0, free = 0;
      auto now_steady = std::chrono::steady_clock::now();
      for (const auto& e : registry_.all()) {
        if (!registry_.is_live(e.id, now_steady)) continue;
        total += e.capacity_bytes;
        free += e.free_bytes;
      }
      uint64_t inodes = 0;
      for (const auto& set : filesets_.stores())
        if (auto n = set->inode_count()) inodes += *n;
      const uint64_t kInodeBudget = uint64_t{1} << 32;  // inode numbers are not the limit
      s.setTotalBytes(total);
      s.setFreeBytes(free);
      s.setTotalInodes(kInodeBudget);
      s.setFreeInodes(kInodeBudget - std::min(kInodeBudget, inodes));
      s.setBlockSize(4096);
      s.setNameMax(255);
      break;
    }
    case mp::Request::ACCESS: {
      auto r = req.getAccess();
      if (auto* s = at(r.getIno())) none_or(s->access(caller, InodeId(r.getIno()), r.getMask()).status());
      break;
    }
    case mp::Request::OPEN: {
      auto r = req.getOpen();
      if (auto* s = at(r.getIno())) attr_or(s->check_open(caller, InodeId(r.getIno()), r.getMask()));
      break;
    }
    case mp::Request::UPDATE_SIZE: {
      auto r = req.getUpdateSize();
      if (r.getSize() > kMaxFileBytes) {
        failure = Status(Errc::too_big, fmt::format("size {} is past the largest file size", r.getSize()));
        break;
      }
      auto* s = at(r.getIno());
      if (!s) break;
      const InodeId ino(r.getIno());
      // Nothing to record (a writer only announcing itself): no commit.
      auto attr = s->getattr(ino);
      if (attr && (!S_ISREG(attr->mode) || r.getSize() > attr->size || r.getTouchMtime()))
        attr = s->update_size(ino, r.getSize(), r.getTouchMtime(), now);
      if (attr && r.getWriter() == mp::Request::UpdateSize::Writer::STARTS) writer_starts(conn, ino);
      if (attr && r.getWriter() == mp::Request::UpdateSize::Writer::STOPS) writer_stops(conn.get(), ino);
      attr_or(std::move(attr));
      break;
    }
    case mp::Request::SYNC_FILE_SET: {
      const InodeId ino(req.getSyncFileSet().getIno());
      if (at(ino.value)) none_or(co_await sync_fileset(ino.fileset()));
      break;
    }
    case mp::Request::GET_SERVERS: {
      auto all = registry_.all();
      auto list = reply.initServers(static_cast<unsigned>(all.size()));
      auto now_steady = std::chrono::steady_clock::now();
      for (size_t i = 0; i < all.size(); ++i) {
        list[i].setId(all[i].id.value);
        list[i].setAddress(all[i].address);
        list[i].setCapacityBytes(all[i].capacity_bytes);
        list[i].setFreeBytes(all[i].free_bytes);
        list[i].setAlive(registry_.is_live(all[i].id, now_steady));
      }
      break;
    }
    case mp::Request::REGISTER_SERVER:
    case mp::Request::HEARTBEAT: {
      auto r = req.isRegisterServer() ? req.getRegisterServer() : req.getHeartbeat();
      auto ep = parse_endpoint(text(r.getAddress()));
      if (!ep) {
        failure = ep.status();
        break;
      }
      failure = check_registration(config_, r.getId(), *ep);
      if (failure.ok() && conn->peer_identity() != rpc::Identity{rpc::Kind::server, r.getId()})
        failure = Status(Errc::not_permitted,
                         fmt::format("{} may not register as storage server {}",
                                     rpc::to_string(conn->peer_identity()), r.getId()));
      if (!failure.ok()) {
        spdlog::warn("refused registration from {}: {}", conn->peer(), failure.detail());
        break;
      }
      ServerRegistry::Entry entry{ServerId(r.getId()), std::string(text(r.getAddress())),
                                  r.getCapacityBytes(), r.getFreeBytes(), {}};
      if (registry_.heard_from(entry, std::chrono::steady_clock::now())) {
        spdlog::info("storage server {} registered at {}", r.getId(), entry.address);
        NamespaceStore* root = filesets_.find(kRootInode);
        if (root && !cluster_.moving(root->fileset()))
          none_or(root->save_server(StoredServer{r.getId(), entry.address, entry.capacity_bytes,
                                                 entry.free_bytes}));
        else
          reply.setNone();
      } else {
        reply.setNone();
      }
      break;
    }
    case mp::Request::STATUS: {
      auto s = reply.initStatus();
      s.setKind("mds");
      s.setId(id_);
      s.setVersion(PVFS_VERSION);
      s.setUptimeMs(std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() -
                                                             started_).count());
      jobs_.fill(s, 100);
      break;
    }
    case mp::Request::SET_LAYOUT: {
      auto r = req.getSetLayout();
      InodeId ino(r.getIno());
      LayoutPolicy policy = rpc::from_wire(r.getPolicy());
      // A stripe must be whole pages and fit in one storage request (rpc/frame.h).
      if (policy.stripe_size % 4096 != 0 || policy.stripe_size > rpc::kMaxDataBytes) {
        failure = Status(Errc::invalid_argument,
                         fmt::format("stripe size {} is not a multiple of 4096 up to {}",
                                     policy.stripe_size, rpc::kMaxDataBytes));
        break;
      }
      if (policy.servers.size() > kMaxStripeCount || policy.stripe_count > kMaxStripeCount) {
        failure = Status(Errc::invalid_argument,
                         fmt::format("layout policy names {} servers and {} stripes; the limit is {}",
                                     policy.servers.size(), policy.stripe_count, kMaxStripeCount));
        break;
      }
      // A layout naming a server the cluster lacks would make every create
      // under it fail later; refuse it now, when the user can see why.
      if (Status st = check_policy(policy, cluster_servers()); !st.ok()) {
        failure = st;
        break;
      }
      auto* s = at(ino.value);
      if (!s) break;
      auto attr = s->getattr(ino);
      if (!attr) {
        failure = attr.status();
        break;
      }
      if (S_ISDIR(attr->mode)) {
        attr_or(s->set_layout_policy(caller, ino, policy));
      } else if (S_ISREG(attr->mode)) {
        Layout layout = layout_for_policy(policy);
        if (!layout.valid()) {
          failure = Status(Errc::invalid_argument, "no live storage server matches that layout");
          break;
        }
        attr_or(s->set_file_layout(caller, ino, layout));
      } else {
        failure = Status(Errc::invalid_argument, "only files and directories have layouts");
      }
      break;
    }
    case mp::Request::GET_LAYOUT_POLICY: {
      auto* s = at(req.getGetLayoutPolicy().getIno());
      if (!s) break;
      auto policy = s->get_layout_policy(InodeId(req.getGetLayoutPolicy().getIno()));
      if (policy) rpc::to_wire(*policy, reply.initLayoutPolicy());
      else failure = policy.status();
      break;
    }
    case mp::Request::METRICS: {
      const auto families = metrics();
      rpc::to_wire(families, reply.initMetrics(static_cast<unsigned>(families.size())));
      break;
    }
    case mp::Request::SET_LOG_LEVEL:
      none_or(set_log_level(text(req.getSetLogLevel())));
      break;
    case mp::Request::RELEASE_ORPHAN:
      if (auto* s = at(req.getReleaseOrphan().getIno()))
        none_or(s->release_orphan(InodeId(req.getReleaseOrphan().getIno())));
      break;
    case mp::Request::SCAN_FILES: {  // for pvfs-ctl fsck
      auto r = req.getScanFiles();
      const uint32_t max = r.getMax() == 0 || r.getMax() > 4096 ? 4096 : r.getMax();
      const InodeId after(r.getAfter());
      // File set by file set: inode numbers order by their set first.
      FileScan page;
      bool complete = true;
      for (const auto& store : filesets_.stores()) {
        if (store->fileset() < after.fileset()) continue;
        if (page.files.size() == max) {
          complete = false;
          break;
        }
        const InodeId from = store->fileset() == after.fileset() ? after : InodeId::make(store->fileset(), 0);
        auto part = store->scan_files(from, max - static_cast<uint32_t>(page.files.size()));
        if (!part) {
          failure = part.status();
          break;
        }
        page.files.insert(page.files.end(), part->files.begin(), part->files.end());
        if (!part->eof) {
          complete = false;
          break;
        }
      }
      if (!failure.ok()) break;
      page.eof = complete;
      auto list = reply.initFiles();
      list.setEof(page.eof);
      auto files = list.initFiles(static_cast<unsigned>(page.files.size()));
      for (unsigned i = 0; i < page.files.size(); ++i) {
        files[i].setIno(page.files[i].ino.value);
        files[i].setSize(page.files[i].size);
        rpc::to_wire(page.files[i].layout, files[i].initLayout());
        files[i].setOrphan(page.files[i].orphan);
      }
      break;
    }
    case mp::Request::MAKE_FILE_SET: {
      auto made = make_fileset(caller, InodeId(req.getMakeFileSet().getIno()), now);
      if (!made) {
        failure = made.status();
        break;
      }
      auto f = reply.initFileSet();
      f.setParent(made->parent.value);
      f.setName(made->name);
      rpc::to_wire(made->root, f.initRoot());
      break;
    }
    default:
      if (!MdsCluster::is_cluster_request(req) && !IoschedHost::is_iosched_request(req))
        failure = Status(Errc::not_supported, "unknown metadata request");
      break;
  }
  in_flight.reset();
  if (failure.ok() && (req.isUnlink() || req.isRename() || req.isReleaseOrphan())) wake_orphan_collector();
  // An fsync waits for the disk, not for this member's load: not a latency
  // sample for placement.
  if (route && failure.code() != Errc::again && !req.isSyncFileSet())
    cluster_.record(std::chrono::steady_clock::now() - started);
  rpc::log_request(*msg, capnp::toDynamic(req), failure, std::chrono::steady_clock::now() - started);
  requests_.record(static_cast<size_t>(req.which()), !failure.ok(), 0, 0,
                   std::chrono::steady_clock::now() - started);
  if (!failure.ok()) co_return co_await conn->reply_error(id, failure);
  co_await conn->reply(id, out);
}

}  // namespace pvfs::mds
