// Unit tests of OrphanHolds (mds/orphan_holds.h) and OpenLeases
// (mds/open_leases.h): the leases under which the MDS keeps unlinked files
// that clients still have open. Pure; time is passed in.
#include <doctest/doctest.h>

#include "mds/open_leases.h"
#include "mds/orphan_holds.h"

namespace pvfs::mds {
namespace {

using std::chrono::milliseconds;

const TimePoint kT0{std::chrono::hours(1)};

}  // namespace

TEST_CASE("a held orphan lapses one lease after its last hold, not before") {
  OrphanHolds holds(milliseconds(3000));
  holds.hold(InodeId(7), kT0);
  CHECK(holds.held(InodeId(7)));
  CHECK(holds.lapsed(kT0 + milliseconds(2999)).empty());
  holds.hold(InodeId(7), kT0 + milliseconds(2000));  // renewed
  CHECK(holds.lapsed(kT0 + milliseconds(4999)).empty());
  CHECK(holds.lapsed(kT0 + milliseconds(5000)) == std::vector<InodeId>{InodeId(7)});
  // Listed until forgotten: the caller forgets it once it is released.
  CHECK(holds.held(InodeId(7)));
  holds.forget(InodeId(7));
  CHECK_FALSE(holds.held(InodeId(7)));
  CHECK(holds.lapsed(kT0 + milliseconds(9000)).empty());
}

TEST_CASE("adopting a held orphan found in a loaded file set starts a lease but does not shorten one") {
  OrphanHolds holds(milliseconds(1000));
  holds.hold(InodeId(1), kT0 + milliseconds(500));
  holds.adopt(InodeId(1), kT0);                      // expiry stays at +1500
  holds.adopt(InodeId(2), kT0 + milliseconds(200));  // new: expiry +1200
  CHECK(holds.size() == 2);
  CHECK(holds.lapsed(kT0 + milliseconds(1199)).empty());
  CHECK(holds.lapsed(kT0 + milliseconds(1200)) == std::vector<InodeId>{InodeId(2)});
  CHECK(holds.lapsed(kT0 + milliseconds(1500)) == std::vector<InodeId>{InodeId(1), InodeId(2)});
}

TEST_CASE("a hold until a time never shortens one that lasts longer") {
  OrphanHolds holds(milliseconds(10000));
  holds.hold(InodeId(3), kT0);                           // until +10 s
  holds.hold_until(InodeId(3), kT0 + milliseconds(2000));  // shorter: ignored
  CHECK(holds.lapsed(kT0 + milliseconds(9999)).empty());
  holds.hold_until(InodeId(3), kT0 + milliseconds(12000));
  CHECK(holds.lapsed(kT0 + milliseconds(11999)).empty());
  CHECK(holds.lapsed(kT0 + milliseconds(12000)).size() == 1);
}

TEST_CASE("a file is open elsewhere while a client other than the asker holds a lease on it") {
  OpenLeases open(milliseconds(1000));
  constexpr OpenLeases::Holder kA = 1, kB = 2;
  open.opened(InodeId(5), kA, kT0);
  // The client that opened it is not "elsewhere" to itself.
  CHECK(open.open_elsewhere_until(InodeId(5), kA, kT0) == kT0);
  CHECK(open.open_elsewhere_until(InodeId(5), kB, kT0 + milliseconds(10)) == kT0 + milliseconds(1000));
  CHECK(open.open_elsewhere_until(InodeId(6), kB, kT0) == kT0);  // never opened
  // Renewed by A, opened by B later: the latest lease of anyone but the asker.
  open.opened(InodeId(5), kA, kT0 + milliseconds(600));
  open.opened(InodeId(5), kB, kT0 + milliseconds(800));
  CHECK(open.open_elsewhere_until(InodeId(5), kB, kT0 + milliseconds(900)) == kT0 + milliseconds(1600));
  CHECK(open.open_elsewhere_until(InodeId(5), kA, kT0 + milliseconds(900)) == kT0 + milliseconds(1800));
  // Past every lease: nothing left once pruned.
  CHECK(open.open_elsewhere_until(InodeId(5), kB, kT0 + milliseconds(1700)) == kT0 + milliseconds(1700));
  open.prune(kT0 + milliseconds(1700));
  CHECK(open.files() == 1);  // B's lease runs until +1800
  open.prune(kT0 + milliseconds(1800));
  CHECK(open.files() == 0);
}

}  // namespace pvfs::mds
