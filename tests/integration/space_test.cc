// Space on the storage servers, end to end through a real mount: unlinked
// files' objects are deleted in batches (a handful of remove requests per
// server for thousands of files) and a server that is down holds up no other
// file's deletion; layouts naming servers or stripe counts the cluster does
// not have are refused; new files avoid a server that is full; sparse files
// whose holes span whole objects look healthy to fsck; an unlinked file a
// node keeps open lives while that node does, and its space comes back once
// the node is gone.
// The daemons and pvfsmount are the real binaries; pvfs-ctl comes from
// $PVFS_CTL.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "tests/integration/session.h"
#include "tests/support/run_tool.h"

namespace pvfs::test::space_test {
namespace {

namespace fs = std::filesystem;

bool write_small(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  out << text;
  out.close();
  return out.good();
}

double metric(TestCluster& c, const std::string& daemon, const std::string& name, const std::string& label = {}) {
  return daemon_metric(c.dir(), c.cluster().config_path(), daemon, name, label);
}

// Object files on every storage server, fragments not included.
size_t objects_on_servers(const Config& config) {
  size_t n = 0;
  for (const auto& server : config.servers) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(server.data_dir / "objects", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      n += it->is_regular_file();
  }
  return n;
}

std::string server_name(uint32_t id) { return "server" + std::to_string(id); }

}  // namespace

TEST_CASE("an rm -rf of 3,000 files is reclaimed in batches: a few remove requests per server, not one per file") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(3), true);
  const fs::path dir = c.mnt() / "many";
  REQUIRE(fs::create_directory(dir));
  constexpr int kFiles = 3000;
  for (int i = 0; i < kFiles; ++i) REQUIRE(write_small(dir / ("f" + std::to_string(i)), "x"));
  REQUIRE(objects_on_servers(c.config()) >= kFiles);
  std::vector<double> removes_before;
  for (const auto& s : c.config().servers)
    removes_before.push_back(metric(c, server_name(s.id), "pvfs_server_requests_total", "type=\"remove\""));
  const double reclaimed_before = metric(c, "mds0", "pvfs_mds_orphans_reclaimed_total");

  fs::remove_all(dir);
  // The deadline only guards against waiting forever.
  CHECK_MESSAGE(eventually([&] { return objects_on_servers(c.config()) == 0; }, std::chrono::seconds(120)),
                objects_on_servers(c.config()), " objects left");
  CHECK(eventually([&] { return metric(c, "mds0", "pvfs_mds_orphans") == 0; }, std::chrono::seconds(10)));
  CHECK(metric(c, "mds0", "pvfs_mds_orphans_reclaimed_total") - reclaimed_before == kFiles);
  for (const auto& s : c.config().servers) {
    const double removes =
        metric(c, server_name(s.id), "pvfs_server_requests_total", "type=\"remove\"") - removes_before[s.id];
    CAPTURE(s.id);
    CHECK(removes > 0);
    CHECK(removes <= kFiles / 30);
  }
}

TEST_CASE("files with an object on a stopped server wait for it without holding up the deletion of others") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(3);
  options.heartbeat_timeout_ms = 2500;
  TestCluster c(options, true);
  // Files in `on1` live on server 1 only, those in `on2` on server 2 only;
  // `on1` comes first, so its files have the lower inode numbers.
  const fs::path on1 = c.mnt() / "on1", on2 = c.mnt() / "on2";
  REQUIRE(fs::create_directory(on1));
  REQUIRE(fs::create_directory(on2));
  const std::string one = "stripe_size=0 stripe_count=1 servers=1";
  const std::string two = "stripe_size=0 stripe_count=1 servers=2";
  REQUIRE(::setxattr(on1.c_str(), "user.pvfs.layout", one.data(), one.size(), 0) == 0);
  REQUIRE(::setxattr(on2.c_str(), "user.pvfs.layout", two.data(), two.size(), 0) == 0);
  constexpr int kFiles = 200;
  for (int i = 0; i < kFiles; ++i) REQUIRE(write_small(on1 / ("f" + std::to_string(i)), "x"));
  for (int i = 0; i < kFiles; ++i) REQUIRE(write_small(on2 / ("f" + std::to_string(i)), "x"));
  auto objects_of = [&](uint32_t server) {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(c.config().servers.at(server).data_dir / "objects", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      n += it->is_regular_file();
    return n;
  };
  REQUIRE(objects_of(1) == kFiles);
  REQUIRE(objects_of(2) == kFiles);

  REQUIRE(c.cluster().kill_daemon("server1", SIGSTOP).ok());
  fs::remove_all(on1);
  fs::remove_all(on2);
  // Server 2's objects go although the files before them wait for server 1.
  CHECK_MESSAGE(eventually([&] { return objects_of(2) == 0; }, std::chrono::seconds(60)), objects_of(2),
                " objects left on server 2");
  // Their files are forgotten once the batch is done; those on server 1 wait.
  CHECK(eventually([&] { return metric(c, "mds0", "pvfs_mds_orphans") == kFiles; }, std::chrono::seconds(60)));
  CHECK(objects_of(1) == kFiles);

  REQUIRE(c.cluster().kill_daemon("server1", SIGCONT).ok());
  CHECK_MESSAGE(eventually([&] { return objects_of(1) == 0; }, std::chrono::seconds(60)), objects_of(1),
                " objects left on server 1");
  CHECK(eventually([&] { return metric(c, "mds0", "pvfs_mds_orphans") == 0; }, std::chrono::seconds(10)));
}

