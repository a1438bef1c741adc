// The lock table (policy/locks): POSIX ranges split and merged per owner,
// F_GETLK, flock's own namespace, FIFO waiters, deadlock detection, leases
// and the persisted form, with a manual clock.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "policy/locks/lock_table.h"

// In the test program's unity chunks another file's helpers may sit
// beside these: the namespace keeps them apart.
namespace pvfs::locks {

using std::chrono::seconds;

namespace {

Nanos at(int s) { return seconds(s); }

constexpr uint64_t kIno = 7;

Lock posix(ClientKey client, uint64_t owner, Mode mode, uint64_t first, uint64_t last, uint64_t ino = kIno) {
  Lock l;
  l.ino = ino;
  l.kind = Kind::posix;
  l.owner = {client, owner};
  l.mode = mode;
  l.first = first;
  l.last = last;
  return l;
}

Lock ex(ClientKey c, uint64_t o, uint64_t first, uint64_t last, uint64_t ino = kIno) {
  return posix(c, o, Mode::exclusive, first, last, ino);
}
Lock sh(ClientKey c, uint64_t o, uint64_t first, uint64_t last, uint64_t ino = kIno) {
  return posix(c, o, Mode::shared, first, last, ino);
}
Lock flock_lock(ClientKey c, uint64_t o, Mode mode) {
  Lock l = posix(c, o, mode, 0, kEof);
  l.kind = Kind::flock;
  return l;
}

Outcome try_(LockTable& t, const Lock& l, Nanos now = at(0)) {
  auto a = t.try_lock(l, now);
  REQUIRE(a.ok());
  return a->outcome;
}

Answer wait_(LockTable& t, const Lock& l, Nanos now = at(0)) {
  auto a = t.lock_wait(l, now);
  REQUIRE(a.ok());
  return *a;
}

// The ranges `owner` holds on kIno, as (first, last, exclusive).
using Ranges = std::vector<std::tuple<uint64_t, uint64_t, bool>>;
Ranges held_by(const LockTable& t, Owner owner, Kind kind = Kind::posix) {
  Ranges out;
  for (const auto& v : t.snapshot(kIno))
    for (const Lock& l : v.held)
      if (l.owner == owner && l.kind == kind) out.emplace_back(l.first, l.last, l.mode == Mode::exclusive);
  return out;
}

std::vector<uint64_t> granted_ids(LockTable& t) {
  std::vector<uint64_t> out;
  for (const auto& g : t.take_grants()) out.push_back(g.waiter);
  return out;
}

}  // namespace

TEST_CASE("an exclusive lock keeps out every other owner's lock on an overlapping range") {
  LockTable t;
  CHECK(try_(t, ex(1, 1, 0, 99)) == Outcome::granted);
  CHECK(try_(t, ex(2, 1, 50, 60)) == Outcome::conflict);
  CHECK(try_(t, sh(2, 1, 99, 200)) == Outcome::conflict);
  CHECK(try_(t, ex(2, 1, 100, 200)) == Outcome::granted);
  // Another owner of the same client is another owner.
  CHECK(try_(t, sh(1, 2, 0, 0)) == Outcome::conflict);
}

TEST_CASE("shared locks coexist and keep out an exclusive one") {
  LockTable t;
  CHECK(try_(t, sh(1, 1, 0, 99)) == Outcome::granted);
  CHECK(try_(t, sh(2, 1, 10, 20)) == Outcome::granted);
  CHECK(try_(t, ex(3, 1, 15, 15)) == Outcome::conflict);
  CHECK(try_(t, ex(3, 1, 100, kEof)) == Outcome::granted);
}

TEST_CASE("an owner's own locks never conflict: a new lock replaces what it held of the range") {
  LockTable t;
  REQUIRE(try_(t, sh(1, 1, 0, 99)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 1, 40, 59)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 39, false}, {40, 59, true}, {60, 99, false}});
  REQUIRE(try_(t, sh(1, 1, 40, 59)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 99, false}});
  CHECK(t.lock_count() == 1);
}

TEST_CASE("adjacent and overlapping ranges of one owner and mode merge, different modes do not") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 9)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 1, 10, 19)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 1, 30, 39)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 19, true}, {30, 39, true}});
  REQUIRE(try_(t, ex(1, 1, 15, 32)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 39, true}});
  REQUIRE(try_(t, sh(1, 1, 40, 49)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 39, true}, {40, 49, false}});
  // Another owner's adjacent range stays its own.
  REQUIRE(try_(t, ex(2, 1, 50, 59)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}).size() == 2);
  CHECK(held_by(t, {2, 1}) == Ranges{{50, 59, true}});
}

