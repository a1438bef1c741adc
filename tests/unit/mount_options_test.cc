// Unit tests of fs/mount_options: defaults, every pvfs option, the generic
// mount(8) flags, the libfuse option list, and one-line errors naming the
// offending option. Pure: no files, no mounts.
#include "fs/mount_options.h"

#include <doctest/doctest.h>

namespace pvfs {
namespace {

MountOptions parse_ok(std::string_view list) {
  auto o = parse_mount_options(list);
  REQUIRE_MESSAGE(o.ok(), o.status().to_string());
  return *o;
}

std::string parse_error(std::string_view list) {
  auto o = parse_mount_options(list);
  REQUIRE_FALSE(o.ok());
  CHECK(o.code() == Errc::invalid_argument);
  return o.status().detail();
}

TEST_CASE("an empty list gives the documented defaults") {
  MountOptions o = parse_ok("");
  CHECK_FALSE(o.attr_timeout_s);
  CHECK_FALSE(o.entry_timeout_s);
  CHECK_FALSE(o.writeback_cache);
  CHECK_FALSE(o.direct_io);
  CHECK_FALSE(o.allow_other);
  CHECK(o.default_permissions);
  CHECK_FALSE(o.read_only);
  CHECK(o.jobid_var.empty());
  CHECK(o.secret_file.empty());
  CHECK(o.max_threads == 64);
  CHECK(o.max_background == 128);
  CHECK(o.fsname.empty());
  CHECK_FALSE(o.rpc_timeout_ms);
  CHECK(o.kernel_flags.empty());
  CHECK(o.dispatch == pvfs::sched::Policy::preassign);
}

TEST_CASE("locks= chooses cluster-wide or node-local file locks, cluster by default") {
  CHECK(parse_ok("").cluster_locks);
  CHECK_FALSE(parse_ok("locks=local").cluster_locks);
  CHECK(parse_ok("locks=local,locks=cluster").cluster_locks);
  CHECK_FALSE(pvfs::parse_mount_options("locks=remote").ok());
  CHECK_FALSE(pvfs::parse_mount_options("locks").ok());
}

TEST_CASE("write_behind= takes a size up to 1G, the config's when unset") {
  CHECK_FALSE(parse_ok("").write_behind);
  CHECK(parse_ok("write_behind=4M").write_behind == 4 * 1024 * 1024);
  CHECK(parse_ok("write_behind=0").write_behind == 0);
  CHECK(parse_ok("write_behind=512K").write_behind == 512 * 1024);
  CHECK(parse_ok("write_behind=16m").write_behind == 16 * 1024 * 1024);
  CHECK(parse_ok("write_behind=1G").write_behind == 1024 * 1024 * 1024);
  CHECK(parse_error("write_behind=2G").find("write_behind") != std::string::npos);
  CHECK(parse_error("write_behind=lots").find("write_behind") != std::string::npos);
  CHECK(parse_error("write_behind").find("write_behind") != std::string::npos);
}

TEST_CASE("dispatch= selects each write placement policy and rejects others") {
  CHECK(parse_ok("dispatch=fixed").dispatch == pvfs::sched::Policy::fixed);
  CHECK(parse_ok("dispatch=random").dispatch == pvfs::sched::Policy::random);
  CHECK(parse_ok("dispatch=two-choice").dispatch == pvfs::sched::Policy::two_choice);
  CHECK(parse_ok("dispatch=collab").dispatch == pvfs::sched::Policy::collab);
  CHECK(parse_ok("dispatch=preassign").dispatch == pvfs::sched::Policy::preassign);
  CHECK(parse_error("dispatch=smart").find("dispatch") != std::string::npos);
  CHECK(parse_error("dispatch").find("dispatch") != std::string::npos);
}

TEST_CASE("every pvfs option is read into its field") {
  MountOptions o = parse_ok(
      "attr_timeout=2.5,entry_timeout=0,writeback_cache,direct_io,allow_other,"
      "no_default_permissions,ro,jobid_var=PBS_JOBID,secret=/etc/pvfs/secret.key,"
      "max_threads=8,fsname=scratch,timeout=1500,log=/var/log/pvfsmount.log,security_label");
  CHECK(*o.attr_timeout_s == doctest::Approx(2.5));
  CHECK(o.security_label);
  CHECK_FALSE(parse_ok("security_label,no_security_label").security_label);
  CHECK_FALSE(parse_ok("").security_label);
  CHECK(*o.entry_timeout_s == 0.0);
  CHECK(o.writeback_cache);
  CHECK(o.direct_io);
  CHECK(o.allow_other);
  CHECK_FALSE(o.default_permissions);
  CHECK(o.read_only);
  CHECK(o.jobid_var == "PBS_JOBID");
  CHECK(o.secret_file == "/etc/pvfs/secret.key");
  CHECK(o.max_threads == 8);
  CHECK(o.fsname == "scratch");
  CHECK(*o.rpc_timeout_ms == 1500);
  CHECK(o.log_file == "/var/log/pvfsmount.log");
}

TEST_CASE("later options override earlier ones") {
  MountOptions o = parse_ok("ro,writeback_cache,rw,no_writeback_cache,max_threads=2,max_threads=3");
  CHECK_FALSE(o.read_only);
  CHECK_FALSE(o.writeback_cache);
  CHECK(o.max_threads == 3);
}

TEST_CASE("empty items between commas are skipped") {
  MountOptions o = parse_ok(",,ro,,");
  CHECK(o.read_only);
}

TEST_CASE("mount(8) flags are passed to the kernel mount or ignored") {
  MountOptions o = parse_ok(
      "rw,dev,nodev,suid,nosuid,exec,noexec,auto,noauto,user,nouser,users,_netdev,defaults,"
      "nofail,noatime,relatime,user=alice");
  CHECK(o.kernel_flags ==
        std::vector<std::string>{"dev", "nodev", "suid", "nosuid", "exec", "noexec", "noatime"});
  CHECK_FALSE(o.read_only);
}

TEST_CASE("fstab options meant for other programs are ignored") {
  MountOptions o = parse_ok("x-systemd.automount,x-systemd.requires=network.target,comment=x,ro");
  CHECK(o.kernel_flags.empty());
  CHECK(o.read_only);
}

TEST_CASE("the libfuse option list carries subtype, fsname and kernel flags") {
  MountOptions o = parse_ok("nosuid,nodev,allow_other");
  CHECK(o.fuse_option_list("pvfs:mds1:7000") ==
        "subtype=pvfs,fsname=pvfs:mds1:7000,rw,allow_other,default_permissions,nosuid,nodev");

  MountOptions named = parse_ok("ro,no_default_permissions,fsname=scratch");
  CHECK(named.fuse_option_list("pvfs:ignored:1") == "subtype=pvfs,fsname=scratch,ro");
}

TEST_CASE("commas and backslashes in fsname are escaped for libfuse") {
  MountOptions o;
  o.fsname = "a,b\\c";
  CHECK(o.fuse_option_list("x") == "subtype=pvfs,fsname=a\\,b\\\\c,rw,default_permissions");
}

TEST_CASE("an unknown option is an error naming it") {
  CHECK(parse_error("ro,bogus,rw") == "unknown mount option 'bogus'");
  CHECK(parse_error("defaults=1").find("defaults") != std::string::npos);
}

TEST_CASE("malformed values are errors naming the option") {
  CHECK(parse_error("attr_timeout=abc").find("attr_timeout") != std::string::npos);
  CHECK(parse_error("attr_timeout=-1").find("attr_timeout") != std::string::npos);
  CHECK(parse_error("entry_timeout=1s").find("entry_timeout") != std::string::npos);
  CHECK(parse_error("entry_timeout=nan").find("entry_timeout") != std::string::npos);
  CHECK(parse_error("max_threads=0").find("max_threads") != std::string::npos);
  CHECK(parse_error("max_threads=100001").find("max_threads") != std::string::npos);
  CHECK(parse_error("max_background=0").find("max_background") != std::string::npos);
  CHECK(parse_error("max_background=65536").find("max_background") != std::string::npos);
  CHECK(parse_ok("max_background=512").max_background == 512);
  CHECK(parse_error("timeout=0").find("timeout") != std::string::npos);
  CHECK(parse_error("jobid_var=1BAD").find("jobid_var") != std::string::npos);
  CHECK(parse_error("jobid_var=A=B").find("jobid_var") != std::string::npos);
}

TEST_CASE("a value on a flag or a missing value is an error") {
  CHECK(parse_error("ro=1") == "mount option 'ro' takes no value");
  CHECK(parse_error("nosuid=yes") == "mount option 'nosuid' takes no value");
  CHECK(parse_error("secret") == "mount option 'secret' needs a value (secret=FILE)");
  CHECK(parse_error("fsname=") == "mount option 'fsname' needs a value (fsname=NAME)");
  CHECK(parse_error("attr_timeout").find("attr_timeout=SECONDS") != std::string::npos);
}

}  // namespace
}  // namespace pvfs