TEST_CASE("an unlinked file kept open lives through leases and an MDS restart, and its space comes back "
          "when its node's pvfsmount dies") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(2);
  options.orphan_lease_ms = 1500;
  TestCluster c(options, true);
  const fs::path path = c.mnt() / "scratch";
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + (i * 7919) % 26);
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
  REQUIRE(::unlink(path.c_str()) == 0);
  const size_t objects = objects_on_servers(c.config());
  REQUIRE(objects > 0);
  // Read from the servers, not from the page cache.
  auto reads_back = [&] {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    std::string got(data.size(), '\0');
    return ::pread(fd, got.data(), got.size(), 0) == static_cast<ssize_t>(got.size()) && got == data;
  };
  constexpr auto kLeases = std::chrono::milliseconds(4 * 1500);

  // The mount renews its hold: four leases later nothing has gone.
  std::this_thread::sleep_for(kLeases);
  CHECK(metric(c, "mds0", "pvfs_mds_orphan_holds_lapsed_total") == 0);
  CHECK(objects_on_servers(c.config()) == objects);
  CHECK_MESSAGE(reads_back(), "the data of the open unlinked file changed or went while its node lived");

  // A restarted MDS finds the held file in its database and waits a lease
  // for its client, which renews with it.
  REQUIRE(c.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(c.cluster().restart_daemon("mds0").ok());
  std::this_thread::sleep_for(kLeases);
  CHECK(metric(c, "mds0", "pvfs_mds_orphan_holds") == 1);
  CHECK(objects_on_servers(c.config()) == objects);
  CHECK_MESSAGE(reads_back(), "the open unlinked file went when the MDS restarted");

  // The node dies: no close will ever come, and the lease lapses.
  const int mounter = pvfsmount_pid(fs::absolute(c.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGKILL) == 0);
  REQUIRE(eventually([&] { return ::kill(mounter, 0) != 0; }));
  ::close(fd);  // the mount is gone: only frees the descriptor
  CHECK_MESSAGE(eventually([&] { return objects_on_servers(c.config()) == 0; }, std::chrono::seconds(20)),
                objects_on_servers(c.config()), " objects of the dead node's unlinked file left");
  CHECK(eventually([&] { return metric(c, "mds0", "pvfs_mds_orphans") == 0; }, std::chrono::seconds(10)));
  CHECK(metric(c, "mds0", "pvfs_mds_orphan_holds_lapsed_total") == 1);
}

