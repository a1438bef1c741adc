// Private to libpvfs-client: the state behind Client and the helpers its
// parts (client.cc: namespace, client_data.cc: file data, client_mds.cc:
// metadata calls, client_dispatch.cc: write placement) share.
// Everything here runs on the client's single io thread.
#pragma once

#include <array>
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>

#include "fs/client.h"
#include "fs/dir_lease_cache.h"
#include "fs/job_io_clock.h"
#include "fs/listing_ahead.h"
#include "fs/statahead.h"
#include "fs/mds_router.h"
#include "fs/server_reachability.h"
#include "policy/dispatch/dispatcher.h"
#include "policy/dispatch/load_memory.h"
#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/message.h"
#include "shared/rpc/origin.h"
#include "shared/rpc/peer.h"

namespace pvfs {

// Job and request id of the operation `who` is doing, for the envelopes it sends.
inline rpc::Origin origin_of(const Credentials& who) { return {who.job_id, who.request_id}; }

using std::chrono::milliseconds;

// Waits `d` on the calling coroutine's executor.
asio::awaitable<void> pause(milliseconds d);

// The result of an MDS request that names an inode the kernel holds
// (getattr, setattr, open, access, readlink, the xattr calls). If the MDS
// no longer has that inode, the kernel holds a stale handle, as NFS says,
// not a missing name: on ESTALE the kernel looks the path up again and
// retries the call once. So a name another client has just removed or
// replaced (a rename over it, a file set made of its directory) leads to
// what is there now instead of failing with ENOENT, and an open with
// O_CREAT creates the file again.
template <typename R>
R stale_if_gone(R result) {
  if (result.code() == Errc::not_found) return Status(Errc::stale, "inode no longer exists");
  return result;
}

// A client's announcement to the MDS that it writes a file (the writer
// field of UpdateSize): writes wait for it before they are acknowledged.
struct WriterAnnouncement {
  explicit WriterAnnouncement(asio::io_context& io) : wake(io, asio::steady_timer::time_point::max()) {}
  bool done = false;
  Status status;
  asio::steady_timer wake;  // never expires: cancelled when the MDS answered
  // Where the MDS holds the announcement: it is gone with that connection,
  // and with the file set's move to another member (a newer map).
  std::weak_ptr<rpc::Connection> conn;
  uint64_t map_version = 0;
};

struct Client::Impl {
  Impl(asio::io_context& io, const Config& config, const Secret& key);
  ~Impl();

  // Starts an MDS request with the caller, job and request id filled in.
  proto::mds::Request::Builder begin_mds(rpc::OutMessage& out, const Credentials& who);
  // Sends an MDS request to the member that owns its file set (any member
  // for requests without one, see rpc::route_of()), following map changes
  // and file set moves transparently (client_mds.cc, MdsRetry). Idempotent
  // requests are retried while the member is unreachable, up to the RPC
  // timeout; others are retried only when they could not be sent at all
  // (or the member answered staleMap/again, which means it did not apply
  // them). Errors: the member's answer; timeout when the deadline passes;
  // io when a non-idempotent request was lost in flight. `answered_on`, if
  // given, is set to the connection the answer came on.
  asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> call_mds(
      rpc::OutMessage& out, bool idempotent, std::weak_ptr<rpc::Connection>* answered_on = nullptr);
  // Connects to the first configured member that answers and fetches its
  // map. Errors: as Peer::connection() of the last member tried.
  asio::awaitable<Status> start_mds();
  // Asks `member` for its map (one attempt, within `timeout`) and adopts it
  // if newer than the client's. A member that cannot be reached or answers
  // otherwise is skipped; callers compare router.map().version() to see
  // whether the map changed. Concurrent fetches from one member share one
  // request.
  asio::awaitable<void> fetch_map(MdsId member, milliseconds timeout);
  // fetch_map() from every configured member but `except`, all at once.
  asio::awaitable<void> fetch_maps(std::optional<MdsId> except, milliseconds timeout);
  // The connection-managing peer of a configured member; nullptr when the
  // config does not name `member`.
  rpc::Peer* mds_peer(MdsId member);
  // Sends a storage request to `server` (refreshing the server list once if
  // the id is unknown). Storage requests are idempotent and retried likewise.
  asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> call_storage(
      ServerId server, rpc::OutMessage& out, std::span<const std::byte> data);
  // As call_storage, giving up after `timeout` (also while unreachable).
  asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> call_storage(
      ServerId server, rpc::OutMessage& out, std::span<const std::byte> data, milliseconds timeout);
  asio::awaitable<Status> refresh_servers();

