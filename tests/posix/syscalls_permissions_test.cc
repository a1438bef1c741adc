// Permission rules for ordinary users on a real pvfs mount, compared with
// Linux on a local file system. Root sets the scene in both places; a forked
// child that has dropped to another uid/gid runs the same calls under each
// root and reports each result (0, a value, or an errno) through a pipe.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;
using Root = const std::string&;
using Results = std::vector<long>;

TestCluster* cluster() { return shared_cluster("allow_other"); }

// 0 for success, else errno: what the children report for most calls.
long err(long rc) { return rc < 0 ? errno : 0; }

long create(const std::string& path, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, mode);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

// st_mode & 07777, st_uid or st_gid of a path, or -errno.
// Opens `path` for writing, writes one byte at offset 0 and closes it: 0,
// or the errno of the first call that failed.
long write_byte(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return errno;
  const long written = err(::pwrite(fd, "x", 1, 0));
  const long closed = err(::close(fd));
  return written != 0 ? written : closed;
}

long mode_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_mode & 07777) : -errno;
}
long uid_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_uid) : -errno;
}
long gid_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_gid) : -errno;
}

// "[0, 13/EACCES, 0644]": results with errno names and octal modes, for the log.
std::string show(const Results& results) {
  std::string out = "[";
  for (size_t i = 0; i < results.size(); ++i) {
    const long v = results[i];
    if (i) out += ", ";
    const char* name = v > 0 && v < 200 ? ::strerrorname_np(static_cast<int>(v)) : nullptr;
    if (v >= 0200 && v <= 07777) {
      char octal[16];
      std::snprintf(octal, sizeof octal, "0%lo", static_cast<unsigned long>(v));
      out += octal;  // a mode
    } else {
      out += std::to_string(v);
    }
    if (name) out += std::string("/") + name;
  }
  return out + "]";
}

// Runs `body(root)` as `who` under the local root and under the mount;
// checks that Linux gives `expected` and pvfs the same.
void check_as(const Scratch& s, const Identity& who, const std::function<Results(Root)>& body,
              const Results& expected) {
  const Results local = run_as(who, [&] {
    ::umask(022);
    return body(s.local());
  });
  const Results pvfs = run_as(who, [&] {
    ::umask(022);
    return body(s.pvfs());
  });
  INFO("expected " << show(expected) << ", Linux " << show(local) << ", pvfs " << show(pvfs));
  CHECK_MESSAGE(local == expected, "the local file system disagrees with the test");
  CHECK(pvfs == local);
}

// Root's setup under both roots: mkdir with an owner and an exact mode.
void make_dir(const Scratch& s, const std::string& rel, mode_t mode, uid_t uid, gid_t gid) {
  on_both(s, [&](Root r) {
    const std::string p = r + "/" + rel;
    if (::mkdir(p.c_str(), 0700) != 0 || ::chown(p.c_str(), uid, gid) != 0) return -1;
    return ::chmod(p.c_str(), mode);
  });
}

void make_file(const Scratch& s, const std::string& rel, const std::string& data, mode_t mode,
               uid_t uid, gid_t gid) {
  for (const auto& root : s.both()) write_file(root + "/" + rel, data);
  on_both(s, [&](Root r) {
    const std::string p = r + "/" + rel;
    if (::chown(p.c_str(), uid, gid) != 0) return -1;
    return ::chmod(p.c_str(), mode);
  });
}

}  // namespace

TEST_CASE("another user cannot read or write a 0600 file, but may stat it") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-read");
  make_dir(s, "home", 0755, kAlice.uid, kAlice.gid);
  make_file(s, "home/secret", "secret", 0600, kAlice.uid, kAlice.gid);
  check_as(s, kBob, [](Root r) {
    const std::string f = r + "/home/secret";
    struct stat st {};
    return Results{err(::open(f.c_str(), O_RDONLY)), err(::open(f.c_str(), O_WRONLY)),
                   err(::access(f.c_str(), R_OK)), err(::stat(f.c_str(), &st)),
                   err(::truncate(f.c_str(), 0))};
  }, {EACCES, EACCES, EACCES, 0, EACCES});
  check_as(s, kAlice, [](Root r) {
    const std::string f = r + "/home/secret";
    int fd = ::open(f.c_str(), O_RDONLY);
    char buf[16] = {};
    long n = fd < 0 ? -errno : ::read(fd, buf, sizeof buf);
    if (fd >= 0) ::close(fd);
    return Results{n, std::string(buf) == "secret", err(::access(f.c_str(), R_OK | W_OK))};
  }, {6, 1, 0});
}