TEST_CASE("a file another client removes stays whole where it is open, for as long as that node renews, "
          "and goes after its close; a node cut off longer reads ESTALE, not zeros") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(2);
  options.open_lease_ms = 1500;
  TestCluster c(options, true);
  std::string data(2 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('A' + (i * 131) % 26);
  auto open_written = [&](const std::string& name) {
    const fs::path path = c.mnt() / name;
    int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
    REQUIRE(::fsync(fd) == 0);
    return fd;
  };
  // Read from the servers, not from the page cache: the whole data, or errno.
  auto read_back = [&](int fd) -> int {
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    std::string got(data.size(), '\0');
    const ssize_t n = ::pread(fd, got.data(), got.size(), 0);
    if (n < 0) return errno;
    return n == static_cast<ssize_t>(got.size()) && got == data ? 0 : -1;
  };
  Session other(c.config());  // another client, which removes the files
  auto remove = [&](const std::string& name) {
    REQUIRE(other.run(other->unlink(Credentials{}, kRootInode, name)).ok());
  };
  const int kept = open_written("kept");
  remove("kept");
  // Gone by name once the kernel's cached entry times out (1 s).
  CHECK(eventually([&] { return !fs::exists(c.mnt() / "kept"); }, std::chrono::seconds(3)));
  // Four leases: the mount renews its open lease, so nothing goes.
  std::this_thread::sleep_for(std::chrono::milliseconds(4 * 1500));
  CHECK(metric(c, "mds0", "pvfs_mds_orphan_holds") == 1);
  CHECK_MESSAGE(read_back(kept) == 0, "a file another client removed lost its data where it was open");
  const std::string more = "written after another client removed it";
  REQUIRE(::pwrite(kept, more.data(), more.size(), 0) == static_cast<ssize_t>(more.size()));
  REQUIRE(::fsync(kept) == 0);
  data.replace(0, more.size(), more);
  CHECK(read_back(kept) == 0);
  const size_t objects = objects_on_servers(c.config());
  REQUIRE(objects > 0);
  REQUIRE(::close(kept) == 0);
  // Closed: the lease runs out, and the data goes.
  CHECK_MESSAGE(eventually([&] { return objects_on_servers(c.config()) == 0; }, std::chrono::seconds(20)),
                objects_on_servers(c.config()), " objects left after the last close");
  CHECK(eventually([&] { return metric(c, "mds0", "pvfs_mds_orphans") == 0; }, std::chrono::seconds(10)));

  // A node stopped for longer than its lease cannot keep the file: removed
  // meanwhile, it is deleted, and the node's reads fail instead of
  // returning the holes its objects left.
  const int cut_off = open_written("cut-off");
  const int mounter = pvfsmount_pid(fs::absolute(c.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGSTOP) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(3 * 1500));
  remove("cut-off");
  const bool deleted = eventually([&] { return objects_on_servers(c.config()) == 0; }, std::chrono::seconds(20));
  REQUIRE(::kill(mounter, SIGCONT) == 0);
  CHECK(deleted);
  CHECK(read_back(cut_off) == ESTALE);
  ::close(cut_off);
}

TEST_CASE("a file another client removes just after an MDS restart stays whole where it is open") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(2);
  options.open_lease_ms = 6000;  // the mount renews every 2 s
  TestCluster c(options, true);
  const std::string data(1 << 20, 'r');
  const fs::path path = c.mnt() / "kept";
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
  REQUIRE(::fsync(fd) == 0);
  // The restarted MDS has not heard of the mount's open file yet when the
  // other client removes it. (O_CLOEXEC above: the MDS is started from this
  // process and would otherwise hold the file open itself.)
  REQUIRE(c.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(c.cluster().restart_daemon("mds0").ok());
  Session other(c.config());
  REQUIRE(other.run(other->unlink(Credentials{}, kRootInode, "kept")).ok());
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  std::string got(data.size(), '\0');
  CHECK_MESSAGE(::pread(fd, got.data(), got.size(), 0) == static_cast<ssize_t>(got.size()),
                "reading the removed file: ", std::strerror(errno));
  CHECK(got == data);
  REQUIRE(::close(fd) == 0);
  CHECK_MESSAGE(eventually([&] { return objects_on_servers(c.config()) == 0; }, std::chrono::seconds(30)),
                objects_on_servers(c.config()), " objects left after the last close");
}

