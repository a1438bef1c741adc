#include "fs/statahead.h"

#include <doctest/doctest.h>

#include <string>

using namespace pvfs;
using namespace std::chrono_literals;

namespace {
const Statahead::Clock::time_point statahead_t0{50s};
const Statahead::Walker walker{InodeId(1), 7, 7};

// Entries f<cookie> (inode 1000 + cookie) with attributes, cookies first.. .
std::vector<DirEntry> window(uint64_t first, size_t n) {
  std::vector<DirEntry> out;
  for (uint64_t c = first; c < first + n; ++c) {
    Attr a;
    a.ino = InodeId(1000 + c);
    a.mode = 0100644;
    a.size = c;
    out.push_back(DirEntry{"f" + std::to_string(c), a.ino, a.mode, c, a});
  }
  return out;
}
}  // namespace

TEST_CASE("lookups in listing order start a walk; the window then answers the next names once") {
  Statahead s;
  CHECK_FALSE(s.note_lookup(walker, 1, statahead_t0));
  CHECK_FALSE(s.note_lookup(walker, 2, statahead_t0));
  auto from = s.note_lookup(walker, 3, statahead_t0);
  REQUIRE(from);
  CHECK(*from == 3);
  // While the window is on its way, the next lookups do not ask for it again.
  s.keep(walker, 3, window(4, 100), statahead_t0 + 1ms, s.generation());
  auto hit = s.take(walker, "f4", statahead_t0 + 5ms, 1s);
  REQUIRE(hit);
  CHECK(hit->attr.ino == InodeId(1004));
  CHECK(hit->attr.size == 4);
  CHECK(hit->age == 4ms);
  CHECK_FALSE(s.take(walker, "f4", statahead_t0 + 5ms, 1s));  // once: the kernel caches it now
  CHECK_FALSE(s.take(walker, "g", statahead_t0 + 5ms, 1s));   // never fetched: the MDS says
}

TEST_CASE("a walk past the window asks for the next one; lookups out of order never do") {
  Statahead s;
  for (uint64_t c = 1; c <= 3; ++c) s.note_lookup(walker, c, statahead_t0);
  s.keep(walker, 3, window(4, 10), statahead_t0, s.generation());
  for (uint64_t c = 4; c <= 13; ++c) REQUIRE(s.take(walker, "f" + std::to_string(c), statahead_t0, 1s));
  auto next = s.note_lookup(walker, 14, statahead_t0);  // the first name past the window
  REQUIRE(next);
  CHECK(*next == 14);

  Statahead random;
  for (uint64_t c : {40, 7, 300, 12, 90, 3}) CHECK_FALSE(random.note_lookup(walker, c, statahead_t0));
  CHECK_FALSE(random.note_lookup(walker, 0, statahead_t0));  // an MDS that does not say
}

TEST_CASE("a second walk over a directory is fetched ahead too (stat of every file, then rm of each)") {
  Statahead s;
  for (uint64_t c = 1; c <= 3; ++c) s.note_lookup(walker, c, statahead_t0);
  s.keep(walker, 3, window(4, 10), statahead_t0, s.generation());
  for (uint64_t c = 4; c <= 13; ++c) REQUIRE(s.take(walker, "f" + std::to_string(c), statahead_t0, 1s));
  // The kernel's cache has expired: the walk starts again from the top.
  CHECK_FALSE(s.note_lookup(walker, 1, statahead_t0 + 2s));
  CHECK_FALSE(s.note_lookup(walker, 2, statahead_t0 + 2s));
  auto again = s.note_lookup(walker, 3, statahead_t0 + 2s);
  REQUIRE(again);
  CHECK(*again == 3);
  s.keep(walker, 3, window(4, 10), statahead_t0 + 2s, s.generation());
  CHECK(s.take(walker, "f4", statahead_t0 + 2s, 1s));
}