TEST_CASE("unlocking a sub-range splits a lock and frees exactly that range") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, kEof)) == Outcome::granted);
  REQUIRE(t.unlock(kIno, Kind::posix, {1, 1}, 100, 199, at(0)).ok());
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 99, true}, {200, kEof, true}});
  CHECK(try_(t, ex(2, 1, 100, 199)) == Outcome::granted);
  CHECK(try_(t, ex(2, 1, 99, 99)) == Outcome::conflict);
  CHECK(try_(t, ex(2, 1, 200, 200)) == Outcome::conflict);
  // Unlocking what one does not hold changes nothing, and is no error.
  REQUIRE(t.unlock(kIno, Kind::posix, {3, 1}, 0, kEof, at(0)).ok());
  CHECK(t.lock_count() == 3);
  // Nor can an owner unlock another's range.
  REQUIRE(t.unlock(kIno, Kind::posix, {2, 1}, 0, 99, at(0)).ok());
  CHECK(held_by(t, {1, 1}) == Ranges{{0, 99, true}, {200, kEof, true}});
}

TEST_CASE("a range ending at the last byte splits and merges without overflow") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, kEof - 1, kEof)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 1, kEof - 3, kEof - 2)) == Outcome::granted);
  CHECK(held_by(t, {1, 1}) == Ranges{{kEof - 3, kEof, true}});
  REQUIRE(t.unlock(kIno, Kind::posix, {1, 1}, kEof, kEof, at(0)).ok());
  CHECK(held_by(t, {1, 1}) == Ranges{{kEof - 3, kEof - 1, true}});
}

TEST_CASE("F_GETLK reports the first conflicting lock with its owner and pid, or none") {
  LockTable t;
  Lock a = sh(1, 1, 100, 199);
  a.pid = 4242;
  REQUIRE(try_(t, a) == Outcome::granted);
  REQUIRE(try_(t, ex(2, 5, 300, 399)) == Outcome::granted);
  auto found = t.test(ex(3, 1, 0, kEof));
  REQUIRE(found);
  CHECK(found->first == 100);
  CHECK(found->last == 199);
  CHECK(found->pid == 4242);
  CHECK(found->owner == Owner{1, 1});
  CHECK(found->mode == Mode::shared);
  CHECK_FALSE(t.test(sh(3, 1, 0, 299)));      // shared beside shared
  CHECK(t.test(sh(3, 1, 0, 399))->first == 300);
  CHECK_FALSE(t.test(ex(1, 1, 100, 199)));    // one's own lock is no conflict
  CHECK_FALSE(t.test(ex(3, 1, 0, 99, kIno + 1)));  // another inode
}

TEST_CASE("flock locks are a namespace of their own: they never meet POSIX locks") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, kEof)) == Outcome::granted);
  CHECK(try_(t, flock_lock(2, 9, Mode::exclusive)) == Outcome::granted);
  CHECK(try_(t, flock_lock(3, 9, Mode::shared)) == Outcome::conflict);
  CHECK(t.test(sh(2, 2, 0, 0)).has_value());  // POSIX still sees client 1's lock
  // Conversion: the holder's own lock changes mode in place.
  REQUIRE(t.unlock(kIno, Kind::flock, {2, 9}, 0, kEof, at(0)).ok());
  CHECK(try_(t, flock_lock(3, 9, Mode::shared)) == Outcome::granted);
  CHECK(try_(t, flock_lock(4, 9, Mode::shared)) == Outcome::granted);
  CHECK(try_(t, flock_lock(4, 9, Mode::exclusive)) == Outcome::conflict);
  REQUIRE(t.unlock(kIno, Kind::flock, {3, 9}, 0, kEof, at(0)).ok());
  CHECK(try_(t, flock_lock(4, 9, Mode::exclusive)) == Outcome::granted);
  CHECK(held_by(t, {4, 9}, Kind::flock) == Ranges{{0, kEof, true}});
}

