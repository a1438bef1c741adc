// `meson install` as an administrator runs it, into a scratch DESTDIR: the
// systemd units start programs that the install really put where the units
// say (and pass `systemd-analyze verify` where that tool exists), and the
// installed fstab example's line mounts a real local cluster through
// mount(8) and mount.fuse3 with the installed pvfsmount. The mount runs in
// a private mount namespace (unshare), where the installed program is bound
// into /usr/local/sbin, the PATH mount.fuse3 searches; nothing of the host
// changes. Needs root and /dev/fuse for the mount (with CI=true, a failure).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace install_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::shell_quote;
using pvfs::test::slurp;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) FAIL(name, " is not set: run this test through `meson test`");
  return value;
}

// Runs `command` through the shell with output into `log`; its exit status.
int shell(const std::string& command, const fs::path& log) {
  const int raw =
      std::system((command + " >" + shell_quote(log.string()) + " 2>&1").c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

// `path` (absolute) inside the staging folder `dest`.
fs::path staged(const fs::path& dest, const std::string& path) { return dest / path.substr(1); }

// The value of `key=` in a unit file, or "".
std::string unit_value(const std::string& unit, const std::string& key) {
  std::istringstream in(unit);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

// The first line of `text` that is neither empty nor a comment.
std::string first_entry(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') return line;
  return "";
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

TEST_CASE("meson install puts units that start installed daemons and an fstab line that mounts") {
  const std::string build = env("PVFS_BUILD_ROOT"), prefix = env("PVFS_PREFIX"),
                    bindir = env("PVFS_BINDIR"), sbindir = env("PVFS_SBINDIR");
  pvfs::test::TempDir scratch("pvfs-install");
  const fs::path dest = scratch.path() / "dest", log = scratch.path() / "install.log";
  const int installed = shell("meson install -C " + shell_quote(build) +
                                  " --no-rebuild --quiet --destdir " + shell_quote(dest.string()),
                              log);
  INFO(slurp(log));
  REQUIRE(installed == 0);

  const fs::path unit_dir = staged(dest, prefix) / "lib/systemd/system";
  for (const std::string daemon : {"pvfs-mds", "pvfs-server"}) {
    const fs::path unit_file = unit_dir / (daemon + "@.service");
    CAPTURE(unit_file);
    REQUIRE(fs::exists(unit_file));
    const std::string unit = slurp(unit_file);
    const std::string exec = unit_value(unit, "ExecStart");
    const std::string program = exec.substr(0, exec.find(' '));
    CHECK(program == sbindir + "/" + daemon);
    CHECK(::access(staged(dest, program).c_str(), X_OK) == 0);
    CHECK(exec.find(" --config %f ") != std::string::npos);
    CHECK(exec.find("--id") == std::string::npos);  // each host finds its own entry
    CHECK(unit_value(unit, "After") == "network-online.target");
    CHECK(unit_value(unit, "Restart") == "on-failure");
    CHECK(unit_value(unit, "WantedBy") == "multi-user.target");

    // systemd's own check, on an instance whose program path points into
    // the staging folder (systemd-analyze insists the program exists).
    if (shell("command -v systemd-analyze", scratch.path() / "which.log") == 0) {
      const fs::path check_dir = scratch.path() / "verify";
      fs::create_directories(check_dir);
      const fs::path instance = check_dir / (daemon + "@etc-pvfs-pvfs.toml.service");
      std::ofstream(instance) << replace_all(unit, program + " ", staged(dest, program).string() + " ");
      const fs::path verify_log = scratch.path() / (daemon + ".verify");
      const int verified = shell("SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no " +
                                     shell_quote(instance.string()),
                                 verify_log);
      // It exits 0 even for directives it ignores, so its output must be empty too.
      const std::string complaints = slurp(verify_log);
      CAPTURE(complaints);
      CHECK(verified == 0);
      CHECK(complaints.empty());
    }
  }

  const fs::path example = staged(dest, prefix) / "share/doc/pvfs/fstab.example";
  REQUIRE(fs::exists(example));
  const std::string fstab_line = first_entry(slurp(example));
  CAPTURE(fstab_line);
  std::istringstream fields(fstab_line);
  std::string source, target, type;
  fields >> source >> target >> type;
  CHECK(type == "fuse.pvfsmount");
  REQUIRE(::access(staged(dest, bindir + "/pvfsmount").c_str(), X_OK) == 0);

  if (::geteuid() != 0 || !pvfs::test::fuse_available()) {
    if (pvfs::test::fuse_required()) FAIL("mounting needs root and /dev/fuse, and CI=true requires it");
    MESSAGE("skipped: the fstab mount needs root and /dev/fuse");
    return;
  }
  pvfs::ClusterOptions options;
  options.servers = 2;
  pvfs::test::TestCluster cluster(options);
  const fs::path mnt = scratch.path() / "mnt", bin = scratch.path() / "bin";
  fs::create_directories(mnt);
  fs::create_directories(bin);
  fs::create_symlink(staged(dest, bindir + "/pvfsmount"), bin / "pvfsmount");
  const fs::path fstab = scratch.path() / "fstab";
  std::ofstream(fstab) << replace_all(replace_all(fstab_line, source, cluster.cluster().config_path().string()),
                                      target, mnt.string())
                       << "\n";
  const std::string m = shell_quote(mnt.string());
  std::ofstream(scratch.path() / "mount.sh")
      << "set -e\n"
      << "mount --bind " << shell_quote(bin.string()) << " /usr/local/sbin\n"
      << "trap 'umount -l " << m << " 2>/dev/null || true' EXIT\n"
      << "mount -T " << shell_quote(fstab.string()) << " " << m << "\n"
      << "findmnt -n -o FSTYPE " << m << "\n"
      << "echo through-fstab > " << m << "/hello\n"
      << "cat " << m << "/hello\n"
      << "umount " << m << "\n";
  const fs::path mount_log = scratch.path() / "mount.log";
  const int mounted = shell("unshare --mount --propagation private sh " +
                                shell_quote((scratch.path() / "mount.sh").string()),
                            mount_log);
  const std::string out = slurp(mount_log);
  CAPTURE(out);
  CHECK(mounted == 0);
  CHECK(out == "fuse.pvfs\nthrough-fstab\n");
}

}  // namespace

}  // namespace install_test