TEST_CASE("another user cannot create, remove or rename in a 0755 directory it does not own") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-create");
  make_dir(s, "home", 0755, kAlice.uid, kAlice.gid);
  make_file(s, "home/f", "alice's", 0666, kAlice.uid, kAlice.gid);
  check_as(s, kBob, [](Root r) {
    const std::string d = r + "/home";
    return Results{create(d + "/new"), err(::mkdir((d + "/sub").c_str(), 0755)),
                   err(::unlink((d + "/f").c_str())),
                   err(::rename((d + "/f").c_str(), (d + "/g").c_str())),
                   err(::symlink("f", (d + "/l").c_str())), err(::mknod((d + "/n").c_str(), S_IFREG | 0644, 0)),
                   // Writing the world-writable file inside is fine.
                   err(::truncate((d + "/f").c_str(), 2))};
  }, {EACCES, EACCES, EACCES, EACCES, EACCES, EACCES, 0});
  check_as(s, kAlice, [](Root r) {
    return Results{create(r + "/home/new"), err(::mkdir((r + "/home/sub").c_str(), 0755))};
  }, {0, 0});
}

TEST_CASE("new files belong to their creator and take the group of a setgid parent") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-owner");
  make_dir(s, "open", 0777, 0, 0);
  make_dir(s, "sgid", 02777, 0, 5000);
  check_as(s, kAlice, [](Root r) {
    const std::string plain = r + "/open/a", in_sgid = r + "/sgid/a", sub = r + "/sgid/sub";
    Results out{create(plain), uid_of(plain), gid_of(plain), create(in_sgid), uid_of(in_sgid),
                gid_of(in_sgid), err(::mkdir(sub.c_str(), 0755)), gid_of(sub), mode_of(sub)};
    // Not in the directory's group: a new file's own setgid bit is dropped.
    out.push_back(create(r + "/sgid/b", 02755));
    out.push_back(mode_of(r + "/sgid/b"));
    return out;
  }, {0, 4101, 4101, 0, 4101, 5000, 0, 5000, 02755, 0, 0755});
}

TEST_CASE("the umask shapes the mode of new files, directories and FIFOs") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-umask");
  make_dir(s, "open", 0777, 0, 0);
  check_as(s, kAlice, [](Root r) {
    const std::string d = r + "/open";
    Results out;
    ::umask(027);
    out.push_back(create(d + "/f027", 0666));
    out.push_back(mode_of(d + "/f027"));
    out.push_back(err(::mkdir((d + "/d027").c_str(), 0777)));
    out.push_back(mode_of(d + "/d027"));
    ::umask(0);
    out.push_back(create(d + "/f000", 0666));
    out.push_back(mode_of(d + "/f000"));
    ::umask(077);
    out.push_back(err(::mkfifo((d + "/p077").c_str(), 0666)));
    out.push_back(mode_of(d + "/p077"));
    return out;
  }, {0, 0640, 0, 0750, 0, 0666, 0, 0600});
}

TEST_CASE("a non-root user cannot give files away or change another user's file") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-chown");
  make_dir(s, "open", 0777, 0, 0);
  make_file(s, "open/f", "x", 0644, kAlice.uid, kAlice.gid);
  const Identity alice_in_5000{kAlice.uid, kAlice.gid, {kAlice.gid, 5000}};
  check_as(s, alice_in_5000, [](Root r) {
    const std::string path = r + "/open/f";
    const char* f = path.c_str();
    return Results{err(::chown(f, kBob.uid, -1)), err(::chown(f, kAlice.uid, -1)),
                   err(::chown(f, -1, 5000)), gid_of(path), err(::chown(f, -1, 6000)),
                   err(::chmod(f, 0600)), mode_of(path)};
  }, {EPERM, 0, 0, 5000, EPERM, 0, 0600});
  check_as(s, kBob, [](Root r) {
    const std::string path = r + "/open/f";
    const char* f = path.c_str();
    const timespec times[2] = {{1, 0}, {1, 0}};
    return Results{err(::chmod(f, 0777)), err(::chown(f, kBob.uid, kBob.gid)),
                   err(::utimensat(AT_FDCWD, f, times, 0)),
                   err(::utimensat(AT_FDCWD, f, nullptr, 0)),  // "now" needs write permission
                   mode_of(path)};
  }, {EPERM, EPERM, EPERM, EACCES, 0600});
}