TEST_CASE("bad requests are refused and change nothing") {
  LockTable t;
  CHECK(t.try_lock(ex(0, 1, 0, 1), at(0)).code() == Errc::invalid_argument);
  CHECK(t.try_lock(ex(1, 1, 5, 4), at(0)).code() == Errc::invalid_argument);
  Lock partial = flock_lock(1, 1, Mode::shared);
  partial.last = 10;
  CHECK(t.lock_wait(partial, at(0)).code() == Errc::invalid_argument);
  CHECK(t.unlock(kIno, Kind::posix, {1, 1}, 9, 3, at(0)).code() == Errc::invalid_argument);
  CHECK(t.lock_count() == 0);
}

TEST_CASE("F_SETLKW waiters are granted in arrival order as the holder lets go") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 99)) == Outcome::granted);
  Answer w2 = wait_(t, ex(2, 1, 0, 99));
  Answer w3 = wait_(t, ex(3, 1, 10, 10));
  Answer w4 = wait_(t, ex(4, 1, 50, 150));
  REQUIRE(w2.outcome == Outcome::waiting);
  REQUIRE(w3.outcome == Outcome::waiting);
  REQUIRE(w4.outcome == Outcome::waiting);
  CHECK(t.waiter_count() == 3);
  CHECK(t.poll(w2.waiter, 2, at(1)) == WaitState::waiting);
  REQUIRE(t.unlock(kIno, Kind::posix, {1, 1}, 0, kEof, at(1)).ok());
  CHECK(granted_ids(t) == std::vector<uint64_t>{w2.waiter});
  CHECK(t.poll(w2.waiter, 2, at(1)) == WaitState::granted);
  CHECK(t.poll(w2.waiter, 2, at(1)) == WaitState::unknown);  // reported once
  REQUIRE(t.unlock(kIno, Kind::posix, {2, 1}, 0, kEof, at(2)).ok());
  // Both the next in line and the one that no longer conflicts with it.
  CHECK(granted_ids(t) == std::vector<uint64_t>{w3.waiter, w4.waiter});
  CHECK(held_by(t, {3, 1}) == Ranges{{10, 10, true}});
  CHECK(held_by(t, {4, 1}) == Ranges{{50, 150, true}});
}

TEST_CASE("compatible waiters are granted together: readers after a writer") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 9)) == Outcome::granted);
  Answer r1 = wait_(t, sh(2, 1, 0, 9));
  Answer r2 = wait_(t, sh(3, 1, 0, 9));
  Answer w = wait_(t, ex(4, 1, 0, 9));
  REQUIRE(t.unlock(kIno, Kind::posix, {1, 1}, 0, 9, at(1)).ok());
  CHECK(granted_ids(t) == std::vector<uint64_t>{r1.waiter, r2.waiter});
  CHECK(t.poll(w.waiter, 4, at(1)) == WaitState::waiting);
}

TEST_CASE("a waiter that can be granted at once is not queued") {
  LockTable t;
  Answer a = wait_(t, ex(1, 1, 0, 9));
  CHECK(a.outcome == Outcome::granted);
  CHECK(t.waiter_count() == 0);
}

TEST_CASE("two owners each waiting for the other's lock: the second gets EDEADLK") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 9)) == Outcome::granted);
  REQUIRE(try_(t, ex(2, 1, 10, 19)) == Outcome::granted);
  CHECK(wait_(t, ex(1, 1, 10, 19)).outcome == Outcome::waiting);
  CHECK(wait_(t, ex(2, 1, 0, 9)).outcome == Outcome::deadlock);
  // Nothing was queued for the refused request.
  CHECK(t.waiter_count() == 1);
}

TEST_CASE("a cycle through three owners on two inodes is found") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 9)) == Outcome::granted);
  REQUIRE(try_(t, ex(2, 1, 0, 9, kIno + 1)) == Outcome::granted);
  REQUIRE(try_(t, ex(3, 1, 20, 29)) == Outcome::granted);
  CHECK(wait_(t, ex(1, 1, 0, 9, kIno + 1)).outcome == Outcome::waiting);  // 1 waits for 2
  CHECK(wait_(t, ex(2, 1, 20, 29)).outcome == Outcome::waiting);          // 2 waits for 3
  CHECK(wait_(t, ex(3, 1, 5, 5)).outcome == Outcome::deadlock);           // 3 would wait for 1
  // An owner waiting behind a chain that does not come back is fine.
  CHECK(wait_(t, ex(4, 1, 5, 5)).outcome == Outcome::waiting);
}

