// The metadata service: answers mds.capnp requests by running them against
// the NamespaceStore, chooses layouts for new files, keeps the registry of
// storage servers, deletes the objects of unlinked files in the background,
// syncs LMDB on a timer and when a client fsyncs, and sets the size of files
// whose writing client died from the storage servers. Owns none of the
// sockets (RpcServer does). Runs on the daemon's single network thread:
// namespace operations execute inline there (a commit is a copy into the
// page cache plus one fdatasync, cheaper than a thread hop and back).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>

#include <asio.hpp>

#include "mds/cluster/mds_cluster.h"
#include "mds/dir_lease_table.h"
#include "mds/fileset_catalog.h"
#include "mds/iosched_host.h"
#include "mds/qos_host.h"
#include "mds/lock_host.h"
#include "mds/open_leases.h"
#include "mds/orphan_holds.h"
#include "mds/group_commit.h"
#include "mds/server_registry.h"
#include "config/config.h"
#include "shared/clock.h"
#include "shared/metrics/open_requests.h"
#include "shared/metrics/request_stats.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/job_counters.h"
#include "shared/rpc/network.h"
#include "shared/rpc/peer.h"

namespace pvfs::mds {

// The directory a request adds a name to (create, mkdir, symlink, link,
// rename's destination), if it adds one: its leases are recalled after it
// succeeds (mds/mds_dir_leases.cc).
std::optional<InodeId> dir_gaining_name(proto::mds::Request::Reader req);

class MdsService {
 public:
  // `filesets`, `cluster`, `sync_pool`, `clock` and `network` must outlive
  // the service. Time (file stamps, server liveness, latencies) comes from
  // `clock`; the background loops (sync, orphans, writers) are paced by
  // asio timers on the steady clock. Storage servers are reached through
  // `network`.
  MdsService(asio::io_context& io, const Config& config, const Secret& key, uint32_t id,
             FileSetCatalog& filesets, MdsCluster& cluster, asio::thread_pool& sync_pool,
             const Clock& clock = real_clock(), rpc::Network& network = rpc::tcp_network());

  // Loads the remembered storage servers and starts the background loops
  // (LMDB sync, orphan collection). Returns at once.
  void start();
  void stop();

  // The RpcServer handler: one request in, exactly one reply out.
  asio::awaitable<void> handle(std::shared_ptr<rpc::Connection> conn,
                               std::unique_ptr<rpc::InMessage> msg);

  // The MDS's counters and gauges as metric families (pvfs-ctl stats and
  // top, /metrics; names in docs/metrics.md). In mds/mds_metrics.cc.
  metrics::Families metrics();
  // Unlinked files of this member's file sets whose objects are not
  // deleted yet (open ones included): the delete backlog. nullopt when LMDB
  // cannot count them. In mds/mds_metrics.cc.
  std::optional<uint64_t> orphan_backlog();
  // Requests being served now (pvfs-ctl health's slow-request check).
  const metrics::OpenRequests& open_requests() const { return open_; }
  // What this MDS knows of the cluster's health (its own requests, the
  // storage servers' heartbeats and space, the members, the delete
  // backlog), for its pvfs_mds_health gauge. In mds/mds_metrics.cc.
  health::Inputs health_inputs();
  // The free bytes of the data directory's disk, measured at most every
  // 100 ms (and again after a request failed for want of space); nullopt
  // when statvfs fails. Below reserve_bytes() new names are refused.
  std::optional<uint64_t> data_free_bytes();
  uint64_t reserve_bytes() const { return uint64_t{config_.mds_reserve_mb} << 20; }

  // ---- for the request handlers (mds/handlers/), on the network thread ----
  FileSetCatalog& filesets() { return filesets_; }
  MdsCluster& cluster() { return cluster_; }
  ServerRegistry& registry() { return registry_; }
  const Config& config() const { return config_; }
  uint32_t id() const { return id_; }
  rpc::JobCounters& jobs() { return jobs_; }
  IoschedHost& iosched() { return iosched_; }
  QosHost& qos() { return qos_; }
  LockHost& locks() { return locks_; }
  std::chrono::steady_clock::time_point started() const { return started_; }
  // Where the handlers read time (the injected clock).
  const Clock& clock() const { return clock_; }

