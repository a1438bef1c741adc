// Unit tests of utils/ctl/fsck_check: worked examples of each kind of problem
// and its repair, a healthy cluster (with redirects, sparse files, writes in
// flight and garbage waiting for the collector) without findings, and the
// objects of an unlinked-but-open file. Pure: listings built by hand.
#include "utils/ctl/fsck_check.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace pvfs::fsck {
namespace {

constexpr uint64_t kStripe = 100;
constexpr uint64_t kOld = 600000;  // ms: well past the default grace

// Three servers 0, 1, 2; file `ino` striped over them in the order given.
File file(uint64_t ino, uint64_t size, std::vector<uint32_t> servers = {0, 1, 2}) {
  File f;
  f.ino = InodeId(ino);
  f.size = size;
  f.layout.stripe_size = kStripe;
  for (uint32_t s : servers) f.layout.servers.push_back(ServerId(s));
  return f;
}

ObjectId obj(uint64_t ino, uint32_t index) { return ObjectId{InodeId(ino), index}; }

// A cluster where every object of `files` is on its home with the size the
// file's size gives it.
Input healthy(std::vector<File> files) {
  Input in;
  for (uint32_t s = 0; s < 3; ++s) {
    ServerScan scan;
    scan.id = ServerId(s);
    scan.answered = true;
    in.servers.push_back(scan);
  }
  for (const File& f : files)
    for (uint32_t j = 0; j < f.layout.stripe_count(); ++j) {
      const uint64_t bytes = object_size_for_file_size(f.layout, j, f.size);
      if (bytes) in.servers[f.layout.servers[j].value].objects.push_back({obj(f.ino.value, j), bytes});
    }
  in.files = std::move(files);
  return in;
}

ServerScan& server(Input& in, uint32_t id) { return in.servers[id]; }

void remove_object(Input& in, uint32_t server_id, ObjectId o) {
  auto& objects = server(in, server_id).objects;
  std::erase_if(objects, [&](const StoredObject& x) { return x.object == o; });
}

}  // namespace

TEST_CASE("a healthy cluster has no findings, redirects, sparse tails, writes in flight and gc included") {
  Input in = healthy({file(5, 650), file(6, 0), file(7, 120, {2, 0})});
  // File 5: object 1 (home 1) has [0, 50) redirected to server 2, whose
  // fragment is there.
  server(in, 1).redirects.push_back({obj(5, 1), 0, 50, ServerId(2), 0xa1});
  server(in, 2).fragments.push_back({obj(5, 1), 0xa1, 50, kOld, true});
  // A write in flight: the fragment is stored, its redirect not yet recorded.
  server(in, 1).fragments.push_back({obj(7, 1), 0xb2, 20, 3000, true});
  // Garbage the collector has not dropped yet.
  server(in, 2).redirects.push_back({obj(7, 0), 0, 0, ServerId(1), 0xc3});
  server(in, 1).fragments.push_back({obj(7, 0), 0xc3, 100, kOld, true});
  // A file larger than its data (truncated up): a sparse tail.
  in.files.push_back(file(9, 10, {1}));
  server(in, 1).objects.push_back({obj(9, 0), 4});
  CHECK(check(in).empty());
}

TEST_CASE("a missing object that was wholly redirected is not missing") {
  Input in = healthy({file(5, 300)});
  remove_object(in, 1, obj(5, 1));
  server(in, 1).redirects.push_back({obj(5, 1), 0, 100, ServerId(0), 0xd4});
  server(in, 0).fragments.push_back({obj(5, 1), 0xd4, 100, kOld, true});
  CHECK(check(in).empty());
}

