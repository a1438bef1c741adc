// Unit tests of server/disk_object_store: data round trips, holes, truncate,
// allocate and punch, seek data and holes, remove with cached descriptors,
// listing, the directory lock, the descriptor cache under load and
// concurrent writers. Each test works in its own mkdtemp directory under
// /tmp, removed afterwards.
#include "server/disk_object_store.h"

#include <sys/statvfs.h>

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace pvfs {
namespace {

using pvfs::test::TempDir;

ObjectId oid(uint64_t ino, uint32_t index = 0) { return ObjectId{InodeId(ino), index}; }

// Deterministic, position-dependent bytes so misplaced data is caught.
std::vector<std::byte> pattern(size_t size, uint32_t seed) {
  std::vector<std::byte> out(size);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::byte>(x >> 24);
  }
  return out;
}

std::unique_ptr<DiskObjectStore> open_store(const std::filesystem::path& dir,
                                            size_t max_open_files = DiskObjectStore::kDefaultMaxOpenFiles) {
  auto store = DiskObjectStore::open(dir, max_open_files);
  REQUIRE_MESSAGE(store.ok(), store.status().to_string());
  return std::move(*store);
}

bool all_zero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

}  // namespace

TEST_CASE("a written range reads back byte for byte") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(10000, 1);
  auto w = store->write(oid(42, 3), 4096, data, false);
  REQUIRE(w.ok());
  CHECK(*w == data.size());

  std::vector<std::byte> back(data.size());
  auto r = store->read(oid(42, 3), 4096, back);
  REQUIRE(r.ok());
  CHECK(*r == data.size());
  CHECK(back == data);

  // Same object under another index is a different object.
  auto other = store->read(oid(42, 4), 4096, back);
  REQUIRE(other.ok());
  CHECK(*other == 0);

  auto st = store->stat(oid(42, 3));
  REQUIRE(st.ok());
  CHECK(st->exists);
  CHECK(st->size == 4096 + data.size());
}

TEST_CASE("data survives closing and reopening the store") {
  TempDir dir;
  const auto data = pattern(5000, 2);
  {
    auto store = open_store(dir.path());
    REQUIRE(store->write(oid(7, 1), 0, data, true).ok());
  }
  auto store = open_store(dir.path());
  std::vector<std::byte> back(data.size());
  auto r = store->read(oid(7, 1), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == data.size());
  CHECK(back == data);
}

TEST_CASE("reads past the end of an object are short") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(100, 3);
  REQUIRE(store->write(oid(1), 0, data, false).ok());

  std::vector<std::byte> back(200);
  auto r = store->read(oid(1), 50, back);
  REQUIRE(r.ok());
  CHECK(*r == 50);
  CHECK(std::equal(back.begin(), back.begin() + 50, data.begin() + 50));

  auto at_end = store->read(oid(1), 100, back);
  REQUIRE(at_end.ok());
  CHECK(*at_end == 0);
  auto beyond = store->read(oid(1), 1 << 20, back);
  REQUIRE(beyond.ok());
  CHECK(*beyond == 0);
}

TEST_CASE("a missing object reads zero bytes and is not created by the read") {
  TempDir dir;
  auto store = open_store(dir.path());
  std::vector<std::byte> back(4096, std::byte{0x5a});
  auto r = store->read(oid(99, 2), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == 0);
  auto st = store->stat(oid(99, 2));
  REQUIRE(st.ok());
  CHECK_FALSE(st->exists);
  CHECK(st->size == 0);
  // fsync of a missing object is fine and does not create it either.
  CHECK(store->fsync(oid(99, 2)).ok());
  CHECK_FALSE(store->stat(oid(99, 2))->exists);
}

TEST_CASE("an object file deleted behind the store's back is recreated, not served, once stat saw it gone") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(8192, 3);
  REQUIRE(store->write(oid(31, 1), 0, data, false).ok());
  std::vector<std::byte> back(8192);
  REQUIRE(store->read(oid(31, 1), 0, back).ok());  // its descriptor is cached now
  REQUIRE(std::filesystem::remove(store->object_path(oid(31, 1))));
  auto st = store->stat(oid(31, 1));
  REQUIRE(st.ok());
  CHECK_FALSE(st->exists);
  // Through the cached descriptor the deleted file would still read 8192 bytes.
  auto r = store->read(oid(31, 1), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == 0);
  REQUIRE(store->truncate(oid(31, 1), 4096).ok());
  CHECK(std::filesystem::file_size(store->object_path(oid(31, 1))) == 4096);
  CHECK(store->stat(oid(31, 1))->mtime_ns > 0);
}

