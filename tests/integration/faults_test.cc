// Real failures on a real cluster: daemons killed with SIGKILL (and
// restarted), a client left facing a dead daemon, and a peer with the wrong
// secret. What a user must see: acknowledged data and completed metadata
// survive a crash, and a dead daemon yields an error, never a hang.
#include <fcntl.h>
#include <signal.h>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <span>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "shared/rpc/connection.h"
#include "shared/rpc/run_sync.h"
#include "tests/integration/session.h"

namespace pvfs::test::faults_test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
constexpr uint64_t kMiB = uint64_t{1} << 20;

bool is_failure_of_a_dead_peer(Errc code) {
  return code == Errc::io || code == Errc::timeout || code == Errc::unavailable;
}

// Reads all of `ino` through a fresh open and checks it against the pattern.
std::string check_file(Session& s, InodeId ino, uint64_t size, uint64_t seed) {
  auto f = s.open(ino, O_RDONLY);
  if (!f) return "open: " + f.status().to_string();
  if ((*f)->inode->size != size) return fmt::format("size {} instead of {}", (*f)->inode->size, size);
  AlignedBuffer buf(size);
  auto got = s.read(**f, 0, buf.span());
  Status released = s.release(*f);
  if (!got) return "read: " + got.status().to_string();
  if (*got != size) return fmt::format("read {} of {} bytes", *got, size);
  if (auto bad = pattern_mismatch(buf.span(), seed, 0)) return fmt::format("wrong byte at {}", *bad);
  if (!released.ok()) return "release: " + released.to_string();
  return "";
}

}  // namespace

TEST_CASE("every write acknowledged before a storage server is killed is readable after it restarts") {
  TestCluster cluster(with_servers(4));
  Session s(cluster.config());
  struct Written {
    InodeId ino;
    uint64_t size;
  };
  std::vector<Written> files;
  // Unaligned sizes over several stripes, so every server holds parts of every file.
  for (uint64_t i = 0; i < 8; ++i) {
    const uint64_t size = 4 * kMiB + 1000 * i + 13;
    auto [attr, file] = s.create(kRootInode, fmt::format("f{}", i));
    AlignedBuffer buf(size);
    fill_pattern(buf.span(), 100 + i, 0);
    REQUIRE(s.write(*file, 0, buf.span()).ok());
    REQUIRE(s.release(file).ok());
    files.push_back({attr.ino, size});
  }
  // Right after the last acknowledgement: no fsync, no grace period.
  REQUIRE(cluster.cluster().kill_daemon("server1", SIGKILL).ok());
  REQUIRE(daemon_pid(cluster.cluster(), "server1") == 0);
  REQUIRE(cluster.cluster().restart_daemon("server1").ok());

  // The client that wrote (its connection to server1 died) and a new one.
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(i);
    CHECK(check_file(s, files[i].ino, files[i].size, 100 + i) == "");
  }
  Session fresh(cluster.config());
  for (size_t i = 0; i < files.size(); ++i) {
    CAPTURE(i);
    CHECK(check_file(fresh, files[i].ino, files[i].size, 100 + i) == "");
  }
}