  // Durability (mds/mds_durability.cc): returns once every commit to file
  // set `set` made before the call is on disk. Callers that arrive while a
  // sync runs share the next one. A set that left this MDS meanwhile was
  // synced by its move: ok. Errors: io.
  asio::awaitable<Status> sync_fileset(FileSetId set);
  // UpdateSize.writer: `conn` writes `ino` from now on / no longer.
  void writer_starts(const std::shared_ptr<rpc::Connection>& conn, InodeId ino);
  void writer_stops(const rpc::Connection* conn, InodeId ino);
  // Whether a connection other than `asker` has said it writes `ino` and
  // not yet that it stopped: its size here may be behind the data.
  bool written_by_other(InodeId ino, const rpc::Connection* asker) const;
  // An open of a file whose writer died and whose size is not yet set from
  // the storage servers sets it first (when they answer), so the opener does
  // not read less than a stat showed it a moment before (a client glimpses
  // the size while the writer is alive). Errors are left to writer_loop().
  asio::awaitable<void> settle_dead_writer(InodeId ino);
  // What the storage servers hold of regular file `ino` (laid out as
  // `layout`), all objects asked at once: the file size its data implies
  // (redirected pieces included) and the 512-byte blocks it occupies.
  // Errors: those of the servers (every object must answer).
  struct DataOnServers {
    uint64_t end = 0;
    uint64_t blocks = 0;
  };
  asio::awaitable<Result<DataOnServers>> data_on_servers(InodeId ino, const Layout& layout);

  // Orphans (mds/mds_orphans.cc): a file may have lost its last link (or a
  // held one was closed): counts it, and ends the collector's pause when a
  // full batch is waiting.
  void wake_orphan_collector();
  // A client keeps orphan `ino` open (Unlink.keepOpen, Rename.keepOpen, or
  // its renewal, holdOrphan): it is held for a lease from now on. Its close
  // (releaseOrphan) ends the hold. See mds/orphan_holds.h.
  void hold_orphan(InodeId ino) { orphan_holds_.hold(ino, clock_.now()); }
  void end_orphan_hold(InodeId ino) { orphan_holds_.forget(ino); }
  std::chrono::milliseconds orphan_lease() const { return orphan_holds_.lease(); }
  // `conn`'s client opened regular file `ino`, or has it open still
  // (openFiles): a lease on it (mds/open_leases.h), and a longer hold if
  // the file is an orphan held already.
  void file_opened(InodeId ino, const rpc::Connection* conn);
  std::chrono::milliseconds open_lease() const { return open_leases_.lease(); }
  // `ino` just lost its last link through a request on `except`: when
  // another client's open lease on it runs, the file is held as an orphan
  // (NamespaceStore::hold_orphan) until that lease ends or is renewed.
  void keep_if_open_elsewhere(NamespaceStore& store, InodeId ino, const rpc::Connection* except);

  // Directory leases (mds/mds_dir_leases.cc, mds/dir_lease_table.h). How
  // long one lasts ([mds_tuning] dir_lease_ms; zero: none are given). With
  // several members, at most [mds_cluster] dead_after_ms - lease_ms, less a
  // margin: a member cut off from the others serves until its own lease
  // lapses, and the leases it gave must end before its file sets move.
  std::chrono::milliseconds dir_lease_term() const;
  // `conn`'s client is being told every name in `dir`. Errors: io when the
  // marker that a restart reads (check_leases_marker) cannot be written;
  // then no lease is given.
  Status dir_leased(InodeId dir, const std::shared_ptr<rpc::Connection>& conn);
  // `conn`'s lease on `dir`, if it still runs, lasts a term from now.
  bool dir_lease_renewed(InodeId dir, const rpc::Connection* conn);
  // Before a request that adds a name runs: waits while a restart's grace
  // lasts (check_leases_marker; otherwise returns at once).
  asio::awaitable<void> before_adding_name();
  bool adding_names_waits() const { return SteadyClock::now() < names_wait_until_; }
  // After a name was added to `dir` for `except`: every other holder of a
  // lease on `dir` has answered its recall or seen its lease end.
  asio::awaitable<void> recall_dir_leases(InodeId dir, const rpc::Connection* except);
  // The leased directory a request would remove or replace (rmdir, rename
  // over a directory, makeFileSet), looked up before it runs: a holder
  // answering from its lease would say a name is absent where the MDS would
  // say the directory is stale, and the kernel would not look the path up
  // again. nullopt when there is none (always, while no lease runs).
  std::optional<InodeId> leased_dir_replaced(proto::mds::Request::Reader req);
  // The same for every lease on a directory of `set`, which is leaving.
  asio::awaitable<void> recall_fileset_leases(FileSetId set);

  // Layouts: the layout of a new file under `policy`, its servers chosen
  // among the live ones, full ones left out where the policy names none
  // (may be invalid when no server fits).
  Layout layout_for_policy(const LayoutPolicy& policy);
  // The layout of a new file in directory `parent` of `store`. Errors: those
  // of reading its policy; io when no storage server is alive.
  Result<Layout> layout_for_new_file(NamespaceStore& store, InodeId parent);
  // The cluster's storage servers: those in the config and any other that
  // registered, alive or not.
  std::vector<ServerId> cluster_servers() const;

