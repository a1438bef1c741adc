// pvfs-bench end to end: the real binary (path in $PVFS_BENCH, set by meson)
// on a plain temporary directory and on a real FUSE mount of a real local
// cluster (one per test). The data pattern is recomputed here from its
// definition in pvfs-bench(1), not taken from the tool's own code.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"

namespace pvfs_bench_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::TempDir;
using pvfs::test::TestCluster;

using pvfs::test::Outcome;
using pvfs::test::slurp;

// Runs `pvfs-bench ARGS`, capturing stdout and stderr in `scratch`.
Outcome bench(const fs::path& scratch, const std::vector<std::string>& args) {
  return pvfs::test::run_tool("PVFS_BENCH", scratch, args);
}

// The text of the JSON object under `"key":{` (up to its closing brace;
// the phase objects hold no nested objects), or "" when absent.
std::string json_object(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\":{");
  if (at == std::string::npos) return {};
  auto end = json.find('}', at);
  return json.substr(at, end - at + 1);
}

// The number after `"key":` in `json`, or -1 when absent.
double json_number(const std::string& json, const std::string& key) {
  auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

// The numbers of the array under `"key":[`.
std::vector<double> json_numbers(const std::string& json, const std::string& key) {
  std::vector<double> out;
  auto at = json.find("\"" + key + "\":[");
  if (at == std::string::npos) return out;
  const char* p = json.c_str() + at + key.size() + 4;
  while (*p && *p != ']') {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

// The pattern of pvfs-bench(1): byte (offset % 8) of the little-endian word
// (rank << 48) | (offset rounded down to 8).
uint8_t expected_byte(uint64_t rank, uint64_t offset) {
  uint64_t word = (rank << 48) | (offset & ~uint64_t{7});
  return static_cast<uint8_t>(word >> (8 * (offset % 8)));
}

// The offset of the first byte of `data` (file offsets from `base`) that is
// not `rank`'s pattern, or -1.
int64_t first_wrong_byte(const std::string& data, uint64_t rank, uint64_t base) {
  for (size_t i = 0; i < data.size(); ++i)
    if (static_cast<uint8_t>(data[i]) != expected_byte(rank, base + i)) return static_cast<int64_t>(base + i);
  return -1;
}

using pvfs::test::skip_without_fuse;

}  // namespace

TEST_CASE("on a plain directory a shared-file write and verified read pass and leave nothing") {
  TempDir tmp("pvfs-bench");
  fs::create_directory(tmp.path() / "data");
  auto run = bench(tmp.path(), {"-N", "3", "-t", "4k", "-b", "64K", "--verify", "--json", "-o",
                                (tmp.path() / "data" / "shared").string()});
  CAPTURE(run);
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  CHECK(run.out.find('\n') == run.out.size() - 1);
  for (const char* phase : {"write", "read"}) {
    CAPTURE(phase);
    std::string p = json_object(run.out, phase);
    CHECK(json_number(p, "bytes") == 3 * 65536);
    CHECK(json_numbers(p, "per_process_s").size() == 3);
    CHECK(json_numbers(p, "cdf_s").size() == 10);
    CHECK(json_number(p, "aggregate_mib_s") > 0);
  }
  CHECK(json_number(run.out, "verify_errors") == 0);
  CHECK(json_number(run.out, "verified_bytes") == 3 * 65536);
  CHECK(run.out.find("\"ok\":true") != std::string::npos);
  CHECK(fs::is_empty(tmp.path() / "data"));
}

TEST_CASE("with --segments the ranks' blocks of a shared file alternate, as IOR lays them out") {
  TempDir tmp("pvfs-bench");
  const fs::path file = tmp.path() / "shared";
  constexpr uint64_t kBlock = 8 << 10;
  auto run = bench(tmp.path(), {"-N", "3", "-t", "4k", "-b", "8k", "--segments", "4", "-w", "--keep", "--json",
                                "-o", file.string()});
  CAPTURE(run);
  REQUIRE(run.status == 0);
  CHECK(json_number(run.out, "segments") == 4);
  CHECK(json_number(json_object(run.out, "write"), "bytes") == 3 * 4 * kBlock);
  std::string data = slurp(file);
  REQUIRE(data.size() == 3 * 4 * kBlock);
  for (uint64_t segment = 0; segment < 4; ++segment) {
    for (uint64_t rank = 0; rank < 3; ++rank) {
      CAPTURE(segment);
      CAPTURE(rank);
      const uint64_t at = (segment * 3 + rank) * kBlock;
      CHECK(first_wrong_byte(data.substr(at, kBlock), rank, at) == -1);
    }
  }
  auto check = bench(tmp.path(), {"-N", "3", "-t", "4k", "-b", "8k", "--segments", "4", "-r", "--verify",
                                  "--json", "-o", file.string()});
  CAPTURE(check);
  CHECK(check.status == 0);
  CHECK(json_number(check.out, "verified_bytes") == 3 * 4 * kBlock);
  CHECK(json_number(check.out, "verify_errors") == 0);
}

TEST_CASE("bad options give one line on stderr and exit 2") {
  TempDir tmp("pvfs-bench");
  const std::string out = (tmp.path() / "f").string();
  const std::vector<std::vector<std::string>> cases = {
      {"-t", "3k", "-b", "16k", "-o", out},   // -t does not divide -b
      {"-t", "1x", "-o", out},                // not a size
      {"-b", "0", "-o", out},
      {"-N", "0", "-o", out},
      {"-N", "4"},                            // no -o
      {"--bogus", "-o", out},
      {"-w", "--verify", "-o", out},          // nothing to verify
      {"--segments", "0", "-o", out},
  };
  for (const auto& args : cases) {
    auto run = bench(tmp.path(), args);
    CAPTURE(args.front());
    CAPTURE(run);
    CHECK(run.status == 2);
    CHECK(run.out.empty());
    CHECK(run.err.rfind("pvfs-bench: ", 0) == 0);
    CHECK(run.err.find('\n') == run.err.size() - 1);
  }
  CHECK(bench(tmp.path(), {"-t", "3k", "-b", "16k", "-o", out}).err ==
        "pvfs-bench: -t 3 KiB does not divide -b 16 KiB (see pvfs-bench --help)\n");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("four processes with a file each on a pvfs mount report four times and verify clean") {
  if (skip_without_fuse()) return;
  TestCluster cluster({}, true);
  const fs::path dir = cluster.mnt() / "bench";
  fs::create_directory(dir);
  auto run = bench(cluster.dir(), {"-N", "4", "-F", "-w", "-r", "--verify", "--json", "-t", "64k", "-b", "1m",
                                   "-o", (dir / "f").string()});
  CAPTURE(run);
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  for (const char* phase : {"write", "read"}) {
    CAPTURE(phase);
    std::string p = json_object(run.out, phase);
    auto times = json_numbers(p, "per_process_s");
    CHECK(times.size() == 4);
    for (double t : times) CHECK(t > 0);
    CHECK(json_number(p, "slowest_s") > 0);
    CHECK(json_number(p, "aggregate_mib_s") > 0);
    CHECK(json_number(p, "bytes") == 4 << 20);
  }
  CHECK(json_number(run.out, "verify_errors") == 0);
  CHECK(json_number(run.out, "verified_bytes") == 4 << 20);
  CHECK(fs::is_empty(dir));
}

TEST_CASE("a shared file kept on a pvfs mount holds exactly N blocks of the pattern") {
  if (skip_without_fuse()) return;
  TestCluster cluster({}, true);
  const fs::path file = cluster.mnt() / "shared";
  constexpr uint64_t kBlock = 256 << 10;
  auto run = bench(cluster.dir(), {"-N", "4", "-t", "32k", "-b", "256k", "-w", "--keep", "-o", file.string()});
  CAPTURE(run);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("write") != std::string::npos);
  CHECK(run.out.find("CDF") != std::string::npos);
  REQUIRE(fs::file_size(file) == 4 * kBlock);
  std::string data = slurp(file);
  REQUIRE(data.size() == 4 * kBlock);
  for (uint64_t rank = 0; rank < 4; ++rank) {
    CAPTURE(rank);
    CHECK(first_wrong_byte(data.substr(rank * kBlock, kBlock), rank, rank * kBlock) == -1);
  }
}

TEST_CASE("bytes overwritten between a kept write and a verified read fail the read, naming the offset") {
  if (skip_without_fuse()) return;
  TestCluster cluster({}, true);
  const fs::path prefix = cluster.mnt() / "f";
  auto write = bench(cluster.dir(), {"-N", "4", "-F", "-t", "16k", "-b", "128k", "-w", "--keep", "-o",
                                     prefix.string()});
  CAPTURE(write);
  REQUIRE(write.status == 0);
  const fs::path victim = cluster.mnt() / "f.00000002";
  REQUIRE(fs::file_size(victim) == 128 << 10);
  constexpr uint64_t kAt = 70001;
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(kAt);
    for (uint64_t i = 0; i < 3; ++i) f.put(static_cast<char>(~expected_byte(2, kAt + i)));
  }
  auto read = bench(cluster.dir(), {"-N", "4", "-F", "-t", "16k", "-b", "128k", "-r", "--verify", "-o",
                                    prefix.string()});
  CAPTURE(read);
  CHECK(read.status == 1);
  CHECK(read.out.find("verify: 3 of 524288 bytes differ") != std::string::npos);
  CHECK(read.err.find("rank 2: " + victim.string() + ": verify: 3 bytes differ, first at offset 70001") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(victim));  // no --keep: removed even when verify fails
}

TEST_CASE("a write larger than the free space is refused in one line with exit 2, before any file") {
  TempDir tmp("pvfs-bench");
  const std::string out = (tmp.path() / "f").string();
  auto run = bench(tmp.path(), {"-b", "100t", "-t", "1m", "-o", out});
  CAPTURE(run);
  CHECK(run.status == 2);
  CHECK(run.out.empty());
  CHECK(run.err.rfind("pvfs-bench: -N 1 x -b 100 TiB needs 102400.0 GiB, but ", 0) == 0);
  CHECK(run.err.find(" GiB free\n") == run.err.size() - 10);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("SIGINT stops every rank and removes the files written") {
  TempDir tmp("pvfs-bench");
  const fs::path dir = tmp.path() / "data";
  fs::create_directory(dir);
  // O_DSYNC 4 KiB writes of 1 GiB per rank: far from done when interrupted.
  const std::string bin = pvfs::test::tool_path("PVFS_BENCH");
  const std::string prefix = (dir / "f").string();
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    const int err = ::open((tmp.path() / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, 2);
    ::execl(bin.c_str(), bin.c_str(), "-N", "3", "-F", "-w", "--osync", "-t", "4k", "-b", "1g", "-o", prefix.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Until every rank has started writing its file.
  for (int i = 0; i < 200; ++i) {
    size_t written = 0;
    for (int r = 0; r < 3; ++r) {
      std::error_code ec;
      const auto size = fs::file_size(prefix + "." + std::string(7, '0') + std::to_string(r), ec);
      if (!ec && size > 0) ++written;
    }
    if (written == 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<pid_t> ranks;
  {
    std::ifstream children("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) + "/children");
    pid_t pid;
    while (children >> pid) ranks.push_back(pid);
  }
  CHECK(ranks.size() == 3);
  REQUIRE(::kill(parent, SIGINT) == 0);
  int status = 0;
  REQUIRE(::waitpid(parent, &status, 0) == parent);
  const std::string err = slurp(tmp.path() / "err");
  CAPTURE(err);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(err == "pvfs-bench: stopped by SIGINT; every rank ended, the files written removed\n");
  for (pid_t rank : ranks) CHECK((::kill(rank, 0) == -1 && errno == ESRCH));
  CHECK(fs::is_empty(dir));
}

TEST_CASE("the metadata mode creates, stats, reads and removes every file in a tree on a pvfs mount") {
  if (skip_without_fuse()) return;
  TestCluster cluster({}, true);
  const fs::path dir = cluster.mnt() / "md";
  fs::create_directory(dir);
  auto run = bench(cluster.dir(), {"--mode", "md", "-N", "2", "-n", "60", "--depth", "2", "--fanout", "2", "-s", "100",
                                   "--json", "-o", dir.string()});
  CAPTURE(run);
  REQUIRE(run.status == 0);
  CHECK(run.err.empty());
  for (const char* phase : {"create", "stat", "read", "remove"}) {
    CAPTURE(phase);
    const std::string p = json_object(run.out, phase);
    CHECK(json_number(p, "ops") == 120);
    CHECK(json_number(p, "ops_per_s") > 0);
    CHECK(json_number(p, "failed_ranks") == 0);
  }
  CHECK(run.out.find("\"ok\":true") != std::string::npos);
  CHECK(fs::is_empty(dir));

  // One shared directory, kept: every rank's files are there, in it.
  run = bench(cluster.dir(), {"--mode", "md", "-N", "3", "-n", "20", "--shared-dir", "-k", "-o", dir.string()});
  CAPTURE(run);
  REQUIRE(run.status == 0);
  CHECK(run.out.find("pvfs-bench md: 3 process(es) x 20 files in one shared directory") == 0);
  CHECK(run.out.find("\ncreate           60 ") != std::string::npos);
  size_t tops = 0, files = 0;
  for (const auto& top : fs::directory_iterator(dir)) {
    ++tops;
    for (const auto& f : fs::directory_iterator(top.path() / "shared")) files += f.is_regular_file();
  }
  CHECK(tops == 1);
  CHECK(files == 0);  // the remove phase ran; -k keeps the directories
}

}  // namespace pvfs_bench_test
