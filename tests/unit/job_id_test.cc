// Unit tests of fs/job_id: the choice of job id from an environment block,
// parsing the start time out of /proc/<pid>/stat and a thread's process and
// groups out of /proc/<tid>/status, and the cache against a
// fake /proc tree in a mkdtemp directory (recycled pids, the size bound).
#include "fs/job_id.h"

#include <doctest/doctest.h>

#include "tests/support/temp_dir.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace pvfs {
namespace {

using namespace std::string_literals;

using pvfs::test::TempDir;

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

std::string stat_line(uint32_t pid, const std::string& comm, uint64_t start) {
  std::string line = std::to_string(pid) + " (" + comm + ") S";
  for (int field = 4; field <= 21; ++field) line += " " + std::to_string(field);
  return line + " " + std::to_string(start) + " 23 24\n";
}

// One fake process under `root`.
void make_process(const std::filesystem::path& root, uint32_t pid, const std::string& comm,
                  uint64_t start, const std::string& environ_block) {
  const auto dir = root / std::to_string(pid);
  write_file(dir / "stat", stat_line(pid, comm, start));
  write_file(dir / "comm", comm + "\n");
  write_file(dir / "environ", environ_block);
}

TEST_CASE("PVFS_JOBID wins over SLURM_JOB_ID and the configured variable") {
  std::string env = "HOME=/root\0SLURM_JOB_ID=42\0MYJOB=m\0PVFS_JOBID=run7\0"s;
  CHECK(pick_job_id(env, "ior\n", 1000, "MYJOB") == "run7");
}

TEST_CASE("SLURM_JOB_ID is used when PVFS_JOBID is unset or empty") {
  CHECK(pick_job_id("SLURM_JOB_ID=42\0MYJOB=m\0"s, "ior", 1000, "MYJOB") == "42");
  CHECK(pick_job_id("PVFS_JOBID=\0SLURM_JOB_ID=42\0"s, "ior", 1000, "") == "42");
}

TEST_CASE("PVFS_IOSTEP_BYTES declares a step size in bytes with an optional binary suffix") {
  CHECK(pick_iostep_bytes("A=1\0PVFS_IOSTEP_BYTES=4096\0"s) == 4096);
  CHECK(pick_iostep_bytes("PVFS_IOSTEP_BYTES=64m\0"s) == uint64_t{64} << 20);
  CHECK(pick_iostep_bytes("PVFS_IOSTEP_BYTES=2G\0"s) == uint64_t{2} << 30);
  CHECK(pick_iostep_bytes("PVFS_IOSTEP_BYTES=1t\0"s) == uint64_t{1} << 40);
  CHECK(pick_iostep_bytes("HOME=/\0"s) == std::nullopt);
  for (const char* bad : {"", "0", "m", "12x", "-5", "1.5g", "99999999999999999999", "20000000t"})
    CHECK_MESSAGE(pick_iostep_bytes("PVFS_IOSTEP_BYTES="s + bad + "\0"s) == std::nullopt, bad);
}

TEST_CASE("PVFS_QOS_RUNTIME asks for an execution time, as pvfs-ctl qos set --runtime reads one") {
  CHECK(pick_qos_runtime("A=1\0PVFS_QOS_RUNTIME=10m\0"s) == 600000);
  CHECK(pick_qos_runtime("PVFS_QOS_RUNTIME=1h30m\0"s) == 5400000);
  CHECK(pick_qos_runtime("PVFS_QOS_RUNTIME=90\0"s) == 90000);
  CHECK(pick_qos_runtime("HOME=/\0"s) == std::nullopt);
  for (const char* bad : {"", "0", "soon", "-5m", "1.5h"})
    CHECK_MESSAGE(pick_qos_runtime("PVFS_QOS_RUNTIME="s + bad + "\0"s) == std::nullopt, bad);
  TempDir dir("qosinfo");
  make_process(dir.path(), 301, "ior", 5, "PVFS_JOBID=q1\0PVFS_QOS_RUNTIME=5m\0"s);
  JobIdCache cache("", 16, dir.path());
  CHECK(cache.job_info(301, 1000).qos_runtime_ms == 300000);
}

TEST_CASE("the cache reports a process's declared step size with its job id") {
  TempDir dir("jobinfo");
  make_process(dir.path(), 300, "ckpt", 5, "PVFS_JOBID=j9\0PVFS_IOSTEP_BYTES=8k\0"s);
  JobIdCache cache("", 16, dir.path());
  const JobInfo info = cache.job_info(300, 1000);
  CHECK(info.id == "j9");
  CHECK(info.iostep_bytes == 8192);
  CHECK(cache.job_info(300, 1000).iostep_bytes == 8192);  // from the cache
}

TEST_CASE("the configured variable is the third choice") {
  CHECK(pick_job_id("PBS_JOBID=7.server\0"s, "ior", 1000, "PBS_JOBID") == "7.server");
  CHECK(pick_job_id("PBS_JOBID=7.server\0"s, "ior", 1000, "") == "ior.1000");
}

TEST_CASE("without job variables the id is procname.uid") {
  CHECK(pick_job_id("PATH=/bin\0"s, "dd\n", 1234, "JOB") == "dd.1234");
  CHECK(pick_job_id("", "", 0, "") == "unknown.0");
}

TEST_CASE("a variable is matched by its whole name") {
  std::string env = "PVFS_JOBID_OLD=x\0XPVFS_JOBID=y\0PVFS_JOBID\0"s;
  CHECK(pick_job_id(env, "cp", 5, "") == "cp.5");
}

TEST_CASE("an environment block without a final NUL is read to its end") {
  CHECK(pick_job_id("A=1\0PVFS_JOBID=last"s, "cp", 5, "") == "last");
}

TEST_CASE("job ids are cut to kMaxJobIdBytes and control characters replaced") {
  std::string long_id(200, 'j');
  CHECK(pick_job_id("PVFS_JOBID=" + long_id + "\0"s, "x", 1, "").size() == kMaxJobIdBytes);
  CHECK(pick_job_id("PVFS_JOBID=a\tb\x1b" "c\0"s, "x", 1, "") == "a_b_c");
}

TEST_CASE("the start time is field 22 even with spaces and parentheses in comm") {
  CHECK(parse_start_time(stat_line(7, "bash", 987654)) == 987654u);
  CHECK(parse_start_time(stat_line(7, "a b) (c", 55)) == 55u);
  CHECK(parse_start_time(stat_line(7, ")", 9)) == 9u);
}

TEST_CASE("a malformed stat line has no start time") {
  CHECK_FALSE(parse_start_time(""));
  CHECK_FALSE(parse_start_time("7 bash S 1 2 3"));
  CHECK_FALSE(parse_start_time("7 (bash) S 1 2"));
  std::string bad = stat_line(7, "bash", 1);
  bad.replace(bad.rfind(" 1 23"), 2, " x");
  CHECK_FALSE(parse_start_time(bad));
}

TEST_CASE("the cache reads a process once and rereads a recycled pid") {
  TempDir proc;
  make_process(proc.path(), 100, "ior", 5000, "SLURM_JOB_ID=1\0"s);
  JobIdCache cache("", 16, proc.path());
  CHECK(cache.job_id(100, 1000) == "1");

  // Same process, environment changed on disk: the cached answer stands.
  write_file(proc.path() / "100" / "environ", "SLURM_JOB_ID=2\0"s);
  CHECK(cache.job_id(100, 1000) == "1");

  // The pid now belongs to a new process (another start time).
  make_process(proc.path(), 100, "dd", 6000, "SLURM_JOB_ID=3\0"s);
  CHECK(cache.job_id(100, 1000) == "3");
  CHECK(cache.size() == 1);
}

TEST_CASE("pid 0 has no job and a vanished process gets procname.uid uncached") {
  TempDir proc;
  JobIdCache cache("", 16, proc.path());
  CHECK(cache.job_id(0, 0) == "");
  CHECK(cache.job_id(4242, 7) == "unknown.7");
  CHECK(cache.size() == 0);
}

TEST_CASE("an unreadable environment falls back to procname.uid") {
  TempDir proc;
  make_process(proc.path(), 300, "secretive", 1, "");
  std::filesystem::remove(proc.path() / "300" / "environ");
  JobIdCache cache("", 16, proc.path());
  CHECK(cache.job_id(300, 55) == "secretive.55");
}

TEST_CASE("the cache holds at most max_entries processes, dropping the oldest") {
  TempDir proc;
  for (uint32_t pid = 1; pid <= 10; ++pid)
    make_process(proc.path(), pid, "p", pid, "PVFS_JOBID=job" + std::to_string(pid) + "\0"s);
  JobIdCache cache("", 4, proc.path());
  for (uint32_t pid = 1; pid <= 10; ++pid)
    CHECK(cache.job_id(pid, 0) == "job" + std::to_string(pid));
  CHECK(cache.size() == 4);

  // pid 1 was evicted: a changed environment is read afresh. pid 10 was not.
  write_file(proc.path() / "1" / "environ", "PVFS_JOBID=new1\0"s);
  write_file(proc.path() / "10" / "environ", "PVFS_JOBID=new10\0"s);
  CHECK(cache.job_id(1, 0) == "new1");
  CHECK(cache.job_id(10, 0) == "job10");
  CHECK(cache.size() == 4);
}

}  // namespace
}  // namespace pvfs

