// IOR-style access patterns on a real pvfs mount: several processes (fork)
// write disjoint regions of one shared file — contiguous blocks, interleaved
// segments, O_DIRECT with aligned buffers, unaligned transfers — or one file
// each; then every byte is checked from a fresh open. Each transfer carries
// a pattern that depends on its writer and its offset, so a lost, misplaced
// or mixed-up transfer shows as the first wrong offset.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;

constexpr int kProcs = 4;
constexpr size_t kTransfer = size_t{1} << 20;  // IOR's usual transfer size
constexpr int kTransfersPerProc = 8;

TestCluster* cluster() { return shared_cluster(); }

// A buffer aligned for O_DIRECT (and for fast copies, see docs/machines.md).
struct AlignedBuffer {
  explicit AlignedBuffer(size_t size) : size(size) {
    void* p = nullptr;
    if (::posix_memalign(&p, 4096, size == 0 ? 4096 : size) != 0) std::abort();
    data.reset(static_cast<char*>(p));
  }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
  size_t size;
};

// Where rank `rank`'s transfer number `i` goes in the shared file.
using Placement = std::function<uint64_t(int rank, int i, size_t transfer)>;

uint64_t contiguous(int rank, int i, size_t transfer) {
  return (static_cast<uint64_t>(rank) * kTransfersPerProc + static_cast<uint64_t>(i)) * transfer;
}
uint64_t interleaved(int rank, int i, size_t transfer) {
  return (static_cast<uint64_t>(i) * kProcs + static_cast<uint64_t>(rank)) * transfer;
}

// Writes rank's transfers (in the child). Returns 0 or a code naming the failure.
int write_rank(const std::string& path, int rank, const Placement& place, size_t transfer, int flags) {
  int fd = ::open(path.c_str(), O_WRONLY | flags);
  if (fd < 0) return 10;
  AlignedBuffer buf(transfer);
  for (int i = 0; i < kTransfersPerProc; ++i) {
    const uint64_t at = place(rank, i, transfer);
    const std::string bytes = pattern(transfer, static_cast<uint64_t>(rank) + 1, at);
    std::memcpy(buf.data.get(), bytes.data(), transfer);
    if (::pwrite(fd, buf.data.get(), transfer, static_cast<off_t>(at)) != static_cast<ssize_t>(transfer)) {
      ::close(fd);
      return 20;
    }
  }
  return ::close(fd) == 0 ? 0 : 30;
}

// Reads the shared file back from a fresh open and checks every transfer;
// returns "" or the first problem.
std::string verify(const std::string& path, const Placement& place, size_t transfer, int flags) {
  const uint64_t expected_size = static_cast<uint64_t>(kProcs) * kTransfersPerProc * transfer;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "stat: " + errno_name(errno);
  if (static_cast<uint64_t>(st.st_size) != expected_size)
    return "size " + std::to_string(st.st_size) + ", expected " + std::to_string(expected_size);
  int fd = ::open(path.c_str(), O_RDONLY | flags);
  if (fd < 0) return "open: " + errno_name(errno);
  AlignedBuffer buf(transfer);
  std::string problem;
  for (int rank = 0; rank < kProcs && problem.empty(); ++rank)
    for (int i = 0; i < kTransfersPerProc && problem.empty(); ++i) {
      const uint64_t at = place(rank, i, transfer);
      const ssize_t n = ::pread(fd, buf.data.get(), transfer, static_cast<off_t>(at));
      if (n != static_cast<ssize_t>(transfer)) {
        problem = "short read at " + std::to_string(at) + ": " + std::to_string(n);
        break;
      }
      const std::string want = pattern(transfer, static_cast<uint64_t>(rank) + 1, at);
      const std::string diff = difference(want, std::string(buf.data.get(), transfer));
      if (!diff.empty())
        problem = "rank " + std::to_string(rank) + " transfer " + std::to_string(i) + " at offset " +
                  std::to_string(at) + ": " + diff;
    }
  ::close(fd);
  return problem;
}

// Creates the shared file, lets kProcs children write it, verifies.
void shared_file_case(const std::string& path, const Placement& place, size_t transfer,
                      int write_flags, int read_flags) {
  write_file(path, "");
  const std::vector<int> statuses = run_children(kProcs, [&](int rank) {
    return write_rank(path, rank, place, transfer, write_flags);
  });
  CHECK(statuses == std::vector<int>(kProcs, 0));
  const std::string problem = verify(path, place, transfer, read_flags);
  CHECK_MESSAGE(problem.empty(), problem);
}

}  // namespace

TEST_CASE("several processes writing contiguous blocks of one shared file leave every byte right") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "ior-contiguous");
  shared_file_case(s.pvfs() + "/shared", contiguous, kTransfer, 0, 0);
}

TEST_CASE("several processes writing interleaved segments of one shared file leave every byte right") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "ior-interleaved");
  shared_file_case(s.pvfs() + "/shared", interleaved, kTransfer, 0, 0);
  // Another client, with nothing cached, reads the same bytes from the servers.
  SecondMount other(*c);
  const std::string problem = verify(other.view(s.pvfs() + "/shared"), interleaved, kTransfer, 0);
  CHECK_MESSAGE(problem.empty(), problem);
}

TEST_CASE("interleaved O_DIRECT writes with aligned buffers read back with O_DIRECT") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "ior-odirect");
  shared_file_case(s.pvfs() + "/shared", interleaved, kTransfer, O_DIRECT, O_DIRECT);
  // And through the page cache from a fresh open.
  const std::string problem = verify(s.pvfs() + "/shared", interleaved, kTransfer, 0);
  CHECK_MESSAGE(problem.empty(), problem);
}

TEST_CASE("interleaved transfers that are not page aligned do not clobber their neighbours") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "ior-unaligned");
  // Neighbouring transfers share pages and stripes.
  shared_file_case(s.pvfs() + "/shared", interleaved, 100003, 0, 0);
}

TEST_CASE("file per process: each process's file holds exactly what it wrote") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "ior-fpp");
  auto file_of = [&](int rank) { return s.pvfs() + "/rank-" + std::to_string(rank); };
  auto own = [](int, int i, size_t transfer) { return static_cast<uint64_t>(i) * transfer; };
  const std::vector<int> statuses = run_children(kProcs, [&](int rank) {
    int fd = ::open(file_of(rank).c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return 1;
    ::close(fd);
    return write_rank(file_of(rank), rank, own, kTransfer, 0);
  });
  CHECK(statuses == std::vector<int>(kProcs, 0));
  for (int rank = 0; rank < kProcs; ++rank) {
    CAPTURE(rank);
    const std::string data = read_file(file_of(rank));
    std::string want;
    for (int i = 0; i < kTransfersPerProc; ++i)
      want += pattern(kTransfer, static_cast<uint64_t>(rank) + 1, static_cast<uint64_t>(i) * kTransfer);
    CHECK_MESSAGE(difference(want, data).empty(), difference(want, data));
  }
}

TEST_CASE("on a mount with -o direct_io interleaved writers leave every byte right") {
  if (!fuse_or_skip()) return;
  TestCluster direct(pvfs::ClusterOptions{}, /*mount=*/true, "direct_io");
  Scratch s(direct, "ior-direct-io");
  shared_file_case(s.pvfs() + "/shared", interleaved, kTransfer, 0, 0);
  // Unaligned transfers go to the servers exactly as the program made them.
  shared_file_case(s.pvfs() + "/odd", interleaved, 100003, 0, 0);
}