  // The open-file state for `ino`, if this client has it open.
  std::shared_ptr<InodeState> open_state(InodeId ino) const;
  // Applies what this client knows better than the MDS (sizes of files it is
  // writing), and learns newer sizes of files it has open.
  Attr merge_local(Attr attr);

  // Tells the MDS that owns `state`'s file that this client writes it, once
  // per announcement (shared by the writes that start meanwhile), and
  // returns when it has answered. A failed announcement is retried by the
  // next write. Errors: those of call_mds.
  asio::awaitable<Status> announce_writer(const Credentials& who, std::shared_ptr<InodeState> state);
  // Whether a write must (wait for an) announce first: none made, one in
  // flight, or the MDS may have lost it (connection gone, map changed).
  bool must_announce(InodeState& state);
  // While some file here has an announcement: every 500 ms, announces
  // again the files whose announcement the MDS may have lost (a restarted
  // MDS, a file set moved to another member), without waiting for their
  // next write. Started by announce_writer(); ends when none is left.
  asio::awaitable<void> watch_writers(std::shared_ptr<bool> alive,
                                      std::shared_ptr<asio::steady_timer> timer);
  bool watching_writers = false;
  std::shared_ptr<bool> alive = std::make_shared<bool>(true);  // false once destroyed
  std::shared_ptr<asio::steady_timer> writer_timer;

  // Sets every object of `layout` to the length `size` implies.
  asio::awaitable<Status> truncate_objects(InodeId ino, const Layout& layout, uint64_t size,
                                           const rpc::Origin& origin);

  asio::io_context& io;
  const Config& config;
  Secret key;
  milliseconds timeout;
  // How long in all a call given the whole `timeout` waits on a daemon that
  // keeps saying it is busy with it (rpc::Connection::call). Calls given
  // less (probes, a fragment holder, block counts) are quick tries and
  // never wait past their timeout.
  milliseconds busy_limit;
  // How long a close waits for the servers' block counts (st_blocks) before
  // it publishes the size without them: a slow server must not hold up close.
  milliseconds blocks_timeout() const { return std::min(timeout, milliseconds(1000)); }
  // Another client is writing the file `attr` describes and has not closed
  // it (Attr::written_elsewhere): raises attr.size to the end of the data
  // its objects hold, as the storage servers report it (as Lustre's
  // glimpse), so that `tail -f` or `ls -l` on this node sees a running
  // job's output grow. Best effort within blocks_timeout(): a server that
  // does not answer leaves the size the others and the MDS give. Callers
  // check the hint first: no coroutine for the files nobody else writes.
  asio::awaitable<void> glimpse_size(Attr& attr, rpc::Origin origin);
  // What a storage server says of one object of a file.
  struct ObjectStat {
    uint64_t end_in_file = 0;  // the file size its data (redirected pieces too) implies
    uint64_t blocks = 0;       // 512-byte blocks it occupies
  };
  struct ObjectStats {
    std::vector<std::optional<ObjectStat>> objects;  // by object index; empty where not asked or failed
    Status status;                                   // the first failure; ok when all asked answered
  };
  // Asks the servers of objects `indexes` of file `ino` for their Stat, all
  // at once, each within `timeout`: what glimpse_size() and
  // Client::allocated_blocks() count.
  asio::awaitable<ObjectStats> stat_objects(const Layout& layout, InodeId ino, std::span<const uint32_t> indexes,
                                            rpc::Origin origin, milliseconds timeout);
  // One peer per configured [[mds]], by id, and where requests go.
  std::map<uint32_t, std::unique_ptr<rpc::Peer>> mds_peers;
  MdsRouter router;