TEST_CASE("an object without an inode, past the stripes or away from home is an orphan object, removed") {
  Input in = healthy({file(5, 300)});
  server(in, 2).objects.push_back({obj(77, 0), 4096});
  server(in, 0).objects.push_back({obj(5, 3), 10});
  server(in, 2).objects.push_back({obj(5, 0), 10});  // object 0's home is server 0
  auto found = check(in);
  REQUIRE(found.size() == 3);
  CHECK(found[0].kind == Kind::orphan_object);
  CHECK(found[0].object == obj(5, 0));
  CHECK(found[0].server == ServerId(2));
  CHECK(found[0].problem.find("its home is server 0") != std::string::npos);
  CHECK(found[1].object == obj(5, 3));
  CHECK(found[1].problem.find("only 3 objects") != std::string::npos);
  CHECK(found[2].object == obj(77, 0));
  CHECK(found[2].repair == Repair::remove_object);
  CHECK(found[2].server == ServerId(2));
  CHECK(found[2].problem == "orphan object: object 0 of inode 77 on server 2 (4096 bytes): no file has inode 77");
}

TEST_CASE("the objects of an unlinked file still open are not orphans") {
  File open_unlinked = file(5, 300);
  open_unlinked.orphan = true;
  Input in = healthy({open_unlinked});
  CHECK(check(in).empty());
  remove_object(in, 1, obj(5, 1));  // being deleted: not reported missing
  CHECK(check(in).empty());
  in.files.clear();
  CHECK(check(in).size() == 2);  // once the MDS forgot it, they are
}

TEST_CASE("a missing object below the size is reported and recreated at its length; past the size it is sparse") {
  Input in = healthy({file(5, 650)});
  // Objects hold 250 (stripes 0, 3, 6), 200 and 200 bytes.
  remove_object(in, 1, obj(5, 1));
  auto found = check(in);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == Kind::missing_object);
  CHECK(found[0].server == ServerId(1));
  CHECK(found[0].object == obj(5, 1));
  CHECK(found[0].repair == Repair::create_object);
  CHECK(found[0].size == 200);
  CHECK(found[0].repaired.find("read as zeros") != std::string::npos);

  CHECK(found[0].problem ==
        "missing object: object 1 of inode 5 is not on server 1, but the file's data goes on to byte 650: its "
        "bytes there are lost (or a hole as large as the object)");

  Input small = healthy({file(6, 150)});  // object 2 has nothing to hold
  REQUIRE(small.servers[2].objects.empty());
  CHECK(check(small).empty());
}

TEST_CASE("objects past the end of the data of a file grown by truncate are not missing") {
  Input in = healthy({file(8, 50)});
  in.files[0].size = 1000;  // only object 0 holds data, 50 bytes
  CHECK(check(in).empty());
  in.servers[0].objects.clear();  // nothing at all: a file truncated up from empty
  CHECK(check(in).empty());
}

TEST_CASE("a redirect to a fragment its server lacks, lost on disk, or on an unknown server is stale") {
  Input in = healthy({file(5, 300)});
  server(in, 0).redirects.push_back({obj(5, 0), 0, 40, ServerId(1), 0x11});      // not held
  server(in, 0).redirects.push_back({obj(5, 0), 60, 20, ServerId(2), 0x12});     // file gone
  server(in, 2).fragments.push_back({obj(5, 0), 0x12, 20, kOld, false});
  server(in, 1).redirects.push_back({obj(5, 1), 10, 10, ServerId(9), 0x13});     // no server 9
  auto found = check(in);
  std::vector<Finding> stale;
  for (const auto& f : found)
    if (f.kind == Kind::stale_redirect) stale.push_back(f);
  REQUIRE(stale.size() == 3);
  CHECK(stale[0].server == ServerId(0));
  CHECK(stale[0].fragment == 0x11);
  CHECK(stale[0].repair == Repair::drop_redirect);
  CHECK(stale[0].problem ==
        "stale redirect: bytes [0, 40) of object 0 of inode 5 on server 0 point at fragment 11 on server 1, "
        "which does not have it");
  CHECK(stale[0].repaired.find("older bytes") != std::string::npos);
  CHECK(stale[1].fragment == 0x12);
  CHECK(stale[1].problem.find("file is gone") != std::string::npos);
  CHECK(stale[2].fragment == 0x13);
  CHECK(stale[2].problem.find("not in the config") != std::string::npos);
  // The fragment whose file is gone is referenced, so it is no orphan; a
  // stale range counts for nothing in the size.
  CHECK(found.size() == 3);
}

