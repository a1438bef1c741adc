// Unit tests of the MDS namespace store and the LMDB wrapper under it: every
// operation's success and error cases, Linux permission rules with non-root
// callers, stable readdir cookies, orphans, persistence across reopen and
// corrupt records. Each test works in its own temporary directory.
#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <string>

#include "mds/inode_record.h"
#include "shared/lmdb/lmdb_env.h"
#include "mds/namespace_store.h"
#include "tests/support/errc_print.h"


using namespace pvfs;
using namespace pvfs::mds;

namespace {

const Caller kRoot{0, 0, {}};
const Caller kAlice{1000, 1000, {}};
const Caller kBob{1001, 1001, {}};
const Caller kCarol{1002, 1002, {}};

struct StoreDir {
  std::filesystem::path path;
  StoreDir() {
    char tmpl[] = "/tmp/pvfs-nsstore-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~StoreDir() { std::filesystem::remove_all(path); }
};

Layout test_layout() { return Layout{1 << 16, {ServerId(3), ServerId(1)}}; }

// Attr has no operator== (shared/attr.h); compare every field.
bool same(const Attr& a, const Attr& b) {
  return a.ino == b.ino && a.mode == b.mode && a.uid == b.uid && a.gid == b.gid &&
         a.size == b.size && a.nlink == b.nlink && a.rdev == b.rdev && a.atime == b.atime &&
         a.mtime == b.mtime && a.ctime == b.ctime && a.layout == b.layout && a.blocks == b.blocks;
}

SetAttr set_mode(uint32_t mode) {
  SetAttr s;
  s.mask = kSetMode;
  s.mode = mode;
  return s;
}
SetAttr set_owner(std::optional<uint32_t> uid, std::optional<uint32_t> gid) {
  SetAttr s;
  if (uid) s.mask |= kSetUid, s.uid = *uid;
  if (gid) s.mask |= kSetGid, s.gid = *gid;
  return s;
}
SetAttr set_size(uint64_t size) {
  SetAttr s;
  s.mask = kSetSize;
  s.size = size;
  return s;
}
SetAttr set_mask(uint32_t mask) {
  SetAttr s;
  s.mask = mask;
  return s;
}

struct Fixture {
  StoreDir dir;
  std::unique_ptr<NamespaceStore> store;
  InodeId root;
  int64_t clock = 100;

  Fixture() { reopen(); }
  Timespec tick() { return Timespec{++clock, 7}; }
  void close() { store.reset(); }
  void reopen() {
    store.reset();
    auto opened = NamespaceStore::open(dir.path, FileSetId(0), tick());
    REQUIRE(opened.ok());
    store = std::move(*opened);
    root = store->root();
  }
  Attr file(const Caller& c, InodeId parent, std::string_view name, uint32_t mode = 0644) {
    auto r = store->mknod(c, parent, name, S_IFREG | mode, 0, test_layout(), tick());
    REQUIRE(r.ok());
    return *r;
  }
  Attr dir_(const Caller& c, InodeId parent, std::string_view name, uint32_t mode = 0755) {
    auto r = store->mkdir(c, parent, name, mode, tick());
    REQUIRE(r.ok());
    return *r;
  }
  Attr attr(InodeId ino) {
    auto r = store->getattr(ino);
    REQUIRE(r.ok());
    return *r;
  }
  // A directory everyone may write in, for tests with non-root callers.
  InodeId open_dir(std::string_view name) { return dir_(kRoot, root, name, 0777).ino; }
  std::vector<std::string> names(InodeId d) {
    auto r = store->readdir(kRoot, d, 0, 100000, false);
    REQUIRE(r.ok());
    std::vector<std::string> out;
    for (auto& e : r->entries) out.push_back(e.name);
    return out;
  }
  // Rewrites the stored inode record of `ino` (with the store closed).
  template <typename Edit>
  void edit_inode(InodeId ino, Edit edit) {
    close();
    auto env = lmdb::Env::open(dir.path);
    REQUIRE(env.ok());
    auto db = (*env)->open_db(kInodesDb);
    REQUIRE(db.ok());
    auto txn = (*env)->begin_write();
    REQUIRE(txn.ok());
    auto bytes = txn->get(*db, inode_key(ino));
    REQUIRE(bytes.ok());
    std::string value = edit(std::string(*bytes));
    REQUIRE(txn->put(*db, inode_key(ino), value).ok());
    REQUIRE(txn->commit().ok());
    env->reset();
    reopen();
  }
};

}  // namespace

// ---------------------------------------------------------------- lmdb wrapper

TEST_CASE("an lmdb environment stores, scans by prefix and deletes keys") {
  StoreDir dir;
  auto env = lmdb::Env::open(dir.path / "env");
  REQUIRE(env.ok());
  auto db = (*env)->open_db("t");
  REQUIRE(db.ok());
  {
    auto txn = (*env)->begin_write();
    REQUIRE(txn.ok());
    for (const char* k : {"a/2", "a/1", "b/1", "a"}) REQUIRE(txn->put(*db, k, std::string("v") + k).ok());
    REQUIRE(txn->commit().ok());
  }
  {
    auto txn = (*env)->begin_write();
    REQUIRE(txn->put(*db, "c", "uncommitted").ok());
  }  // destroyed without commit: aborted
  auto txn = (*env)->begin_write();
  REQUIRE(txn.ok());
  CHECK(*txn->get(*db, "a/1") == "va/1");
  CHECK(txn->get(*db, "c").code() == Errc::not_found);
  std::vector<std::string> seen;
  REQUIRE(txn->scan(*db, "a/", {}, [&](std::string_view k, std::string_view) {
                seen.emplace_back(k);
                return true;
              }).ok());
  CHECK(seen == std::vector<std::string>{"a/1", "a/2"});
  seen.clear();
  REQUIRE(txn->scan(*db, "a/", "a/2", [&](std::string_view k, std::string_view) {
                seen.emplace_back(k);
                return true;
              }).ok());
  CHECK(seen == std::vector<std::string>{"a/2"});
  CHECK(*txn->count(*db) == 4);
  REQUIRE(txn->del(*db, "a/1").ok());
  CHECK(txn->del(*db, "a/1").code() == Errc::not_found);
  CHECK(txn->get(*db, "a/1").code() == Errc::not_found);
  CHECK(txn->put(*db, "", "empty key").code() == Errc::invalid_argument);
}

TEST_CASE("a full lmdb map is reported as no_space") {
  StoreDir dir;
  auto env = lmdb::Env::open(dir.path, lmdb::EnvOptions{1 << 20, 4});
  REQUIRE(env.ok());
  auto db = (*env)->open_db("t");
  REQUIRE(db.ok());
  auto txn = (*env)->begin_write();
  Status s;
  const std::string value(64 << 10, 'x');
  for (int i = 0; i < 100 && s.ok(); ++i) s = txn->put(*db, "key" + std::to_string(i), value);
  CHECK(s.code() == Errc::no_space);
}

TEST_CASE("committed lmdb writes survive closing and reopening the environment") {
  StoreDir dir;
  {
    auto env = lmdb::Env::open(dir.path);
    auto db = (*env)->open_db("t");
    auto txn = (*env)->begin_write();
    REQUIRE(txn->put(*db, "k", "v").ok());
    REQUIRE(txn->commit().ok());
    REQUIRE((*env)->sync().ok());
  }
  auto env = lmdb::Env::open(dir.path);
  auto db = (*env)->open_db("t");
  auto txn = (*env)->begin_read();
  CHECK(*txn->get(*db, "k") == "v");
}

// ---------------------------------------------------------------- records

TEST_CASE("inode records round-trip and every truncation or extension is corrupt") {
  InodeRecord r;
  r.attr.ino = InodeId(77);
  r.attr.mode = S_IFREG | 0640;
  r.attr.uid = 5;
  r.attr.size = 1 << 30;
  r.attr.mtime = Timespec{-3, 999'999'999};
  r.attr.layout = test_layout();
  r.parent = InodeId(9);
  r.next_seq = 12;
  r.policy = LayoutPolicy{4096, 2, {ServerId(8)}};
  r.target = "over/there";
  r.attr.blocks = 2048;
  const std::string bytes = encode_inode(r);
  auto back = decode_inode(InodeId(77), bytes);
  REQUIRE(back.ok());
  CHECK(same(back->attr, r.attr));
  CHECK(back->parent == r.parent);
  CHECK(back->next_seq == r.next_seq);
  CHECK(back->policy == r.policy);
  CHECK(back->target == r.target);
  for (size_t n = 0; n < bytes.size(); ++n)
    CHECK(decode_inode(InodeId(77), bytes.substr(0, n)).code() == Errc::corrupt);
  CHECK(decode_inode(InodeId(77), bytes + "x").code() == Errc::corrupt);
  std::string wrong_version = bytes;
  wrong_version[0] = 9;
  CHECK(decode_inode(InodeId(77), wrong_version).code() == Errc::corrupt);
  DentryRecord d{InodeId(5), S_IFDIR, 44};
  CHECK(*decode_dentry(encode_dentry(d)) == d);
  CHECK(decode_dentry(encode_dentry(d).substr(1)).code() == Errc::corrupt);
  SeqRecord q{InodeId(5), S_IFREG, "name"};
  CHECK(*decode_seq(encode_seq(q)) == q);
  StoredServer srv{4, "h:1", 10, 5};
  CHECK(*decode_server(encode_server(srv)) == srv);
}

TEST_CASE("an inode record of the first format decodes with its allocated blocks not known") {
  InodeRecord r;
  r.attr.mode = S_IFREG | 0600;
  r.attr.size = 4096;
  r.attr.blocks = 8;
  std::string bytes = encode_inode(r);
  // The first format: version 1, no blocks after the symlink target.
  bytes[0] = 1;
  bytes.resize(bytes.size() - 8);
  auto old = decode_inode(InodeId(3), bytes);
  REQUIRE(old.ok());
  CHECK(old->attr.size == 4096);
  CHECK_FALSE(old->attr.blocks.has_value());
  // Not known survives a round trip as not known.
  r.attr.blocks.reset();
  CHECK_FALSE(decode_inode(InodeId(3), encode_inode(r))->attr.blocks.has_value());
}

TEST_CASE_FIXTURE(Fixture, "a record that fails to decode is reported as corrupt") {
  Attr f = file(kRoot, root, "f");
  edit_inode(f.ino, [](std::string bytes) { return bytes.substr(0, bytes.size() / 2); });
  CHECK(store->getattr(f.ino).code() == Errc::corrupt);
  CHECK(store->lookup(kRoot, root, "f").code() == Errc::corrupt);
  CHECK(store->unlink(kRoot, root, "f", false, tick()).code() == Errc::corrupt);
  // The failed unlink changed nothing.
  CHECK(names(root) == std::vector<std::string>{"f"});
}

// ---------------------------------------------------------------- open

TEST_CASE_FIXTURE(Fixture, "a new store has a root directory owned by root with two links") {
  Attr a = attr(root);
  CHECK(root == kRootInode);
  CHECK(a.mode == (S_IFDIR | 0755));
  CHECK(a.uid == 0);
  CHECK(a.gid == 0);
  CHECK(a.nlink == 2);
  CHECK(a.mtime == Timespec{101, 7});
  CHECK(*store->inode_count() == 1);
  CHECK(names(root).empty());

  StoreDir other;
  auto set5 = NamespaceStore::open(other.path, FileSetId(5), tick());
  REQUIRE(set5.ok());
  CHECK((*set5)->root() == InodeId::make(FileSetId(5), 1));
  auto made = (*set5)->mkdir(kRoot, (*set5)->root(), "d", 0755, tick());
  REQUIRE(made.ok());
  CHECK(made->ino.fileset() == FileSetId(5));
}

TEST_CASE_FIXTURE(Fixture, "opening a directory that holds another file set fails") {
  close();
  CHECK(NamespaceStore::open(dir.path, FileSetId(2), tick()).code() == Errc::invalid_argument);
}

TEST_CASE_FIXTURE(Fixture, "reopening a store finds everything as it was") {
  InodeId d = dir_(kRoot, root, "d").ino;
  Attr f = file(kRoot, d, "f");
  REQUIRE(store->symlink(kRoot, root, "l", "d/f", tick()).ok());
  REQUIRE(store->setxattr(kRoot, f.ino, "user.k", "v", 0).ok());
  REQUIRE(store->set_layout_policy(kRoot, d, LayoutPolicy{1 << 20, 2, {}}).ok());
  REQUIRE(store->save_server(StoredServer{2, "10.0.0.2:7000", 100, 50}).ok());
  Attr root_before = attr(root);
  reopen();
  CHECK(same(attr(root), root_before));
  CHECK(names(root) == std::vector<std::string>{"d", "l"});
  auto found = store->lookup(kRoot, d, "f");
  REQUIRE(found.ok());
  CHECK(same(*found, f));
  CHECK(found->layout == test_layout());
  CHECK(*store->readlink(store->lookup(kRoot, root, "l")->ino) == "d/f");
  CHECK(*store->getxattr(kRoot, f.ino, "user.k") == "v");
  CHECK(store->get_layout_policy(d)->stripe_count == 2);
  CHECK(store->load_servers()->size() == 1);
  // Inode numbers are never reused after a reopen.
  CHECK(file(kRoot, root, "g").ino.value > f.ino.value);
}

TEST_CASE_FIXTURE(Fixture, "inode numbers stay unique across reopens; the stored counter is past every one used") {
  // Numbers come from blocks reserved in the database (one store of the
  // counter per block): 3 rounds of 700 creates cross two blocks, and each
  // reopen starts from what a crash would leave, the committed counter.
  std::set<uint64_t> seen;
  uint64_t highest = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 700; ++i) {
      Attr f = file(kRoot, root, "r" + std::to_string(round) + "-" + std::to_string(i));
      CHECK(seen.insert(f.ino.value).second);
      highest = std::max(highest, f.ino.local());
    }
    close();
    {
      auto env = lmdb::Env::open(dir.path);
      REQUIRE(env.ok());
      auto meta = (*env)->open_db(kMetaDb);
      REQUIRE(meta.ok());
      auto txn = (*env)->begin_read();
      REQUIRE(txn.ok());
      auto stored = txn->get(*meta, kMetaNextIno);
      REQUIRE(stored.ok());
      auto counter = decode_u64(*stored);
      REQUIRE(counter.ok());
      CHECK(*counter > highest);
    }
    reopen();
  }
  CHECK(seen.size() == 2100);
}