TEST_CASE("a hole left by a sparse write reads as zeros") {
  TempDir dir;
  auto store = open_store(dir.path());
  const uint64_t hole = (1 << 20) + 7;
  const auto data = pattern(10, 4);
  REQUIRE(store->write(oid(5), hole, data, false).ok());

  std::vector<std::byte> back(hole + data.size(), std::byte{0xaa});
  auto r = store->read(oid(5), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == back.size());
  CHECK(all_zero(std::span(back).first(hole)));
  CHECK(std::equal(data.begin(), data.end(), back.begin() + hole));
  CHECK(store->stat(oid(5))->size == hole + data.size());
}

TEST_CASE("allocate reserves blocks without changing the size, and punch frees them to zeros") {
  TempDir dir;
  auto store = open_store(dir.path());
  constexpr uint64_t kMiB = 1 << 20;
  REQUIRE(store->allocate(oid(9), 0, 4 * kMiB, false).ok());  // creates the object
  auto st = store->stat(oid(9));
  REQUIRE(st->exists);
  CHECK(st->size == 0);
  CHECK(st->blocks * 512 >= 4 * kMiB);

  const auto data = pattern(3 * kMiB, 7);
  REQUIRE(store->write(oid(9), 0, data, false).ok());
  REQUIRE(store->allocate(oid(9), kMiB, kMiB, true).ok());
  CHECK(store->stat(oid(9))->size == data.size());
  CHECK(store->stat(oid(9))->blocks * 512 <= 3 * kMiB);
  std::vector<std::byte> back(data.size());
  REQUIRE(*store->read(oid(9), 0, back) == data.size());
  CHECK(std::equal(data.begin(), data.begin() + kMiB, back.begin()));
  CHECK(all_zero(std::span(back).subspan(kMiB, kMiB)));
  CHECK(std::equal(data.begin() + 2 * kMiB, data.end(), back.begin() + 2 * kMiB));

  // Punching a missing object leaves it missing; ranges past the limit are bad input.
  REQUIRE(store->allocate(oid(10), 0, kMiB, true).ok());
  CHECK_FALSE(store->stat(oid(10))->exists);
  CHECK(store->allocate(oid(9), ObjectStore::kMaxObjectBytes, 1, false).code() == Errc::invalid_argument);
}

TEST_CASE("seek finds data and holes, and a missing object has only a hole") {
  TempDir dir;
  auto store = open_store(dir.path());
  constexpr uint64_t kMiB = 1 << 20;
  const auto data = pattern(4096, 8);
  REQUIRE(store->write(oid(11), 0, data, false).ok());
  REQUIRE(store->write(oid(11), 2 * kMiB, data, false).ok());
  CHECK(**store->seek(oid(11), 0, false) == 0);
  CHECK(**store->seek(oid(11), 0, true) == 4096);
  CHECK(**store->seek(oid(11), 4096, false) == 2 * kMiB);
  CHECK(**store->seek(oid(11), 2 * kMiB, true) == 2 * kMiB + 4096);
  CHECK_FALSE(store->seek(oid(11), 2 * kMiB + 4096, false)->has_value());
  CHECK(**store->seek(oid(11), 3 * kMiB, true) == 3 * kMiB);  // past the end
  CHECK_FALSE(store->seek(oid(12), 0, false)->has_value());
  CHECK(**store->seek(oid(12), 100, true) == 100);
  CHECK_FALSE(store->stat(oid(12))->exists);  // seeking does not create
}