TEST_CASE("every completed metadata operation survives a SIGKILL of the metadata server") {
  TestCluster cluster(with_servers(2));
  InodeId file_ino;
  constexpr uint64_t kSize = 3 * kMiB + 7;
  {
    Session s(cluster.config());
    auto dir = s.run(s->mkdir(kRoot, kRootInode, "dir", 0755));
    REQUIRE(dir.ok());
    auto sub = s.run(s->mkdir(kRoot, dir->ino, "sub", 0700));
    REQUIRE(sub.ok());
    auto [attr, file] = s.create(dir->ino, "data");
    file_ino = attr.ino;
    AlignedBuffer buf(kSize);
    fill_pattern(buf.span(), 42, 0);
    REQUIRE(s.write(*file, 0, buf.span()).ok());
    REQUIRE(s.release(file).ok());  // publishes the size
    REQUIRE(s.run(s->rename(kRoot, dir->ino, "data", sub->ino, "moved", 0)).ok());
    REQUIRE(s.run(s->setxattr(kRoot, file_ino, "user.color", "blue", 0)).ok());
    REQUIRE(s.run(s->symlink(kRoot, kRootInode, "link", "dir/sub/moved")).ok());
    REQUIRE(s.run(s->link(kRoot, file_ino, kRootInode, "hard")).ok());
    auto gone = s.create(kRootInode, "gone");
    REQUIRE(s.release(gone.second).ok());
    REQUIRE(s.run(s->unlink(kRoot, kRootInode, "gone")).ok());
    REQUIRE(s.run(s->mkdir(kRoot, kRootInode, "empty", 0755)).ok());
    REQUIRE(s.run(s->rmdir(kRoot, kRootInode, "empty")).ok());
    SetAttr chmod;
    chmod.mask = kSetMode;
    chmod.mode = 0600;
    REQUIRE(s.run(s->setattr(kRoot, file_ino, chmod)).ok());
  }
  REQUIRE(cluster.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(daemon_pid(cluster.cluster(), "mds0") == 0);
  REQUIRE(cluster.cluster().restart_daemon("mds0").ok());

  Session s(cluster.config());
  auto dir = s.lookup(kRootInode, "dir");
  REQUIRE(dir.ok());
  CHECK((dir->mode & 0777) == 0755);
  auto sub = s.lookup(dir->ino, "sub");
  REQUIRE(sub.ok());
  CHECK((sub->mode & 0777) == 0700);
  CHECK(s.lookup(dir->ino, "data").code() == Errc::not_found);
  auto moved = s.lookup(sub->ino, "moved");
  REQUIRE(moved.ok());
  CHECK(moved->ino == file_ino);
  CHECK(moved->size == kSize);
  CHECK(moved->nlink == 2);
  CHECK((moved->mode & 0777) == 0600);
  auto color = s.run(s->getxattr(kRoot, file_ino, "user.color"));
  REQUIRE(color.ok());
  CHECK(*color == "blue");
  auto link = s.lookup(kRootInode, "link");
  REQUIRE(link.ok());
  auto target = s.run(s->readlink(kRoot, link->ino));
  REQUIRE(target.ok());
  CHECK(*target == "dir/sub/moved");
  auto hard = s.lookup(kRootInode, "hard");
  REQUIRE(hard.ok());
  CHECK(hard->ino == file_ino);
  CHECK(s.lookup(kRootInode, "gone").code() == Errc::not_found);
  CHECK(s.lookup(kRootInode, "empty").code() == Errc::not_found);
  // The layout survived too: the bytes are where it says.
  CHECK(check_file(s, file_ino, kSize, 42) == "");
  // And the restarted MDS takes new work.
  auto after = s.create(kRootInode, "after");
  CHECK(s.release(after.second).ok());
}

TEST_CASE("a client facing a killed storage server gets an error within the RPC timeout, not a hang") {
  constexpr uint32_t kTimeoutMs = 2000;
  ClusterOptions options = with_servers(4);
  options.rpc_timeout_ms = kTimeoutMs;
  TestCluster cluster(options);
  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "f");
  REQUIRE(attr.layout.stripe_count() == 4);
  AlignedBuffer buf(4 * kMiB);
  fill_pattern(buf.span(), 8, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.flush(*file).ok());

  // Stripe i is on attr.layout.servers[i].
  uint64_t dead_stripe = 0, live_stripe = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    if (attr.layout.servers[i].value == 2) dead_stripe = i;
    else live_stripe = i;
  }
  REQUIRE(cluster.cluster().kill_daemon("server2", SIGKILL).ok());

  // A liveness bound, not a speed expectation: well above the timeout.
  const auto bound = milliseconds(3 * kTimeoutMs);
  auto started = Clock::now();
  auto got = s.read(*file, dead_stripe * kMiB, buf.span(0, 4096));
  auto took = Clock::now() - started;
  CHECK_FALSE(got.ok());
  CHECK_MESSAGE(is_failure_of_a_dead_peer(got.code()), got.status().to_string());
  CHECK(took < bound);

  started = Clock::now();
  Status wrote = s.write(*file, dead_stripe * kMiB + 10, buf.span(0, 100));
  took = Clock::now() - started;
  CHECK_FALSE(wrote.ok());
  CHECK_MESSAGE(is_failure_of_a_dead_peer(wrote.code()), wrote.to_string());
  CHECK(took < bound);

  // Stripes on the servers that are alive are still served.
  auto live = s.read(*file, live_stripe * kMiB, buf.span(0, kMiB));
  REQUIRE(live.ok());
  CHECK(*live == kMiB);
  CHECK(pattern_mismatch(buf.span(0, kMiB), 8, live_stripe * kMiB) == std::nullopt);
  (void)s.release(file);
}