TEST_CASE("a layout naming a server or a stripe count the cluster does not have is refused with EINVAL") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(3), true);
  const fs::path dir = c.mnt() / "striped";
  REQUIRE(fs::create_directory(dir));
  const std::string good = "stripe_size=0 stripe_count=2 servers=2,0";
  REQUIRE(::setxattr(dir.c_str(), "user.pvfs.layout", good.data(), good.size(), 0) == 0);
  auto policy_of = [](const fs::path& p) {
    std::string value(256, '\0');
    const ssize_t n = ::getxattr(p.c_str(), "user.pvfs.layout", value.data(), value.size());
    REQUIRE(n >= 0);
    value.resize(static_cast<size_t>(n));
    return value;
  };
  const std::string before = policy_of(dir);

  // Through the mount: a server id the cluster lacks, one given twice, and
  // stripe counts wider than the cluster or than the servers listed.
  for (const std::string bad : {"stripe_size=0 stripe_count=0 servers=7",
                                "stripe_size=0 stripe_count=0 servers=1,1",
                                "stripe_size=0 stripe_count=4 servers=",
                                "stripe_size=0 stripe_count=3 servers=0,1"}) {
    CAPTURE(bad);
    errno = 0;
    CHECK(::setxattr(dir.c_str(), "user.pvfs.layout", bad.data(), bad.size(), 0) == -1);
    CHECK(errno == EINVAL);
  }
  // An empty file too keeps its layout.
  const fs::path file = c.mnt() / "empty";
  REQUIRE(write_small(file, ""));
  const std::string file_before = policy_of(file);
  const std::string bad = "stripe_size=0 stripe_count=0 servers=3";
  CHECK(::setxattr(file.c_str(), "user.pvfs.layout", bad.data(), bad.size(), 0) == -1);
  CHECK(errno == EINVAL);
  CHECK(policy_of(file) == file_before);

  // Through pvfs-ctl setstripe: exit 1 and a message that says why.
  auto refused = run_tool("PVFS_CTL", c.dir(), {"setstripe", "-s", "0,9", dir.string()});
  CAPTURE(refused);
  CHECK(refused.status == 1);
  CHECK(refused.err.find("Invalid argument") != std::string::npos);
  CHECK(refused.err.find("no such storage server") != std::string::npos);
  auto wide = run_tool("PVFS_CTL", c.dir(), {"setstripe", "-c", "8", dir.string()});
  CAPTURE(wide);
  CHECK(wide.status == 1);
  // A new path named in a refused setstripe is not left behind.
  auto fresh = run_tool("PVFS_CTL", c.dir(), {"setstripe", "-s", "5", (c.mnt() / "new").string()});
  CHECK(fresh.status == 1);
  CHECK_FALSE(fs::exists(c.mnt() / "new"));

  // Nothing was lost: the directory's policy stands and files are made with it.
  CHECK(policy_of(dir) == before);
  REQUIRE(write_small(dir / "f", std::string(3 << 20, 'y')));
  CHECK(policy_of(dir / "f").find("servers=2,0") != std::string::npos);
  auto ok = run_tool("PVFS_CTL", c.dir(), {"setstripe", "-c", "3", dir.string()});
  CAPTURE(ok);
  CHECK(ok.status == 0);
}

