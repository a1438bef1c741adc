// Unit tests of file sets inside one metadata server: the catalog of LMDB
// environments (routing by the file set in an inode number, reopening,
// deleting) and the namespace entries that name another file set's root
// (what lookup, readdir, unlink, rmdir, rename and link do with them).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <ostream>

#include "mds/fileset_catalog.h"
#include "mds/namespace_store.h"
#include "tests/support/errc_print.h"
#include "tests/support/temp_dir.h"


using namespace pvfs;
using namespace pvfs::mds;

namespace {

const Caller kSetRoot{0, 0, {}};
const Caller kSetAlice{1000, 1000, {}};

Timespec at(int64_t sec) { return Timespec{sec, 0}; }

struct Catalog {
  pvfs::test::TempDir dir{"pvfs-fileset"};
  std::unique_ptr<FileSetCatalog> sets;
  Catalog() { reopen(); }
  void reopen() {
    sets.reset();
    auto opened = FileSetCatalog::open(dir.path(), at(1));
    REQUIRE(opened.ok());
    sets = std::move(*opened);
  }
  NamespaceStore& create(uint64_t seed) {
    auto made = sets->create(seed, at(2));
    REQUIRE(made.ok());
    return **made;
  }
};

}  // namespace

TEST_CASE("a new catalog holds file set 0 with the namespace root") {
  Catalog c;
  CHECK(c.sets->size() == 1);
  CHECK((*c.sets->find(kRootInode)).fileset() == FileSetId(0));
  CHECK(c.sets->find(kRootInode) == c.sets->find(FileSetId(0)));
  CHECK(c.sets->find(InodeId::make(FileSetId(7), 1)) == nullptr);
}

TEST_CASE("file sets get the first free id from the seed and route their inodes") {
  Catalog c;
  NamespaceStore& a = c.create(41);
  NamespaceStore& b = c.create(41);  // 42 is taken by a: the next one
  CHECK(a.fileset() == FileSetId(42));
  CHECK(b.fileset() == FileSetId(43));
  CHECK(a.root() == InodeId::make(FileSetId(42), 1));
  CHECK(c.sets->find(InodeId::make(FileSetId(42), 99)) == &a);
  CHECK(c.sets->find(InodeId::make(FileSetId(43), 1)) == &b);
  // Seeds wrap around the 16-bit space and never give 0.
  NamespaceStore& wrapped = c.create(0xffff - 1 + 0xffff);
  CHECK(wrapped.fileset().value != 0);
}

TEST_CASE("file sets and what they hold are found again after reopening") {
  Catalog c;
  NamespaceStore& a = c.create(10);
  auto file = a.mknod(kSetRoot, a.root(), "data", S_IFREG | 0644, 0, Layout{65536, {ServerId(1)}}, at(3));
  REQUIRE(file.ok());
  c.reopen();
  CHECK(c.sets->size() == 2);
  NamespaceStore* again = c.sets->find(file->ino);
  REQUIRE(again != nullptr);
  auto found = again->lookup(kSetRoot, again->root(), "data");
  REQUIRE(found.ok());
  CHECK(found->ino == file->ino);
}

TEST_CASE("a deleted file set is gone from the catalog and the disk; set 0 cannot be deleted") {
  Catalog c;
  const FileSetId id = c.create(5).fileset();
  CHECK(std::filesystem::exists(c.dir.path() / "fileset-6"));
  REQUIRE(c.sets->destroy(id).ok());
  CHECK(c.sets->find(InodeId::make(id, 1)) == nullptr);
  CHECK_FALSE(std::filesystem::exists(c.dir.path() / "fileset-6"));
  CHECK(c.sets->destroy(id).code() == Errc::not_found);
  c.reopen();
  CHECK(c.sets->size() == 1);
}

TEST_CASE("an empty directory becomes the entry of another file set's root") {
  Catalog c;
  NamespaceStore& top = (*c.sets->find(kRootInode));
  NamespaceStore& child = c.create(1);
  auto before = top.mkdir(kSetRoot, kRootInode, "proj", 0750, at(3));
  REQUIRE(before.ok());
  auto listed = top.readdir(kSetRoot, kRootInode, 0, 10, false);
  REQUIRE(listed.ok());
  REQUIRE(listed->entries.size() == 1);
  const uint64_t cookie = listed->entries[0].cookie;
  const uint32_t root_links = top.getattr(kRootInode)->nlink;

  SUBCASE("only root may do it, and only to an empty directory") {
    CHECK(top.replace_with_fileset_root(kSetAlice, before->ino, child.root(), at(4)).code() ==
          Errc::not_permitted);
    REQUIRE(top.mknod(kSetRoot, before->ino, "f", S_IFREG | 0644, 0, Layout{65536, {ServerId(1)}}, at(4)).ok());
    CHECK(top.replace_with_fileset_root(kSetRoot, before->ino, child.root(), at(5)).code() == Errc::not_empty);
    CHECK(top.replace_with_fileset_root(kSetRoot, kRootInode, child.root(), at(5)).code() == Errc::busy);
  }

  SUBCASE("then every operation on the name sees a file set root") {
    auto moved = top.replace_with_fileset_root(kSetRoot, before->ino, child.root(), at(4));
    REQUIRE(moved.ok());
    CHECK(moved->first == kRootInode);
    CHECK(moved->second == "proj");
    // The old directory is gone; the name now leads to the other set.
    CHECK(top.getattr(before->ino).code() == Errc::not_found);
    auto found = top.lookup(kSetRoot, kRootInode, "proj");
    REQUIRE(found.ok());
    CHECK(found->ino == child.root());
    CHECK(S_ISDIR(found->mode));
    auto root_at = top.fileset_root_at(kSetRoot, kRootInode, "proj");
    REQUIRE(root_at.ok());
    CHECK(*root_at == std::optional<InodeId>(child.root()));
    // Same readdir cookie, so a listing in progress neither skips nor repeats it.
    auto again = top.readdir(kSetRoot, kRootInode, 0, 10, true);
    REQUIRE(again.ok());
    REQUIRE(again->entries.size() == 1);
    CHECK(again->entries[0].ino == child.root());
    CHECK(again->entries[0].cookie == cookie);
    CHECK_FALSE(again->entries[0].attr.has_value());  // the other store has them
    CHECK(top.getattr(kRootInode)->nlink == root_links);
    CHECK(top.unlink(kSetRoot, kRootInode, "proj", false, at(5)).code() == Errc::is_dir);
    CHECK(top.rmdir(kSetRoot, kRootInode, "proj", at(5)).code() == Errc::busy);
    CHECK(top.rename(kSetRoot, kRootInode, "proj", kRootInode, "renamed", 0, at(5)).code() ==
          Errc::cross_device);
    // And removing the entry takes one link from the parent.
    auto root_attr = child.getattr(child.root());
    REQUIRE(root_attr.ok());
    REQUIRE(top.remove_fileset_root(kSetRoot, kRootInode, "proj", *root_attr, at(6)).ok());
    CHECK(top.lookup(kSetRoot, kRootInode, "proj").code() == Errc::not_found);
    CHECK(top.getattr(kRootInode)->nlink == root_links - 1);
  }
}

