// pvfs-bench: an IOR-style driver for any mounted directory (see
// pvfs-bench(1)). Forks one process per rank; each writes, then reads back,
// its block of one shared file or its own file (or, with --mode md, creates,
// stats, reads and removes many files: utils/bench/md_phase.h), between
// barriers the parent runs over shared memory. SIGINT/SIGTERM: the parent
// kills the ranks and removes what they wrote. Plain POSIX I/O only: it
// knows nothing of pvfs.
// Numbers and text come from utils/bench/bench_report; this file owns the
// processes, the barrier, the I/O and the progress line.
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "shared/usage_error.h"
#include "utils/bench/bench_report.h"
#include "utils/bench/md_phase.h"
#include "utils/common/progress.h"

namespace {

namespace bench = pvfs::bench;

constexpr size_t kAlign = 4096;
constexpr uint32_t kMaxProcs = 4096;

struct Options {
  std::string path;
  uint32_t procs = 1;
  uint64_t transfer_bytes = 256 * 1024;
  uint64_t block_bytes = 1024 * 1024;
  uint64_t segments = 1;  // blocks per rank, IOR's -s: in a shared file segment k holds every rank's block k
  bool file_per_process = false;
  bool write = false, read = false, verify = false;
  bool json = false, fsync = false, osync = false, keep = false, progress = false, verbose = false;
  bool md = false;     // --mode md: the metadata benchmark (utils/bench/md_phase.h)
  bench::MdPlan plan;  // its plan; plan.root set by run()
};

// The I/O mode's phases, then the metadata mode's (bench::kMdPhases' order).
enum class Phase { write, read, md_create, md_stat, md_read, md_remove };
constexpr int kPhases = 6;

bool is_md(Phase p) { return p >= Phase::md_create; }
bench::MdPhase md_phase(Phase p) { return bench::kMdPhases[static_cast<int>(p) - static_cast<int>(Phase::md_create)]; }

const char* phase_name(Phase p) {
  if (is_md(p)) return bench::md_phase_name(md_phase(p));
  return p == Phase::write ? "write" : "read";
}

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// What one rank reports about one phase. Written by that rank only, read by
// the parent after the phase's closing barrier (bytes_done: at any time).
struct PhaseSlot {
  std::atomic<uint64_t> bytes_done{0};
  int64_t end_ns = 0;
  bool failed = false;
  bench::Mismatch mismatch;
  char error[512] = {};
};

struct RankSlot {
  PhaseSlot phase[kPhases];
};

// The state every process sees, in one anonymous shared mapping: the
// barrier, then one RankSlot per rank. The barrier: a rank adds itself to
// `arrived` and sleeps on `generation`; the parent, once all have arrived,
// resets `arrived`, stamps the release time and bumps `generation`. `abort`
// set at a release tells the ranks to exit instead of going on.
struct Barrier {
  std::atomic<uint32_t> arrived{0};
  std::atomic<uint32_t> generation{0};
  std::atomic<uint32_t> abort{0};
};

struct SharedArea {
  Barrier* barrier = nullptr;
  RankSlot* ranks = nullptr;
};

constexpr size_t kSlotsOffset = (sizeof(Barrier) + alignof(RankSlot) - 1) / alignof(RankSlot) * alignof(RankSlot);

size_t area_bytes(uint32_t procs) { return kSlotsOffset + sizeof(RankSlot) * procs; }

static_assert(std::atomic<uint32_t>::is_always_lock_free && sizeof(std::atomic<uint32_t>) == 4,
              "the barrier sleeps on the atomics with futex(2)");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");

// Not FUTEX_PRIVATE_FLAG: the words live in memory shared by several processes.
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, const timespec* timeout) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, timeout, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// The signal (SIGINT, SIGTERM) that asked the run to stop, 0 while none
// did. A global because a signal handler can reach nothing else; set only
// in the parent (ranks go back to the default action).
volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int signal) { g_stop_signal = signal; }