TEST_CASE("in a sticky directory another user cannot remove or rename my file") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-sticky");
  make_dir(s, "tmp", 01777, 0, 0);
  check_as(s, kAlice, [](Root r) { return Results{create(r + "/tmp/mine")}; }, {0});
  check_as(s, kBob, [](Root r) {
    const std::string d = r + "/tmp";
    return Results{err(::unlink((d + "/mine").c_str())),
                   err(::rename((d + "/mine").c_str(), (d + "/taken").c_str())),
                   create(d + "/bobs"),
                   err(::rename((d + "/bobs").c_str(), (d + "/mine").c_str())),  // replacing mine
                   err(::unlink((d + "/bobs").c_str()))};
  }, {EPERM, EPERM, 0, EPERM, 0});
  check_as(s, kAlice, [](Root r) {
    return Results{err(::access((r + "/tmp/mine").c_str(), F_OK)), err(::unlink((r + "/tmp/mine").c_str()))};
  }, {0, 0});
}

TEST_CASE("writing to a setuid file as a non-root user clears the setuid bit") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-setuid");
  make_dir(s, "open", 0777, 0, 0);
  // The owner writes to its own setuid program.
  check_as(s, kAlice, [](Root r) {
    const std::string f = r + "/open/own";
    Results out{create(f, 0755), err(::chmod(f.c_str(), 04755)), mode_of(f)};
    int fd = ::open(f.c_str(), O_WRONLY);
    out.push_back(fd < 0 ? errno : err(::write(fd, "x", 1)));
    if (fd >= 0) ::close(fd);
    out.push_back(mode_of(f));
    return out;
  }, {0, 0, 04755, 0, 0755});
  // Someone else writes to a world-writable setuid and setgid file of root's.
  make_file(s, "open/roots", "", 06777, 0, 0);
  check_as(s, kBob, [](Root r) {
    const std::string f = r + "/open/roots";
    int fd = ::open(f.c_str(), O_WRONLY);
    Results out{fd < 0 ? errno : err(::write(fd, "x", 1))};
    if (fd >= 0) ::close(fd);
    out.push_back(mode_of(f));
    return out;
  }, {0, 0777});
  // Truncation by a non-root user clears them as well.
  make_file(s, "open/cut", "data", 06777, 0, 0);
  check_as(s, kBob, [](Root r) {
    const std::string f = r + "/open/cut";
    return Results{err(::truncate(f.c_str(), 1)), mode_of(f)};
  }, {0, 0777});
}

TEST_CASE("a write or truncation clears set-group-id unless the file is not group-executable and the writer is in its group") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-setgid-write");
  make_dir(s, "open", 0777, 0, 0);
  make_file(s, "open/exec", "", 02777, 0, 5000);
  make_file(s, "open/locking", "", 02767, 0, 5000);   // set-group-id, no group execute
  make_file(s, "open/outsider", "", 02767, 0, 5000);
  make_file(s, "open/cut", "data", 02767, 0, 5000);
  make_file(s, "open/roots", "", 06777, 0, 0);
  const Identity bob_in_group{kBob.uid, kBob.gid, {kBob.gid, 5000}};
  check_as(s, bob_in_group, [&](Root r) {
    return Results{write_byte(r + "/open/exec"), mode_of(r + "/open/exec"), write_byte(r + "/open/locking"),
                   mode_of(r + "/open/locking")};
  }, {0, 0777, 0, 02767});
  check_as(s, kBob, [&](Root r) {
    return Results{write_byte(r + "/open/outsider"), mode_of(r + "/open/outsider"),
                   err(::truncate((r + "/open/cut").c_str(), 1)), mode_of(r + "/open/cut")};
  }, {0, 0767, 0, 0767});
  // Root has CAP_FSETID: its writes keep both bits.
  check_as(s, kRoot, [&](Root r) {
    return Results{write_byte(r + "/open/roots"), mode_of(r + "/open/roots")};
  }, {0, 06777});
}

TEST_CASE("writing to or truncating a file removes its file capabilities, whoever does it") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-caps");
  make_dir(s, "open", 0777, 0, 0);
  // A version 2 capability set (vfs_cap_data): cap_net_bind_service, permitted.
  const unsigned char caps[20] = {0, 0, 0, 2, 0, 4, 0, 0};
  const auto give_caps = [&](const std::string& rel) {
    on_both(s, [&](Root r) {
      const std::string p = r + "/" + rel;
      return ::setxattr(p.c_str(), "security.capability", caps, sizeof caps, 0);
    });
  };
  const auto has_caps = [](const std::string& f) -> long {
    char value[64];
    return ::getxattr(f.c_str(), "security.capability", value, sizeof value) < 0 ? errno : 0;
  };
  for (const char* rel : {"open/by-root", "open/cut-by-root", "open/by-bob", "open/kept"}) {
    make_file(s, rel, "data", 0777, 0, 0);
    give_caps(rel);
  }
  check_as(s, kRoot, [&](Root r) {
    return Results{has_caps(r + "/open/kept"), write_byte(r + "/open/by-root"), has_caps(r + "/open/by-root"),
                   err(::truncate((r + "/open/cut-by-root").c_str(), 2)), has_caps(r + "/open/cut-by-root")};
  }, {0, 0, ENODATA, 0, ENODATA});
  check_as(s, kBob, [&](Root r) {
    return Results{write_byte(r + "/open/by-bob"), has_caps(r + "/open/by-bob"), has_caps(r + "/open/kept")};
  }, {0, ENODATA, 0});
}

