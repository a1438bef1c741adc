// Unit tests of directory leases: the MDS's table of who holds which
// (mds/dir_lease_table.h) and the client's cache of names under them
// (fs/dir_lease_cache.h). Pure; time is passed in.
#include <doctest/doctest.h>

#include <memory>

#include "fs/dir_lease_cache.h"
#include "mds/dir_lease_table.h"

namespace pvfs {
namespace {

using std::chrono::milliseconds;

const TimePoint kLeaseT0{std::chrono::hours(2)};
const InodeId kDir(0x0001'0000'0000'0005ULL);   // file set 1
const InodeId kOther(0x0002'0000'0000'0009ULL);  // file set 2

std::vector<uint64_t> hashes(const NameHashKey& key, std::initializer_list<const char*> names) {
  std::vector<uint64_t> out;
  for (const char* n : names) out.push_back(name_hash(key, n));
  return out;
}

}  // namespace

TEST_CASE("the MDS recalls every other holder's running lease on a directory, and only once") {
  mds::DirLeaseTable t;
  int a = 0, b = 0, c = 0;
  t.grant(kDir, &a, {}, kLeaseT0 + milliseconds(1000), kLeaseT0);
  t.grant(kDir, &b, {}, kLeaseT0 + milliseconds(1000), kLeaseT0);
  t.grant(kDir, &c, {}, kLeaseT0 + milliseconds(100), kLeaseT0);  // will have ended
  CHECK(t.leased(kDir, kLeaseT0 + milliseconds(500)));
  CHECK_FALSE(t.leased(kOther, kLeaseT0));
  auto taken = t.take_others(kDir, &a, kLeaseT0 + milliseconds(500));
  REQUIRE(taken.size() == 1);  // b; c's lease ended, a made the change
  CHECK(taken[0].holder == &b);
  CHECK(t.take_others(kDir, &a, kLeaseT0 + milliseconds(500)).empty());
  // a still holds its own, which another client's change recalls.
  auto next = t.take_others(kDir, &b, kLeaseT0 + milliseconds(600));
  REQUIRE(next.size() == 1);
  CHECK(next[0].holder == &a);
  CHECK_FALSE(t.leased(kDir, kLeaseT0 + milliseconds(600)));
  CHECK(t.count(kLeaseT0) == 0);
}

TEST_CASE("the MDS renews a running lease of the same holder only") {
  mds::DirLeaseTable t;
  int a = 0, b = 0;
  t.grant(kDir, &a, {}, kLeaseT0 + milliseconds(1000), kLeaseT0);
  CHECK(t.renew(kDir, &a, kLeaseT0 + milliseconds(1800), kLeaseT0 + milliseconds(800)));
  CHECK(t.leased(kDir, kLeaseT0 + milliseconds(1500)));
  CHECK_FALSE(t.renew(kDir, &b, kLeaseT0 + milliseconds(1800), kLeaseT0 + milliseconds(800)));  // holds none
  CHECK_FALSE(t.renew(kDir, &a, kLeaseT0 + milliseconds(3000), kLeaseT0 + milliseconds(1800)));  // ended
  t.grant(kDir, &a, {}, kLeaseT0 + milliseconds(3000), kLeaseT0 + milliseconds(2000));
  REQUIRE(t.take_others(kDir, &b, kLeaseT0 + milliseconds(2100)).size() == 1);  // recalled
  CHECK_FALSE(t.renew(kDir, &a, kLeaseT0 + milliseconds(3500), kLeaseT0 + milliseconds(2500)));
}

TEST_CASE("a file set that leaves takes its directories' leases with it, and no other set's") {
  mds::DirLeaseTable t;
  int a = 0;
  t.grant(kDir, &a, {}, kLeaseT0 + milliseconds(1000), kLeaseT0);
  t.grant(kOther, &a, {}, kLeaseT0 + milliseconds(1000), kLeaseT0);
  auto gone = t.take_fileset(kDir.fileset(), kLeaseT0);
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].first == kDir);
  CHECK(t.leased(kOther, kLeaseT0));
  CHECK(t.count(kLeaseT0) == 1);
  CHECK(t.count(kLeaseT0 + milliseconds(1000)) == 0);
}

TEST_CASE("a client's lease answers absent names for its own uid and gid until it ends") {
  DirLeaseCache cache;
  const NameHashKey key = random_name_hash_key();
  CHECK(cache.should_ask(kDir, kLeaseT0));
  const uint64_t ticket = cache.asking(kDir, kLeaseT0);
  CHECK_FALSE(cache.should_ask(kDir, kLeaseT0));  // one request at a time
  cache.granted(kDir, ticket, 1000, 100, key, hashes(key, {"a", "b"}), kLeaseT0, milliseconds(1000));
  CHECK(cache.absent(kDir, "c", 1000, 100, kLeaseT0 + milliseconds(10)));
  CHECK_FALSE(cache.absent(kDir, "a", 1000, 100, kLeaseT0 + milliseconds(10)));
  CHECK_FALSE(cache.absent(kDir, "c", 1001, 100, kLeaseT0 + milliseconds(10)));  // another user asks the MDS
  CHECK_FALSE(cache.absent(kDir, "c", 1000, 101, kLeaseT0 + milliseconds(10)));
  CHECK_FALSE(cache.absent(kOther, "c", 1000, 100, kLeaseT0 + milliseconds(10)));
  CHECK_FALSE(cache.absent(kDir, "c", 1000, 100, kLeaseT0 + milliseconds(1000)));  // ended
  CHECK(cache.should_ask(kDir, kLeaseT0 + milliseconds(1000)));
}

TEST_CASE("a recall, or a lost connection, ends a lease at once; a recall also holds off asking again") {
  DirLeaseCache cache;
  const NameHashKey key = random_name_hash_key();
  auto grant = [&](TimePoint at) {
    cache.granted(kDir, cache.asking(kDir, at), 0, 0, key, {}, at, milliseconds(1000));
  };
  grant(kLeaseT0);
  CHECK(cache.absent(kDir, "x", 0, 0, kLeaseT0));
  cache.recalled(kDir, kLeaseT0 + milliseconds(5));
  CHECK_FALSE(cache.absent(kDir, "x", 0, 0, kLeaseT0 + milliseconds(5)));
  CHECK_FALSE(cache.should_ask(kDir, kLeaseT0 + milliseconds(500)));
  CHECK(cache.should_ask(kDir, kLeaseT0 + milliseconds(5) + DirLeaseCache::kRetryAfterRecall));
  grant(kLeaseT0 + milliseconds(2000));
  CHECK(cache.held(kLeaseT0 + milliseconds(2000)) == 1);
  cache.clear();
  CHECK_FALSE(cache.absent(kDir, "x", 0, 0, kLeaseT0 + milliseconds(2000)));
  CHECK(cache.held(kLeaseT0 + milliseconds(2000)) == 0);
}

TEST_CASE("a directory recalled again and again is asked for less and less often, and as often once a lease lasts") {
  DirLeaseCache cache;
  const NameHashKey key = random_name_hash_key();
  TimePoint t = kLeaseT0;
  auto lease_at = [&](TimePoint at) { cache.granted(kDir, cache.asking(kDir, at), 0, 0, key, {}, at, milliseconds(1000)); };
  std::vector<Duration> waits;
  for (int i = 0; i < 9; ++i) {
    lease_at(t);
    cache.recalled(kDir, t);
    TimePoint next = t;
    while (!cache.should_ask(kDir, next)) next += milliseconds(250);
    waits.push_back(next - t);
    t = next;
  }
  CHECK(waits.front() == std::chrono::seconds(1));
  CHECK(waits[1] == std::chrono::seconds(2));
  CHECK(waits[5] == std::chrono::seconds(32));
  CHECK(waits.back() == DirLeaseCache::kMaxRetryAfterRecall);
  // A lease that runs its term unrecalled: back to a second after the next recall.
  lease_at(t);
  t += milliseconds(1000);
  CHECK_FALSE(cache.missed(kDir, t));  // a lone miss; the ended lease resets the wait
  lease_at(t);
  cache.recalled(kDir, t);
  CHECK(cache.should_ask(kDir, t + std::chrono::seconds(1)));
}

TEST_CASE("a lease in use is renewed past half its term, once at a time, and not after a recall") {
  DirLeaseCache cache;
  const NameHashKey key = random_name_hash_key();
  cache.granted(kDir, cache.asking(kDir, kLeaseT0), 0, 0, key, {}, kLeaseT0, milliseconds(1000));
  CHECK(cache.renewing(kDir, kLeaseT0 + milliseconds(400)) == 0);  // most of its term left
  const uint64_t ticket = cache.renewing(kDir, kLeaseT0 + milliseconds(600));
  REQUIRE(ticket != 0);
  CHECK(cache.renewing(kDir, kLeaseT0 + milliseconds(700)) == 0);  // one in flight
  cache.renewed(kDir, ticket, kLeaseT0 + milliseconds(600), milliseconds(1000));
  CHECK(cache.absent(kDir, "x", 0, 0, kLeaseT0 + milliseconds(1500)));
  CHECK_FALSE(cache.absent(kDir, "x", 0, 0, kLeaseT0 + milliseconds(1600)));
  // A renewal answered after a recall brings nothing back.
  cache.granted(kDir, cache.asking(kDir, kLeaseT0 + milliseconds(2000)), 0, 0, key, {},
                kLeaseT0 + milliseconds(2000), milliseconds(1000));
  const uint64_t late = cache.renewing(kDir, kLeaseT0 + milliseconds(2600));
  REQUIRE(late != 0);
  cache.recalled(kDir, kLeaseT0 + milliseconds(2650));
  cache.renewed(kDir, late, kLeaseT0 + milliseconds(2600), milliseconds(1000));
  CHECK_FALSE(cache.absent(kDir, "x", 0, 0, kLeaseT0 + milliseconds(2700)));
}

TEST_CASE("an answer that crossed a recall, or a cleared cache, is not kept") {
  DirLeaseCache cache;
  const NameHashKey key = random_name_hash_key();
  uint64_t ticket = cache.asking(kDir, kLeaseT0);
  cache.recalled(kDir, kLeaseT0);  // the recall overtook the answer
  cache.granted(kDir, ticket, 0, 0, key, {}, kLeaseT0, milliseconds(1000));
  CHECK_FALSE(cache.absent(kDir, "x", 0, 0, kLeaseT0));
  ticket = cache.asking(kDir, kLeaseT0 + milliseconds(1500));
  cache.clear();
  cache.granted(kDir, ticket, 0, 0, key, {}, kLeaseT0 + milliseconds(1500), milliseconds(1000));
  CHECK_FALSE(cache.absent(kDir, "x", 0, 0, kLeaseT0 + milliseconds(1500)));
}

TEST_CASE("names this client adds count as present, even when added while the lease was asked for") {
  DirLeaseCache cache;
  const NameHashKey key = random_name_hash_key();
  // In flight before the request: the MDS may answer before it commits.
  cache.adding(kDir, "early", kLeaseT0);
  const uint64_t ticket = cache.asking(kDir, kLeaseT0);
  cache.adding(kDir, "during", kLeaseT0);  // sent while the request is out
  cache.added(kDir, "early");
  cache.granted(kDir, ticket, 0, 0, key, hashes(key, {"old"}), kLeaseT0, milliseconds(1000));
  CHECK_FALSE(cache.absent(kDir, "early", 0, 0, kLeaseT0));
  CHECK_FALSE(cache.absent(kDir, "during", 0, 0, kLeaseT0));
  CHECK_FALSE(cache.absent(kDir, "old", 0, 0, kLeaseT0));
  cache.adding(kDir, "after", kLeaseT0);  // with the lease held
  CHECK_FALSE(cache.absent(kDir, "after", 0, 0, kLeaseT0));
  CHECK(cache.absent(kDir, "never", 0, 0, kLeaseT0));
}

TEST_CASE("a lease is asked for at the second miss in a directory within a second, not at a lone one") {
  DirLeaseCache cache;
  CHECK_FALSE(cache.missed(kDir, kLeaseT0));
  CHECK_FALSE(cache.missed(kDir, kLeaseT0 + milliseconds(1500)));  // too long after the first
  CHECK(cache.missed(kDir, kLeaseT0 + milliseconds(1600)));
  cache.asking(kDir, kLeaseT0 + milliseconds(1600));
  CHECK_FALSE(cache.missed(kDir, kLeaseT0 + milliseconds(1700)));  // being asked for
  CHECK_FALSE(cache.missed(kOther, kLeaseT0 + milliseconds(1700)));
}

TEST_CASE("a refused lease is not asked for again until the time given") {
  DirLeaseCache cache;
  const uint64_t ticket = cache.asking(kDir, kLeaseT0);
  cache.refused(kDir, ticket, kLeaseT0 + milliseconds(60000));
  CHECK_FALSE(cache.should_ask(kDir, kLeaseT0 + milliseconds(59999)));
  CHECK(cache.should_ask(kDir, kLeaseT0 + milliseconds(60000)));
}

TEST_CASE("the name hash depends on the key and the name") {
  const NameHashKey k1 = random_name_hash_key(), k2 = random_name_hash_key();
  CHECK(name_hash(k1, "file") == name_hash(k1, "file"));
  CHECK(name_hash(k1, "file") != name_hash(k1, "filf"));
  CHECK(name_hash(k1, "file") != name_hash(k2, "file"));
}

}  // namespace pvfs