  // Write-behind (Client::write_behind): the limits, the bytes in flight
  // on the whole mount, and a timer that never expires, cancelled whenever
  // a write behind ends, which wakes everything waiting on one.
  uint64_t behind_per_file = 0;  // 0: off
  uint64_t behind_per_mount = 0;
  uint64_t behind_bytes = 0;
  asio::steady_timer behind_wake;
  // Whether a write behind is in flight anywhere on the mount: the calls
  // below are skipped without it, so a mount without write-behind pays
  // nothing for them.
  bool any_behind() const { return behind_bytes > 0; }
  // Waits until `state` has no write behind in flight.
  asio::awaitable<void> drain_behind(InodeState& state);
  // The same for `ino`, if this client has it open.
  asio::awaitable<void> drain_behind(InodeId ino);
  // Waits until no write behind of `state` overlaps [offset, offset + length).
  asio::awaitable<void> wait_overlapping_behind(InodeState& state, uint64_t offset, uint64_t length);
  // Waits until some write behind ends.
  asio::awaitable<void> wait_for_behind();

  // getMap requests in flight, by member: cancelled when the reply is in.
  std::map<uint32_t, std::shared_ptr<asio::steady_timer>> map_fetches;
  // The version of the map each member last sent, and whether the client
  // has warned that a member computes owners differently (once per client).
  std::map<uint32_t, uint64_t> member_map_versions;
  bool warned_placement = false;
  // Whether the client has said that its one configured member is not the
  // whole cluster (once per client).
  bool warned_lone_member = false;
  // Warns once when `member`, holding the very map `version` the client
  // routed by, denies owning `set`: the placement policies differ.
  void warn_if_placement_differs(MdsId member, FileSetId set, uint64_t version);
  // Storage servers by id. Shared: refresh_servers() replaces the peer of a
  // server that moved while calls may still be waiting on the old one.
  std::map<uint32_t, std::shared_ptr<rpc::Peer>> servers;
  std::map<uint32_t, StorageServer> server_info;
  // Servers a call could not reach: later calls to them fail fast.
  ServerReachability reachability{milliseconds(1000)};
  std::map<InodeId, std::weak_ptr<InodeState>> open_inodes;

  // Extended attributes (and their absence) seen recently, kept for the
  // attribute timeout like other attributes. The kernel asks for
  // security.capability before every write; without this cache each 1 MiB
  // write would cost a metadata round trip.
  struct CachedXattr {
    std::optional<std::string> value;  // nullopt: known to be absent
    rpc::Clock::time_point expires;
  };
  std::map<std::pair<InodeId, std::string>, CachedXattr> xattr_cache;
  static constexpr size_t kMaxCachedXattrs = 4096;
  const CachedXattr* cached_xattr(InodeId ino, const std::string& name) const;
  void remember_xattr(InodeId ino, const std::string& name, std::optional<std::string> value);
  void forget_xattr(InodeId ino, const std::string& name) { xattr_cache.erase({ino, name}); }

  // Directories' attributes as the MDS read them just after a change this
  // client made in them (Reply.parentAttr, NFS's post-op attributes). The
  // kernel drops its cached attributes of a directory after each create,
  // mkdir, unlink... in it and asks again (GETATTR) before the next lookup
  // there; the first getattr of that directory within the attribute timeout
  // is answered from here, saving one of a create's three round trips. Each
  // is used once; a setattr, xattr change, rename or rmdir by this client
  // forgets them first. Nothing is kept with an attribute timeout of 0.
  struct PostOpAttr {
    Attr attr;
    rpc::Clock::time_point expires;
  };
  std::map<InodeId, PostOpAttr> post_op_dirs;
  static constexpr size_t kMaxPostOpDirs = 1024;
  void learn_parent_attr(proto::mds::Reply::Reader reply);
  std::optional<Attr> take_post_op_attr(InodeId dir);

  // Listings fetched ahead of the kernel, and the count of changes made
  // through this client (any of which voids them: an entry's attributes
  // must not predate this client's own chmod, write or rename).
  // How long attributes may be cached ([client] attr_timeout_s).
  rpc::Clock::duration attr_ttl() const;
  ListingAhead listing_ahead;
  uint64_t local_changes = 0;
  // Entries fetched ahead of a walk over a directory (fs/statahead.h).
  Statahead statahead;
  // Directories whose every name this client knows, under a lease the MDS
  // recalls before another client adds one (fs/dir_lease_cache.h;
  // fs/client_dir_leases.cc).
  DirLeaseCache dir_leases;
  uint64_t dir_leases_taken = 0;  // granted by the MDS and kept (client_stats)
  uint64_t lookups_by_lease = 0;  // answered "absent" from a lease (client_stats)
  // After a lookup in `dir` found nothing: asks for a lease on it in the
  // background, if none is held or being asked for and this is not the
  // first such miss there lately (DirLeaseCache::missed).
  void maybe_lease_dir(const Credentials& who, InodeId dir);
  // After a lookup in `dir` was answered from its lease: renews the lease
  // in the background when it is past half its term.
  void maybe_renew_dir_lease(const Credentials& who, InodeId dir);
  // Serves the MDS's requests to this client (recallDirLease) on the
  // connections to every member, and ends the leases when one closes.
  void serve_mds_requests();