TEST_CASE("truncate shrinks and grows an object and creates a missing one") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(8192, 5);
  REQUIRE(store->write(oid(6), 0, data, false).ok());

  REQUIRE(store->truncate(oid(6), 100).ok());
  CHECK(store->stat(oid(6))->size == 100);
  std::vector<std::byte> back(8192, std::byte{0xaa});
  auto r = store->read(oid(6), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == 100);
  CHECK(std::equal(back.begin(), back.begin() + 100, data.begin()));

  // Growing again must not bring the cut bytes back.
  REQUIRE(store->truncate(oid(6), 5000).ok());
  CHECK(store->stat(oid(6))->size == 5000);
  std::fill(back.begin(), back.end(), std::byte{0xaa});
  r = store->read(oid(6), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == 5000);
  CHECK(std::equal(back.begin(), back.begin() + 100, data.begin()));
  CHECK(all_zero(std::span(back).subspan(100, 4900)));

  REQUIRE(store->truncate(oid(60, 1), 12345).ok());
  auto st = store->stat(oid(60, 1));
  REQUIRE(st.ok());
  CHECK(st->exists);
  CHECK(st->size == 12345);
}

TEST_CASE("a removed object no longer exists even while its descriptor was cached") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(3000, 6);
  REQUIRE(store->write(oid(8, 1), 0, data, false).ok());
  std::vector<std::byte> back(3000);
  REQUIRE(store->read(oid(8, 1), 0, back).ok());  // the descriptor is now cached

  REQUIRE(store->remove(oid(8, 1)).ok());
  auto st = store->stat(oid(8, 1));
  REQUIRE(st.ok());
  CHECK_FALSE(st->exists);
  auto r = store->read(oid(8, 1), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == 0);
  CHECK(store->remove(oid(8, 1)).ok());  // missing is not an error

  // A later write starts a new, empty object rather than reviving the old one.
  const auto fresh = pattern(3, 7);
  REQUIRE(store->write(oid(8, 1), 0, fresh, false).ok());
  st = store->stat(oid(8, 1));
  REQUIRE(st.ok());
  CHECK(st->exists);
  CHECK(st->size == 3);
  r = store->read(oid(8, 1), 0, back);
  REQUIRE(r.ok());
  CHECK(*r == 3);
  CHECK(std::equal(fresh.begin(), fresh.end(), back.begin()));
}

TEST_CASE("list finds every object written and nothing else") {
  TempDir dir;
  auto store = open_store(dir.path());
  std::vector<ObjectId> expected;
  for (uint64_t i = 0; i < 300; ++i) {
    // Spread over fan-out directories, with high inode bits and large indexes.
    ObjectId id = oid(InodeId::make(FileSetId(static_cast<uint16_t>(i % 5)), i * 37 + 1).value,
                      static_cast<uint32_t>(i % 3 == 0 ? 4000000000u + i : i % 7));
    expected.push_back(id);
    if (i % 2 == 0) {
      REQUIRE(store->write(id, i, pattern(16, static_cast<uint32_t>(i)), false).ok());
    } else {
      REQUIRE(store->truncate(id, i).ok());
    }
  }
  REQUIRE(store->remove(expected.back()).ok());
  expected.pop_back();
  // Stray files that are not object names are skipped.
  std::ofstream(dir.path() / "objects" / "00" / "not-an-object") << "x";
  std::ofstream(dir.path() / "objects" / "01" / "0000000000000002.1") << "x";  // wrong fan-out

  auto listed = store->list();
  REQUIRE(listed.ok());
  std::sort(listed->begin(), listed->end());
  std::sort(expected.begin(), expected.end());
  CHECK(*listed == expected);
}

TEST_CASE("two opens of one directory: the second is busy until the first closes") {
  TempDir dir;
  auto first = open_store(dir.path());
  auto second = DiskObjectStore::open(dir.path());
  REQUIRE_FALSE(second.ok());
  CHECK(second.code() == Errc::busy);
  CHECK(second.status().detail().find(dir.path().string()) != std::string::npos);

  first.reset();
  auto third = DiskObjectStore::open(dir.path());
  CHECK(third.ok());
}