// Without SA_RESTART: the parent's futex waits return at once.
void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

void default_stop_signals() {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
}

std::string rank_path(const Options& o, uint32_t rank) {
  return o.file_per_process ? fmt::format("{}.{:08d}", o.path, rank) : o.path;
}

// ---- The ranks (child processes) ----

// Arrives at the barrier and sleeps until the parent releases it. False: the
// parent says stop.
bool rank_barrier(Barrier& barrier) {
  // Read before arriving: the parent cannot release this generation before we arrive.
  const uint32_t generation = barrier.generation.load(std::memory_order_acquire);
  barrier.arrived.fetch_add(1, std::memory_order_acq_rel);
  futex_wake_all(barrier.arrived);
  while (barrier.generation.load(std::memory_order_acquire) == generation)
    futex_wait(barrier.generation, generation, nullptr);
  return barrier.abort.load(std::memory_order_acquire) == 0;
}

template <typename... Args>
void fail(PhaseSlot& slot, fmt::format_string<Args...> format, Args&&... args) {
  auto end = fmt::format_to_n(slot.error, sizeof slot.error - 1, format, std::forward<Args>(args)...);
  *end.out = '\0';
  slot.failed = true;
}

// Where block `segment` of `rank` starts: blocks follow each other in a
// rank's own file; in a shared file segment k holds block k of every rank,
// rank by rank (IOR's layout).
uint64_t block_offset(const Options& o, uint32_t rank, uint64_t segment) {
  const uint64_t index = o.file_per_process ? segment : segment * o.procs + rank;
  return index * o.block_bytes;
}

// Writes (or reads and, with `verify`, checks) this rank's blocks.
void run_phase(const Options& o, Phase phase, uint32_t rank, std::byte* buf, PhaseSlot& slot) {
  const std::string path = rank_path(o, rank);
  const bool writing = phase == Phase::write;
  int flags = writing ? (o.file_per_process ? O_WRONLY | O_CREAT | O_TRUNC : O_WRONLY) : O_RDONLY;
  if (writing && o.osync) flags |= O_DSYNC;
  int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return fail(slot, "open {}: {}", path, std::strerror(errno));
  const uint64_t total = o.block_bytes * o.segments;
  for (uint64_t done = 0; done < total; done += o.transfer_bytes) {
    const uint64_t offset = block_offset(o, rank, done / o.block_bytes) + done % o.block_bytes;
    if (writing) bench::fill_pattern(buf, o.transfer_bytes, rank, offset);
    for (uint64_t moved = 0; moved < o.transfer_bytes;) {
      const size_t want = o.transfer_bytes - moved;
      ssize_t n = writing ? ::pwrite(fd, buf + moved, want, static_cast<off_t>(offset + moved))
                          : ::pread(fd, buf + moved, want, static_cast<off_t>(offset + moved));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        fail(slot, "{} {} at offset {}: {}", phase_name(phase), path, offset + moved, std::strerror(errno));
      } else if (n == 0) {
        fail(slot, "{} {} at offset {}: {}", phase_name(phase), path, offset + moved,
             writing ? "wrote nothing" : "unexpected end of file");
      }
      if (n <= 0) {
        ::close(fd);
        return;
      }
      moved += static_cast<uint64_t>(n);
    }
    if (!writing && o.verify) {
      bench::Mismatch m = bench::check_pattern(buf, o.transfer_bytes, rank, offset);
      if (m.count > 0 && slot.mismatch.count == 0) slot.mismatch = m;
      else slot.mismatch.count += m.count;
    }
    slot.bytes_done.store(done + o.transfer_bytes, std::memory_order_relaxed);
  }
  if (writing && o.fsync && ::fsync(fd) != 0) {
    fail(slot, "fsync {}: {}", path, std::strerror(errno));
    ::close(fd);
    return;
  }
  if (::close(fd) != 0) fail(slot, "close {}: {}", path, std::strerror(errno));
}