// ---------------------------------------------------------------- lookup

TEST_CASE_FIXTURE(Fixture, "lookup finds an entry and rejects missing, bad and overlong names") {
  Attr f = file(kRoot, root, "f");
  CHECK(store->lookup(kRoot, root, "f")->ino == f.ino);
  CHECK(store->lookup(kRoot, root, "nope").code() == Errc::not_found);
  for (const char* bad : {"", ".", "..", "a/b"})
    CHECK(store->lookup(kRoot, root, bad).code() == Errc::invalid_argument);
  CHECK(store->lookup(kRoot, root, std::string("a\0b", 3)).code() == Errc::invalid_argument);
  CHECK(store->lookup(kRoot, root, std::string(255, 'x')).code() == Errc::not_found);
  CHECK(store->lookup(kRoot, root, std::string(256, 'x')).code() == Errc::name_too_long);
  CHECK(store->lookup(kRoot, f.ino, "x").code() == Errc::not_dir);
  CHECK(store->lookup(kRoot, InodeId(999), "x").code() == Errc::stale);  // a directory gone: look it up again
  CHECK(store->getattr(InodeId(999)).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "attributes say whether a file has security xattrs, so clients need not ask") {
  Attr f = file(kRoot, root, "f");
  CHECK(f.no_security_xattrs);  // a new file has none
  CHECK(store->getattr(f.ino)->no_security_xattrs);
  REQUIRE(store->setxattr(kRoot, f.ino, "user.k", "v", 0).ok());
  CHECK(store->lookup(kRoot, root, "f")->no_security_xattrs);  // user.* does not count
  REQUIRE(store->setxattr(kRoot, f.ino, "security.capability", "caps", 0).ok());
  CHECK_FALSE(store->getattr(f.ino)->no_security_xattrs);
  CHECK_FALSE(store->lookup(kRoot, root, "f")->no_security_xattrs);
  auto page = store->readdir(kRoot, root, 0, 100, true);
  REQUIRE(page.ok());
  REQUIRE(page->entries.size() == 1);
  REQUIRE(page->entries[0].attr.has_value());
  CHECK_FALSE(page->entries[0].attr->no_security_xattrs);
  REQUIRE(store->removexattr(kRoot, f.ino, "security.capability").ok());
  CHECK(store->getattr(f.ino)->no_security_xattrs);
}

TEST_CASE_FIXTURE(Fixture, "lookup needs search permission on the parent") {
  InodeId d = dir_(kAlice, open_dir("o"), "d", 0666).ino;
  CHECK(store->lookup(kAlice, d, "x").code() == Errc::access_denied);
  CHECK(store->lookup(kBob, d, "x").code() == Errc::access_denied);
  CHECK(store->lookup(kRoot, d, "x").code() == Errc::not_found);
}

// ---------------------------------------------------------------- mknod / mkdir

TEST_CASE_FIXTURE(Fixture, "mknod creates regular files with their layout, FIFOs and sockets") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f", 0640);
  CHECK(f.mode == (S_IFREG | 0640));
  CHECK(f.uid == kAlice.uid);
  CHECK(f.gid == kAlice.gid);
  CHECK(f.nlink == 1);
  CHECK(f.layout == test_layout());
  CHECK(attr(o).mtime == f.ctime);
  CHECK(attr(o).ctime == f.ctime);
  auto plain = store->mknod(kAlice, o, "plain", 0600, 0, test_layout(), tick());
  CHECK(plain->mode == (S_IFREG | 0600));
  auto fifo = store->mknod(kAlice, o, "fifo", S_IFIFO | 0600, 0, test_layout(), tick());
  CHECK(fifo->mode == (S_IFIFO | 0600));
  CHECK(fifo->layout.servers.empty());
  auto sock = store->mknod(kAlice, o, "sock", S_IFSOCK | 0600, 0, {}, tick());
  CHECK(sock->mode == (S_IFSOCK | 0600));
  CHECK(*store->inode_count() == 6);
}

