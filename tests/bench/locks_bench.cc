// Locks across client nodes, measured on two mounts of one cluster
// (tests/bench/locks sets them up): uncontended fcntl and flock lock/unlock
// round trips per second, and the ROMIO data-sieving pattern's locked
// read-modify-writes per second against the same pattern without locks.
// Prints one line per figure. Not part of the test suite.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int setlk(int fd, int cmd, short type, off_t start, off_t len) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return ::fcntl(fd, cmd, &fl);
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Lock/unlock pairs per second for `secs` seconds, one process, no contention.
double round_trips(const std::string& path, bool flock_lock, double secs) {
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) std::exit(1);
  long pairs = 0;
  const auto start = Clock::now();
  while (seconds_since(start) < secs) {
    if (flock_lock) {
      if (::flock(fd, LOCK_EX) != 0 || ::flock(fd, LOCK_UN) != 0) std::exit(1);
    } else if (setlk(fd, F_SETLKW, F_WRLCK, 0, 4096) != 0 || setlk(fd, F_SETLK, F_UNLCK, 0, 4096) != 0) {
      std::exit(1);
    }
    ++pairs;
  }
  const double rate = static_cast<double>(pairs) / seconds_since(start);
  ::close(fd);
  return rate;
}

// The ROMIO pattern: `procs` processes alternately on mounts a and b, each
// `rounds` read-modify-writes of a random 4 KiB window of a 1 MiB file,
// locked or not. Read-modify-writes per second over all processes.
double romio(const std::string& a, const std::string& b, int procs, int rounds, bool locked) {
  constexpr size_t kBytes = 1 << 20, kWindow = 4096;
  const auto start = Clock::now();
  std::vector<pid_t> kids;
  for (int p = 0; p < procs; ++p) {
    const pid_t pid = ::fork();
    if (pid < 0) std::exit(1);
    if (pid == 0) {
      int fd = ::open((p % 2 ? b : a).c_str(), O_RDWR);
      if (fd < 0) ::_exit(1);
      std::mt19937_64 rng(static_cast<uint64_t>(p) + 1);
      std::vector<char> buf(kWindow);
      for (int r = 0; r < rounds; ++r) {
        const off_t at = static_cast<off_t>(rng() % (kBytes - kWindow));
        if (locked && setlk(fd, F_SETLKW, F_WRLCK, at, kWindow) != 0) ::_exit(2);
        if (::pread(fd, buf.data(), kWindow, at) != static_cast<ssize_t>(kWindow)) ::_exit(3);
        for (size_t i = static_cast<size_t>(p); i < kWindow; i += static_cast<size_t>(procs)) ++buf[i];
        if (::pwrite(fd, buf.data(), kWindow, at) != static_cast<ssize_t>(kWindow)) ::_exit(4);
        if (locked && setlk(fd, F_SETLK, F_UNLCK, at, kWindow) != 0) ::_exit(5);
      }
      ::_exit(0);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ::waitpid(k, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::exit(1);
  }
  return procs * rounds / seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: locks_bench FILE_ON_MOUNT_A FILE_ON_MOUNT_B SECONDS PROCS ROUNDS\n");
    return 2;
  }
  const std::string a = argv[1], b = argv[2];
  const double secs = std::atof(argv[3]);
  const int procs = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  std::printf("fcntl lock+unlock pairs/s %.0f\n", round_trips(a, false, secs));
  std::printf("flock lock+unlock pairs/s %.0f\n", round_trips(a, true, secs));
  std::printf("romio locked rmw/s %.0f\n", romio(a, b, procs, rounds, true));
  std::printf("romio unlocked rmw/s %.0f\n", romio(a, b, procs, rounds, false));
  return 0;
}