TEST_CASE("flock waits are not checked for deadlock, as on Linux") {
  LockTable t;
  REQUIRE(try_(t, flock_lock(1, 1, Mode::exclusive)) == Outcome::granted);
  Lock other = flock_lock(2, 1, Mode::exclusive);
  other.ino = kIno + 1;
  REQUIRE(try_(t, other) == Outcome::granted);
  Lock w1 = other;
  w1.owner = {1, 1};
  CHECK(wait_(t, w1).outcome == Outcome::waiting);
  CHECK(wait_(t, flock_lock(2, 1, Mode::exclusive)).outcome == Outcome::waiting);
}

TEST_CASE("a cancelled waiter leaves the queue, and one granted meanwhile gives its range back") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 9)) == Outcome::granted);
  Answer a = wait_(t, ex(2, 1, 0, 9));
  Answer b = wait_(t, ex(3, 1, 0, 9));
  CHECK(t.cancel(a.waiter, 2, at(1)));
  CHECK_FALSE(t.cancel(a.waiter, 2, at(1)));
  CHECK(t.poll(a.waiter, 2, at(1)) == WaitState::unknown);
  // Another client cannot cancel it.
  CHECK_FALSE(t.cancel(b.waiter, 2, at(1)));
  REQUIRE(t.unlock(kIno, Kind::posix, {1, 1}, 0, 9, at(2)).ok());
  CHECK(granted_ids(t) == std::vector<uint64_t>{b.waiter});
  // Interrupted after the grant, before it was told: the lock goes back.
  CHECK(t.cancel(b.waiter, 3, at(2)));
  CHECK(held_by(t, {3, 1}).empty());
  CHECK(try_(t, ex(4, 1, 0, 9)) == Outcome::granted);
}

TEST_CASE("releasing an owner drops its locks and waiters on that inode only, both namespaces") {
  LockTable t;
  REQUIRE(try_(t, ex(1, 1, 0, 9)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 1, 0, 9, kIno + 1)) == Outcome::granted);
  REQUIRE(try_(t, flock_lock(1, 1, Mode::shared)) == Outcome::granted);
  REQUIRE(try_(t, ex(2, 1, 20, 29)) == Outcome::granted);
  Answer w = wait_(t, ex(1, 1, 20, 29));
  Answer other = wait_(t, ex(3, 1, 0, 9));
  t.release_owner(kIno, {1, 1}, at(1));
  CHECK(held_by(t, {1, 1}).empty());
  CHECK(held_by(t, {1, 1}, Kind::flock).empty());
  CHECK(t.poll(w.waiter, 1, at(1)) == WaitState::unknown);
  CHECK(granted_ids(t) == std::vector<uint64_t>{other.waiter});
  CHECK(t.test(ex(9, 9, 0, 9, kIno + 1)).has_value());
}

TEST_CASE("a client that stops renewing loses its locks after its lease and its waiters are granted") {
  Options o;
  o.lease = seconds(10);
  LockTable t(o);
  REQUIRE(try_(t, ex(1, 1, 0, 9), at(0)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 2, 100, 109), at(0)) == Outcome::granted);
  Answer w = wait_(t, ex(2, 1, 0, 9), at(1));
  CHECK(t.next_deadline() == at(10));
  CHECK(t.expire(at(9)).empty());
  t.renew(2, at(9));
  CHECK(t.expire(at(10)) == std::vector<ClientKey>{1});
  CHECK(granted_ids(t) == std::vector<uint64_t>{w.waiter});
  CHECK_FALSE(t.has_client(1));
  CHECK(t.has_client(2));
  CHECK(t.lock_count() == 1);
  // A renewing client keeps its locks however long.
  for (int s = 10; s < 100; s += 5) {
    t.renew(2, at(s));
    CHECK(t.expire(at(s)).empty());
  }
  t.drop_client(2, at(100));
  CHECK(t.lock_count() == 0);
}