  // File sets (mds/mds_filesets.cc).
  struct MadeFileSet {
    InodeId parent;
    std::string name;
    Attr root;
  };
  // pvfs-ctl fileset create: empty directory `dir` becomes a new file set's root.
  Result<MadeFileSet> make_fileset(const Caller& caller, InodeId dir, Timespec now);
  // mkdir in the root directory with fileset_per_top_directory.
  Result<Attr> mkdir_fileset(const Caller& caller, std::string_view name, uint32_t mode, Timespec now);
  // rmdir, which also removes an empty file set whose root `name` is
  // (asking its owner first when that is another member).
  asio::awaitable<Status> rmdir(NamespaceStore& store, const Caller& caller, InodeId parent,
                                std::string_view name, Timespec now, rpc::Origin origin);
  // A lookup's answer, with the attributes of another file set's root
  // filled in (from its owner when that is another member).
  asio::awaitable<Result<Attr>> with_root_attr(FileSetId parent_set, Result<Attr> found,
                                               rpc::Origin origin);
  // Fills in the attributes of the entries that are other file sets' roots.
  void add_root_attrs(ReaddirResult& page);

 private:
  asio::awaitable<void> sync_loop();

  // ---- durability (mds/mds_durability.cc) ----
  // The LMDB syncs (Env::sync()) of one file set for clients' fsyncs.
  struct FileSetSync {
    explicit FileSetSync(asio::io_context& io);
    GroupCommit commits;
    Status last;              // the outcome of the last sync finished
    asio::steady_timer wake;  // never expires: cancelled when a sync ends
  };
  // Runs the sync just started in `sync->commits`, and the next ones while
  // callers wait for them.
  asio::awaitable<void> run_syncs(FileSetId set, std::shared_ptr<FileSetSync> sync);
  // Every 200 ms: the files of writers whose connection ended get their
  // size from the storage servers (retried until the servers answer).
  asio::awaitable<void> writer_loop();
  // Grows the size of regular file `ino` to the end of the data its objects
  // hold. Errors: those of the storage servers; again while its file set
  // moves. A file or file set no longer here is not an error.
  asio::awaitable<Status> reconcile_size(InodeId ino);
  // Ends the registrations of `conn` and queues their files for reconcile_size().
  void writer_gone(const rpc::Connection* conn);
  // ---- orphan collection (mds/mds_orphans.cc) ----
  // Deletes unlinked files' objects and forgets the files, full batches
  // back to back; with less than a batch waiting it passes every 200 ms.
  asio::awaitable<void> orphan_loop();
  struct OrphanPass {
    uint64_t purged = 0;  // files forgotten: their objects are gone from every server
    uint64_t left = 0;    // files listed whose objects could not all be deleted
  };
  // One pass over `store`'s orphans in inode order, batch by batch.
  asio::awaitable<OrphanPass> collect_orphans(std::shared_ptr<NamespaceStore> store);
  // Removes the objects of `orphans`, one request per server for the whole
  // batch, all servers at once. Returns the files whose objects are gone
  // from every server; files on a server that is down or failed are left
  // for a later pass.
  asio::awaitable<std::vector<InodeId>> delete_objects(std::vector<Orphan> orphans);
  // Gives a lease to the held orphans of file sets loaded here since the
  // last pass, and hands those whose lease lapsed (their client died or
  // was cut off for a whole lease) to the collector.
  void expire_orphan_holds();
  // The connection to storage server `id`, nullptr when it is unknown.
  // Shared so that a call in flight keeps it when the server's address
  // changes meanwhile.
  std::shared_ptr<rpc::Peer> storage_peer(ServerId id);
  // Whether requests on `conn` have root squashed ([security] root_squash):
  // a client's, from an address not in root_squash_except.
  bool squashes(const rpc::Connection& conn) const;

  // ---- file sets (mds/mds_filesets.cc) ----
  // detachFileSet here: the empty file set `set` is about to lose its
  // root's entry; it is deleted once its unlinked files are gone.
  Status detach(FileSetId set);
  // Deletes `store`'s file set once removed from the namespace and its
  // unlinked files' objects are gone.
  void drop_if_detached(NamespaceStore& store);