TEST_CASE_FIXTURE(Fixture, "mknod refuses existing names, directories, bad types and devices from non-root") {
  InodeId o = open_dir("o");
  file(kAlice, o, "f");
  CHECK(store->mknod(kAlice, o, "f", S_IFREG | 0644, 0, {}, tick()).code() == Errc::exists);
  CHECK(store->mknod(kAlice, o, "d", S_IFDIR | 0755, 0, {}, tick()).code() == Errc::not_permitted);
  CHECK(store->mknod(kAlice, o, "x", 0030000 | 0644, 0, {}, tick()).code() == Errc::invalid_argument);
  CHECK(store->mknod(kAlice, o, "c", S_IFCHR | 0644, 0x0501, {}, tick()).code() == Errc::not_permitted);
  CHECK(store->mknod(kAlice, o, "b", S_IFBLK | 0644, 0x0801, {}, tick()).code() == Errc::not_permitted);
  auto dev = store->mknod(kRoot, o, "c", S_IFCHR | 0644, 0x0501, {}, tick());
  REQUIRE(dev.ok());
  CHECK(dev->rdev == 0x0501);
  CHECK(store->mknod(kAlice, InodeId(999), "x", 0644, 0, {}, tick()).code() == Errc::stale);
}

TEST_CASE_FIXTURE(Fixture, "creating needs write and search permission on the parent") {
  InodeId d = dir_(kAlice, open_dir("o"), "d", 0755).ino;
  file(kAlice, d, "mine");
  CHECK(store->mknod(kBob, d, "f", 0644, 0, {}, tick()).code() == Errc::access_denied);
  CHECK(store->mkdir(kBob, d, "s", 0755, tick()).code() == Errc::access_denied);
  CHECK(store->symlink(kBob, d, "l", "t", tick()).code() == Errc::access_denied);
  // An existing name is reported before the missing permission, as Linux does.
  CHECK(store->mknod(kBob, d, "mine", 0644, 0, {}, tick()).code() == Errc::exists);
  CHECK(store->mknod(kRoot, d, "f", 0644, 0, {}, tick()).ok());
}

TEST_CASE_FIXTURE(Fixture, "mkdir counts subdirectories in the parent's link count") {
  Attr a = dir_(kRoot, root, "a", 07777);
  CHECK(a.mode == (S_IFDIR | 01777));
  CHECK(a.nlink == 2);
  CHECK(attr(root).nlink == 3);
  file(kRoot, root, "f");
  CHECK(attr(root).nlink == 3);
  CHECK(store->mkdir(kRoot, root, "a", 0755, tick()).code() == Errc::exists);
  REQUIRE(store->rmdir(kRoot, root, "a", tick()).ok());
  CHECK(attr(root).nlink == 2);
}

TEST_CASE_FIXTURE(Fixture, "new directories copy the parent's layout policy") {
  LayoutPolicy policy{1 << 22, 3, {ServerId(4), ServerId(5), ServerId(6)}};
  InodeId a = dir_(kRoot, root, "a").ino;
  REQUIRE(store->set_layout_policy(kRoot, a, policy).ok());
  InodeId b = dir_(kRoot, a, "b").ino;
  CHECK(*store->get_layout_policy(b) == policy);
  CHECK(*store->get_layout_policy(root) == LayoutPolicy{});
}

TEST_CASE_FIXTURE(Fixture, "a setgid directory hands its group to new inodes and S_ISGID to subdirectories") {
  InodeId g = dir_(kRoot, root, "g", 0777).ino;
  REQUIRE(store->setattr(kRoot, g, set_owner({}, 500), tick()).ok());
  REQUIRE(store->setattr(kRoot, g, set_mode(02777), tick()).ok());
  Attr f = file(kAlice, g, "f", 02755);
  CHECK(f.gid == 500);
  CHECK(f.mode == (S_IFREG | 0755));  // alice is not in group 500
  Caller member = kAlice;
  member.groups = {500};
  CHECK(file(member, g, "f2", 02755).mode == (S_IFREG | 02755));
  Attr sub = dir_(kAlice, g, "sub", 0755);
  CHECK(sub.gid == 500);
  CHECK(sub.mode == (S_IFDIR | 02755));
  // Outside a setgid directory mkdir drops S_ISGID and S_ISUID.
  CHECK(dir_(kRoot, root, "plain", 06755).mode == (S_IFDIR | 0755));
  CHECK(file(kAlice, open_dir("o"), "own", 02755).mode == (S_IFREG | 02755));
}

// ---------------------------------------------------------------- unlink / orphans

