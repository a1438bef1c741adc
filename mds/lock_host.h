// The lock manager of the file sets this member holds (pvfsmount(8),
// LOCKS): one pure locks::LockTable per file set, fed clients' lock
// requests and the clock, its held locks written to the file set's own
// LMDB (NamespaceStore::save_locks) before each answer, so they move with
// the set (ANU) and survive a member's failure (take-over from its data
// dir). A table is loaded from the store when the set is first used here,
// and every client found in it starts a fresh lease then: a client that
// is gone loses its locks one lease after the move or take-over. Waiters
// live in memory only; their clients ask again. A waiting F_SETLKW is
// answered when granted or after kHold, whichever is first (the client
// asks again), so no request is held long enough to delay a move.
// Leases run on the member's injected clock (MdsCluster::clock()); the
// tick and the held requests on asio timers. Not thread-safe: runs on the
// MDS's network thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>

#include <asio.hpp>

#include "config/config.h"
#include "mds/cluster/mds_cluster.h"
#include "mds/fileset_catalog.h"
#include "policy/locks/lock_table.h"
#include "shared/proto/mds.capnp.h"

namespace pvfs::mds {

class LockHost {
 public:
  // `filesets` and `cluster` must outlive the host.
  LockHost(asio::io_context& io, const Config& config, FileSetCatalog& filesets, MdsCluster& cluster);

  // Starts the timer that expires leases (and loads the tables of sets
  // that arrived here); stop() ends it and wakes every held request.
  void start();
  void stop();

  // lock: one client operation on the table of req.ino's file set, which
  // the caller checked is served here. Errors: invalid_argument for a
  // client of 0, a range that ends before it starts, an unknown op;
  // no_space when the table is full; those of loading or saving the
  // set's locks (corrupt, io).
  asio::awaitable<Status> lock(proto::mds::Request::Lock::Reader req, proto::mds::Reply::Builder reply);
  // lockStatus: the locks and waiters of `ino` (0: of every set held here).
  Status status(uint64_t ino, proto::mds::Reply::Builder reply);

  // How long a waiting setlkw is held before it is answered "waiting".
  static constexpr std::chrono::milliseconds kHold{200};

 private:
  struct SetTable {
    std::weak_ptr<NamespaceStore> store;  // the store the table was loaded from
    locks::LockTable table;
  };
  locks::Nanos now() const;
  // The table of `set`, loaded (again) when the store held now is not the
  // one it came from. nullptr with `error` set when loading failed.
  SetTable* table_for(FileSetId set, Status& error);
  // Writes the inodes whose locks changed, and wakes granted waiters.
  Status settle(FileSetId set, SetTable& t);
  asio::awaitable<void> tick_loop();

  asio::io_context& io_;
  const Config& config_;
  FileSetCatalog& filesets_;
  MdsCluster& cluster_;
  std::map<uint16_t, SetTable> tables_;
  // setlkw requests held until a grant, by (set, waiter): cancelled to wake.
  std::map<std::pair<uint16_t, uint64_t>, std::shared_ptr<asio::steady_timer>> held_;
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace pvfs::mds
