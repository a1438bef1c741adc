// Real programs on a real pvfs mount: tar, make with gcc, git, rsync, sqlite3 and du do
// their ordinary jobs there, and the results are checked the way a user
// would (exit statuses, program output, diff -r against the original).
// A missing tool skips its case with a message outside CI and fails in CI
// (scripts/install-deps installs them all).
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;
namespace fs = std::filesystem;

TestCluster* cluster() { return shared_cluster(); }

struct Run {
  int status = -1;  // exit status, or 128+signal
  std::string output;  // stdout and stderr
};

// Runs `command` with sh, in the C locale; collects its output.
Run sh(const std::string& command) {
  Run run;
  std::fflush(nullptr);
  FILE* pipe = ::popen(("export LC_ALL=C; (" + command + ") 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) run.output.append(buf, n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// Whether every tool is installed; MESSAGE and false when one is missing
// outside CI, FAIL in CI.
bool tools_or_skip(const std::vector<std::string>& tools) {
  for (const auto& tool : tools) {
    if (sh("command -v " + tool).status == 0) continue;
    if (fuse_required()) FAIL("CI=true but " << tool << " is not installed (scripts/install-deps)");
    MESSAGE("skipped: " << tool << " is not installed");
    return false;
  }
  return true;
}

#define REQUIRE_RUN(run_expr)                                    \
  do {                                                           \
    const Run r_ = (run_expr);                                   \
    INFO("output: " << r_.output);                               \
    REQUIRE(r_.status == 0);                                     \
  } while (0)

// A tree like a source checkout: nested directories, files of many sizes
// and modes, symlinks (to files, to directories, dangling), hard links and
// empty directories. About 300 entries.
void make_tree(const std::string& root) {
  const std::vector<std::string> dirs = {"src", "src/core", "src/core/detail", "src/net", "docs",
                                         "docs/img", "build", "empty", "deep/a/b/c/d"};
  for (const auto& d : dirs) fs::create_directories(root + "/" + d);
  int n = 0;
  for (const auto& d : dirs) {
    if (d == "empty") continue;
    for (int i = 0; i < 28; ++i, ++n) {
      const size_t size = n % 7 == 0 ? 0 : static_cast<size_t>((n * 7919) % 150000);
      const std::string path = root + "/" + d + "/file-" + std::to_string(i) + (i % 3 ? ".c" : ".txt");
      write_file(path, pattern(size, static_cast<uint64_t>(n)), i % 5 == 0 ? 0755 : 0644);
    }
  }
  for (int i = 0; i < 10; ++i) {
    REQUIRE(::link((root + "/src/file-" + std::to_string(i) + (i % 3 ? ".c" : ".txt")).c_str(),
                   (root + "/build/hard-" + std::to_string(i)).c_str()) == 0);
  }
  REQUIRE(::symlink("../src/core/file-1.c", (root + "/docs/link-to-file").c_str()) == 0);
  REQUIRE(::symlink("src/core", (root + "/core-dir").c_str()) == 0);
  REQUIRE(::symlink("does/not/exist", (root + "/dangling").c_str()) == 0);
  REQUIRE(::symlink("/etc/hostname", (root + "/absolute").c_str()) == 0);
  write_file(root + "/docs/readme with spaces.txt", "spaces in names\n");
  REQUIRE(::chmod((root + "/docs/img").c_str(), 0700) == 0);
}

// `find` listing of a tree: path, type, mode, link count, target, and size
// for non-directories; sorted.
std::string listing(const std::string& root) {
  const Run run = sh("cd " + quote(root) +
                     " && { find . -type d -printf '%p %y %m %n\\n'; "
                     "find . ! -type d -printf '%p %y %m %n %s %l\\n'; } | sort");
  REQUIRE(run.status == 0);
  return run.output;
}

}  // namespace

TEST_CASE("tar extracts a tree with symlinks and hard links onto pvfs, identical to the original") {
  TestCluster* c = cluster();
  if (!c) return;
  if (!tools_or_skip({"tar", "diff", "find"})) return;
  TempDir work("pvfs-tar");
  const std::string src = work.path().string() + "/src";
  make_tree(src);
  const std::string archive = work.path().string() + "/tree.tar";
  REQUIRE_RUN(sh("tar --sort=name -cf " + quote(archive) + " -C " + quote(src) + " ."));

  Scratch s(*c, "tar");
  const std::string dest = s.pvfs() + "/extracted";
  REQUIRE(::mkdir(dest.c_str(), 0755) == 0);
  const Run extract = sh("tar -xpf " + quote(archive) + " -C " + quote(dest));
  INFO("tar output: " << extract.output);
  CHECK(extract.status == 0);
  CHECK(extract.output.empty());

  const Run diff = sh("diff -r --no-dereference " + quote(src) + " " + quote(dest));
  INFO("diff output: " << diff.output);
  CHECK(diff.status == 0);
  CHECK(listing(dest) == listing(src));
  // Hard links stay links, and tar's mtimes (whole seconds) are kept.
  for (int i = 0; i < 10; ++i) {
    const std::string name = "/src/file-" + std::to_string(i) + (i % 3 ? ".c" : ".txt");
    struct stat a {}, b {}, orig {};
    REQUIRE(::stat((dest + name).c_str(), &a) == 0);
    REQUIRE(::stat((dest + "/build/hard-" + std::to_string(i)).c_str(), &b) == 0);
    REQUIRE(::stat((src + name).c_str(), &orig) == 0);
    CHECK(a.st_ino == b.st_ino);
    CHECK(a.st_nlink == 2);
    CHECK(a.st_mtim.tv_sec == orig.st_mtim.tv_sec);
  }
  // And the tree archives again from pvfs to the same member list.
  const Run relist = sh("tar --sort=name -cf - -C " + quote(dest) + " . | tar -tvf - | awk '{print $1, $3, $6}' | sort");
  const Run orig_list = sh("tar -tvf " + quote(archive) + " | awk '{print $1, $3, $6}' | sort");
  CHECK(relist.status == 0);
  CHECK(relist.output == orig_list.output);
}

TEST_CASE("make builds a C program with gcc on pvfs and rebuilds only what changed") {
  TestCluster* c = cluster();
  if (!c) return;
  if (!tools_or_skip({"make", "gcc"})) return;
  Scratch s(*c, "make");
  const std::string dir = s.pvfs() + "/project";
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  write_file(dir + "/Makefile",
             "prog: main.o util.o\n"
             "\tgcc -o prog main.o util.o\n"
             "%.o: %.c util.h\n"
             "\tgcc -Wall -c -o $@ $<\n");
  write_file(dir + "/util.h", "int add(int a, int b);\n");
  write_file(dir + "/util.c", "#include \"util.h\"\nint add(int a, int b) { return a + b; }\n");
  write_file(dir + "/main.c",
             "#include <stdio.h>\n#include \"util.h\"\n"
             "int main(void) { printf(\"sum=%d\\n\", add(2, 3)); return 0; }\n");
  const std::string in_dir = "cd " + quote(dir) + " && ";

  const Run first = sh(in_dir + "make");
  INFO("first make: " << first.output);
  REQUIRE(first.status == 0);
  CHECK(first.output.find("main.c") != std::string::npos);
  CHECK(first.output.find("util.c") != std::string::npos);
  const Run prog = sh(in_dir + "./prog");
  CHECK(prog.status == 0);
  CHECK(prog.output == "sum=5\n");

  // Nothing changed: nothing to do (mtimes of targets are newer than sources).
  const Run again = sh(in_dir + "make");
  INFO("second make: " << again.output);
  CHECK(again.status == 0);
  CHECK(again.output.find("up to date") != std::string::npos);
  CHECK(again.output.find("gcc") == std::string::npos);

  struct stat main_o {};
  REQUIRE(::stat((dir + "/main.o").c_str(), &main_o) == 0);
  write_file(dir + "/util.c", "#include \"util.h\"\nint add(int a, int b) { return a + b + 100; }\n");
  const Run rebuild = sh(in_dir + "make");
  INFO("make after changing util.c: " << rebuild.output);
  CHECK(rebuild.status == 0);
  CHECK(rebuild.output.find("util.c") != std::string::npos);
  CHECK(rebuild.output.find("main.c") == std::string::npos);
  CHECK(rebuild.output.find("-o prog") != std::string::npos);
  struct stat main_o_after {};
  REQUIRE(::stat((dir + "/main.o").c_str(), &main_o_after) == 0);
  CHECK(main_o_after.st_mtim.tv_sec == main_o.st_mtim.tv_sec);
  CHECK(main_o_after.st_mtim.tv_nsec == main_o.st_mtim.tv_nsec);
  CHECK(sh(in_dir + "./prog").output == "sum=105\n");

  // touch alone (no content change) is enough to rebuild its object.
  const Run touched = sh(in_dir + "touch main.c && make");
  INFO("make after touching main.c: " << touched.output);
  CHECK(touched.status == 0);
  CHECK(touched.output.find("main.c") != std::string::npos);
  CHECK(touched.output.find("util.c") == std::string::npos);
  CHECK(sh(in_dir + "./prog").output == "sum=105\n");
}

TEST_CASE("git init, add, commit, log, status, clone and fsck work in a repository on pvfs") {
  TestCluster* c = cluster();
  if (!c) return;
  if (!tools_or_skip({"git", "diff"})) return;
  Scratch s(*c, "git");
  TempDir home("pvfs-git-home");
  const std::string repo = s.pvfs() + "/repo";
  const std::string env = "export HOME=" + quote(home.path().string()) +
                          " GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@example.org"
                          " GIT_COMMITTER_NAME=T GIT_COMMITTER_EMAIL=t@example.org; ";
  const std::string in_repo = env + "cd " + quote(repo) + " && ";
  REQUIRE_RUN(sh(env + "git init -q " + quote(repo)));
  fs::create_directories(repo + "/lib/inner");
  write_file(repo + "/README", "hello\n");
  write_file(repo + "/lib/a.c", pattern(20000, 1));
  write_file(repo + "/lib/inner/b.c", "int b;\n");
  REQUIRE_RUN(sh(in_repo + "git add -A && git commit -q -m first"));
  write_file(repo + "/README", "hello again\n");
  REQUIRE_RUN(sh(in_repo + "git mv lib/inner/b.c lib/b.c && rmdir lib/inner && git rm -q lib/a.c && "
                           "git add -A && git commit -q -m second"));

  const Run log = sh(in_repo + "git log --oneline");
  INFO("git log: " << log.output);
  CHECK(log.status == 0);
  CHECK(std::count(log.output.begin(), log.output.end(), '\n') == 2);
  CHECK(log.output.find("second") != std::string::npos);
  const Run status = sh(in_repo + "git status --porcelain");
  CHECK(status.status == 0);
  CHECK(status.output.empty());
  const Run fsck = sh(in_repo + "git fsck --full --strict");
  INFO("git fsck: " << fsck.output);
  CHECK(fsck.status == 0);
  // gc repacks (renames, deletes) and clone hard-links objects within pvfs.
  REQUIRE_RUN(sh(in_repo + "git gc -q && git fsck --full"));
  const std::string clone = s.pvfs() + "/clone";
  REQUIRE_RUN(sh(env + "git clone -q " + quote(repo) + " " + quote(clone)));
  const Run same = sh("diff -r -x .git " + quote(repo) + " " + quote(clone));
  INFO("diff: " << same.output);
  CHECK(same.status == 0);
  CHECK(sh(env + "cd " + quote(clone) + " && git log --oneline").output == log.output);
  CHECK(sh(env + "cd " + quote(clone) + " && git status --porcelain").output.empty());
}

TEST_CASE("rsync -a copies a tree into pvfs and back out unchanged, and a second run finds nothing to do") {
  TestCluster* c = cluster();
  if (!c) return;
  if (!tools_or_skip({"rsync", "diff", "find"})) return;
  TempDir work("pvfs-rsync");
  const std::string src = work.path().string() + "/src";
  const std::string back = work.path().string() + "/back";
  make_tree(src);
  Scratch s(*c, "rsync");
  const std::string dest = s.pvfs() + "/copy";

  const Run in = sh("rsync -a " + quote(src + "/") + " " + quote(dest + "/"));
  INFO("rsync in: " << in.output);
  REQUIRE(in.status == 0);
  const Run out = sh("rsync -a " + quote(dest + "/") + " " + quote(back + "/"));
  INFO("rsync out: " << out.output);
  REQUIRE(out.status == 0);
  for (const std::string& copy : {dest, back}) {
    CAPTURE(copy);
    const Run diff = sh("diff -r --no-dereference " + quote(src) + " " + quote(copy));
    INFO("diff: " << diff.output);
    CHECK(diff.status == 0);
  }
  // rsync -a keeps modes and mtimes: a second run has nothing to transfer.
  const Run again = sh("rsync -a -i " + quote(src + "/") + " " + quote(dest + "/"));
  INFO("second rsync itemizes: " << again.output);
  CHECK(again.status == 0);
  CHECK(again.output.empty());
  const Run again_out = sh("rsync -a -i " + quote(dest + "/") + " " + quote(back + "/"));
  INFO("second rsync out itemizes: " << again_out.output);
  CHECK(again_out.output.empty());
}

// SQLite in its default (rollback journal) mode on a shared file system, as
// NFS users run it: fcntl locks across clients, and a journal file made,
// written, closed and unlinked by each transaction, whose name the other
// clients' kernels may still have cached.
TEST_CASE("sqlite3 transactions from processes on two mounts all commit and none is lost") {
  TestCluster* c = cluster();
  if (!c) return;
  if (!tools_or_skip({"sqlite3"})) return;
  Scratch s(*c, "sqlite");
  SecondMount other(*c);
  const std::string db = s.pvfs() + "/counter.db";
  REQUIRE_RUN(sh("sqlite3 " + quote(db) + " 'create table k(v integer); insert into k values (0);'"));
  constexpr int kPerProcess = 60;
  const auto adder = [&](const std::string& path) {
    return "(for i in $(seq " + std::to_string(kPerProcess) + "); do sqlite3 -cmd '.timeout 60000' " +
           quote(path) + " 'begin immediate; update k set v = v + 1; commit;' || exit 1; done)";
  };
  const Run run = sh(adder(db) + " & a=$!; " + adder(other.view(db)) + " & b=$!; " + adder(other.view(db)) +
                     " & c=$!; wait $a && wait $b && wait $c");
  INFO("output: " << run.output);
  CHECK(run.status == 0);
  CHECK(run.output.empty());
  const Run total = sh("sqlite3 " + quote(other.view(db)) + " 'select v from k; pragma integrity_check;'");
  CHECK(total.output == std::to_string(3 * kPerProcess) + "\nok\n");
}

namespace {

// du's figures for `names` in `dir` (bytes, one per name), with `flags`.
std::map<std::string, uint64_t> du_bytes(const std::string& dir, const std::string& flags,
                                         const std::vector<std::string>& names) {
  std::string command = "cd " + quote(dir) + " && du -B1 " + flags;
  for (const auto& n : names) command += " " + n;
  const Run r = sh(command);
  INFO("du output: " << r.output);
  REQUIRE(r.status == 0);
  std::map<std::string, uint64_t> out;
  std::istringstream lines(r.output);
  uint64_t bytes = 0;
  std::string name;
  while (lines >> bytes >> name) out[name] = bytes;
  REQUIRE(out.size() == names.size());
  return out;
}

}  // namespace

TEST_CASE("du shows what the servers allocated: a sparse file takes nothing, a written one its size") {
  TestCluster* c = cluster();
  if (!c) return;
  if (!tools_or_skip({"du", "truncate", "dd"})) return;
  Scratch s(*c, "du");
  constexpr uint64_t kMiB = 1 << 20;
  REQUIRE_RUN(sh("cd " + quote(s.pvfs()) +
                 " && truncate -s 1G sparse"
                 " && dd if=/dev/urandom of=written bs=1M count=8 status=none"
                 " && truncate -s 100M holes && dd if=/dev/urandom of=holes bs=1M count=1 conv=notrunc status=none"));
  const std::vector<std::string> names = {"sparse", "written", "holes"};
  // On this mount (attributes cached from create, truncate and write) and
  // on a second client, which learns them afresh by lookup and readdir.
  SecondMount other(*c);
  for (const std::string& dir : {s.pvfs(), other.view(s.pvfs())}) {
    CAPTURE(dir);
    const auto used = du_bytes(dir, "", names);
    const auto apparent = du_bytes(dir, "--apparent-size", names);
    CHECK(apparent.at("sparse") == 1024 * kMiB);
    CHECK(used.at("sparse") < kMiB);
    CHECK(apparent.at("written") == 8 * kMiB);
    CHECK(used.at("written") >= 8 * kMiB);
    CHECK(used.at("written") <= 12 * kMiB);
    CHECK(apparent.at("holes") == 100 * kMiB);
    CHECK(used.at("holes") >= kMiB);
    CHECK(used.at("holes") < 8 * kMiB);
  }
}