  // Starts tracking an open file description of `attr` (fresh from the MDS).
  std::shared_ptr<OpenFile> track_open(const Attr& attr, int flags);

  // --- write dispatch (client_dispatch.cc) ---
  // Where one write piece goes, decided in a probe round shared with every
  // piece pending at the same moment.
  struct Placement {
    ServerId server;
    uint64_t round = 0;  // 0: no probe round
    std::shared_ptr<const std::vector<sched::ServerLoad>> seen;  // the round's loads
  };
  asio::awaitable<Placement> place(sched::Piece piece);
  // Writes one piece of object `index` of `ino` at `offset`: home or, as the
  // dispatcher decides, as a fragment elsewhere plus a redirect entry at
  // home (falling back to home when either fails); spilled when home is full.
  asio::awaitable<Status> write_piece(InodeState& state, uint32_t index, uint64_t offset,
                                      std::span<const std::byte> data, bool sync, rpc::Origin origin);
  // write_piece() without the spill.
  asio::awaitable<Status> write_placed(InodeState& state, uint32_t index, uint64_t offset,
                                       std::span<const std::byte> data, bool sync, rpc::Origin origin);
  // The piece's home answered no_space (`full`): another server that
  // answers (the least loaded first, at most kSpillTries) takes it as a
  // fragment and the home records where it went, as for a redirected
  // write; the home pulls it back once it has room (server/maintainer.h).
  // `full` stands when none takes it or the home cannot record the entry.
  asio::awaitable<Status> spill(InodeState& state, uint32_t index, uint64_t offset,
                                std::span<const std::byte> data, bool sync, rpc::Origin origin, Status full);
  static constexpr size_t kSpillTries = 2;
  // A write of `pieces` at `offset` past the end of the file (`state.size`)
  // leaves a hole; an object lying wholly in it would never exist, and fsck
  // could not tell it from a lost one. Adds to `tasks` the creation (empty)
  // of each such object not known to exist, best effort: a failure is not
  // the write's (client_space.cc).
  void make_hole_objects(std::shared_ptr<InodeState> state, uint64_t offset, std::span<const Piece> pieces,
                         rpc::Origin origin, std::vector<asio::awaitable<Status>>& tasks);

  sched::Options dispatch;
  std::mt19937_64 rng{std::random_device{}()};
  struct PendingPlacement {
    sched::Piece piece;
    Placement result;
    bool ready = false;
    std::shared_ptr<asio::steady_timer> done;
  };
  std::vector<std::shared_ptr<PendingPlacement>> unplaced;
  bool round_scheduled = false;
  // Loads the servers reported (write replies, probe answers, and what
  // they had heard of their peers), fresh for config.load_ttl_ms.
  sched::LoadMemory loads_heard;
  DispatchStats stats;
  MountStats mount_stats;
  Client::EntryReplaced entry_replaced;
  // A server with this many bytes outstanding (as last heard, within the
  // load TTL) is overloaded: reads from it are flagged urgent, since a
  // process is blocked on each of them.
  static constexpr uint64_t kOverloadedBytes = uint64_t{64} << 20;
  bool overloaded(ServerId server) const;