namespace {

// Storage server `id`'s data directory moved onto a tmpfs of `bytes`, made
// while the server is down; unmounted (lazily) on destruction.
// A daemon's data directory moved onto a tmpfs of `bytes`, made while the
// daemon is stopped.
class TmpfsDataDir {
 public:
  TmpfsDataDir(TestCluster& c, uint32_t id, uint64_t bytes) : TmpfsDataDir(c, c.config().servers.at(id).data_dir, bytes) {}
  TmpfsDataDir(TestCluster& c, const fs::path& dir, uint64_t bytes) : dir_(dir) {
    const fs::path saved = c.dir() / ("saved-" + dir.filename().string());
    fs::copy(dir_, saved, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
    REQUIRE_MESSAGE(::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) == 0, std::strerror(errno));
    mounted_ = true;
    fs::copy(saved, dir_, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TmpfsDataDir() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  // Fills the tmpfs until `leave` bytes are free.
  void fill(uint64_t leave) {
    struct statvfs vfs {};
    REQUIRE(::statvfs(dir_.c_str(), &vfs) == 0);
    const uint64_t free = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    REQUIRE(free > leave);
    const int fd = ::open((dir_ / "filler").c_str(), O_WRONLY | O_CREAT, 0600);
    REQUIRE(fd >= 0);
    CHECK(::posix_fallocate(fd, 0, static_cast<off_t>(free - leave)) == 0);
    ::close(fd);
  }
  void empty() { fs::remove(dir_ / "filler"); }

 private:
  fs::path dir_;
  bool mounted_ = false;
};

std::string layout_of(const fs::path& p) {
  std::string value(256, '\0');
  const ssize_t n = ::getxattr(p.c_str(), "user.pvfs.layout", value.data(), value.size());
  REQUIRE_MESSAGE(n >= 0, p, ": ", std::strerror(errno));
  value.resize(static_cast<size_t>(n));
  return value;
}

// The server ids of a file's layout ("... servers=2,0,1").
std::vector<uint32_t> servers_of(const fs::path& file) {
  const std::string layout = layout_of(file);
  const auto at = layout.find("servers=");
  REQUIRE(at != std::string::npos);
  std::vector<uint32_t> out;
  std::istringstream in(layout.substr(at + 8));
  for (std::string id; std::getline(in, id, ',');) out.push_back(static_cast<uint32_t>(std::stoul(id)));
  return out;
}

bool contains(const std::vector<uint32_t>& ids, uint32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

TEST_CASE("new files avoid a full server while the others have room, and use it again once it has room") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(3), true);
  REQUIRE(c.cluster().kill_daemon("server2", SIGKILL).ok());
  REQUIRE(eventually([&] { return daemon_pid(c.cluster(), "server2") == 0; }, std::chrono::seconds(10)));
  TmpfsDataDir small(c, 2, 128 << 20);
  small.fill(2 << 20);  // 98% full
  REQUIRE(c.cluster().restart_daemon("server2").ok());
  // The MDS learns the free space from the next heartbeats: until then new
  // files may still be given server 2.
  int probe = 0;
  REQUIRE(eventually([&] {
    const fs::path file = c.mnt() / ("probe" + std::to_string(probe++));
    return write_small(file, "") && !contains(servers_of(file), 2);
  }, std::chrono::seconds(20)));
  struct statvfs vfs {};
  REQUIRE(::statvfs(c.mnt().c_str(), &vfs) == 0);
  CHECK(static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize > (uint64_t{1} << 30));  // df: plenty free

  // 8 MiB files striped 1 MiB wide: one on server 2 would need more than its 2 MiB.
  const std::string data(8 << 20, 'z');
  for (int i = 0; i < 10; ++i) {
    const fs::path file = c.mnt() / ("f" + std::to_string(i));
    CAPTURE(file);
    CHECK(write_small(file, data));
    const auto servers = servers_of(file);
    CHECK(servers.size() == 2);
    CHECK_FALSE(contains(servers, 2));
    CHECK(pvfs::test::read_file(file) == data);
  }
  // A layout that names the full server still gets it.
  const fs::path named = c.mnt() / "named";
  REQUIRE(fs::create_directory(named));
  const std::string policy = "stripe_size=0 stripe_count=1 servers=2";
  REQUIRE(::setxattr(named.c_str(), "user.pvfs.layout", policy.data(), policy.size(), 0) == 0);
  REQUIRE(write_small(named / "small", "fits"));
  CHECK(servers_of(named / "small") == std::vector<uint32_t>{2});

  // With room again, server 2 takes new files again.
  small.empty();
  int n = 0;
  CHECK(eventually([&] {
    const fs::path file = c.mnt() / ("later" + std::to_string(n++));
    return write_small(file, "x") && contains(servers_of(file), 2);
  }, std::chrono::seconds(20)));
}

TEST_CASE("fsck finds nothing wrong with sparse files whose holes span whole objects") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(4), true);
  // 1 MiB stripes over 4 servers: data at 0 and at 5 MiB leaves objects 2
  // and 3 with nothing but hole; a write far past the end skips rows.
  const std::vector<std::pair<std::string, std::vector<off_t>>> files{
      {"two-ends", {0, 5 << 20}}, {"far", {64 << 20}}, {"gaps", {0, 3 << 20, 9 << 20}}};
  for (const auto& [name, offsets] : files) {
    const int fd = ::open((c.mnt() / name).c_str(), O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    for (off_t at : offsets) REQUIRE(::pwrite(fd, "data", 4, at) == 4);
    REQUIRE(::close(fd) == 0);
  }
  auto fsck = run_tool("PVFS_CTL", c.dir(), {"fsck", "-c", c.cluster().config_path().string()});
  CAPTURE(fsck);
  CHECK(fsck.status == 0);
  CHECK(fsck.out.find("missing object") == std::string::npos);
  // And the holes read as zeros.
  const std::string data = pvfs::test::read_text(c.mnt() / "two-ends");
  REQUIRE(data.size() == (5u << 20) + 4);
  CHECK(data.substr(4, (5u << 20) - 4).find_first_not_of('\0') == std::string::npos);
}

// The MDS's data directory on a tmpfs of `bytes`: the MDS is stopped,
// its files copied over, and started again (the mount reconnects).
std::unique_ptr<TmpfsDataDir> mds_on_tmpfs(TestCluster& c, uint64_t bytes) {
  REQUIRE(c.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(eventually([&] { return daemon_pid(c.cluster(), "mds0") == 0; }, std::chrono::seconds(10)));
  auto dir = std::make_unique<TmpfsDataDir>(c, c.config().mds.at(0).data_dir, bytes);
  REQUIRE(c.cluster().restart_daemon("mds0").ok());
  return dir;
}

// Creates an empty file; the errno of the failure, or 0.
int create_errno(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

TEST_CASE("a metadata server whose disk fills refuses new names with ENOSPC, still removes files and keeps "
          "sizes, and takes new names once there is room") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true);  // [mds_tuning] reserve_mb = 64, the default
  auto tmpfs = mds_on_tmpfs(c, 160 << 20);
  std::map<std::string, std::string> kept;
  for (int i = 0; i < 20; ++i) {
    const std::string name = "a" + std::to_string(i);
    kept[name] = "file " + name + std::string(1000 + i, 'k');
    REQUIRE(write_small(c.mnt() / name, kept[name]));
  }
  const int fd = ::open((c.mnt() / "growing").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, "head", 4, 0) == 4);

