// Directory leases through a real mount (pvfsmount(8), CONSISTENCY;
// mds/dir_lease_table.h, fs/dir_lease_cache.h). A mount that looked up
// names that are not there takes a lease on the directory's names and answers
// the kernel's next lookups of absent names itself: the lookup before each
// create no longer reaches the MDS. Another client's new name is never
// hidden by it: the MDS recalls the lease before it answers that client,
// and waits the lease out when the holder does not answer (paused here).
// The daemons and pvfsmount are the real binaries; pvfs-ctl comes from
// $PVFS_CTL.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "fs/client.h"
#include "tests/integration/session.h"
#include "tests/support/run_tool.h"

namespace pvfs::test::dir_leases_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

double mds_metric(TestCluster& c, const std::string& name, const std::string& label = "") {
  return daemon_metric(c.dir(), c.cluster().config_path(), "mds0", name, label);
}

double mds_lookups(TestCluster& c) { return mds_metric(c, "pvfs_mds_requests_total", "type=\"lookup\""); }

// A directory made through the mount, and another client, with a
// connection of its own to the MDS, that has looked it up.
struct SharedDir {
  explicit SharedDir(TestCluster& c) : path(c.mnt() / "shared"), other(c.cluster().config()) {
    REQUIRE(fs::create_directory(path));
    auto found = other.lookup(kRootInode, "shared");
    REQUIRE(found.ok());
    attr = *found;
  }
  fs::path path;
  Session other;
  std::optional<Attr> attr;
};

bool present(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Looks up names `dir` lacks, through the mount, until the mount holds a
// lease on `dir` (it asks at a second miss; a recall holds it off for 1 s), and
// checks a further miss is answered without the MDS.
void take_lease(TestCluster& c, const fs::path& dir) {
  const double grants = mds_metric(c, "pvfs_mds_dir_lease_grants_total");
  int tries = 0;
  REQUIRE(eventually(
      [&] {
        CHECK_FALSE(present(dir / ("absent-" + std::to_string(tries++))));
        return mds_metric(c, "pvfs_mds_dir_lease_grants_total") > grants;
      },
      std::chrono::seconds(5)));
  const double lookups = mds_lookups(c);
  CHECK_FALSE(present(dir / "absent-again"));
  CHECK(mds_lookups(c) == lookups);
}

}  // namespace

TEST_CASE("creates in a directory the mount holds a lease on send the MDS no lookups") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  const fs::path dir = c.mnt() / "d";
  REQUIRE(fs::create_directory(dir));
  // Their lookups miss; at the second miss the mount asks for a lease.
  create_empty(dir / "first");
  create_empty(dir / "second");
  REQUIRE(eventually([&] { return mds_metric(c, "pvfs_mds_dir_lease_grants_total") >= 1; }));
  const double before = mds_lookups(c);
  const uint64_t by_lease_before = mount_counter(c.mnt(), "lookups_by_lease");
  constexpr int kFiles = 300;
  for (int i = 0; i < kFiles; ++i) create_empty(dir / ("f" + std::to_string(i)));
  const double lookups = mds_lookups(c) - before;
  // Every lookup was answered by the lease or the MDS; pvfs-ctl client says which.
  CHECK(mount_counter(c.mnt(), "lookups_by_lease") - by_lease_before + lookups >= kFiles);
  CHECK(mount_counter(c.mnt(), "dir_leases_taken") >= 1);
  const Outcome shown = run_tool("PVFS_CTL", c.dir(), {"client", c.mnt().string()});
  REQUIRE(shown.status == 0);
  const bool says = shown.out.find("lookups of absent names answered from them") != std::string::npos;
  CHECK_MESSAGE(says, shown.out);
  // One per create without the lease; a lease lasts 1 s, and each new one
  // costs the miss that asks for it.
  MESSAGE(lookups, " lookups reached the MDS for ", kFiles, " creates");
  CHECK(lookups < 30);
  int listed = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++listed;
  CHECK(listed == kFiles + 2);
  // Its own names are not hidden by its lease: each is found again.
  for (int i = 0; i < kFiles; i += 37) CHECK(present(dir / ("f" + std::to_string(i))));
  CHECK_FALSE(present(dir / "f300"));

  // Creating on for 2.5 s, more than two terms: the lease in use is
  // renewed, not listed again.
  int made = 0;
  auto create_for = [&](milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    while (std::chrono::steady_clock::now() < until) create_empty(dir / ("g" + std::to_string(made++)));
  };
  create_for(milliseconds(300));  // a lease again, if the checks above outlasted the last
  const double grants = mds_metric(c, "pvfs_mds_dir_lease_grants_total");
  const double renewals = mds_metric(c, "pvfs_mds_dir_lease_renewals_total");
  create_for(milliseconds(2500));
  CHECK(mds_metric(c, "pvfs_mds_dir_lease_grants_total") == grants);
  CHECK(mds_metric(c, "pvfs_mds_dir_lease_renewals_total") >= renewals + 2);
}

TEST_CASE("a name another client adds to a leased directory is seen at once: the lease is recalled first") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  SharedDir shared(c);
  const fs::path& dir = shared.path;
  Session& other = shared.other;
  const std::optional<Attr>& d = shared.attr;
  constexpr int kRounds = 3;
  for (int i = 0; i < kRounds; ++i) {
    take_lease(c, dir);
    const std::string name = "theirs" + std::to_string(i);
    auto made = other.create(d->ino, name);
    REQUIRE(other.release(std::move(made.second)).ok());
    // A lease not recalled would answer ENOENT here.
    CHECK_MESSAGE(present(dir / name), name);
    REQUIRE(other.run(other->mkdir(kRoot, d->ino, "dir" + std::to_string(i), 0755)).ok());
    CHECK(present(dir / ("dir" + std::to_string(i))));
    std::this_thread::sleep_for(milliseconds(1100));  // the mount may ask again
  }
  CHECK(mds_metric(c, "pvfs_mds_dir_lease_recalls_total") >= kRounds);
  CHECK(mds_metric(c, "pvfs_mds_dir_lease_recalls_waited_total") == 0);
}

TEST_CASE("a mount paused while it holds a lease delays another client's create by at most the lease") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  SharedDir shared(c);
  const fs::path& dir = shared.path;
  Session& other = shared.other;
  const std::optional<Attr>& d = shared.attr;
  take_lease(c, dir);
  const int mounter = pvfsmount_pid(fs::absolute(c.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGSTOP) == 0);
  const auto started = std::chrono::steady_clock::now();
  auto made = other.create(d->ino, "while-paused");
  const auto took = std::chrono::steady_clock::now() - started;
  REQUIRE(::kill(mounter, SIGCONT) == 0);
  REQUIRE(other.release(std::move(made.second)).ok());
  MESSAGE("the create took ", std::chrono::duration_cast<milliseconds>(took).count(),
          " ms with the lease's holder paused (dir_lease_ms 1000)");
  // Waited for the lease (1 s), not for a timeout, and not refused.
  CHECK(took < std::chrono::seconds(5));
  CHECK(mds_metric(c, "pvfs_mds_dir_lease_recalls_waited_total") >= 1);
  // The resumed mount's lease has ended: the name is there.
  CHECK(present(dir / "while-paused"));
}

}  // namespace pvfs::test::dir_leases_test