TEST_CASE("with writeback_cache a writer who does not own a file writes, closes, truncates and touches it") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-writeback");
  make_dir(s, "open", 0777, 0, 0);
  for (const char* rel : {"open/written", "open/setid", "open/cut", "open/fcut", "open/touched"})
    make_file(s, rel, "data", 0666, 0, 0);
  on_both(s, [](Root r) { return ::chmod((r + "/open/setid").c_str(), 06777); });
  // The kernel then keeps files' mtime and sends it as an explicit time,
  // which only the owner may set: each of these failed with EPERM.
  SecondMount writeback(*c, "writeback_cache,allow_other");
  const auto body = [](Root r) {
    const std::string d = r + "/open";
    Results out{write_byte(d + "/written"), write_byte(d + "/setid"), mode_of(d + "/setid"),
                err(::truncate((d + "/cut").c_str(), 1))};
    const int fd = ::open((d + "/fcut").c_str(), O_WRONLY);
    out.push_back(fd < 0 ? errno : err(::ftruncate(fd, 2)));
    if (fd >= 0) out.push_back(err(::close(fd)));
    const timespec explicit_times[2] = {{1, 0}, {1, 0}};
    out.push_back(err(::utimensat(AT_FDCWD, (d + "/touched").c_str(), nullptr, 0)));  // a writer may
    out.push_back(err(::utimensat(AT_FDCWD, (d + "/touched").c_str(), explicit_times, 0)));  // the owner only
    return out;
  };
  const Results local = run_as(kBob, [&] { return body(s.local()); });
  const Results pvfs = run_as(kBob, [&] { return body(writeback.view(s.pvfs())); });
  const Results expected{0, 0, 0777, 0, 0, 0, 0, EPERM};
  INFO("expected " << show(expected) << ", Linux " << show(local) << ", pvfs " << show(pvfs));
  CHECK_MESSAGE(local == expected, "the local file system disagrees with the test");
  CHECK(pvfs == local);
  CHECK(read_file(s.pvfs() + "/open/written") == "xata");
  CHECK(read_file(s.pvfs() + "/open/cut") == "d");
  CHECK(read_file(s.pvfs() + "/open/fcut") == "da");
}

TEST_CASE("a supplementary group grants the group's permissions") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "perm-groups");
  make_dir(s, "team", 02770, kAlice.uid, 5000);
  make_file(s, "team/shared", "v1", 0660, kAlice.uid, 5000);
  make_file(s, "team/private", "mine", 0600, kAlice.uid, 5000);
  const Identity bob_in_team{kBob.uid, kBob.gid, {kBob.gid, 5000}};
  check_as(s, bob_in_team, [](Root r) {
    const std::string d = r + "/team";
    int fd = ::open((d + "/shared").c_str(), O_WRONLY | O_APPEND);
    Results out{fd < 0 ? errno : err(::write(fd, "+bob", 4))};
    if (fd >= 0) ::close(fd);
    const timespec times[2] = {{1, 0}, {1, 0}};
    out.push_back(err(::access((d + "/shared").c_str(), R_OK | W_OK)));
    out.push_back(err(::utimensat(AT_FDCWD, (d + "/shared").c_str(), nullptr, 0)));  // a writer may
    out.push_back(err(::utimensat(AT_FDCWD, (d + "/shared").c_str(), times, 0)));    // only the owner
    out.push_back(err(::open((d + "/private").c_str(), O_RDONLY)));
    out.push_back(create(d + "/bobs"));
    out.push_back(gid_of(d + "/bobs"));  // the setgid directory's group
    return out;
  }, {0, 0, 0, EPERM, EACCES, 0, 5000});
  check_as(s, kBob, [](Root r) {
    return Results{err(::open((r + "/team/shared").c_str(), O_RDONLY)),
                   err(::access((r + "/team").c_str(), X_OK))};
  }, {EACCES, EACCES});
  for (const auto& root : s.both()) CHECK(read_file(root + "/team/shared") == "v1+bob");
}
