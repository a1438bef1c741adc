#include "fs/xattr_absence.h"

#include <doctest/doctest.h>

using namespace pvfs;
using namespace std::chrono_literals;

namespace {
const XattrAbsence::Clock::time_point absence_t0{50s};
}

TEST_CASE("a missing security.capability is remembered for the lifetime, then asked again") {
  XattrAbsence cache(1s);
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0));
  cache.note_absent(7, "security.capability", absence_t0, cache.generation());
  CHECK(cache.absent(7, "security.capability", absence_t0 + 999ms));
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0 + 1s));
  CHECK_FALSE(cache.absent(7, "security.selinux", absence_t0));  // another name
  CHECK_FALSE(cache.absent(8, "security.capability", absence_t0));  // another inode
}

TEST_CASE("user xattrs are never assumed absent: other clients set them all the time") {
  XattrAbsence cache(1s);
  cache.note_absent(7, "user.comment", absence_t0, cache.generation());
  CHECK_FALSE(cache.absent(7, "user.comment", absence_t0));
  CHECK(XattrAbsence::tracked("security.selinux"));
  CHECK_FALSE(XattrAbsence::tracked("system.posix_acl_access"));
  CHECK_FALSE(XattrAbsence::tracked("trusted.x"));
}

TEST_CASE("a change through this mount forgets the inode at once") {
  XattrAbsence cache(1s);
  cache.note_absent(7, "security.capability", absence_t0, cache.generation());
  cache.forget(7, absence_t0);
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0));
}

TEST_CASE("an answer to a request made before a change is not remembered") {
  XattrAbsence cache(1s);
  const uint64_t asked = cache.generation();
  cache.forget(9, absence_t0);  // setxattr on any inode through this mount meanwhile
  cache.note_absent(7, "security.capability", absence_t0, asked);
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0));
}

TEST_CASE("lifetime zero (attr_timeout=0) remembers nothing") {
  XattrAbsence cache(0s);
  cache.note_absent(7, "security.capability", absence_t0, cache.generation());
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0));
}

TEST_CASE("the cache stays bounded, dropping expired inodes first") {
  XattrAbsence cache(1s, 2);
  cache.note_absent(1, "security.capability", absence_t0, cache.generation());
  cache.note_absent(2, "security.capability", absence_t0 + 500ms, cache.generation());
  cache.note_absent(3, "security.capability", absence_t0 + 1100ms, cache.generation());  // 1 expired: dropped
  CHECK(cache.inodes() == 2);
  CHECK(cache.absent(2, "security.capability", absence_t0 + 1100ms));
  for (uint64_t ino = 10; ino < 50; ++ino) cache.note_absent(ino, "security.selinux", absence_t0 + 1200ms, cache.generation());
  CHECK(cache.inodes() <= 2);
}

TEST_CASE("the MDS's hint that an inode has no security xattrs answers every such name") {
  XattrAbsence cache(1s);
  cache.note_none(7, absence_t0);
  CHECK(cache.absent(7, "security.capability", absence_t0 + 10ms));
  CHECK(cache.absent(7, "security.selinux", absence_t0 + 10ms));
  CHECK_FALSE(cache.absent(7, "user.comment", absence_t0 + 10ms));
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0 + 1s));
}

TEST_CASE("a hint that may predate a change made through this mount is not taken") {
  XattrAbsence cache(1s);
  cache.forget(3, absence_t0);  // setcap on some file here
  cache.note_none(7, absence_t0 + 500ms);
  CHECK_FALSE(cache.absent(7, "security.capability", absence_t0 + 500ms));
  cache.note_none(7, absence_t0 + 1s);  // a lifetime later: taken
  CHECK(cache.absent(7, "security.capability", absence_t0 + 1s));
}

TEST_CASE("a full absence cache where inodes expire one by one starts afresh instead of sweeping each time") {
  XattrAbsence cache(1s, 8);
  for (uint64_t ino = 1; ino <= 8; ++ino) cache.note_none(ino, absence_t0 + ino * 100ms);
  cache.note_none(100, absence_t0 + 1150ms);  // only inode 1 had expired
  CHECK(cache.inodes() == 1);
  CHECK(cache.absent(100, "security.capability", absence_t0 + 1150ms));
}