TEST_CASE("held locks round-trip through their stored form with fresh leases; waiters do not") {
  LockTable t;
  Lock a = ex(1, 1, 0, 9);
  a.pid = 17;
  REQUIRE(try_(t, a) == Outcome::granted);
  REQUIRE(try_(t, sh(2, 3, 100, kEof)) == Outcome::granted);
  REQUIRE(try_(t, flock_lock(2, 4, Mode::shared)) == Outcome::granted);
  REQUIRE(wait_(t, ex(3, 1, 0, 9)).outcome == Outcome::waiting);
  const std::string text = t.encode(kIno);
  CHECK(t.take_dirty() == std::vector<uint64_t>{kIno});

  LockTable moved;
  REQUIRE(moved.restore(kIno, text, at(50)).ok());
  CHECK(moved.snapshot(kIno).at(0).held == t.snapshot(kIno).at(0).held);
  CHECK(moved.waiter_count() == 0);
  CHECK(moved.next_deadline() == at(50) + moved.options().lease);
  CHECK(moved.restore(kIno, text, at(50)).code() == Errc::exists);
  CHECK(moved.encode(kIno + 1).empty());
  LockTable bad;
  CHECK(bad.restore(kIno, "px 1 1 0\n", at(0)).code() == Errc::corrupt);
  CHECK(bad.restore(kIno, "zx 1 1 0 9 0\n", at(0)).code() == Errc::corrupt);
  CHECK(bad.restore(kIno, "px 1 1 9 0 0\n", at(0)).code() == Errc::corrupt);
  CHECK(bad.restore(kIno, "px 1 1 0 9 0", at(0)).code() == Errc::corrupt);
  CHECK(bad.lock_count() == 0);
}

TEST_CASE("the table's limits refuse new locks and waiters with no_space") {
  Options o;
  o.max_locks = 3;
  o.max_waiters = 1;
  LockTable t(o);
  REQUIRE(try_(t, ex(1, 1, 0, 0)) == Outcome::granted);
  REQUIRE(try_(t, ex(1, 1, 2, 2)) == Outcome::granted);
  CHECK(t.try_lock(ex(1, 1, 4, 4), at(0)).code() == Errc::no_space);
  REQUIRE(wait_(t, ex(2, 1, 0, 0)).outcome == Outcome::waiting);
  CHECK(t.lock_wait(ex(3, 1, 2, 2), at(0)).code() == Errc::no_space);
}

// A model of the table: per byte of a small file, who holds it how.
TEST_CASE("random lock and unlock sequences agree with a per-byte model") {
  std::mt19937_64 rng(19);
  constexpr uint64_t kBytes = 64;
  LockTable t;
  // model[owner][byte]: 0 none, 1 shared, 2 exclusive
  std::vector<std::vector<int>> model(4, std::vector<int>(kBytes, 0));
  for (int step = 0; step < 5000; ++step) {
    const uint64_t owner = rng() % 4;
    uint64_t a = rng() % kBytes, b = rng() % kBytes;
    if (a > b) std::swap(a, b);
    const int op = static_cast<int>(rng() % 3);
    if (op == 2) {
      REQUIRE(t.unlock(kIno, Kind::posix, {owner + 1, 1}, a, b, at(0)).ok());
      for (uint64_t i = a; i <= b; ++i) model[owner][i] = 0;
      continue;
    }
    const Mode mode = op == 0 ? Mode::shared : Mode::exclusive;
    bool conflict = false;
    for (uint64_t o = 0; o < 4; ++o)
      for (uint64_t i = a; i <= b && o != owner; ++i)
        if (model[o][i] == 2 || (model[o][i] == 1 && mode == Mode::exclusive)) conflict = true;
    const Outcome got = try_(t, posix(owner + 1, 1, mode, a, b));
    REQUIRE(got == (conflict ? Outcome::conflict : Outcome::granted));
    if (!conflict)
      for (uint64_t i = a; i <= b; ++i) model[owner][i] = mode == Mode::exclusive ? 2 : 1;
    // The table holds each owner's bytes as the model says, in as few
    // ranges as merging allows (no two touching ranges of one mode).
    for (uint64_t o = 0; o < 4; ++o) {
      std::vector<int> bytes(kBytes, 0);
      const Ranges r = held_by(t, {o + 1, 1});
      for (size_t k = 0; k < r.size(); ++k) {
        auto [f, l, x] = r[k];
        for (uint64_t i = f; i <= l; ++i) bytes[i] = x ? 2 : 1;
        if (k > 0) {
          auto [pf, pl, px] = r[k - 1];
          REQUIRE(pl < f);
          REQUIRE_FALSE((pl + 1 == f && px == x));
        }
      }
      REQUIRE(bytes == model[o]);
    }
  }
}

}  // namespace pvfs::locks