TEST_CASE("a file set root added by name counts as a subdirectory and needs write permission") {
  Catalog c;
  NamespaceStore& top = (*c.sets->find(kRootInode));
  NamespaceStore& child = c.create(1);
  const uint32_t links = top.getattr(kRootInode)->nlink;
  CHECK(top.add_fileset_root(kSetAlice, kRootInode, "home", child.root(), at(3)).code() ==
        Errc::access_denied);
  REQUIRE(top.add_fileset_root(kSetRoot, kRootInode, "home", child.root(), at(3)).ok());
  CHECK(top.getattr(kRootInode)->nlink == links + 1);
  CHECK(top.add_fileset_root(kSetRoot, kRootInode, "home", child.root(), at(4)).code() == Errc::exists);
  CHECK(top.mkdir(kSetRoot, kRootInode, "home", 0755, at(4)).code() == Errc::exists);
  // Hard links into another file set are refused like across file systems.
  auto file = child.mknod(kSetRoot, child.root(), "f", S_IFREG | 0644, 0, Layout{65536, {ServerId(1)}}, at(5));
  REQUIRE(file.ok());
  CHECK(top.link(kSetRoot, file->ino, kRootInode, "f2", at(6)).code() == Errc::cross_device);
}

TEST_CASE("a new file set's root takes the mode, owner and layout policy it is given") {
  Catalog c;
  NamespaceStore& child = c.create(3);
  Attr like;
  like.mode = S_IFDIR | 02770;
  like.uid = 1000;
  like.gid = 2000;
  like.mtime = at(77);
  LayoutPolicy policy{1 << 20, 2, {}};
  REQUIRE(child.init_root(like, policy).ok());
  auto root = child.getattr(child.root());
  REQUIRE(root.ok());
  CHECK(root->mode == (S_IFDIR | 02770));
  CHECK(root->uid == 1000);
  CHECK(root->gid == 2000);
  CHECK(root->mtime == at(77));
  CHECK(*child.get_layout_policy(child.root()) == policy);
  CHECK(*child.dir_empty(child.root()));
}

TEST_CASE("a file set held open cannot be opened or taken over by another holder until it lets go") {
  Catalog c;
  const FileSetId id = c.create(9).fileset();
  const auto dir = c.sets->dir_of(id);
  // A second pvfs-mds on the same data dir is refused, naming why.
  auto second = FileSetCatalog::open(c.dir.path(), at(3));
  REQUIRE_FALSE(second.ok());
  CHECK(second.code() == Errc::busy);
  CHECK(second.status().detail().find("in use by another process") != std::string::npos);
  // A member taking it over from shared storage must wait too.
  CHECK(FileSetLock::acquire(dir).code() == Errc::busy);
  // Fenced: the holder lets go, the taker gets it.
  c.sets->release_locks();
  auto taker = FileSetLock::acquire(dir);
  REQUIRE(taker.ok());
  // While the taker holds it, the old holder cannot take it back, and
  // closes it; it keeps file set 0, which nobody took.
  auto lost = c.sets->reacquire_locks();
  CHECK(lost == std::vector<uint16_t>{id.value});
  CHECK_FALSE(c.sets->has(id));
  CHECK(c.sets->has(FileSetId(0)));
}

TEST_CASE("a file set renamed away while its holder was fenced is closed when the holder comes back") {
  Catalog c;
  const FileSetId id = c.create(20).fileset();
  const auto dir = c.sets->dir_of(id);
  c.sets->release_locks();
  {
    auto taker = FileSetLock::acquire(dir);
    REQUIRE(taker.ok());
    std::filesystem::rename(dir, c.dir.path() / "fileset-21.taken-by-2");
  }
  CHECK(c.sets->reacquire_locks() == std::vector<uint16_t>{id.value});
  CHECK_FALSE(c.sets->has(id));
  // Nothing was taken: every lock comes back and the sets stay.
  c.sets->release_locks();
  CHECK(c.sets->reacquire_locks().empty());
  CHECK(c.sets->has(FileSetId(0)));
}