[[noreturn]] void rank_main(const Options& o, const std::vector<Phase>& phases, const SharedArea& area,
                            uint32_t rank) {
  RankSlot& mine = area.ranks[rank];
  void* raw = nullptr;
  const size_t buf_bytes = (o.transfer_bytes + kAlign - 1) / kAlign * kAlign;
  // Aligned: unaligned copies through the kernel cost several times more.
  const bool have_buf = ::posix_memalign(&raw, kAlign, buf_bytes) == 0;
  auto* buf = static_cast<std::byte*>(raw);
  for (Phase phase : phases) {
    PhaseSlot& slot = mine.phase[static_cast<int>(phase)];
    if (!rank_barrier(*area.barrier)) ::_exit(0);
    if (is_md(phase)) {
      const std::string error = bench::md_rank_phase(o.plan, md_phase(phase), rank, slot.bytes_done);
      if (!error.empty()) fail(slot, "{}", error);
    } else if (have_buf) {
      run_phase(o, phase, rank, buf, slot);
    } else {
      fail(slot, "cannot allocate a {} buffer", bench::exact_size(buf_bytes));
    }
    slot.end_ns = now_ns();
    if (!rank_barrier(*area.barrier)) ::_exit(0);
  }
  ::_exit(0);
}

// ---- The parent ----

// Shows how far a phase is on standard error (utils/common/progress.h): on a
// terminal one line with a bar, rate and ETA rewritten in place (from 1 s
// into the phase), elsewhere a plain line every 10 s and at each quarter.
// Does nothing unless enabled. Times are now_ns() values (CLOCK_MONOTONIC,
// steady_clock's clock on Linux).
class Progress {
 public:
  Progress(bool enabled, bool terminal) : enabled_(enabled), terminal_(terminal) {}

  void start(const char* phase, uint64_t total_bytes, int64_t start_ns, bool items = false) {
    pvfs::ProgressOptions o;
    o.label = fmt::format("pvfs-bench: {}", phase);
    o.unit = items ? pvfs::ProgressUnit::items : pvfs::ProgressUnit::bytes;
    o.terminal = terminal_;
    o.redraw = std::chrono::milliseconds(500);
    o.show_after = std::chrono::milliseconds(terminal_ ? 1000 : 0);
    meter_.emplace(std::move(o));
    meter_->start(total_bytes, at(start_ns));
    done_ = 0;
  }

  void tick(uint64_t done_bytes, int64_t now) {
    done_ = done_bytes;
    if (enabled_ && meter_) show(meter_->update(done_bytes, at(now)));
  }

  // Wipes the terminal line (or prints the final plain line), so the
  // report starts on a clean line.
  void finish() {
    if (!enabled_ || !meter_) return;
    const bool shown = meter_->shown();
    show(meter_->finish(done_, at(now_ns())));
    if (terminal_ && shown) std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    meter_.reset();
  }

 private:
  static pvfs::ProgressClock::time_point at(int64_t ns) {
    return pvfs::ProgressClock::time_point(std::chrono::nanoseconds(ns));
  }
  void show(const std::optional<std::string>& line) {
    if (!line) return;
    std::fprintf(stderr, terminal_ ? "\r\033[K%s" : "%s\n", line->c_str());
    std::fflush(stderr);
  }

  bool enabled_, terminal_;
  std::optional<pvfs::ProgressMeter> meter_;
  uint64_t done_ = 0;
};

// The forked ranks, and the ones that exited before the run told them to.
class Ranks {
 public:
  explicit Ranks(std::vector<pid_t> pids) : pids_(std::move(pids)) {}

