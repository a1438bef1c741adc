// The lock table of one file set: POSIX byte-range locks (fcntl F_SETLK,
// F_SETLKW, F_GETLK, and OFD locks, which the kernel hands a FUSE file
// system as POSIX locks owned by the open file description) and flock
// locks (whole file, a namespace of their own, as on Linux), their FIFO
// waiters, deadlock detection for F_SETLKW, and the clients' leases that
// the locks live under. Owns no time and does no I/O: events and `now` in,
// decisions out as values. Driven by the MDS's lock manager (mds/lock_host.h)
// and the unit tests. Not thread-safe: owned by one executor.
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace pvfs::locks {

using Nanos = std::chrono::nanoseconds;
// A client process (pvfsmount), random and never 0; its lease covers every
// lock and waiter it has in the table.
using ClientKey = uint64_t;

// Who holds a lock: the client and the lock owner the kernel gave it (for
// POSIX locks the process's files table, for OFD and flock locks the open
// file description). Owners of different clients never coincide.
struct Owner {
  ClientKey client = 0;
  uint64_t owner = 0;
  auto operator<=>(const Owner&) const = default;
};

// Locks of the two namespaces never conflict with each other (Linux).
enum class Kind : uint8_t { posix, flock };
enum class Mode : uint8_t { shared, exclusive };

// The last byte a range can cover: a lock "to end of file" ends here.
inline constexpr uint64_t kEof = UINT64_MAX;

// One lock held, or asked for. `last` is inclusive; flock locks cover
// [0, kEof].
struct Lock {
  uint64_t ino = 0;
  Kind kind = Kind::posix;
  Owner owner;
  Mode mode = Mode::shared;
  uint64_t first = 0;
  uint64_t last = kEof;
  uint32_t pid = 0;  // the locking process as its own client saw it (F_GETLK reports it)
  bool operator==(const Lock&) const = default;
};

struct Options {
  // A client that neither renews nor asks anything for this long loses its
  // locks and waiters.
  Nanos lease = std::chrono::seconds(10);
  // Bounds on what clients can make the table hold (no_space past them).
  size_t max_locks = 1 << 20;
  size_t max_waiters = 1 << 16;
};

// What a lock request got.
enum class Outcome : uint8_t {
  granted,   // held now
  conflict,  // F_SETLK: another owner holds a conflicting lock (EAGAIN)
  waiting,   // F_SETLKW: queued; `waiter` names it
  deadlock,  // F_SETLKW: waiting would close a cycle of owners (EDEADLK)
};
std::string_view outcome_name(Outcome outcome);

struct Answer {
  Outcome outcome = Outcome::granted;
  uint64_t waiter = 0;  // Outcome::waiting only
};

// Where a waiter stands when its client asks again.
enum class WaitState : uint8_t { waiting, granted, unknown };

struct WaiterView {
  uint64_t id = 0;
  Lock lock;
  Nanos since{0};
};

// A waiter granted by an event (an unlock, a lapsed lease, a cancel).
struct Grant {
  uint64_t waiter = 0;
  Lock lock;
};

// One inode's locks and waiters, for pvfs-ctl locks.
struct InodeView {
  uint64_t ino = 0;
  std::vector<Lock> held;            // by namespace, then start
  std::vector<WaiterView> waiters;   // by namespace, then arrival
};

class LockTable {
 public:
  explicit LockTable(Options options = {});

  // F_SETLK: grants `want` unless another owner holds a conflicting lock
  // of its namespace (a new lock of the owner replaces what it held of the
  // range, splitting and merging its ranges as POSIX says). Renews the
  // client's lease. Errors: invalid_argument for a client of 0 or
  // first > last (a flock lock must cover [0, kEof]); no_space past
  // Options::max_locks.
  Result<Answer> try_lock(const Lock& want, Nanos now);

  // F_SETLKW: as try_lock(), but a conflict queues the request behind the
  // namespace's earlier waiters of the inode (Outcome::waiting) unless that
  // would deadlock: a POSIX waiter whose blockers wait, directly or
  // through at most 10 owners, for a lock of its own owner gets
  // Outcome::deadlock. Errors: as try_lock(); no_space past max_waiters.
  Result<Answer> lock_wait(const Lock& want, Nanos now);

  // The waiter's client asks how it stands (renewing its lease). A granted
  // waiter is reported once, then forgotten; unknown: no such waiter of
  // this client (cancelled, lapsed, or lost with a move: ask afresh).
  WaitState poll(uint64_t waiter, ClientKey client, Nanos now);

  // Withdraws the waiter (an interrupted F_SETLKW). A waiter granted and
  // not reported yet gives its range back, so the interrupted caller holds
  // nothing it was told it did not get. Returns whether it existed.
  bool cancel(uint64_t waiter, ClientKey client, Nanos now);

  // F_UNLCK of [first, last] of one owner's locks of namespace `kind`
  // (splitting a lock that covers more). Grants the waiters it frees.
  Status unlock(uint64_t ino, Kind kind, Owner owner, uint64_t first, uint64_t last, Nanos now);

  // Close: every lock and waiter of `owner` on `ino`, both namespaces.
  void release_owner(uint64_t ino, Owner owner, Nanos now);

  // F_GETLK: the first lock (lowest start) another owner holds that
  // conflicts with `want`, or nullopt.
  std::optional<Lock> test(const Lock& want) const;

  // Extends `client`'s lease to now + lease.
  void renew(ClientKey client, Nanos now);
  // Drops every lock and waiter of clients whose lease lapsed at or before
  // now; drop_client() those of one client at once. Return the clients gone.
  std::vector<ClientKey> expire(Nanos now);
  void drop_client(ClientKey client, Nanos now);
  // Whether `client` holds a lock or waits in this table.
  bool has_client(ClientKey client) const;

  // The waiters granted since the last call, in grant order (the driver
  // wakes those that wait on the wire).
  std::vector<Grant> take_grants();
  // When expire() could next change something, or nullopt.
  std::optional<Nanos> next_deadline() const;

  // Persistence: the locks held on `ino` as text (empty: none), and their
  // restoration into an empty inode (a file set moved or taken over). The
  // restored clients' leases start at `now`. Waiters are not kept: their
  // clients ask again. Errors: corrupt for text encode() did not make;
  // exists when the inode already has locks.
  std::string encode(uint64_t ino) const;
  Status restore(uint64_t ino, std::string_view text, Nanos now);
  // Inodes whose held locks changed since the last call (for the driver
  // to persist), in inode order.
  std::vector<uint64_t> take_dirty();

  // Every inode with locks or waiters (or only `ino`), in inode order.
  std::vector<InodeView> snapshot(std::optional<uint64_t> ino = std::nullopt) const;
  size_t lock_count() const { return lock_count_; }
  size_t waiter_count() const { return waiter_count_; }
  const Options& options() const { return options_; }

 private:
  struct Waiter {
    uint64_t id = 0;
    Lock lock;
    Nanos since{0};
  };
  // One inode's locks of one namespace and their waiters.
  struct Lane {
    std::vector<Lock> held;      // sorted by (first, owner)
    std::deque<Waiter> waiters;  // FIFO
  };
  using LaneKey = std::pair<uint64_t, Kind>;

  Status check(const Lock& want) const;
  bool conflicting(const Lane& lane, const Lock& want) const;
  // Replaces what want.owner holds of the range by `want` and merges.
  void apply(Lane& lane, const Lock& want);
  void cut(Lane& lane, Owner owner, uint64_t first, uint64_t last);
  // Grants the lane's waiters, in order, that conflict with no holder.
  void grant_waiters(const LaneKey& key, Lane& lane);
  bool would_deadlock(const Lock& want) const;
  void forget_if_empty(const LaneKey& key);
  void touch(ClientKey client, Nanos now);
  void drop(ClientKey client);

  Options options_;
  std::map<LaneKey, Lane> lanes_;
  std::map<ClientKey, Nanos> leases_;              // expiry
  std::map<uint64_t, std::pair<ClientKey, Lock>> unreported_;  // granted waiters, by id
  std::vector<Grant> grants_;
  std::vector<uint64_t> dirty_;
  uint64_t next_waiter_ = 1;
  size_t lock_count_ = 0;
  size_t waiter_count_ = 0;
};

// Whether two locks conflict: same inode and namespace, different owners,
// overlapping ranges, at least one exclusive.
bool conflicts(const Lock& a, const Lock& b);

}  // namespace pvfs::locks