  // --- job I/O steps (client_iosteps.cc) ---
  // This client's part in the steps of the jobs that write through it: it
  // holds their data requests until the delegate's scheduler (pvfs-mds(8),
  // mds/iosched_host.h) grants the job a token, and renews its lease.
  struct IoStep {
    bool explicit_step = false;    // begun with user.pvfs.iostep (ends only so, or by lease)
    uint64_t declared = 0;         // bytes; 0: not declared
    std::vector<uint32_t> servers;  // empty: all
    bool granted = false;
    rpc::Clock::time_point confirmed{};  // when the delegate last confirmed the token (request sent)
    rpc::Clock::time_point granted_at{};
    rpc::Clock::time_point last_io{};  // the last admission or completion of a data request
    // For the step's summary in the log (where a hand-over's time goes):
    rpc::Clock::time_point opened{};       // claimed (a transparent step: its first write arrived)
    rpc::Clock::time_point first_write{};  // the first data request admitted with the token
    rpc::Clock::time_point last_done{};    // the last data request completed
    uint64_t requests = 0;                 // data requests admitted
    uint32_t in_flight = 0;            // admitted data requests not completed: the step is not idle
    uint64_t written = 0;
    bool told = false;  // the delegate has answered a claim of this step
  };
  // Waits until `job` may send a data request of `bytes` to `layout`'s
  // servers: at once when the job has no step here and none is to be
  // opened (reads, unless [iosched] reads; no idle_ms; no job), else once
  // its step holds a valid token. A write with [iosched] idle_ms opens a
  // transparent step. When the scheduler cannot be reached for an RPC
  // timeout, requests pass (logged once) until it answers again.
  // `declared`: the caller's PVFS_IOSTEP_BYTES (0: none), the size of a
  // transparent step it opens or of one not yet declared. True when the
  // request was admitted into a step: the caller then calls io_done() when
  // it completes, so a step is never idle while its requests are in flight.
  asio::awaitable<bool> io_admit(const std::string& job, const Layout& layout, uint64_t bytes, bool write,
                                 uint64_t declared = 0);
  // A data request admitted by io_admit() completed. Wakes the loop when
  // the step has nothing in flight, so that its end is timed from now.
  void io_done(const std::string& job);
  // user.pvfs.iostep: "begin [job=J] [bytes=N] [servers=a,b]" or "end [job=J]"
  // (`job` defaults to the caller's). Errors: invalid_argument for anything
  // else; not_found for the end of a job with no step here.
  Status io_command(const std::string& caller_job, std::string_view command);
  // "none", "pending" or "granted".
  std::string io_state(const std::string& job) const;
  bool io_token_valid(const IoStep& step, rpc::Clock::time_point now) const;
  void io_start();
  asio::awaitable<void> io_loop(std::shared_ptr<bool> alive);
  // Moves the steps that are over to io_ends: transparent ones idle for
  // idle_ms, or that wrote all their declared bytes with nothing in
  // flight; explicit ones a lease after their last write or grant.
  void io_close_finished(rpc::Clock::time_point now);
  // When the loop has something to do next (close a step, send): now or later.
  rpc::Clock::time_point io_next_due(rpc::Clock::time_point now) const;
  // Sends every claim and end to the delegate and applies its answer;
  // false when it did not answer.
  asio::awaitable<bool> io_sync();
  rpc::Clock::time_point io_last_sync{};  // when the last ioStep was sent
  bool io_last_failed = false;            // ... and it went unanswered
  // Sends an MDS request built by `build` to the delegate: the member that
  // answered last, then every member in id order past those that say they
  // are not it.
  asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> call_delegate(
      const std::function<void(rpc::OutMessage&)>& build);
  std::map<std::string, IoStep> io_steps;
  std::map<std::string, uint64_t> io_ends;  // steps left, not yet told: bytes written
  uint64_t io_client = 0;                   // this client's lease key (random, never 0)
  milliseconds io_lease{0};
  bool io_running = false;
  std::shared_ptr<asio::steady_timer> io_kick;  // the loop's sleep; cancelled to wake it
  std::optional<uint32_t> io_delegate;

  // --- QoS goals from jobs' environments (client_qos.cc) ---
  // The first I/O of `job` with a PVFS_QOS_RUNTIME of `runtime_ms` (> 0)
  // through this client sets its goal on the delegate, unless it has one
  // (qosSet with fromEnv); in the background, once per job and client.
  void qos_announce(const std::string& job, uint64_t runtime_ms);
  // Each job's I/O time on this mount (fs/job_io_clock.h), stamped with
  // `client_id` on its data requests for a profiling run's T_comp.
  JobIoClock job_io;
  uint64_t client_id = 0;  // random, never 0
  // `who`'s origin for the data requests of one read or write starting
  // now, with the job's I/O time so far; `timed` tells whether to call
  // job_io.end() for it.
  rpc::Origin data_origin(const Credentials& who, bool& timed);
  void job_io_end(const std::string& job);
  std::set<std::string> qos_announced;  // bounded: kMaxQosAnnounced
  static constexpr size_t kMaxQosAnnounced = 4096;
  rpc::Clock::time_point io_unreachable_since{};  // first failure in a row; epoch: none
  bool io_fail_open = false;