  tmpfs->fill(16 << 20);  // under the reserve
  int err = 0;
  int probe = 0;
  REQUIRE(eventually([&] {
    err = create_errno(c.mnt() / ("probe" + std::to_string(probe++)));
    return err != 0;
  }, std::chrono::seconds(10)));
  CHECK(err == ENOSPC);
  CHECK(::mkdir((c.mnt() / "dir").c_str(), 0755) == -1);
  CHECK(errno == ENOSPC);
  CHECK(::symlink("a0", (c.mnt() / "link").c_str()) == -1);
  CHECK(errno == ENOSPC);
  // Each refusal is a warning in the log, but not a line each.
  const auto refusing = std::chrono::steady_clock::now();
  for (int i = 0; std::chrono::steady_clock::now() - refusing < std::chrono::milliseconds(1500); ++i)
    REQUIRE(create_errno(c.mnt() / ("refused" + std::to_string(i))) == ENOSPC);
  const std::string log = pvfs::test::read_text(c.cluster().dir() / "logs" / "mds0.log");
  size_t refusals = 0;
  for (size_t at = log.find("mknod"); at != std::string::npos; at = log.find("mknod", at + 1)) ++refusals;
  CHECK(refusals >= 1);
  CHECK(refusals < 30);
  CHECK(log.find("more like it") != std::string::npos);
  auto health = run_tool("PVFS_CTL", c.dir(), {"health", "-c", c.cluster().config_path().string()});
  CAPTURE(health.out);
  CHECK(health.status == 2);
  CHECK(health.out.find("MDS_FULL: mds0: ") != std::string::npos);
  CHECK(health.out.find("under the reserve of 64.0 MiB") != std::string::npos);

  // What frees room, or changes what exists, goes on.
  for (int i = 0; i < 10; ++i) {
    const std::string name = "a" + std::to_string(i);
    CHECK_MESSAGE(::unlink((c.mnt() / name).c_str()) == 0, name, ": ", std::strerror(errno));
    kept.erase(name);
  }
  CHECK(::rename((c.mnt() / "a10").c_str(), (c.mnt() / "a10-renamed").c_str()) == 0);
  kept["a10-renamed"] = kept["a10"];
  kept.erase("a10");
  const std::string tail(3 << 20, 't');
  REQUIRE(::pwrite(fd, tail.data(), tail.size(), 4) == static_cast<ssize_t>(tail.size()));
  CHECK(::close(fd) == 0);
  kept["growing"] = "head" + tail;
  CHECK(metric(c, "mds0", "pvfs_mds_refused_no_room_total") >= 3);