TEST_CASE("a thread's status gives its process and its supplementary groups") {
  auto st = pvfs::parse_thread_status(
      "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4250\n"
      "Uid:\t1000\t1000\t1000\t1000\nGroups:\t4 24 27 1000 \nNSpid:\t4250\n");
  REQUIRE(st.has_value());
  CHECK(st->tgid == 4242);
  CHECK(st->groups == std::vector<uint32_t>{4, 24, 27, 1000});
}

TEST_CASE("a thread without supplementary groups has none, and a status without Tgid is refused") {
  auto st = pvfs::parse_thread_status("Tgid:\t7\nGroups:\t\n");
  REQUIRE(st.has_value());
  CHECK(st->tgid == 7);
  CHECK(st->groups.empty());
  CHECK_FALSE(pvfs::parse_thread_status("Name:\tx\nGroups:\t1 2\n").has_value());
  CHECK_FALSE(pvfs::parse_thread_status("Tgid:\tabc\n").has_value());
  CHECK_FALSE(pvfs::parse_thread_status("").has_value());
}

TEST_CASE("this thread's status names this process and its groups") {
  auto st = pvfs::read_thread_status("/proc", static_cast<uint32_t>(::gettid()));
  REQUIRE(st.has_value());
  CHECK(st->tgid == static_cast<uint32_t>(::getpid()));
  std::vector<gid_t> mine(static_cast<size_t>(::getgroups(0, nullptr)));
  if (!mine.empty()) ::getgroups(static_cast<int>(mine.size()), mine.data());
  CHECK(st->groups == std::vector<uint32_t>(mine.begin(), mine.end()));
}