  asio::io_context& io_;
  const Config& config_;
  const Clock& clock_;
  rpc::Network& network_;
  Secret key_;
  // [security] root_squash_except, parsed once.
  std::vector<asio::ip::address> squash_exempt_;
  // A client on this host (over the local socket) is exempt when one of
  // this host's addresses (loopback or an interface's) is in that list:
  // over TCP it would have come from one of them.
  bool local_exempt_ = false;
  uint32_t id_;
  FileSetCatalog& filesets_;
  MdsCluster& cluster_;
  std::set<uint16_t> detached_;  // file sets removed from the namespace, not yet deleted
  asio::thread_pool& sync_pool_;
  ServerRegistry registry_;
  std::map<ServerId, std::shared_ptr<rpc::Peer>> storage_peers_;
  rpc::JobCounters jobs_;
  metrics::RequestStats requests_;  // by Request union member
  metrics::OpenRequests open_;      // in progress, for the slow-request check
  std::mt19937_64 rng_{std::random_device{}()};
  asio::steady_timer sync_timer_;
  asio::steady_timer orphan_timer_;
  bool orphans_idle_ = false;     // orphan_loop() waits on orphan_timer_
  uint32_t orphans_arrived_ = 0;  // unlinks since the current pass began
  uint64_t orphans_reclaimed_ = 0;  // files whose objects the collector deleted
  OrphanHolds orphan_holds_;
  OpenLeases open_leases_;
  // The store of each file set whose held orphans orphan_holds_ has
  // adopted, and when: a set loaded again (moved back, taken over) is
  // adopted again. For an open lease after that, clients' open leases on
  // the set's files may not have been renewed here yet (they were given
  // to the member before, or before a restart), unless the set had no
  // files then (a new cluster or file set): `files`.
  struct Adopted {
    std::weak_ptr<NamespaceStore> store;
    TimePoint at;
    bool files = true;
  };
  std::map<uint16_t, Adopted> holds_adopted_;
  uint64_t orphan_holds_lapsed_ = 0;  // held orphans given to the collector when their lease lapsed
  std::map<uint16_t, std::shared_ptr<FileSetSync>> syncs_;  // by file set
  std::map<uint16_t, uint64_t> fsync_syncs_;  // syncs done for clients' fsyncs, by file set
  // The files each client connection has said it writes (UpdateSize.writer),
  // keyed by the connection's address and checked against its weak_ptr (an
  // address may be reused once the connection is gone).
  struct Writer {
    std::weak_ptr<rpc::Connection> conn;
    std::set<InodeId> files;
  };
  std::map<const rpc::Connection*, Writer> writers_;
  // The same by file: the connections writing each (written_by_other()).
  std::map<InodeId, std::vector<const rpc::Connection*>> writers_of_;
  void forget_writer_of(InodeId ino, const rpc::Connection* conn);
  // ---- directory leases (mds/mds_dir_leases.cc) ----
  // Asks `lease`'s holder to forget `dir`'s names, or waits its lease out.
  asio::awaitable<void> recall(InodeId dir, DirLeaseTable::Lease lease);
  // At start: if the last run gave leases (its marker file is in the data
  // directory), names wait for one term (names_wait_until_).
  void check_leases_marker();
  std::filesystem::path leases_marker() const;
  bool leases_marked_ = false;  // the marker is written (before the first lease)
  TimePoint names_wait_until_{};  // on the steady clock
  DirLeaseTable dir_leases_;
  uint64_t dir_leases_granted_ = 0;
  uint64_t dir_leases_renewed_ = 0;
  uint64_t dir_leases_recalled_ = 0;
  uint64_t dir_leases_waited_out_ = 0;  // recalls not answered: the lease ran out instead
  // ---- room on the disk (mds/mds_space.cc) ----
  // Whether a request that adds to the namespace may run: the data
  // directory's disk has [mds_tuning] reserve_mb free. Errors: no_space.
  Status admit_growth();
  struct Space {
    std::optional<TimePoint> measured;  // unset: measure at the next request
    std::optional<uint64_t> free;       // unset: statvfs failed
    bool low = false;                   // below the reserve (logged once per episode)
    uint64_t refused = 0;               // requests refused for want of room
  } space_;
  // Files of gone writers waiting for their size, and whether a failure to
  // get it was logged already.
  std::map<InodeId, bool> unreconciled_;
  uint64_t sizes_reconciled_ = 0;   // sizes grown by reconcile_size()
  asio::steady_timer writer_timer_;
  IoschedHost iosched_;  // jobs' I/O steps, while this member is the delegate
  QosHost qos_;          // per-job QoS goals and windows, while this member is the delegate
  LockHost locks_;       // fcntl/flock locks of the file sets held here
  bool stopped_ = false;
  TimePoint started_;
};

}  // namespace pvfs::mds