TEST_CASE("more objects than the descriptor cache holds all read back correctly") {
  TempDir dir;
  auto store = open_store(dir.path());
  constexpr uint32_t kObjects = 1500;
  static_assert(kObjects > DiskObjectStore::kDefaultMaxOpenFiles);
  for (uint32_t i = 0; i < kObjects; ++i)
    REQUIRE(store->write(oid(1000 + i, i % 4), i, pattern(64 + i % 100, i), false).ok());
  CHECK(store->cached_files() <= DiskObjectStore::kDefaultMaxOpenFiles);
  CHECK(store->cached_files() > 0);

  // Twice, so the second pass reads through descriptors reopened after eviction.
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t i = 0; i < kObjects; ++i) {
      const auto want = pattern(64 + i % 100, i);
      std::vector<std::byte> back(want.size() + 10);
      auto r = store->read(oid(1000 + i, i % 4), i, back);
      REQUIRE(r.ok());
      REQUIRE(*r == want.size());
      REQUIRE(std::equal(want.begin(), want.end(), back.begin()));
    }
  }
  CHECK(store->cached_files() <= DiskObjectStore::kDefaultMaxOpenFiles);
}

TEST_CASE("concurrent writers on disjoint ranges of one object all land") {
  TempDir dir;
  // A two-entry cache while every thread also touches its own object keeps
  // descriptors being evicted under in-flight writes.
  auto store = open_store(dir.path(), 2);
  constexpr int kThreads = 4;
  constexpr int kChunks = 64;
  constexpr size_t kChunk = 4096;
  const ObjectId shared = oid(77);
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int c = 0; c < kChunks; ++c) {
        const uint32_t seed = static_cast<uint32_t>(t * kChunks + c);
        const uint64_t offset = static_cast<uint64_t>(c * kThreads + t) * kChunk;
        if (!store->write(shared, offset, pattern(kChunk, seed), false).ok()) ++failures[t];
        if (!store->write(oid(200 + t), offset, pattern(16, seed), false).ok()) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);

  std::vector<std::byte> back(kThreads * kChunks * kChunk);
  auto r = store->read(shared, 0, back);
  REQUIRE(r.ok());
  REQUIRE(*r == back.size());
  for (int t = 0; t < kThreads; ++t) {
    for (int c = 0; c < kChunks; ++c) {
      const auto want = pattern(kChunk, static_cast<uint32_t>(t * kChunks + c));
      const size_t offset = static_cast<size_t>(c * kThreads + t) * kChunk;
      REQUIRE_MESSAGE(std::equal(want.begin(), want.end(), back.begin() + offset),
                      "thread ", t, " chunk ", c);
    }
  }
}

TEST_CASE("offsets past the maximum object size or wrapping around are invalid") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(4, 8);
  std::vector<std::byte> back(4);
  const uint64_t max = ObjectStore::kMaxObjectBytes;

  CHECK(store->write(oid(9), max, data, false).code() == Errc::invalid_argument);
  CHECK(store->write(oid(9), max - 2, data, false).code() == Errc::invalid_argument);
  CHECK(store->write(oid(9), UINT64_MAX - 1, data, false).code() == Errc::invalid_argument);
  CHECK(store->read(oid(9), max + 1, back).code() == Errc::invalid_argument);
  CHECK(store->read(oid(9), UINT64_MAX - 1, back).code() == Errc::invalid_argument);
  CHECK(store->truncate(oid(9), max + 1).code() == Errc::invalid_argument);
  CHECK_FALSE(store->stat(oid(9))->exists);
}

TEST_CASE("a sync write round-trips and space reports the file system") {
  TempDir dir;
  auto store = open_store(dir.path());
  const auto data = pattern(6000, 9);
  auto w = store->write(oid(10, 2), 123, data, true);
  REQUIRE(w.ok());
  CHECK(*w == data.size());
  CHECK(store->fsync(oid(10, 2)).ok());
  std::vector<std::byte> back(data.size());
  auto r = store->read(oid(10, 2), 123, back);
  REQUIRE(r.ok());
  CHECK(back == data);

  auto sp = store->space();
  REQUIRE(sp.ok());
  CHECK(sp->capacity_bytes > 0);
  CHECK(sp->free_bytes <= sp->capacity_bytes);
  // Root's reserved blocks are not counted in the capacity (df would call them used).
  struct statvfs vfs {};
  REQUIRE(::statvfs(dir.path().c_str(), &vfs) == 0);
  CHECK(sp->capacity_bytes == (vfs.f_blocks - (vfs.f_bfree - vfs.f_bavail)) * vfs.f_frsize);
}

}  // namespace pvfs