TEST_CASE("a fragment nothing refers to is an orphan once older than the grace period") {
  Input in = healthy({file(5, 300)});
  server(in, 2).fragments.push_back({obj(5, 0), 0x21, 64, 59000, true});
  CHECK(check(in).empty());  // younger than 60 s: maybe a write in flight
  in.grace = std::chrono::milliseconds(30000);
  auto found = check(in);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == Kind::orphan_fragment);
  CHECK(found[0].server == ServerId(2));
  CHECK(found[0].fragment == 0x21);
  CHECK(found[0].object == obj(5, 0));
  CHECK(found[0].repair == Repair::drop_fragment);
  CHECK(found[0].problem ==
        "orphan fragment: 21 of object 0 of inode 5 on server 2 (64 bytes, 59 s old): no redirect entry refers "
        "to it");
  // A reference from another object's log does not count.
  server(in, 0).redirects.push_back({obj(5, 3), 0, 10, ServerId(2), 0x21});
  // ... and that log's object is an orphan, its redirect stale.
  CHECK(check(in).size() == 3);
}

TEST_CASE("data past the size at the MDS is a size mismatch, repaired to the size the data implies") {
  Input in = healthy({file(5, 650)});
  in.files[0].size = 420;  // objects still hold 650 bytes' worth
  auto found = check(in);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == Kind::size_mismatch);
  CHECK(found[0].repair == Repair::update_size);
  CHECK(found[0].size == 650);
  CHECK(found[0].server == ServerId(0));  // object 0's bytes [200, 250) are file bytes [600, 650)
  CHECK(found[0].problem ==
        "size mismatch: inode 5 is 420 bytes at the metadata server, but its data on server 0 reaches byte 650");

  // A redirected range past the size counts too, a stale one does not.
  Input r = healthy({file(6, 100)});
  server(r, 1).redirects.push_back({obj(6, 1), 0, 30, ServerId(2), 0x31});
  server(r, 2).fragments.push_back({obj(6, 1), 0x31, 30, kOld, true});
  found = check(r);
  REQUIRE(found.size() == 1);
  CHECK(found[0].size == 130);
  server(r, 2).fragments.clear();
  found = check(r);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == Kind::stale_redirect);
}

TEST_CASE("a server that did not answer hides its problems but invents none") {
  Input in = healthy({file(5, 300)});
  server(in, 1).answered = false;
  server(in, 1).objects.clear();
  server(in, 0).redirects.push_back({obj(5, 0), 0, 10, ServerId(1), 0x41});
  server(in, 2).fragments.push_back({obj(5, 1), 0x42, 10, kOld, true});  // home 1 unknown
  CHECK(check(in).empty());
}

TEST_CASE("file_end_of_object maps the end of an object's bytes back to the file") {
  const File f = file(1, 0);
  CHECK(file_end_of_object(f.layout, 0, 0) == 0);
  CHECK(file_end_of_object(f.layout, 0, 1) == 1);
  CHECK(file_end_of_object(f.layout, 0, 100) == 100);
  CHECK(file_end_of_object(f.layout, 0, 101) == 301);
  CHECK(file_end_of_object(f.layout, 2, 50) == 250);
  for (uint64_t size : {1, 99, 100, 101, 299, 300, 301, 650, 1000})
    for (uint32_t j = 0; j < 3; ++j) {
      const uint64_t bytes = object_size_for_file_size(f.layout, j, size);
      CHECK(file_end_of_object(f.layout, j, bytes) <= size);
    }
}

}  // namespace pvfs::fsck