TEST_CASE("a read on the mount from a killed storage server fails within one RPC timeout, and the next at once") {
  if (skip_without_fuse()) return;
  constexpr uint32_t kTimeoutMs = 3000;
  ClusterOptions options = with_servers(4);
  options.rpc_timeout_ms = kTimeoutMs;
  TestCluster cluster(options, true);
  // Written by a client of its own, so the mount has nothing of it cached.
  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "f");
  REQUIRE(attr.layout.stripe_count() == 4);
  AlignedBuffer buf(4 * kMiB);
  fill_pattern(buf.span(), 9, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.release(file).ok());
  uint64_t dead_stripe = 0, live_stripe = 0;
  for (uint32_t i = 0; i < 4; ++i) {
    if (attr.layout.servers[i].value == 2) dead_stripe = i;
    else live_stripe = i;
  }
  const std::string path = (cluster.mnt() / "f").string();
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(cluster.cluster().kill_daemon("server2", SIGKILL).ok());

  // The first read waits out the timeout (the server might be restarting);
  // the kernel retries a failed read, and that retry, like every read of
  // the dead server after it, fails at once instead of waiting again.
  // Liveness bounds, not speed expectations: each is half a timeout above
  // what it should take, and a timeout below what it took before.
  std::string got(4096, '\0');
  auto started = Clock::now();
  errno = 0;
  CHECK(::pread(fd, got.data(), got.size(), static_cast<off_t>(dead_stripe * kMiB)) == -1);
  CHECK(errno == EIO);
  CHECK(Clock::now() - started < milliseconds(kTimeoutMs * 3 / 2));

  started = Clock::now();
  errno = 0;
  CHECK(::pread(fd, got.data(), got.size(), static_cast<off_t>(dead_stripe * kMiB + 512 * 1024)) == -1);
  CHECK(errno == EIO);
  CHECK(Clock::now() - started < milliseconds(kTimeoutMs / 2));

  // The servers that are alive still serve their stripes.
  CHECK(::pread(fd, got.data(), got.size(), static_cast<off_t>(live_stripe * kMiB)) ==
        static_cast<ssize_t>(got.size()));
  CHECK(pattern_mismatch(std::as_bytes(std::span(got)), 9, live_stripe * kMiB) == std::nullopt);
  ::close(fd);

  // Back after a restart: read again once the quiet second has passed.
  REQUIRE(cluster.cluster().restart_daemon("server2").ok());
  std::this_thread::sleep_for(milliseconds(1100));
  fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  CHECK(::pread(fd, got.data(), got.size(), static_cast<off_t>(dead_stripe * kMiB)) ==
        static_cast<ssize_t>(got.size()));
  CHECK(pattern_mismatch(std::as_bytes(std::span(got)), 9, dead_stripe * kMiB) == std::nullopt);
  ::close(fd);
}

TEST_CASE("a client facing a killed metadata server gets an error within the RPC timeout, not a hang") {
  constexpr uint32_t kTimeoutMs = 2000;
  ClusterOptions options = with_servers(2);
  options.rpc_timeout_ms = kTimeoutMs;
  TestCluster cluster(options);
  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "f");
  AlignedBuffer buf(kMiB);
  fill_pattern(buf.span(), 4, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(cluster.cluster().kill_daemon("mds0", SIGKILL).ok());

  const auto bound = milliseconds(3 * kTimeoutMs);
  auto started = Clock::now();
  auto looked = s.lookup(kRootInode, "f");
  CHECK(Clock::now() - started < bound);
  CHECK_FALSE(looked.ok());
  CHECK_MESSAGE(is_failure_of_a_dead_peer(looked.code()), looked.status().to_string());

  started = Clock::now();
  auto made = s.run(s->mkdir(kRoot, kRootInode, "d", 0755));
  CHECK(Clock::now() - started < bound);
  CHECK_FALSE(made.ok());
  CHECK_MESSAGE(is_failure_of_a_dead_peer(made.code()), made.status().to_string());

  started = Clock::now();
  Status flushed = s.flush(*file);
  CHECK(Clock::now() - started < bound);
  CHECK_FALSE(flushed.ok());
  CHECK_MESSAGE(is_failure_of_a_dead_peer(flushed.code()), flushed.to_string());

  // Data already open needs no metadata server.
  auto got = s.read(*file, 0, buf.span());
  REQUIRE(got.ok());
  CHECK(*got == kMiB);
  CHECK(pattern_mismatch(buf.span(), 4, 0) == std::nullopt);
}

TEST_CASE("a connection with the wrong secret is refused and logged, and others are still served") {
  TestCluster cluster(with_servers(2));
  TempDir keys("pvfs-keys");
  REQUIRE(generate_secret(keys.path() / "wrong.key").ok());
  auto wrong = load_secret(keys.path() / "wrong.key");
  REQUIRE(wrong.ok());

  asio::io_context io;
  for (const auto& [name, address] :
       {std::pair{std::string("server0"), cluster.config().servers[0].address},
        std::pair{std::string("mds0"), cluster.config().mds[0].address}}) {
    CAPTURE(name);
    auto conn = rpc::run_sync(io, rpc::Connection::connect(address, *wrong, milliseconds(5000)));
    CHECK(conn.code() == Errc::access_denied);
    const auto log = cluster.cluster().dir() / "logs" / (name + ".log");
    CHECK(eventually([&] { return read_text(log).find("rejected") != std::string::npos; }));
    CHECK(daemon_pid(cluster.cluster(), name) != 0);
  }

  // A whole client holding the wrong key cannot start.
  Config bad = cluster.config();
  bad.secret_file = keys.path() / "wrong.key";
  asio::io_context bad_io;
  auto impostor = Client::create(bad_io, bad);
  REQUIRE(impostor.ok());
  CHECK(rpc::run_sync(bad_io, (*impostor)->start()).code() == Errc::access_denied);

  Session s(cluster.config());
  auto [attr, file] = s.create(kRootInode, "still-served");
  AlignedBuffer buf(2 * kMiB);
  fill_pattern(buf.span(), 11, 0);
  REQUIRE(s.write(*file, 0, buf.span()).ok());
  REQUIRE(s.release(file).ok());
  CHECK(check_file(s, attr.ino, 2 * kMiB, 11) == "");
}

}  // namespace pvfs::test::faults_test