  // Collects ranks that have exited; true when any did (they should all be
  // waiting in a barrier or working).
  bool any_died() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) note_exit(pid, status);
    return !died_.empty();
  }

  // Kills the ranks still running and waits for all.
  void kill_all() {
    for (size_t r = 0; r < pids_.size(); ++r)
      if (pids_[r] > 0) ::kill(pids_[r], SIGKILL);
    wait_all();
  }

  void wait_all() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, 0)) > 0 || (pid < 0 && errno == EINTR))
      if (pid > 0) pids_[index_of(pid)] = -1;
  }

  const std::vector<std::string>& died() const { return died_; }

 private:
  size_t index_of(pid_t pid) const {
    for (size_t r = 0; r < pids_.size(); ++r)
      if (pids_[r] == pid) return r;
    std::abort();
  }

  void note_exit(pid_t pid, int status) {
    size_t rank = index_of(pid);
    pids_[rank] = -1;
    died_.push_back(WIFSIGNALED(status)
                        ? fmt::format("rank {} (pid {}) was killed by signal {} ({})", rank, pid,
                                      WTERMSIG(status), strsignal(WTERMSIG(status)))
                        : fmt::format("rank {} (pid {}) exited early with status {}", rank, pid,
                                      WEXITSTATUS(status)));
  }

  std::vector<pid_t> pids_;
  std::vector<std::string> died_;
};

// Waits until every rank has arrived at the barrier. False if a rank died.
bool wait_arrivals(const SharedArea& area, uint32_t procs, Ranks& ranks, Progress& progress, int phase_index) {
  for (;;) {
    const uint32_t arrived = area.barrier->arrived.load(std::memory_order_acquire);
    if (arrived == procs) return true;
    const timespec tick{0, 100'000'000};
    futex_wait(area.barrier->arrived, arrived, &tick);
    if (phase_index >= 0) {
      uint64_t done = 0;
      for (uint32_t r = 0; r < procs; ++r)
        done += area.ranks[r].phase[phase_index].bytes_done.load(std::memory_order_relaxed);
      progress.tick(done, now_ns());
    }
    if (ranks.any_died() || g_stop_signal) return false;
  }
}

// Releases the ranks waiting at the barrier; returns the release time.
int64_t release(Barrier& barrier, bool stop) {
  barrier.arrived.store(0, std::memory_order_relaxed);
  if (stop) barrier.abort.store(1, std::memory_order_relaxed);
  const int64_t at = now_ns();
  barrier.generation.fetch_add(1, std::memory_order_release);
  futex_wake_all(barrier.generation);
  return at;
}

// Removes what the run wrote (unless -k): the I/O mode's files or the
// metadata mode's directory. Returns the errors, one line each.
std::vector<std::string> remove_outputs(const Options& o) {
  std::vector<std::string> errors;
  if (o.keep) return errors;
  if (o.md) {
    std::error_code ec;
    std::filesystem::remove_all(o.plan.root, ec);
    if (ec) errors.push_back(fmt::format("remove {}: {}", o.plan.root, ec.message()));
    return errors;
  }
  const uint32_t files = o.file_per_process ? o.procs : 1;
  for (uint32_t r = 0; r < files; ++r) {
    const std::string path = rank_path(o, r);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT)
      errors.push_back(fmt::format("remove {}: {}", path, std::strerror(errno)));
  }
  return errors;
}

