// The wire conversions both ends use (shared/rpc/convert.h): every value a
// daemon and a client or tool exchange comes back field for field.
#include <doctest/doctest.h>

#include <capnp/message.h>

#include "shared/rpc/convert.h"

namespace pvfs {
namespace {

namespace mp = proto::mds;

// `value` written to a fresh message as `Proto` and read back.
template <class Proto, class T>
auto round_trip(const T& value) {
  capnp::MallocMessageBuilder message;
  auto b = message.initRoot<Proto>();
  rpc::to_wire(value, b);
  return rpc::from_wire(b.asReader());
}

Attr some_attr(uint64_t ino) {
  Attr a;
  a.ino = InodeId(ino);
  a.mode = 0100644;
  a.uid = 1000;
  a.gid = 100;
  a.size = 12345;
  a.nlink = 2;
  a.mtime = {1700000000, 5};
  a.layout.stripe_size = 1 << 20;
  a.layout.servers = {ServerId(2), ServerId(0)};
  return a;
}

TEST_CASE("a setattr change crosses the wire field for field") {
  SetAttr s;
  s.mask = kSetMode | kSetSize | kSetMtime;
  s.mode = 0600;
  s.uid = 7;
  s.gid = 8;
  s.size = uint64_t{1} << 40;
  s.atime = {1, 2};
  s.mtime = {3, 4};
  const SetAttr back = round_trip<mp::Request::Setattr>(s);
  CHECK(back.mask == s.mask);
  CHECK(back.mode == s.mode);
  CHECK(back.uid == s.uid);
  CHECK(back.gid == s.gid);
  CHECK(back.size == s.size);
  CHECK(back.atime == s.atime);
  CHECK(back.mtime == s.mtime);
}

TEST_CASE("a directory page keeps its order, cookies, eof and the attributes of those that have them") {
  DirPage page;
  page.eof = true;
  page.entries.push_back({"a", InodeId(5), 0040755, 11, some_attr(5)});
  page.entries.push_back({"b", InodeId(6), 0100644, 12, std::nullopt});
  const DirPage back = round_trip<mp::Reply::ReaddirReply>(page);
  CHECK(back.eof);
  REQUIRE(back.entries.size() == 2);
  CHECK(back.entries[0].name == "a");
  CHECK(back.entries[0].ino == InodeId(5));
  CHECK(back.entries[0].mode == 0040755);
  CHECK(back.entries[0].cookie == 11);
  REQUIRE(back.entries[0].attr.has_value());
  CHECK(back.entries[0].attr->size == 12345);
  CHECK(back.entries[0].attr->layout.servers == page.entries[0].attr->layout.servers);
  CHECK(back.entries[1].name == "b");
  CHECK(back.entries[1].cookie == 12);
  CHECK_FALSE(back.entries[1].attr.has_value());
  CHECK_FALSE(round_trip<mp::Reply::ReaddirReply>(DirPage{}).eof);
}

TEST_CASE("a page of fsck's file scan keeps each file's size, layout and orphan mark") {
  FileScan scan;
  scan.files.push_back({InodeId(9), 100, some_attr(9).layout, false});
  scan.files.push_back({InodeId(10), 0, Layout{}, true});
  const FileScan back = round_trip<mp::Reply::FileList>(scan);
  CHECK_FALSE(back.eof);
  REQUIRE(back.files.size() == 2);
  CHECK(back.files[0].ino == InodeId(9));
  CHECK(back.files[0].size == 100);
  CHECK(back.files[0].layout.stripe_size == uint64_t{1} << 20);
  CHECK(back.files[0].layout.servers == scan.files[0].layout.servers);
  CHECK_FALSE(back.files[0].orphan);
  CHECK(back.files[1].orphan);
  scan.eof = true;
  CHECK(round_trip<mp::Reply::FileList>(scan).eof);
}

TEST_CASE("a storage server's registration and listing keep its id, address, space and liveness") {
  const ServerInfo s{ServerId(4), "node-4:7100", uint64_t{1} << 40, uint64_t{1} << 39, true};
  const ServerInfo back = round_trip<proto::ServerInfo>(s);
  CHECK(back.id == s.id);
  CHECK(back.address == s.address);
  CHECK(back.capacity_bytes == s.capacity_bytes);
  CHECK(back.free_bytes == s.free_bytes);
  CHECK(back.alive);
  CHECK_FALSE(round_trip<proto::ServerInfo>(ServerInfo{ServerId(1), "h:1", 0, 0, false}).alive);
}

}  // namespace
}  // namespace pvfs
