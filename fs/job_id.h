// Job identity of a calling process, like Lustre's jobid_var: taken from the
// process's environment at exec time (/proc/<pid>/environ), so daemons can
// count and schedule I/O per job. Owns the /proc parsing and a bounded
// per-process cache; does not decide what a job id is used for.
// pick_job_id/parse_start_time/parse_thread_status are pure; JobIdCache is
// thread-safe (one leaf mutex), though pvfsmount calls it from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shared/request_limits.h"

namespace pvfs {

// Job ids longer than kMaxJobIdBytes (shared/request_limits.h, what the daemons
// accept) are cut before they are sent.

// Chooses the job id from a NUL-separated "NAME=value" environment block:
// PVFS_JOBID, else SLURM_JOB_ID, else the variable named `jobid_var` (if
// non-empty), else "<comm>.<uid>". Empty values count as unset. `comm` may
// carry /proc's trailing newline. The result is at most kMaxJobIdBytes long,
// with control characters replaced by '_'.
std::string pick_job_id(std::string_view environ_block, std::string_view comm, uint32_t uid,
                        std::string_view jobid_var);

// PVFS_IOSTEP_BYTES from a NUL-separated environment block: the size a
// job declares for its transparent I/O steps (pvfsmount(8), I/O STEPS), a
// whole number of bytes with an optional k, m, g or t suffix (powers of
// 1024). nullopt when unset, empty, malformed or zero.
std::optional<uint64_t> pick_iostep_bytes(std::string_view environ_block);

// PVFS_QOS_RUNTIME from a NUL-separated environment block: the execution
// time the job asks for (pvfsmount(8), QoS), as shared/text_format.h's
// parse_duration() reads it ("10m", "1h30m", "600"), in milliseconds.
// nullopt when unset, empty, malformed or zero.
std::optional<uint64_t> pick_qos_runtime(std::string_view environ_block);

// What a calling process's environment says about its job.
struct JobInfo {
  std::string id;             // pick_job_id()
  uint64_t iostep_bytes = 0;  // pick_iostep_bytes(); 0: none
  uint64_t qos_runtime_ms = 0;  // pick_qos_runtime(); 0: none
};

// The process start time (field 22, clock ticks since boot) from the text of
// /proc/<pid>/stat, or nullopt when the text is malformed. Copes with spaces
// and parentheses in the command name (field 2).
std::optional<uint64_t> parse_start_time(std::string_view proc_stat);

// What /proc/<tid>/status says of a thread: the process it belongs to
// (Tgid) and its supplementary groups (Groups). nullopt when the text has no
// valid Tgid line; a missing Groups line means none.
struct ThreadStatus {
  uint32_t tgid = 0;
  std::vector<uint32_t> groups;
};
std::optional<ThreadStatus> parse_thread_status(std::string_view status);

// Reads and parses <proc_root>/<tid>/status. nullopt when it cannot be read.
std::optional<ThreadStatus> read_thread_status(const std::filesystem::path& proc_root, uint32_t tid);

// Job ids of calling processes, read from /proc once per process. An entry
// is keyed by pid and checked against the process start time, so a recycled
// pid is read afresh. FUSE reports thread ids: callers pass the thread's
// process (read_thread_status), so threads share one entry. Holds at most `max_entries`,
// dropping the oldest first. /proc/<pid>/environ shows the environment the
// process was started with; later setenv() calls are not seen.
// Thread-safe: one leaf mutex.
class JobIdCache {
 public:
  static constexpr size_t kDefaultMaxEntries = 4096;

  // `proc_root` is "/proc" except in tests.
  explicit JobIdCache(std::string jobid_var, size_t max_entries = kDefaultMaxEntries,
                      std::filesystem::path proc_root = "/proc");

  // The job id of process `pid` running as `uid`. pid 0 (requests the kernel
  // makes on its own, e.g. writeback) gives "". A process that has exited or
  // whose environment cannot be read (another user's, without privilege)
  // gets "<comm>.<uid>" or, without even a comm, "unknown.<uid>"; such
  // fallbacks are cached too when the start time was readable.
  std::string job_id(uint32_t pid, uint32_t uid) { return job_info(pid, uid).id; }
  // The same, with the step size the process declares (PVFS_IOSTEP_BYTES).
  JobInfo job_info(uint32_t pid, uint32_t uid);

  // Number of cached processes (for tests).
  size_t size() const;

 private:
  struct Entry {
    uint64_t start_time = 0;
    uint32_t uid = 0;
    JobInfo job;
  };

  JobInfo read_job_info(uint32_t pid, uint32_t uid) const;

  const std::string jobid_var_;
  const size_t max_entries_;
  const std::filesystem::path proc_root_;

  // mutex_ guards entries_ and order_. A leaf: nothing else is locked while
  // it is held, and /proc is never read under it.
  mutable std::mutex mutex_;
  std::unordered_map<uint32_t, Entry> entries_;
  std::deque<uint32_t> order_;  // pids in insertion order, for eviction
};

}  // namespace pvfs
