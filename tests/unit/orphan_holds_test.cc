// Unit tests of OrphanHolds (mds/orphan_holds.h): the leases under which the
// MDS keeps unlinked files that clients still have open. Pure; time is
// passed in.
#include <doctest/doctest.h>

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

}  // namespace pvfs::mds