TEST_CASE_FIXTURE(Fixture, "unlinking a FIFO removes the name and deletes the inode at once") {
  auto fifo = store->mknod(kRoot, root, "p", S_IFIFO | 0644, 0, {}, tick());
  Timespec now = tick();
  auto r = store->unlink(kRoot, root, "p", false, now);
  REQUIRE(r.ok());
  CHECK(r->ino == fifo->ino);
  CHECK(r->nlink == 0);
  CHECK(store->getattr(fifo->ino).code() == Errc::not_found);
  CHECK(store->lookup(kRoot, root, "p").code() == Errc::not_found);
  CHECK(store->list_orphans(10)->empty());
  CHECK(attr(root).mtime == now);
  CHECK(store->unlink(kRoot, root, "p", false, tick()).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "unlinking a directory fails with is_dir") {
  dir_(kRoot, root, "d");
  CHECK(store->unlink(kRoot, root, "d", false, tick()).code() == Errc::is_dir);
  CHECK(store->lookup(kRoot, root, "d").ok());
}

TEST_CASE_FIXTURE(Fixture, "unlinking one of two hard links keeps the file") {
  Attr f = file(kRoot, root, "a");
  REQUIRE(store->link(kRoot, f.ino, root, "b", tick()).ok());
  Timespec now = tick();
  auto r = store->unlink(kRoot, root, "a", false, now);
  CHECK(r->nlink == 1);
  CHECK(attr(f.ino).nlink == 1);
  CHECK(attr(f.ino).ctime == now);
  CHECK(store->list_orphans(10)->empty());
}

TEST_CASE_FIXTURE(Fixture, "unlinking the last link of a regular file makes it an orphan until purged") {
  Attr f = file(kRoot, root, "f");
  REQUIRE(store->setxattr(kRoot, f.ino, "user.k", "v", 0).ok());
  auto r = store->unlink(kRoot, root, "f", false, tick());
  CHECK(r->nlink == 0);
  CHECK(attr(f.ino).nlink == 0);
  auto orphans = store->list_orphans(10);
  REQUIRE(orphans->size() == 1);
  CHECK((*orphans)[0].ino == f.ino);
  CHECK((*orphans)[0].layout == test_layout());
  CHECK(*store->inode_count() == 2);
  REQUIRE(store->purge(f.ino).ok());
  CHECK(store->getattr(f.ino).code() == Errc::not_found);
  CHECK(store->list_orphans(10)->empty());
  CHECK(*store->inode_count() == 1);
  CHECK(store->purge(f.ino).code() == Errc::not_found);
  close();
  auto env = lmdb::Env::open(dir.path);
  auto xattrs = (*env)->open_db(kXattrsDb);
  CHECK(*(*env)->begin_read()->count(*xattrs) == 0);
}

TEST_CASE_FIXTURE(Fixture, "unlinking the last link of an open file keeps it as a held orphan") {
  Attr f = file(kRoot, root, "f");
  Attr other = file(kRoot, root, "other");
  REQUIRE(store->unlink(kRoot, root, "f", true, tick()).ok());
  CHECK(store->list_orphans(10)->empty());
  CHECK(store->purge(f.ino).code() == Errc::busy);
  CHECK(attr(f.ino).layout == test_layout());
  CHECK(store->release_orphan(other.ino).code() == Errc::not_found);
  CHECK(store->purge(other.ino).code() == Errc::not_found);
  REQUIRE(store->release_orphan(f.ino).ok());
  REQUIRE(store->list_orphans(10)->size() == 1);
  CHECK(store->purge(f.ino).ok());
}

TEST_CASE_FIXTURE(Fixture, "orphans page in inode order after a given inode, and a batch is purged in one call") {
  std::vector<InodeId> inos;
  for (int i = 0; i < 5; ++i) inos.push_back(file(kRoot, root, "f" + std::to_string(i)).ino);
  Attr held = file(kRoot, root, "held");
  for (int i = 0; i < 5; ++i) REQUIRE(store->unlink(kRoot, root, "f" + std::to_string(i), false, tick()).ok());
  REQUIRE(store->unlink(kRoot, root, "held", true, tick()).ok());
  CHECK(*store->orphan_count() == 6);
  auto first = store->list_orphans(2);
  REQUIRE(first->size() == 2);
  CHECK((*first)[1].ino == inos[1]);
  auto rest = store->list_orphans(10, (*first)[1].ino);
  REQUIRE(rest->size() == 3);  // the held one is not listed
  CHECK((*rest)[0].ino == inos[2]);
  CHECK((*rest)[2].ino == inos[4]);
  CHECK(store->list_orphans(10, inos[4])->empty());
  // Held, already purged and unknown inodes are skipped, not errors.
  std::vector<InodeId> batch{inos[0], inos[2], held.ino, InodeId(held.ino.value + 100)};
  CHECK(*store->purge_many(batch) == 2);
  CHECK(*store->purge_many(batch) == 0);
  CHECK(store->getattr(inos[0]).code() == Errc::not_found);
  CHECK(attr(held.ino).nlink == 0);
  CHECK(*store->orphan_count() == 4);
  auto left = store->list_orphans(10);
  REQUIRE(left->size() == 3);
  CHECK((*left)[0].ino == inos[1]);
}

TEST_CASE_FIXTURE(Fixture, "orphans survive reopening, held ones still held") {
  Attr held = file(kRoot, root, "held");
  Attr loose = file(kRoot, root, "loose");
  REQUIRE(store->unlink(kRoot, root, "held", true, tick()).ok());
  REQUIRE(store->unlink(kRoot, root, "loose", false, tick()).ok());
  reopen();
  auto orphans = store->list_orphans(10);
  REQUIRE(orphans->size() == 1);
  CHECK((*orphans)[0].ino == loose.ino);
  // What an MDS loading the set gives a fresh lease (mds/orphan_holds.h).
  auto held_ones = store->held_orphans();
  REQUIRE(held_ones.ok());
  REQUIRE(held_ones->size() == 1);
  CHECK((*held_ones)[0] == held.ino);
  CHECK(*store->orphan_held(held.ino));
  CHECK_FALSE(*store->orphan_held(loose.ino));
  CHECK(store->orphan_held(InodeId(held.ino.value + 100)).code() == Errc::not_found);
  REQUIRE(store->release_orphan(held.ino).ok());
  CHECK(store->held_orphans()->empty());
  CHECK_FALSE(*store->orphan_held(held.ino));
  CHECK(store->list_orphans(10)->size() == 2);
  CHECK(store->list_orphans(1)->size() == 1);
  // Held again for a client that has it open elsewhere (mds/open_leases.h).
  REQUIRE(store->hold_orphan(loose.ino).ok());
  CHECK(*store->orphan_held(loose.ino));
  CHECK(store->list_orphans(10)->size() == 1);
  CHECK(store->hold_orphan(InodeId(held.ino.value + 100)).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "scan_files pages through regular files in inode order, orphans marked") {
  Attr a = file(kRoot, root, "a");
  dir_(kRoot, root, "d");
  Attr b = file(kRoot, root, "b");
  Attr c = file(kRoot, root, "c");
  REQUIRE(store->update_size(b.ino, 12345, true, tick()).ok());
  REQUIRE(store->unlink(kRoot, root, "c", true, tick()).ok());
  auto first = store->scan_files(InodeId(0), 2);
  REQUIRE(first.ok());
  REQUIRE(first->files.size() == 2);
  CHECK_FALSE(first->eof);
  CHECK(first->files[0].ino == a.ino);
  CHECK(first->files[1].ino == b.ino);
  CHECK(first->files[1].size == 12345);
  CHECK(first->files[1].layout == test_layout());
  CHECK_FALSE(first->files[1].orphan);
  auto rest = store->scan_files(b.ino, 2);
  REQUIRE(rest.ok());
  REQUIRE(rest->files.size() == 1);
  CHECK(rest->eof);
  CHECK(rest->files[0].ino == c.ino);
  CHECK(rest->files[0].orphan);
  CHECK(store->scan_files(c.ino, 2)->files.empty());
  CHECK(store->scan_files(InodeId(0), 0).code() == Errc::invalid_argument);
}

TEST_CASE_FIXTURE(Fixture, "removing needs write permission on the directory") {
  InodeId d = dir_(kAlice, open_dir("o"), "d", 0755).ino;
  file(kAlice, d, "f");
  dir_(kAlice, d, "s");
  CHECK(store->unlink(kBob, d, "f", false, tick()).code() == Errc::access_denied);
  CHECK(store->rmdir(kBob, d, "s", tick()).code() == Errc::access_denied);
  CHECK(store->unlink(kBob, d, "missing", false, tick()).code() == Errc::not_found);
  CHECK(store->unlink(kAlice, d, "f", false, tick()).ok());
}

TEST_CASE_FIXTURE(Fixture, "sticky directories let only owners and root remove entries") {
  InodeId t = dir_(kRoot, root, "tmp", 01777).ino;
  REQUIRE(store->setattr(kRoot, t, set_owner(kCarol.uid, {}), tick()).ok());
  for (const char* n : {"a", "b", "c", "d"}) file(kAlice, t, n, 0666);
  dir_(kAlice, t, "s", 0777);
  CHECK(store->unlink(kBob, t, "a", false, tick()).code() == Errc::not_permitted);
  CHECK(store->rmdir(kBob, t, "s", tick()).code() == Errc::not_permitted);
  CHECK(store->rename(kBob, t, "a", t, "z", 0, tick()).code() == Errc::not_permitted);
  file(kBob, t, "bobs", 0666);
  CHECK(store->rename(kBob, t, "bobs", t, "a", 0, tick()).code() == Errc::not_permitted);
  CHECK(store->unlink(kAlice, t, "a", false, tick()).ok());
  CHECK(store->unlink(kCarol, t, "b", false, tick()).ok());
  CHECK(store->unlink(kRoot, t, "c", false, tick()).ok());
  CHECK(store->rmdir(kAlice, t, "s", tick()).ok());
}

// ---------------------------------------------------------------- rmdir / symlink

TEST_CASE_FIXTURE(Fixture, "rmdir removes empty directories and refuses everything else") {
  InodeId d = dir_(kRoot, root, "d").ino;
  REQUIRE(store->mknod(kRoot, d, "p", S_IFIFO | 0644, 0, {}, tick()).ok());
  file(kRoot, root, "f");
  CHECK(store->rmdir(kRoot, root, "d", tick()).code() == Errc::not_empty);
  CHECK(store->rmdir(kRoot, root, "f", tick()).code() == Errc::not_dir);
  CHECK(store->rmdir(kRoot, root, ".", tick()).code() == Errc::invalid_argument);
  CHECK(store->rmdir(kRoot, root, "missing", tick()).code() == Errc::not_found);
  CHECK(store->rmdir(kRoot, d, "x", tick()).code() == Errc::not_found);
  REQUIRE(store->unlink(kRoot, d, "p", false, tick()).ok());
  REQUIRE(store->setxattr(kRoot, d, "user.k", "v", 0).ok());
  REQUIRE(store->rmdir(kRoot, root, "d", tick()).ok());
  CHECK(store->getattr(d).code() == Errc::not_found);
  CHECK(store->list_orphans(10)->empty());
}

TEST_CASE_FIXTURE(Fixture, "rmdir of an entry naming a file set root is busy") {
  // No operation creates such an entry; a mount point of a file set would
  // look like this, so write it by hand.
  InodeId d = dir_(kRoot, root, "d").ino;
  close();
  {
    auto env = lmdb::Env::open(dir.path);
    REQUIRE(env.ok());
    auto dentries = (*env)->open_db(kDentriesDb);
    auto seqs = (*env)->open_db(kSeqDb);
    auto txn = (*env)->begin_write();
    REQUIRE(txn->put(*dentries, dentry_key(d, "mnt"), encode_dentry({kRootInode, S_IFDIR, 50})).ok());
    REQUIRE(txn->put(*seqs, seq_key(d, 50), encode_seq({kRootInode, S_IFDIR, "mnt"})).ok());
    REQUIRE(txn->commit().ok());
  }
  reopen();
  CHECK(store->rmdir(kRoot, d, "mnt", tick()).code() == Errc::busy);
  CHECK(names(d) == std::vector<std::string>{"mnt"});
}

TEST_CASE_FIXTURE(Fixture, "symlink stores its target and readlink returns it") {
  auto l = store->symlink(kAlice, open_dir("o"), "l", "../some/where", tick());
  REQUIRE(l.ok());
  CHECK(l->mode == (S_IFLNK | 0777));
  CHECK(l->size == 13);
  CHECK(l->uid == kAlice.uid);
  CHECK(*store->readlink(l->ino) == "../some/where");
  CHECK(store->readlink(root).code() == Errc::invalid_argument);
  CHECK(store->readlink(InodeId(999)).code() == Errc::not_found);
  CHECK(store->symlink(kRoot, root, "long", std::string(4095, 'x'), tick()).ok());
  CHECK(store->symlink(kRoot, root, "too", std::string(4096, 'x'), tick()).code() == Errc::name_too_long);
  CHECK(store->symlink(kRoot, root, "empty", "", tick()).code() == Errc::not_found);
  CHECK(store->symlink(kRoot, root, "long", "x", tick()).code() == Errc::exists);
  CHECK(store->unlink(kRoot, root, "long", false, tick()).ok());
  CHECK(store->list_orphans(10)->empty());
}

// ---------------------------------------------------------------- rename

TEST_CASE_FIXTURE(Fixture, "rename moves a file and gives it a new readdir cookie") {
  Attr a = file(kRoot, root, "a");
  file(kRoot, root, "b");
  Timespec now = tick();
  auto r = store->rename(kRoot, root, "a", root, "c", 0, now);
  REQUIRE(r.ok());
  CHECK(!r->replaced_orphan);
  CHECK(names(root) == std::vector<std::string>{"b", "c"});
  CHECK(store->lookup(kRoot, root, "c")->ino == a.ino);
  CHECK(store->lookup(kRoot, root, "a").code() == Errc::not_found);
  CHECK(attr(a.ino).ctime == now);
  CHECK(attr(root).mtime == now);
  CHECK(store->rename(kRoot, root, "a", root, "x", 0, tick()).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "rename replaces a file and orphans it when that was its last link") {
  InodeId d = dir_(kRoot, root, "d").ino;
  Attr src = file(kRoot, root, "src");
  Attr victim = file(kRoot, d, "dst");
  auto r = store->rename(kRoot, root, "src", d, "dst", 0, tick());
  REQUIRE(r.ok());
  CHECK(r->replaced_orphan == victim.ino);
  CHECK(store->lookup(kRoot, d, "dst")->ino == src.ino);
  REQUIRE(store->list_orphans(10)->size() == 1);
  CHECK(store->list_orphans(10)->front().ino == victim.ino);

  Attr twice = file(kRoot, root, "twice");
  REQUIRE(store->link(kRoot, twice.ino, root, "twice2", tick()).ok());
  file(kRoot, root, "new");
  auto r2 = store->rename(kRoot, root, "new", root, "twice", 0, tick());
  CHECK(!r2->replaced_orphan);
  CHECK(attr(twice.ino).nlink == 1);
}

TEST_CASE_FIXTURE(Fixture, "rename replaces a directory only by an empty directory") {
  InodeId a = dir_(kRoot, root, "a").ino;
  dir_(kRoot, root, "empty");
  InodeId full = dir_(kRoot, root, "full").ino;
  file(kRoot, full, "x");
  file(kRoot, root, "f");
  CHECK(store->rename(kRoot, root, "a", root, "f", 0, tick()).code() == Errc::not_dir);
  CHECK(store->rename(kRoot, root, "f", root, "a", 0, tick()).code() == Errc::is_dir);
  CHECK(store->rename(kRoot, root, "a", root, "full", 0, tick()).code() == Errc::not_empty);
  CHECK(attr(root).nlink == 5);
  REQUIRE(store->rename(kRoot, root, "a", root, "empty", 0, tick()).ok());
  CHECK(store->lookup(kRoot, root, "empty")->ino == a);
  CHECK(attr(root).nlink == 4);
  CHECK(store->list_orphans(10)->empty());
}

TEST_CASE_FIXTURE(Fixture, "moving a directory into its own subtree fails with invalid_argument") {
  InodeId a = dir_(kRoot, root, "a").ino;
  InodeId b = dir_(kRoot, a, "b").ino;
  InodeId c = dir_(kRoot, b, "c").ino;
  CHECK(store->rename(kRoot, root, "a", c, "a", 0, tick()).code() == Errc::invalid_argument);
  CHECK(store->rename(kRoot, root, "a", a, "x", 0, tick()).code() == Errc::invalid_argument);
  // The target is an ancestor of the source: it cannot be empty.
  CHECK(store->rename(kRoot, b, "c", root, "a", 0, tick()).code() == Errc::not_empty);
  CHECK(store->rename(kRoot, b, "c", root, "a", kRenameExchange, tick()).code() == Errc::invalid_argument);
  CHECK(names(root) == std::vector<std::string>{"a"});
}

TEST_CASE_FIXTURE(Fixture, "moving a directory updates both parents' link counts and its parent") {
  InodeId a = dir_(kRoot, root, "a").ino;
  InodeId b = dir_(kRoot, root, "b").ino;
  InodeId c = dir_(kRoot, a, "c").ino;
  REQUIRE(store->rename(kRoot, a, "c", b, "c", 0, tick()).ok());
  CHECK(attr(a).nlink == 2);
  CHECK(attr(b).nlink == 3);
  CHECK(attr(c).nlink == 2);
  // c's parent is b now, so b may not move below c, while a may.
  CHECK(store->rename(kRoot, root, "b", c, "b", 0, tick()).code() == Errc::invalid_argument);
  REQUIRE(store->rename(kRoot, root, "a", c, "a", 0, tick()).ok());
  CHECK(attr(root).nlink == 3);
  CHECK(attr(c).nlink == 3);
}

TEST_CASE_FIXTURE(Fixture, "renaming onto the same inode does nothing") {
  Attr f = file(kRoot, root, "x");
  REQUIRE(store->link(kRoot, f.ino, root, "y", tick()).ok());
  CHECK(store->rename(kRoot, root, "x", root, "y", 0, tick()).ok());
  CHECK(store->rename(kRoot, root, "x", root, "x", 0, tick()).ok());
  CHECK(names(root) == std::vector<std::string>{"x", "y"});
  CHECK(attr(f.ino).nlink == 2);
  CHECK(store->rename(kRoot, root, "x", root, "y", kRenameNoReplace, tick()).code() == Errc::exists);
}

TEST_CASE_FIXTURE(Fixture, "rename with no-replace refuses an existing target and checks its flags") {
  file(kRoot, root, "a");
  file(kRoot, root, "b");
  CHECK(store->rename(kRoot, root, "a", root, "b", kRenameNoReplace, tick()).code() == Errc::exists);
  CHECK(store->rename(kRoot, root, "a", root, "b", 3, tick()).code() == Errc::invalid_argument);
  CHECK(store->rename(kRoot, root, "a", root, "b", 4, tick()).code() == Errc::invalid_argument);
  CHECK(store->rename(kRoot, root, "a", root, "c", kRenameNoReplace, tick()).ok());
  CHECK(names(root) == std::vector<std::string>{"b", "c"});
  CHECK(store->rename(kRoot, root, "b", root, "..", 0, tick()).code() == Errc::invalid_argument);
}

TEST_CASE_FIXTURE(Fixture, "rename exchange swaps a file and a directory in different parents") {
  InodeId p = dir_(kRoot, root, "p").ino;
  Attr f = file(kRoot, root, "f");
  InodeId d = dir_(kRoot, p, "d").ino;
  InodeId inner = dir_(kRoot, d, "inner").ino;
  CHECK(store->rename(kRoot, root, "f", p, "none", kRenameExchange, tick()).code() == Errc::not_found);
  REQUIRE(store->rename(kRoot, root, "f", p, "d", kRenameExchange, tick()).ok());
  CHECK(store->lookup(kRoot, root, "f")->ino == d);
  CHECK(store->lookup(kRoot, p, "d")->ino == f.ino);
  CHECK(attr(root).nlink == 4);  // p and d
  CHECK(attr(p).nlink == 2);
  // d's parent is the root now: p may move below it.
  REQUIRE(store->rename(kRoot, root, "p", inner, "p", 0, tick()).ok());
  CHECK(store->rename(kRoot, root, "f", inner, "f", 0, tick()).code() == Errc::invalid_argument);
}

TEST_CASE_FIXTURE(Fixture, "rename and link across file sets fail with cross_device") {
  InodeId foreign = InodeId::make(FileSetId(7), 1);
  Attr f = file(kRoot, root, "f");
  CHECK(store->rename(kRoot, root, "f", foreign, "f", 0, tick()).code() == Errc::cross_device);
  CHECK(store->rename(kRoot, foreign, "f", root, "f", 0, tick()).code() == Errc::cross_device);
  CHECK(store->link(kRoot, InodeId::make(FileSetId(7), 5), root, "g", tick()).code() == Errc::cross_device);
  CHECK(store->link(kRoot, f.ino, foreign, "g", tick()).code() == Errc::cross_device);
}

TEST_CASE_FIXTURE(Fixture, "rename needs write permission on both directories and on a moved directory") {
  InodeId o = open_dir("o");
  InodeId p1 = dir_(kAlice, o, "p1", 0777).ino;
  InodeId p2 = dir_(kAlice, o, "p2", 0777).ino;
  InodeId closed = dir_(kAlice, o, "closed", 0755).ino;
  dir_(kBob, p1, "d", 0555);
  file(kBob, p1, "f");
  CHECK(store->rename(kBob, p1, "d", p2, "d", 0, tick()).code() == Errc::access_denied);
  CHECK(store->rename(kBob, p1, "d", p1, "d2", 0, tick()).ok());
  CHECK(store->rename(kBob, p1, "f", closed, "f", 0, tick()).code() == Errc::access_denied);
  CHECK(store->rename(kBob, p1, "f", p2, "f", 0, tick()).ok());
  file(kAlice, closed, "g");
  CHECK(store->rename(kBob, closed, "g", p2, "g", 0, tick()).code() == Errc::access_denied);
}

// ---------------------------------------------------------------- link

TEST_CASE_FIXTURE(Fixture, "link adds a counted name and refuses directories, orphans and taken names") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f");
  Timespec now = tick();
  auto l = store->link(kAlice, f.ino, o, "g", now);
  REQUIRE(l.ok());
  CHECK(l->nlink == 2);
  CHECK(l->ctime == now);
  CHECK(store->lookup(kAlice, o, "g")->ino == f.ino);
  CHECK(store->link(kAlice, f.ino, o, "g", tick()).code() == Errc::exists);
  CHECK(store->link(kRoot, o, root, "o2", tick()).code() == Errc::not_permitted);
  CHECK(store->link(kBob, f.ino, dir_(kAlice, o, "closed", 0755).ino, "x", tick()).code() == Errc::access_denied);
  Attr h = file(kRoot, root, "h");
  REQUIRE(store->unlink(kRoot, root, "h", true, tick()).ok());
  CHECK(store->link(kRoot, h.ino, root, "h2", tick()).code() == Errc::not_found);
  CHECK(store->link(kRoot, InodeId(999), root, "x", tick()).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "link stops at the link limit") {
  Attr f = file(kRoot, root, "f");
  edit_inode(f.ino, [&](const std::string& bytes) {
    auto r = decode_inode(f.ino, bytes);
    REQUIRE(r.ok());
    r->attr.nlink = kMaxLinks - 1;
    return encode_inode(*r);
  });
  CHECK(store->link(kRoot, f.ino, root, "g", tick()).ok());
  CHECK(store->link(kRoot, f.ino, root, "h", tick()).code() == Errc::too_many_links);
}

// ---------------------------------------------------------------- readdir

TEST_CASE_FIXTURE(Fixture, "readdir pages a large directory returning each name exactly once") {
  InodeId d = dir_(kRoot, root, "big").ino;
  const int n = 5000;
  for (int i = 0; i < n; ++i) file(kRoot, d, "file-" + std::to_string(i));
  std::map<std::string, int> seen;
  uint64_t cookie = 0;
  int pages = 0;
  for (bool eof = false; !eof; ++pages) {
    auto page = store->readdir(kRoot, d, cookie, 100, false);
    REQUIRE(page.ok());
    REQUIRE(page->entries.size() <= 100);
    for (auto& e : page->entries) {
      CHECK(e.cookie > cookie);
      cookie = e.cookie;
      ++seen[e.name];
    }
    eof = page->eof;
    REQUIRE(pages < 200);
  }
  CHECK(pages == 50);
  CHECK(seen.size() == n);
  CHECK(std::all_of(seen.begin(), seen.end(), [](auto& kv) { return kv.second == 1; }));
}

TEST_CASE_FIXTURE(Fixture, "readdir cookies stay stable across insertions and deletions between calls") {
  for (int i = 0; i < 10; ++i) file(kRoot, root, "f" + std::to_string(i));
  auto first = store->readdir(kRoot, root, 0, 4, false);
  REQUIRE(first->entries.size() == 4);
  CHECK(!first->eof);
  CHECK(first->entries[0].cookie == kFirstSeq);
  CHECK(first->entries[0].mode == S_IFREG);
  // Between calls: delete one entry already returned and one not yet, add
  // one, and delete the very entry the cookie points at.
  REQUIRE(store->unlink(kRoot, root, "f1", false, tick()).ok());
  REQUIRE(store->unlink(kRoot, root, "f6", false, tick()).ok());
  REQUIRE(store->unlink(kRoot, root, "f3", false, tick()).ok());
  file(kRoot, root, "new");
  auto rest = store->readdir(kRoot, root, first->entries.back().cookie, 100, false);
  REQUIRE(rest.ok());
  CHECK(rest->eof);
  std::vector<std::string> got;
  for (auto& e : rest->entries) got.push_back(e.name);
  CHECK(got == std::vector<std::string>{"f4", "f5", "f7", "f8", "f9", "new"});
  // A page that ends exactly at the last entry knows it is the end.
  auto exact = store->readdir(kRoot, root, rest->entries[3].cookie, 2, false);
  CHECK(exact->entries.size() == 2);
  CHECK(exact->eof);
}

TEST_CASE_FIXTURE(Fixture, "readdir plus returns attributes and readdir checks its directory") {
  Attr f = file(kRoot, root, "f");
  auto plus = store->readdir(kRoot, root, 0, 10, true);
  REQUIRE(plus->entries.size() == 1);
  REQUIRE(plus->entries[0].attr.has_value());
  CHECK(same(*plus->entries[0].attr, f));
  CHECK(!store->readdir(kRoot, root, 0, 10, false)->entries[0].attr.has_value());
  CHECK(store->readdir(kRoot, f.ino, 0, 10, false).code() == Errc::not_dir);
  CHECK(store->readdir(kRoot, root, 0, 0, false).code() == Errc::invalid_argument);
  InodeId hidden = dir_(kAlice, open_dir("o"), "hidden", 0311).ino;
  CHECK(store->readdir(kBob, hidden, 0, 10, false).code() == Errc::access_denied);
  auto empty = store->readdir(kRoot, hidden, 0, 10, false);
  CHECK(empty->entries.empty());
  CHECK(empty->eof);
}

// ---------------------------------------------------------------- xattrs

TEST_CASE_FIXTURE(Fixture, "xattrs can be set, read, listed and removed") {
  Attr f = file(kRoot, root, "f");
  REQUIRE(store->setxattr(kRoot, f.ino, "user.b", "2", 0).ok());
  REQUIRE(store->setxattr(kRoot, f.ino, "user.a", std::string("\0bin", 4), kXattrCreate).ok());
  CHECK(store->setxattr(kRoot, f.ino, "user.a", "x", kXattrCreate).code() == Errc::exists);
  CHECK(store->setxattr(kRoot, f.ino, "user.c", "x", kXattrReplace).code() == Errc::no_data);
  REQUIRE(store->setxattr(kRoot, f.ino, "user.b", "22", kXattrReplace).ok());
  CHECK(*store->getxattr(kRoot, f.ino, "user.a") == std::string("\0bin", 4));
  CHECK(*store->getxattr(kRoot, f.ino, "user.b") == "22");
  CHECK(store->getxattr(kRoot, f.ino, "user.c").code() == Errc::no_data);
  CHECK(*store->listxattr(kRoot, f.ino) == std::vector<std::string>{"user.a", "user.b"});
  REQUIRE(store->removexattr(kRoot, f.ino, "user.a").ok());
  CHECK(store->removexattr(kRoot, f.ino, "user.a").code() == Errc::no_data);
  CHECK(*store->listxattr(kRoot, f.ino) == std::vector<std::string>{"user.b"});
  CHECK(store->listxattr(kRoot, InodeId(999)).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "xattr names, values and flags are checked") {
  Attr f = file(kRoot, root, "f");
  CHECK(store->setxattr(kRoot, f.ino, "", "v", 0).code() == Errc::range);
  CHECK(store->setxattr(kRoot, f.ino, "user." + std::string(251, 'x'), "v", 0).code() == Errc::range);
  CHECK(store->setxattr(kRoot, f.ino, "user." + std::string(250, 'x'), "v", 0).ok());
  CHECK(store->setxattr(kRoot, f.ino, "other.x", "v", 0).code() == Errc::not_supported);
  CHECK(store->setxattr(kRoot, f.ino, "user.", "v", 0).code() == Errc::invalid_argument);
  CHECK(store->setxattr(kRoot, f.ino, "user.x", "v", 4).code() == Errc::invalid_argument);
  CHECK(store->setxattr(kRoot, f.ino, "user.x", std::string(65536, 'v'), 0).ok());
  CHECK(store->setxattr(kRoot, f.ino, "user.y", std::string(65537, 'v'), 0).code() == Errc::too_big);
  CHECK(store->getxattr(kRoot, f.ino, "system.posix_acl_access").code() == Errc::not_supported);
  CHECK(store->setxattr(kRoot, f.ino, "system.posix_acl_access", "v", 0).code() == Errc::not_supported);
}

TEST_CASE_FIXTURE(Fixture, "xattr namespaces follow Linux's permission rules") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f", 0644);
  REQUIRE(store->setxattr(kAlice, f.ino, "user.k", "v", 0).ok());
  CHECK(store->setxattr(kBob, f.ino, "user.k", "w", 0).code() == Errc::access_denied);
  CHECK(store->removexattr(kBob, f.ino, "user.k").code() == Errc::access_denied);
  CHECK(*store->getxattr(kBob, f.ino, "user.k") == "v");
  CHECK(store->setxattr(kAlice, f.ino, "trusted.t", "v", 0).code() == Errc::not_permitted);
  REQUIRE(store->setxattr(kRoot, f.ino, "trusted.t", "v", 0).ok());
  CHECK(store->getxattr(kAlice, f.ino, "trusted.t").code() == Errc::no_data);
  CHECK(*store->getxattr(kRoot, f.ino, "trusted.t") == "v");
  CHECK(*store->listxattr(kAlice, f.ino) == std::vector<std::string>{"user.k"});
  CHECK(*store->listxattr(kRoot, f.ino) == std::vector<std::string>{"trusted.t", "user.k"});
  CHECK(store->setxattr(kBob, f.ino, "security.s", "v", 0).ok());
  Attr fifo = *store->mknod(kAlice, o, "p", S_IFIFO | 0666, 0, {}, tick());
  CHECK(store->setxattr(kAlice, fifo.ino, "user.k", "v", 0).code() == Errc::not_permitted);
  CHECK(store->getxattr(kAlice, fifo.ino, "user.k").code() == Errc::no_data);
  InodeId sticky = dir_(kAlice, o, "sticky", 01777).ino;
  CHECK(store->setxattr(kBob, sticky, "user.k", "v", 0).code() == Errc::not_permitted);
  CHECK(store->setxattr(kAlice, sticky, "user.k", "v", 0).ok());
}

// ---------------------------------------------------------------- setattr

TEST_CASE_FIXTURE(Fixture, "chmod is for the owner and root and drops S_ISGID for non-members") {
  Attr f = file(kAlice, open_dir("o"), "f", 0644);
  CHECK(store->setattr(kBob, f.ino, set_mode(0777), tick()).code() == Errc::not_permitted);
  Timespec now = tick();
  auto r = store->setattr(kAlice, f.ino, set_mode(S_IFDIR | 04755), now);
  REQUIRE(r.ok());
  CHECK(r->mode == (S_IFREG | 04755));
  CHECK(r->ctime == now);
  REQUIRE(store->setattr(kRoot, f.ino, set_owner({}, 500), tick()).ok());
  CHECK(store->setattr(kAlice, f.ino, set_mode(02755), tick())->mode == (S_IFREG | 0755));
  CHECK(store->setattr(kRoot, f.ino, set_mode(02755), tick())->mode == (S_IFREG | 02755));
  CHECK(store->setattr(kAlice, f.ino, set_mask(0x100), tick()).code() == Errc::invalid_argument);
  SetAttr bad_time = set_mask(kSetMtime);
  bad_time.mtime = Timespec{1, 1'000'000'000};
  CHECK(store->setattr(kAlice, f.ino, bad_time, tick()).code() == Errc::invalid_argument);
  Attr before = attr(f.ino);
  CHECK(same(*store->setattr(kAlice, f.ino, SetAttr{}, tick()), before));
}

TEST_CASE_FIXTURE(Fixture, "chown is for root and chgrp for owners into their own groups") {
  Attr f = file(kAlice, open_dir("o"), "f", 06755);
  Caller alice = kAlice;
  alice.groups = {2000};
  CHECK(store->setattr(kAlice, f.ino, set_owner(kBob.uid, {}), tick()).code() == Errc::not_permitted);
  CHECK(store->setattr(kBob, f.ino, set_owner({}, kBob.gid), tick()).code() == Errc::not_permitted);
  CHECK(store->setattr(kAlice, f.ino, set_owner({}, 3000), tick()).code() == Errc::not_permitted);
  // A no-op chown by the owner is allowed, and still drops the setid bits.
  auto same = store->setattr(kAlice, f.ino, set_owner(kAlice.uid, {}), tick());
  REQUIRE(same.ok());
  CHECK(same->mode == (S_IFREG | 0755));
  auto chgrp = store->setattr(alice, f.ino, set_owner({}, 2000), tick());
  REQUIRE(chgrp.ok());
  CHECK(chgrp->gid == 2000);
  // S_ISGID without group execute is mandatory locking, not setgid: it stays.
  REQUIRE(store->setattr(kRoot, f.ino, set_mode(06745), tick()).ok());
  auto chown = store->setattr(kRoot, f.ino, set_owner(kBob.uid, kBob.gid), tick());
  CHECK(chown->uid == kBob.uid);
  CHECK(chown->gid == kBob.gid);
  CHECK(chown->mode == (S_IFREG | 02745));
  InodeId d = dir_(kAlice, open_dir("o2"), "d", 06755).ino;
  REQUIRE(store->setattr(kRoot, d, set_mode(06755), tick()).ok());
  CHECK(store->setattr(kRoot, d, set_owner(kBob.uid, {}), tick())->mode == (S_IFDIR | 06755));
}

TEST_CASE_FIXTURE(Fixture, "explicit times need ownership while touching to now needs write permission") {
  InodeId o = open_dir("o");
  Attr shared = file(kAlice, o, "shared", 0666);
  Attr priv = file(kAlice, o, "private", 0644);
  SetAttr explicit_times = set_mask(kSetAtime | kSetMtime);
  explicit_times.atime = Timespec{5, 1};
  explicit_times.mtime = Timespec{6, 2};
  CHECK(store->setattr(kBob, shared.ino, explicit_times, tick()).code() == Errc::not_permitted);
  auto set = store->setattr(kAlice, priv.ino, explicit_times, tick());
  CHECK(set->atime == Timespec{5, 1});
  CHECK(set->mtime == Timespec{6, 2});
  SetAttr touch = set_mask(kSetAtimeNow | kSetMtimeNow);
  Timespec now = tick();
  auto touched = store->setattr(kBob, shared.ino, touch, now);
  REQUIRE(touched.ok());
  CHECK(touched->atime == now);
  CHECK(touched->mtime == now);
  CHECK(store->setattr(kBob, priv.ino, touch, tick()).code() == Errc::access_denied);
  CHECK(store->setattr(kAlice, priv.ino, touch, tick()).ok());
}

TEST_CASE_FIXTURE(Fixture, "size changes need write permission and only record the size") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f", 06775);
  CHECK(store->setattr(kBob, f.ino, set_size(10), tick()).code() == Errc::access_denied);
  Timespec now = tick();
  auto r = store->setattr(kAlice, f.ino, set_size(100), now);
  REQUIRE(r.ok());
  CHECK(r->size == 100);
  CHECK(r->mtime == now);
  CHECK(r->layout == test_layout());
  CHECK(r->mode == (S_IFREG | 0775));
  CHECK(store->setattr(kAlice, o, set_size(0), tick()).code() == Errc::is_dir);
  Attr fifo = *store->mknod(kAlice, o, "p", S_IFIFO | 0666, 0, {}, tick());
  CHECK(store->setattr(kAlice, fifo.ino, set_size(0), tick()).code() == Errc::invalid_argument);
  CHECK(store->setattr(kRoot, f.ino, set_size(5), tick())->size == 5);
  // S_ISGID without group execute stays for a member of the file's group
  // and goes for anyone else (Linux since 6.2).
  Attr locking = file(kAlice, o, "locking", 02766);
  CHECK(store->setattr(kAlice, locking.ino, set_size(1), tick())->mode == (S_IFREG | 02766));
  CHECK(store->setattr(kBob, locking.ino, set_size(2), tick())->mode == (S_IFREG | 0766));
}

// ---------------------------------------------------------------- access / open / size

TEST_CASE_FIXTURE(Fixture, "access follows the owner, group and other classes and root's rules") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f", 0640);
  REQUIRE(store->setattr(kRoot, f.ino, set_owner({}, 500), tick()).ok());
  Caller member = kBob;
  member.groups = {500};
  CHECK(store->access(kAlice, f.ino, kMayRead | kMayWrite).ok());
  CHECK(store->access(kAlice, f.ino, kMayExec).code() == Errc::access_denied);
  CHECK(store->access(member, f.ino, kMayRead).ok());
  CHECK(store->access(member, f.ino, kMayWrite).code() == Errc::access_denied);
  CHECK(store->access(kCarol, f.ino, kMayRead).code() == Errc::access_denied);
  CHECK(store->access(kCarol, f.ino, 0)->ino == f.ino);
  CHECK(store->access(kRoot, f.ino, kMayRead | kMayWrite).ok());
  CHECK(store->access(kRoot, f.ino, kMayExec).code() == Errc::access_denied);
  REQUIRE(store->setattr(kRoot, f.ino, set_mode(0077), tick()).ok());
  CHECK(store->access(kRoot, f.ino, kMayExec).ok());
  // The owner class applies to the owner even when others may do more.
  CHECK(store->access(kAlice, f.ino, kMayRead).code() == Errc::access_denied);
  CHECK(store->access(kCarol, f.ino, kMayRead).ok());
  InodeId closed = dir_(kRoot, root, "closed", 0).ino;
  CHECK(store->access(kRoot, closed, kMayExec | kMayRead | kMayWrite).ok());
  CHECK(store->access(kRoot, f.ino, 8).code() == Errc::invalid_argument);
  CHECK(store->access(kRoot, InodeId(999), 0).code() == Errc::not_found);
}

TEST_CASE_FIXTURE(Fixture, "check_open refuses writing a directory, opening a symlink and missing permission") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f", 0644);
  auto l = store->symlink(kAlice, o, "l", "f", tick());
  CHECK(store->check_open(kAlice, f.ino, kMayRead | kMayWrite).ok());
  CHECK(store->check_open(kBob, f.ino, kMayRead).ok());
  CHECK(store->check_open(kBob, f.ino, kMayWrite).code() == Errc::access_denied);
  CHECK(store->check_open(kRoot, o, kMayWrite).code() == Errc::is_dir);
  CHECK(store->check_open(kRoot, o, kMayRead).ok());
  CHECK(store->check_open(kRoot, l->ino, kMayRead).code() == Errc::loop);
  CHECK(store->check_open(kRoot, f.ino, kMayExec).code() == Errc::invalid_argument);
}

// A client that still has a name cached may ask to open a file another
// client unlinked while it was open somewhere: that file is gone for it.
TEST_CASE_FIXTURE(Fixture, "check_open refuses an unlinked file still held open, except to a client holding it") {
  Attr f = file(kRoot, root, "journal", 0644);
  REQUIRE(store->unlink(kRoot, root, "journal", true, tick()).ok());
  CHECK(store->check_open(kRoot, f.ino, kMayRead | kMayWrite).code() == Errc::not_found);
  CHECK(store->check_open(kRoot, f.ino, kMayRead, true).ok());
  CHECK(store->getattr(f.ino).ok());  // fstat of the open file still works
}

TEST_CASE_FIXTURE(Fixture, "update_size only grows a file and touches mtime on request") {
  Attr f = file(kRoot, root, "f");
  CHECK(store->update_size(f.ino, 100, false, tick())->size == 100);
  CHECK(attr(f.ino).mtime == f.mtime);
  Timespec now = tick();
  auto r = store->update_size(f.ino, 50, true, now);
  CHECK(r->size == 100);
  CHECK(r->mtime == now);
  CHECK(r->ctime == now);
  CHECK(store->update_size(root, 1, false, tick()).code() == Errc::is_dir);
  auto l = store->symlink(kRoot, root, "l", "f", tick());
  CHECK(store->update_size(l->ino, 1, false, tick()).code() == Errc::invalid_argument);
}

TEST_CASE_FIXTURE(Fixture, "a new file has no blocks; a writer's count is kept, and truncating caps it at the size") {
  Attr f = file(kRoot, root, "f");
  CHECK(f.blocks == std::optional<uint64_t>(0));
  // A size alone (a writer that did not count) leaves the count.
  CHECK(store->update_size(f.ino, 1 << 20, true, tick())->blocks == std::optional<uint64_t>(0));
  CHECK(store->update_size(f.ino, 1 << 20, true, tick(), 2048)->blocks == std::optional<uint64_t>(2048));
  CHECK(attr(f.ino).blocks == std::optional<uint64_t>(2048));
  // Growing by truncate allocates nothing; shrinking frees what lies past the end.
  CHECK(store->setattr(kRoot, f.ino, set_size(1 << 30), tick())->blocks == std::optional<uint64_t>(2048));
  CHECK(store->setattr(kRoot, f.ino, set_size(1000), tick())->blocks == std::optional<uint64_t>(2));
  CHECK(store->setattr(kRoot, f.ino, set_size(0), tick())->blocks == std::optional<uint64_t>(0));
  // Directories have no count: the bridge estimates theirs.
  CHECK_FALSE(attr(root).blocks.has_value());
}

// ---------------------------------------------------------------- layouts

TEST_CASE_FIXTURE(Fixture, "layout policies are set by directory owners and read back") {
  InodeId d = dir_(kAlice, open_dir("o"), "d").ino;
  LayoutPolicy policy{1 << 20, 2, {}};
  CHECK(store->set_layout_policy(kBob, d, policy).code() == Errc::not_permitted);
  REQUIRE(store->set_layout_policy(kAlice, d, policy).ok());
  CHECK(*store->get_layout_policy(d) == policy);
  Attr f = file(kAlice, d, "f");
  CHECK(store->get_layout_policy(f.ino).code() == Errc::not_dir);
  CHECK(store->set_layout_policy(kAlice, f.ino, policy).code() == Errc::not_dir);
}

TEST_CASE_FIXTURE(Fixture, "a file's layout can be replaced only while it is empty") {
  InodeId o = open_dir("o");
  Attr f = file(kAlice, o, "f");
  Layout other{4096, {ServerId(9)}};
  CHECK(store->set_file_layout(kBob, f.ino, other).code() == Errc::not_permitted);
  CHECK(store->set_file_layout(kAlice, f.ino, Layout{4096, {}}).code() == Errc::invalid_argument);
  CHECK(store->set_file_layout(kAlice, o, other).code() == Errc::is_dir);
  REQUIRE(store->set_file_layout(kAlice, f.ino, other).ok());
  CHECK(attr(f.ino).layout == other);
  REQUIRE(store->update_size(f.ino, 1, true, tick()).ok());
  CHECK(store->set_file_layout(kAlice, f.ino, test_layout()).code() == Errc::busy);
  CHECK(attr(f.ino).layout == other);
}

// ---------------------------------------------------------------- servers / misc

TEST_CASE_FIXTURE(Fixture, "file locks are saved per inode, replaced, removed by empty text, and kept across reopen") {
  const InodeId a = file(kRoot, root, "a").ino, b = file(kRoot, root, "b").ino;
  REQUIRE(store->save_locks(b, "px 1 2 0 9 7\n").ok());
  REQUIRE(store->save_locks(a, "fs 3 4 0 18446744073709551615 0\n").ok());
  REQUIRE(store->save_locks(b, "ps 1 2 0 9 7\n").ok());
  REQUIRE(store->save_locks(InodeId(a.value + 1000), "").ok());  // nothing to remove: fine
  reopen();
  auto stored = store->load_locks();
  REQUIRE(stored.ok());
  CHECK(*stored == std::vector<std::pair<InodeId, std::string>>{{a, "fs 3 4 0 18446744073709551615 0\n"},
                                                                 {b, "ps 1 2 0 9 7\n"}});
  REQUIRE(store->save_locks(a, "").ok());
  CHECK(store->load_locks()->size() == 1);
}

TEST_CASE_FIXTURE(Fixture, "storage servers are saved, replaced and loaded in id order across reopen") {
  REQUIRE(store->save_server(StoredServer{300, "b:1", 10, 5}).ok());
  REQUIRE(store->save_server(StoredServer{2, "a:1", 20, 5}).ok());
  REQUIRE(store->save_server(StoredServer{300, "b:2", 10, 1}).ok());
  REQUIRE(store->sync().ok());
  reopen();
  auto servers = store->load_servers();
  REQUIRE(servers.ok());
  CHECK(*servers == std::vector<StoredServer>{{2, "a:1", 20, 5}, {300, "b:2", 10, 1}});
}

TEST_CASE_FIXTURE(Fixture, "a failed operation leaves no partial change behind") {
  InodeId d = dir_(kRoot, root, "d").ino;
  file(kRoot, d, "x");
  Attr before = attr(root);
  uint64_t count = *store->inode_count();
  CHECK(store->rename(kRoot, root, "d", d, "d", 0, tick()).code() == Errc::invalid_argument);
  CHECK(store->mkdir(kRoot, root, "d", 0755, tick()).code() == Errc::exists);
  CHECK(same(attr(root), before));
  CHECK(*store->inode_count() == count);
  // The failed mkdir allocated no inode number either.
  Attr next = file(kRoot, root, "next");
  CHECK(next.ino.value == d.value + 2);
}