int run(Options o) {
  std::vector<Phase> phases;
  if (o.md) {
    phases = {Phase::md_create, Phase::md_stat, Phase::md_read, Phase::md_remove};
    o.plan.root = fmt::format("{}/pvfs-bench-md.{}", o.path, ::getpid());
    o.plan.procs = o.procs;
    for (const auto& dir : bench::md_directories(o.plan)) {
      if (::mkdir(dir.c_str(), 0755) != 0) {
        std::fprintf(stderr, "pvfs-bench: mkdir %s: %s\n", dir.c_str(), std::strerror(errno));
        std::error_code ec;
        std::filesystem::remove_all(o.plan.root, ec);
        return 1;
      }
      if (g_stop_signal) break;
    }
  } else {
    if (o.write) phases.push_back(Phase::write);
    if (o.read) phases.push_back(Phase::read);
  }

  bench::RunInfo info{.path = o.path,
                      .procs = o.procs,
                      .transfer_bytes = o.transfer_bytes,
                      .block_bytes = o.block_bytes,
                      .segments = o.segments,
                      .file_per_process = o.file_per_process,
                      .fsync = o.fsync,
                      .verify = o.verify,
                      .osync = o.osync};
  bench::RunOutcome outcome;

  if (!o.md && o.write && !o.file_per_process) {
    int fd = ::open(o.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || ::close(fd) != 0) {
      std::fprintf(stderr, "pvfs-bench: create %s: %s\n", o.path.c_str(), std::strerror(errno));
      return 1;
    }
  }

  const size_t mapped_bytes = area_bytes(o.procs);
  void* mem = ::mmap(nullptr, mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::fprintf(stderr, "pvfs-bench: mmap: %s\n", std::strerror(errno));
    return 1;
  }
  SharedArea area{new (mem) Barrier, reinterpret_cast<RankSlot*>(static_cast<char*>(mem) + kSlotsOffset)};
  for (uint32_t r = 0; r < o.procs; ++r) new (&area.ranks[r]) RankSlot;

  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  std::vector<pid_t> pids;
  for (uint32_t r = 0; r < o.procs; ++r) {
    pid_t pid = ::fork();
    if (pid == 0) {
      default_stop_signals();
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      rank_main(o, phases, area, r);
    }
    if (pid < 0) {
      std::fprintf(stderr, "pvfs-bench: fork rank %u: %s\n", r, std::strerror(errno));
      Ranks(pids).kill_all();
      return 1;
    }
    pids.push_back(pid);
  }
  Ranks ranks(std::move(pids));

  Progress progress(o.progress, ::isatty(STDERR_FILENO) == 1);
  std::vector<bench::PhaseStats> stats;
  std::vector<bench::MdStats> md_stats;
  bool stopped = false;
  for (Phase phase : phases) {
    const int index = static_cast<int>(phase);
    if (!wait_arrivals(area, o.procs, ranks, progress, -1)) break;
    const int64_t start = release(*area.barrier, false);
    const uint64_t total = (o.md ? o.plan.files : o.block_bytes * o.segments) * o.procs;
    progress.start(phase_name(phase), total, start, o.md);
    const bool all_arrived = wait_arrivals(area, o.procs, ranks, progress, index);
    progress.finish();
    if (!all_arrived) break;

    std::vector<double> completion_s;
    uint64_t moved = 0;
    uint32_t failed = 0;
    for (uint32_t r = 0; r < o.procs; ++r) {
      const PhaseSlot& slot = area.ranks[r].phase[index];
      completion_s.push_back(static_cast<double>(slot.end_ns - start) / 1e9);
      moved += slot.bytes_done.load(std::memory_order_relaxed);
      const std::string path = rank_path(o, r);
      if (slot.failed) {
        ++failed;
        outcome.errors.push_back(fmt::format("rank {}: {}", r, slot.error));
      } else if (slot.mismatch.count > 0) {
        outcome.errors.push_back(fmt::format(
            "rank {}: {}: verify: {} bytes differ, first at offset {} (expected 0x{:02x}, found 0x{:02x})", r,
            path, slot.mismatch.count, slot.mismatch.first_offset, slot.mismatch.expected, slot.mismatch.found));
      }
      if (phase == Phase::read && o.verify && !slot.failed) {
        outcome.verify_errors += slot.mismatch.count;
        outcome.verified_bytes += o.block_bytes * o.segments;
      }
    }
    if (o.md) {
      double slowest = 0;
      for (double s : completion_s) slowest = std::max(slowest, s);
      md_stats.push_back({phase_name(phase), moved, slowest, failed});
    } else {
      stats.push_back(bench::summarize(phase_name(phase), moved, std::move(completion_s), failed));
    }
    stopped = !outcome.errors.empty();
    release(*area.barrier, stopped);
    if (stopped) break;
  }
  if (g_stop_signal) {
    // Interrupted: no report, only the clean-up (ranks killed by the same
    // Ctrl-C are no news).
    ranks.kill_all();
    ::munmap(mem, mapped_bytes);
    const auto errors = remove_outputs(o);
    for (const auto& e : errors) std::fprintf(stderr, "pvfs-bench: %s\n", e.c_str());
    std::fprintf(stderr, "pvfs-bench: stopped by SIG%s; every rank ended, %s\n", sigabbrev_np(g_stop_signal),
                 o.keep ? "files kept (-k)" : errors.empty() ? "the files written removed" : "some files left");
    return 128 + g_stop_signal;
  }
  if (!ranks.died().empty()) {
    for (const auto& d : ranks.died()) outcome.errors.push_back(d);
    ranks.kill_all();
  } else {
    ranks.wait_all();
  }
  ::munmap(mem, mapped_bytes);

  for (auto& e : remove_outputs(o)) outcome.errors.push_back(std::move(e));

  std::string report = o.md ? (o.json ? bench::md_json_report(o.plan, md_stats, outcome.errors)
                                      : bench::md_human_report(o.plan, md_stats))
                     : o.json ? bench::json_report(info, stats, outcome)
                              : bench::human_report(info, stats, outcome, o.verbose);
  std::fputs(report.c_str(), stdout);
  std::fflush(stdout);
  for (const auto& e : outcome.errors) std::fprintf(stderr, "pvfs-bench: %s\n", e.c_str());
  return outcome.errors.empty() && outcome.verify_errors == 0 ? 0 : 1;
}