  // Room again: new names are taken.
  tmpfs->empty();
  CHECK(eventually([&] { return create_errno(c.mnt() / ("later" + std::to_string(probe++))) == 0; },
                   std::chrono::seconds(10)));
  CHECK(::mkdir((c.mnt() / "dir").c_str(), 0755) == 0);
  health = run_tool("PVFS_CTL", c.dir(), {"health", "-c", c.cluster().config_path().string()});
  CHECK(health.out.find("MDS_FULL") == std::string::npos);
  for (const auto& [name, content] : kept) {
    CAPTURE(name);
    CHECK(pvfs::test::read_text(c.mnt() / name) == content);
  }
}

TEST_CASE("with no reserve, a metadata server on a disk with no room left answers ENOSPC, not EIO, and "
          "serves every file it acknowledged") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(2);
  options.mds_reserve_mb = 0;
  TestCluster c(options, true);
  auto tmpfs = mds_on_tmpfs(c, 32 << 20);
  std::vector<std::string> made;
  for (int i = 0; i < 20; ++i) {
    made.push_back("before" + std::to_string(i));
    REQUIRE(write_small(c.mnt() / made.back(), made.back()));
  }
  tmpfs->fill(0);
  // LMDB reuses pages freed by earlier commits first: some creates may
  // still fit, the first failure says why.
  int err = 0;
  for (int i = 0; i < 20000 && err == 0; ++i) {
    const std::string name = "full" + std::to_string(i);
    err = create_errno(c.mnt() / name);
    if (err == 0) made.push_back(name);
  }
  CHECK(err == ENOSPC);
  CHECK(daemon_pid(c.cluster(), "mds0") != 0);
  tmpfs->empty();
  CHECK(eventually([&] { return create_errno(c.mnt() / "after") == 0; }, std::chrono::seconds(10)));
  size_t readable = 0;
  for (const auto& name : made) {
    struct stat st {};
    readable += ::stat((c.mnt() / name).c_str(), &st) == 0;
  }
  CHECK(readable == made.size());
  for (int i = 0; i < 20; ++i) CHECK(pvfs::test::read_text(c.mnt() / made[i]) == made[i]);
}

TEST_CASE("a write whose storage server is full goes to one with room and reads back whole") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true);
  REQUIRE(c.cluster().kill_daemon("server1", SIGKILL).ok());
  REQUIRE(eventually([&] { return daemon_pid(c.cluster(), "server1") == 0; }, std::chrono::seconds(10)));
  TmpfsDataDir small(c, 1, 128 << 20);
  small.fill(48 << 20);  // under [storage] reserve_mb, 64 MiB by default; 62% full, so still given new files
  REQUIRE(c.cluster().restart_daemon("server1").ok());
  // Striped 1 MiB wide over both servers, and one on server 1 alone: each
  // piece for server 1 is refused there and spilled to server 0.
  std::string data(12 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  const fs::path wide = c.mnt() / "wide";
  CHECK(write_small(wide, data));
  const fs::path only = c.mnt() / "only";
  REQUIRE(fs::create_directory(only));
  const std::string policy = "stripe_size=0 stripe_count=1 servers=1";
  REQUIRE(::setxattr(only.c_str(), "user.pvfs.layout", policy.data(), policy.size(), 0) == 0);
  CHECK(write_small(only / "one", data));
  CHECK(contains(servers_of(wide), 1));
  CHECK(servers_of(only / "one") == std::vector<uint32_t>{1});

  std::string stats(4096, '\0');
  const ssize_t n = ::getxattr(c.mnt().c_str(), "user.pvfs.client_stats", stats.data(), stats.size());
  REQUIRE(n > 0);
  stats.resize(static_cast<size_t>(n));
  CAPTURE(stats);
  CHECK(stats.find("pieces_spilled 0\n") == std::string::npos);
  for (const fs::path& file : {wide, only / "one"}) {
    CAPTURE(file);
    const bool same = pvfs::test::read_text(file) == data;
    CHECK(same);
  }
  CHECK(metric(c, "server1", "pvfs_server_refused_no_room_total") > 0);
  CHECK(metric(c, "server1", "pvfs_server_redirects_total") > 0);
  // The bytes stay readable when server 1 has room again (they go home later).
  small.empty();
  const bool still = pvfs::test::read_text(only / "one") == data;
  CHECK(still);
}

}  // namespace pvfs::test::space_test
