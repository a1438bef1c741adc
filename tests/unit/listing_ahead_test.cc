#include "fs/listing_ahead.h"

#include <doctest/doctest.h>

#include <string>

using namespace pvfs;
using namespace std::chrono_literals;

namespace {
const ListingAhead::Clock::time_point listing_t0{50s};

// Entries named e<cookie> with cookies first..first+n-1.
std::vector<DirEntry> entries(uint64_t first, size_t n) {
  std::vector<DirEntry> out;
  for (uint64_t c = first; c < first + n; ++c)
    out.push_back(DirEntry{"e" + std::to_string(c), InodeId(1000 + c), 0100644, c, {}});
  return out;
}

ListingAhead::Key dir1(bool plus = true, uint32_t uid = 7) {
  return ListingAhead::Key{InodeId(1), plus, uid, 7};
}
}  // namespace

TEST_CASE("the kernel's next pages come from what was fetched, in order, to the end") {
  ListingAhead ahead;
  ahead.keep(dir1(), 25, entries(26, 50), true, 3, listing_t0);
  auto p1 = ahead.take(dir1(), 25, 20, 3, listing_t0 + 10ms, 1s);
  REQUIRE(p1);
  REQUIRE(p1->page.entries.size() == 20);
  CHECK(p1->page.entries.front().name == "e26");
  CHECK(p1->page.entries.back().cookie == 45);
  CHECK_FALSE(p1->page.eof);
  CHECK(p1->age == 10ms);
  auto p2 = ahead.take(dir1(), 45, 100, 3, listing_t0 + 20ms, 1s);
  REQUIRE(p2);
  CHECK(p2->page.entries.size() == 30);
  CHECK(p2->page.entries.front().name == "e46");
  CHECK(p2->page.eof);
  // The kernel took them all and asks past the last: the end, and the rest goes.
  auto end = ahead.take(dir1(), 75, 10, 3, listing_t0 + 30ms, 1s);
  REQUIRE(end);
  CHECK(end->page.entries.empty());
  CHECK(end->page.eof);
  CHECK(ahead.size() == 0);
}

TEST_CASE("an empty directory's listing, fetched at opendir, answers the kernel's asks at its start") {
  ListingAhead ahead;
  ahead.keep(dir1(), 0, {}, true, 3, listing_t0);
  // The first READDIRPLUS gets "." and ".." from the bridge and the end
  // from here; the kernel asks once more from the same start.
  for (int ask = 0; ask < 2; ++ask) {
    auto end = ahead.take(dir1(), 0, 10, 3, listing_t0 + 10ms, 1s);
    REQUIRE(end);
    CHECK(end->page.entries.empty());
    CHECK(end->page.eof);
  }
  // Not past the attribute timeout, nor after a change made here.
  CHECK_FALSE(ahead.take(dir1(), 0, 10, 4, listing_t0 + 20ms, 1s));
  ahead.keep(dir1(), 0, {}, true, 3, listing_t0);
  CHECK_FALSE(ahead.take(dir1(), 0, 10, 3, listing_t0 + 2s, 1s));
  // Short of the end, nothing empty is kept.
  ahead.keep(dir1(), 0, {}, false, 3, listing_t0);
  CHECK(ahead.size() == 0);
}

TEST_CASE("the kernel may take fewer entries than handed (long names): it comes back for the others") {
  ListingAhead ahead;
  ahead.keep(dir1(), 0, entries(1, 30), false, 0, listing_t0);
  auto p1 = ahead.take(dir1(), 0, 10, 0, listing_t0, 1s);
  REQUIRE(p1);
  // The kernel's buffer held only e1..e7 of the ten.
  auto p2 = ahead.take(dir1(), 7, 10, 0, listing_t0, 1s);
  REQUIRE(p2);
  CHECK(p2->page.entries.front().name == "e8");
  CHECK(p2->page.entries.back().name == "e17");
  // Even the last ones handed out can be asked for again.
  auto p3 = ahead.take(dir1(), 25, 10, 0, listing_t0, 1s);
  REQUIRE(p3);
  CHECK(p3->page.entries.size() == 5);
  CHECK(ahead.take(dir1(), 28, 10, 0, listing_t0, 1s));
  // A position the rest does not hold (a seekdir elsewhere) is the MDS's.
  CHECK_FALSE(ahead.take(dir1(), 99, 10, 0, listing_t0, 1s));
}

TEST_CASE("what was fetched short of the end of the directory never reads as its end") {
  ListingAhead ahead;
  ahead.keep(dir1(), 0, entries(1, 10), false, 0, listing_t0);
  auto p = ahead.take(dir1(), 0, 10, 0, listing_t0, 1s);
  REQUIRE(p);
  CHECK(p->page.entries.size() == 10);
  CHECK_FALSE(p->page.eof);
  // Past its last entry the next page is the MDS's, not an empty one.
  CHECK_FALSE(ahead.take(dir1(), 10, 5, 0, listing_t0, 1s));
  CHECK(ahead.size() == 0);
}

TEST_CASE("only the same mode and caller continue a listing") {
  ListingAhead ahead;
  ahead.keep(dir1(), 25, entries(26, 10), false, 0, listing_t0);
  CHECK_FALSE(ahead.take(dir1(false), 25, 5, 0, listing_t0, 1s));  // plain readdir has no attributes
  CHECK_FALSE(ahead.take(dir1(true, 8), 25, 5, 0, listing_t0, 1s));  // another user: the MDS checks access
  CHECK(ahead.take(dir1(), 25, 5, 0, listing_t0, 1s));
}

TEST_CASE("a change made through this client, or the attribute timeout, voids what was fetched") {
  ListingAhead ahead;
  ahead.keep(dir1(), 25, entries(26, 10), false, 4, listing_t0);
  CHECK_FALSE(ahead.take(dir1(), 25, 5, 5, listing_t0, 1s));
  CHECK(ahead.size() == 0);  // dropped, not kept for later
  ahead.keep(dir1(), 25, entries(26, 10), false, 4, listing_t0);
  CHECK_FALSE(ahead.take(dir1(), 25, 5, 4, listing_t0 + 1001ms, 1s));
  ahead.keep(dir1(), 25, entries(26, 10), false, 4, listing_t0);
  CHECK(ahead.take(dir1(), 25, 5, 4, listing_t0 + 1s, 1s));
}

TEST_CASE("abandoned listings do not pile up") {
  ListingAhead ahead;
  for (uint64_t i = 0; i < ListingAhead::kMaxRests + 10; ++i)
    ahead.keep(ListingAhead::Key{InodeId(100 + i), true, 0, 0}, 0, entries(1, 3), false, 0,
               listing_t0 + std::chrono::milliseconds(i));
  CHECK(ahead.size() == ListingAhead::kMaxRests);
  // The oldest went first; the newest is still there.
  CHECK_FALSE(ahead.take(ListingAhead::Key{InodeId(100), true, 0, 0}, 0, 3, 0, listing_t0 + 1s, 2s));
  CHECK(ahead.take(ListingAhead::Key{InodeId(100 + ListingAhead::kMaxRests + 9), true, 0, 0}, 0,
                   3, 0, listing_t0 + 1s, 2s));
}
