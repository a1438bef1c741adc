// File sets end to end: `pvfs-ctl fileset` (the real binary, $PVFS_CTL)
// on a real cluster through a real FUSE mount. What a user sees: a
// directory turned into a file set is usable at once, its inodes carry the
// new file set's id, renames and hard links across file sets fail with
// EXDEV (so mv copies), rm -rf deletes a file set, and everything survives
// a kill -9 of the metadata server.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "shared/ids.h"
#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace fileset_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::Outcome;
using pvfs::test::TestCluster;

Outcome ctl(const fs::path& scratch, const std::vector<std::string>& args) {
  return pvfs::test::run_tool("PVFS_CTL", scratch, args);
}

using pvfs::test::skip_without_fuse;

uint16_t fileset_of(const fs::path& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return pvfs::InodeId(st.st_ino).fileset().value;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  REQUIRE(out.good());
}

// Waits up to 10 s for `done`.
template <typename Done>
bool eventually(Done done) {
  for (int i = 0; i < 100; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

}  // namespace

TEST_CASE("pvfs-ctl fileset create makes a usable file set at once, and rm -rf deletes it") {
  if (skip_without_fuse()) return;
  TestCluster t({}, true);
  const fs::path mnt = t.mnt();
  const fs::path proj = mnt / "proj";
  REQUIRE(fs::create_directory(proj));
  // The kernel has the old directory cached now.
  const uint16_t before = fileset_of(proj);
  CHECK(before == 0);

  Outcome made = ctl(t.dir(), {"fileset", "create", proj.string()});
  CAPTURE(made);
  REQUIRE(made.status == 0);
  const uint16_t id = fileset_of(proj);
  CHECK(id != 0);
  CHECK(made.out.find("file set " + std::to_string(id)) != std::string::npos);
  CHECK(fs::exists(t.cluster().config().mds[0].data_dir / ("fileset-" + std::to_string(id))));

  // Used right away: no stale handle, files land in the new set.
  write_file(proj / "a.txt", "alpha");
  REQUIRE(fs::create_directory(proj / "sub"));
  write_file(proj / "sub" / "b.txt", "beta");
  CHECK(fileset_of(proj / "a.txt") == id);
  CHECK(fileset_of(proj / "sub" / "b.txt") == id);
  Outcome shown = ctl(t.dir(), {"fileset", (proj / "sub" / "b.txt").string(), mnt.string()});
  CAPTURE(shown);
  CHECK(shown.status == 0);
  CHECK(shown.out.find("b.txt: file set " + std::to_string(id)) != std::string::npos);
  CHECK(shown.out.find(mnt.string() + ": file set 0") != std::string::npos);

  // Across file sets, as across file systems.
  CHECK(::rename((proj / "a.txt").c_str(), (mnt / "a.txt").c_str()) == -1);
  CHECK(errno == EXDEV);
  CHECK(::link((proj / "a.txt").c_str(), (mnt / "hard").c_str()) == -1);
  CHECK(errno == EXDEV);
  CHECK(std::system(("mv " + (proj / "a.txt").string() + " " + mnt.string() + "/").c_str()) == 0);
  CHECK(pvfs::test::slurp(mnt / "a.txt") == "alpha");
  CHECK_FALSE(fs::exists(proj / "a.txt"));
  // Inside one file set renames are plain renames.
  CHECK(::rename((proj / "sub" / "b.txt").c_str(), (proj / "b.txt").c_str()) == 0);

  // Refusals a user can understand.
  Outcome again = ctl(t.dir(), {"fileset", "create", proj.string()});
  CHECK(again.status == 1);
  CHECK(again.err.find("already the root of a file set") != std::string::npos);
  write_file(proj / "sub" / "c.txt", "gamma");
  Outcome full = ctl(t.dir(), {"fileset", "create", (proj / "sub").string()});
  CHECK(full.status == 1);
  CHECK(full.err.find("not empty") != std::string::npos);
  Outcome outside = ctl(t.dir(), {"fileset", "create", t.dir().string()});
  CHECK(outside.status == 1);
  CHECK(outside.err.find("not on a pvfs") != std::string::npos);

  // rm -rf removes the file set, and its environment goes with it.
  CHECK(std::system(("rm -rf " + proj.string()).c_str()) == 0);
  CHECK_FALSE(fs::exists(proj));
  const fs::path env = t.cluster().config().mds[0].data_dir / ("fileset-" + std::to_string(id));
  CHECK(eventually([&] { return !fs::exists(env); }));
}

TEST_CASE("file sets and their files survive a kill -9 of the metadata server") {
  if (skip_without_fuse()) return;
  TestCluster t({}, true);
  const fs::path mnt = t.mnt();
  Outcome made = ctl(t.dir(), {"fileset", "create", (mnt / "keep").string()});
  CAPTURE(made);
  REQUIRE(made.status == 0);
  const uint16_t id = fileset_of(mnt / "keep");
  write_file(mnt / "keep" / "f", "kept");
  REQUIRE(t.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(t.cluster().restart_daemon("mds0").ok());
  CHECK(eventually([&] { return pvfs::test::slurp(mnt / "keep" / "f") == "kept"; }));
  CHECK(fileset_of(mnt / "keep") == id);
  CHECK(fileset_of(mnt / "keep" / "f") == id);
}

TEST_CASE("with fileset_per_top_directory every directory made in / is a file set of its own") {
  if (skip_without_fuse()) return;
  pvfs::ClusterOptions options;
  options.fileset_per_top_directory = true;
  TestCluster t(options, true);
  const fs::path mnt = t.mnt();
  REQUIRE(fs::create_directory(mnt / "alice"));
  REQUIRE(fs::create_directory(mnt / "bob"));
  REQUIRE(fs::create_directory(mnt / "alice" / "deeper"));
  const uint16_t a = fileset_of(mnt / "alice"), b = fileset_of(mnt / "bob");
  CHECK(a != 0);
  CHECK(b != 0);
  CHECK(a != b);
  CHECK(fileset_of(mnt / "alice" / "deeper") == a);
  // mkdir's mode and owner apply to the new root as to any directory.
  REQUIRE(::chmod((mnt / "bob").c_str(), 0700) == 0);
  struct stat st {};
  REQUIRE(::stat((mnt / "bob").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(S_ISDIR(st.st_mode));
  // A listing of / shows them with their own attributes.
  int seen = 0;
  for (const auto& e : fs::directory_iterator(mnt)) {
    if (e.path().filename() == "alice" || e.path().filename() == "bob") {
      CHECK(e.is_directory());
      ++seen;
    }
  }
  CHECK(seen == 2);
  // Files are plain files of the set they are made in.
  write_file(mnt / "bob" / "notes", "n");
  CHECK(fileset_of(mnt / "bob" / "notes") == b);
  CHECK(::rmdir((mnt / "alice").c_str()) == -1);
  CHECK(errno == ENOTEMPTY);
}

}  // namespace fileset_test