  // --- file locks across clients (client_locks.cc) ---
  // One lock request to the owner of `ino`'s file set; notes whether this
  // client still holds something there (renewed by lock_loop()).
  // Operation `op` on `lock` (`waiter`: see mds.capnp Lock). Takes its
  // arguments by value: they live in the coroutine's frame.
  asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> lock_call(Credentials who, InodeId ino,
                                                                     Client::FileLock lock,
                                                                     proto::mds::Request::LockOp op,
                                                                     uint64_t waiter = 0);
  void lock_note(InodeId ino, bool holds);
  // While this client holds locks anywhere: renews each file set's lease
  // every third of it.
  asio::awaitable<void> lock_loop(std::shared_ptr<bool> alive);
  uint64_t lock_client = 0;                // this client's lock lease key (random, never 0)
  milliseconds lock_lease{0};
  std::map<uint16_t, InodeId> lock_sets;   // file sets holding our locks: an inode of each
  bool lock_renewing = false;

  // Unlinked files open here (InodeState::unlinked) are kept by the MDS
  // under a lease (mds/orphan_holds.h). orphan_note() starts orphan_loop(),
  // which renews each hold every third of the lease while any is open
  // (client_orphans.cc).
  void orphan_note();
  asio::awaitable<void> orphan_loop(std::shared_ptr<bool> alive);
  milliseconds orphan_lease{0};  // as the MDS last said; 0: the config's
  bool orphan_renewing = false;
  // Every file open here has an open lease at the MDS, which keeps it if
  // another client removes it (mds/open_leases.h): open_note() starts
  // open_loop(), which renews them every third of the lease while any file
  // is open (openFiles, one request per file set).
  void open_note();
  asio::awaitable<void> open_loop(std::shared_ptr<bool> alive);
  // Whether the MDS deleted `ino`, or no longer keeps it unlinked, so that
  // holes read from it are lost data, not zeros. Errors: the MDS's.
  asio::awaitable<Result<bool>> gone_at_mds(InodeId ino);
  milliseconds open_lease{0};  // as the MDS last said; 0: the config's
  bool open_renewing = false;

 private:
  asio::awaitable<void> run_round();

  // fetch_map() without the sharing.
  asio::awaitable<void> ask_map(MdsId member, milliseconds timeout);
};

// Marks a change made through this client, when it starts and when it
// ends: no listing fetched while it ran is served (Impl::listing_ahead),
// and statahead forgets the names and inodes it concerns (fs/statahead.h).
class LocalChange {
 public:
  explicit LocalChange(Client::Impl& impl) : impl_(impl) { ++impl_.local_changes; }
  ~LocalChange() {
    ++impl_.local_changes;
    for (const auto& [dir, name] : names_) {
      impl_.statahead.forget(dir, name);
      impl_.dir_leases.added(dir, name);
    }
    for (size_t i = 0; i < inode_count_; ++i) impl_.statahead.forget_inode(inodes_[i]);
  }
  LocalChange(const LocalChange&) = delete;
  LocalChange& operator=(const LocalChange&) = delete;

  // The change concerns `name` in `dir` (created, removed or renamed). A
  // directory lease counts it as present from now on: harmless for a
  // removal (the MDS is asked), needed for an addition.
  LocalChange& name(InodeId dir, std::string name) {
    impl_.statahead.forget(dir, name);
    impl_.dir_leases.adding(dir, name, SteadyClock::now());
    names_.emplace_back(dir, std::move(name));
    return *this;
  }
  // The change concerns the attributes of `ino` (at most two per change).
  LocalChange& inode(InodeId ino) {
    impl_.statahead.forget_inode(ino);
    if (inode_count_ < inodes_.size()) inodes_[inode_count_++] = ino;
    return *this;
  }

 private:
  Client::Impl& impl_;
  std::vector<std::pair<InodeId, std::string>> names_;
  std::array<InodeId, 2> inodes_{};
  size_t inode_count_ = 0;
};

// Fills a storage ObjectId.
void set_object(proto::storage::ObjectId::Builder b, InodeId ino, uint32_t index);

}  // namespace pvfs