TEST_CASE("an entry older than the attribute timeout is asked again") {
  Statahead s;
  s.keep(walker, 0, window(1, 5), statahead_t0, s.generation());
  CHECK(s.take(walker, "f1", statahead_t0 + 1s, 1s));
  CHECK_FALSE(s.take(walker, "f2", statahead_t0 + 1001ms, 1s));
}

TEST_CASE("only the walker who fetched a window uses it") {
  Statahead s;
  s.keep(walker, 0, window(1, 5), statahead_t0, s.generation());
  CHECK_FALSE(s.take(Statahead::Walker{InodeId(1), 8, 7}, "f1", statahead_t0, 1s));  // another uid
  CHECK_FALSE(s.take(Statahead::Walker{InodeId(2), 7, 7}, "f1", statahead_t0, 1s));  // another directory
  CHECK(s.take(walker, "f1", statahead_t0, 1s));
}

TEST_CASE("this client's own changes are never answered from a window") {
  Statahead s;
  s.keep(walker, 0, window(1, 5), statahead_t0, s.generation());
  s.forget(InodeId(1), "f1");       // unlinked or renamed here
  s.forget_inode(InodeId(1003));    // chmod, write or link of f3 here
  CHECK_FALSE(s.take(walker, "f1", statahead_t0, 1s));
  CHECK_FALSE(s.take(walker, "f3", statahead_t0, 1s));
  CHECK(s.take(walker, "f2", statahead_t0, 1s));
  s.forget(InodeId(2), "f4");       // another directory's f4
  CHECK(s.take(walker, "f4", statahead_t0, 1s));
}

TEST_CASE("a window asked for before this client's change is not kept: it may predate it") {
  Statahead s;
  const uint64_t asked = s.generation();
  s.forget(InodeId(1), "f2");  // an unlink here while the window was on its way
  s.keep(walker, 0, window(1, 5), statahead_t0, asked);
  CHECK_FALSE(s.take(walker, "f2", statahead_t0, 1s));
  CHECK_FALSE(s.take(walker, "f3", statahead_t0, 1s));
  s.keep(walker, 0, window(1, 5), statahead_t0, s.generation());
  CHECK(s.take(walker, "f3", statahead_t0, 1s));
  // A change in another directory leaves this one's window alone: four
  // processes each unlinking in its own folder keep their statahead.
  const uint64_t before_other = s.generation();
  s.forget(InodeId(9), "x");
  s.keep(walker, 0, window(1, 5), statahead_t0, before_other);
  CHECK(s.take(walker, "f4", statahead_t0, 1s));
  // An inode changed anywhere (a chmod, a write) may be in the window.
  Statahead t;
  const uint64_t before_write = t.generation();
  t.forget_inode(InodeId(77));
  t.keep(walker, 0, window(1, 5), statahead_t0, before_write);
  CHECK_FALSE(t.take(walker, "f5", statahead_t0, 1s));
}

TEST_CASE("entries without attributes (another file set's root) are not kept") {
  Statahead s;
  auto w = window(1, 2);
  w[0].attr.reset();
  s.keep(walker, 0, std::move(w), statahead_t0, s.generation());
  CHECK_FALSE(s.take(walker, "f1", statahead_t0, 1s));
  CHECK(s.take(walker, "f2", statahead_t0, 1s));
}

TEST_CASE("walks in many directories keep a bounded state") {
  Statahead s;
  for (uint64_t d = 0; d < Statahead::kMaxDirs + 5; ++d)
    s.keep(Statahead::Walker{InodeId(100 + d), 0, 0}, 0, window(1, 3),
           statahead_t0 + std::chrono::milliseconds(d), s.generation());
  CHECK_FALSE(s.take(Statahead::Walker{InodeId(100), 0, 0}, "f1", statahead_t0 + 100ms, 1s));
  CHECK(s.take(Statahead::Walker{InodeId(100 + Statahead::kMaxDirs + 4), 0, 0}, "f1",
               statahead_t0 + 100ms, 1s));
}