CLI::Validator size_transform() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto bytes = pvfs::parse_size(text);
        if (!bytes) return bytes.status().detail();
        text = std::to_string(*bytes);
        return {};
      },
      "SIZE");
}

int usage_error(const std::string& message) { return pvfs::usage_error("pvfs-bench", message); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"pvfs-bench: IOR-style parallel write/read benchmark for any mounted directory.\n"
               "N processes each write and read back -b bytes in -t transfers, to their own\n"
               "file (-F) or their block of one shared file. With --mode md, mdtest-style: each\n"
               "creates, stats, reads and removes -n files; ops/s per phase. Ctrl-C stops every\n"
               "process and removes the files. See pvfs-bench(1).",
               "pvfs-bench"};
  app.set_version_flag("--version", PVFS_VERSION);
  Options o;
  app.add_option("-N,--procs", o.procs, "processes (ranks)")->capture_default_str()
      ->check(CLI::Range(1u, kMaxProcs));
  app.add_option("-t,--transfer", o.transfer_bytes, "bytes per read or write call; k, m, g suffixes [256k]")
      ->transform(size_transform());
  app.add_option("-b,--block", o.block_bytes, "bytes per process (per segment with --segments), a multiple of -t; "
                                          "k, m, g suffixes [1m]")
      ->transform(size_transform());
  app.add_option("--segments", o.segments, "blocks per process (IOR's -s); in a shared file segment k holds "
                                          "block k of every rank, so ranks write side by side")
      ->capture_default_str()->check(CLI::Range(uint64_t{1}, uint64_t{1} << 32));
  app.add_flag("-F,--file-per-process", o.file_per_process, "each rank its own file PATH.<rank>");
  app.add_flag("-w,--write", o.write, "run the write phase");
  app.add_flag("-r,--read", o.read, "run the read phase (neither -w nor -r: both)");
  app.add_flag("--verify", o.verify, "check every byte read against the pattern written");
  app.add_flag("-e,--fsync", o.fsync, "fsync each file at the end of the write phase (timed)");
  app.add_flag("--osync", o.osync, "open files for writing with O_DSYNC: each write is durable before it returns");
  app.add_flag("-k,--keep", o.keep, "keep the files (default: remove them at the end)");
  app.add_flag("--json", o.json, "print one JSON object instead of the table");
  app.add_flag("--progress", o.progress, "show progress, rate and ETA on standard error");
  app.add_flag("-v,--verbose", o.verbose, "also list each process's completion time");
  app.add_option("-o,--output", o.path,
                 "the file (or, with -F, the prefix of the files); --mode md: the directory to work in")
      ->required();
  std::string mode = "io";
  app.add_option("--mode", mode, "io: write and read files (IOR-like); md: create, stat, read and remove "
                                 "many files (mdtest-like)")
      ->capture_default_str()
      ->check(CLI::IsMember({"io", "md"}));
  app.add_option("-n,--files", o.plan.files, "md: files per process")->capture_default_str()
      ->check(CLI::Range(1u, 100000000u));
  app.add_flag("--shared-dir", o.plan.shared_dir, "md: all processes' files in one directory (tree) "
                                                  "instead of one each");
  app.add_option("--depth", o.plan.depth, "md: levels of directories below each top directory")
      ->capture_default_str()->check(CLI::Range(0u, 8u));
  app.add_option("--fanout", o.plan.fanout, "md: directories per level of the tree")
      ->capture_default_str()->check(CLI::Range(1u, 1000u));
  app.add_option("-s,--file-size", o.plan.file_bytes, "md: bytes written to each file at create and read back "
                                                      "[0]")
      ->transform(size_transform());

  if (auto code = pvfs::parse_command_line<CLI::ParseError>(app, argc, argv, "pvfs-bench")) return *code;
  if (o.transfer_bytes == 0) return usage_error("-t must be more than 0");
  if (o.block_bytes == 0) return usage_error("-b must be more than 0");
  if (o.block_bytes % o.transfer_bytes != 0)
    return usage_error(fmt::format("-t {} does not divide -b {}", bench::exact_size(o.transfer_bytes),
                                   bench::exact_size(o.block_bytes)));
  if (o.transfer_bytes > SSIZE_MAX) return usage_error("-t is too large");
  if (o.block_bytes > (uint64_t{1} << 48) / o.procs / o.segments)
    return usage_error("-N times -b times --segments must stay below 256 TiB");
  if (!o.write && !o.read) o.write = o.read = true;
  if (o.verify && !o.read) return usage_error("--verify checks the read phase: it needs -r");
  if (o.path.empty()) return usage_error("-o needs a path");
  o.md = mode == "md";
  if (o.md) {
    struct stat st {};
    if (::stat(o.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return usage_error(fmt::format("--mode md: -o {} is not a directory", o.path));
    if (o.plan.depth > 0 && std::pow(double(o.plan.fanout), double(o.plan.depth)) > 1e6)
      return usage_error("--fanout to the power --depth must stay below a million directories");
  }
  if (o.write && !o.md) {
    // Refuse a run that cannot fit rather than fill the file system. The
    // folder of -o: the files are there.
    std::filesystem::path dir = std::filesystem::path(o.path).parent_path();
    if (dir.empty()) dir = ".";
    struct statvfs vfs {};
    if (::statvfs(dir.c_str(), &vfs) != 0)
      return usage_error(fmt::format("{}: {}", dir.string(), std::strerror(errno)));
    const uint64_t need = o.block_bytes * o.segments * o.procs;
    const uint64_t free_bytes = uint64_t{vfs.f_bavail} * vfs.f_frsize;
    if (need > free_bytes) {
      const double gib = 1024.0 * 1024 * 1024;
      const std::string segments = o.segments > 1 ? fmt::format(" x --segments {}", o.segments) : "";
      std::fprintf(stderr, "pvfs-bench: -N %u x -b %s%s needs %.1f GiB, but %s has %.1f GiB free\n", o.procs,
                   bench::exact_size(o.block_bytes).c_str(), segments.c_str(), static_cast<double>(need) / gib,
                   dir.c_str(), static_cast<double>(free_bytes) / gib);
      return 2;
    }
  }
  catch_stop_signals();
  return run(o);
}
