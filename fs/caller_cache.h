// Who a FUSE request comes from, beyond what the kernel sends with it: the
// supplementary groups and the job id of the calling thread. Reading them
// costs two /proc files, so they are kept per thread id for a short
// lifetime: a process that calls setgroups() or a recycled thread id is seen
// at most `lifetime` late (Lustre's and NFS's identity caches keep groups
// for minutes). Pure: the caller passes the time. Not thread-safe: the FUSE
// loop's thread owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace pvfs {

struct CallerInfo {
  std::vector<uint32_t> groups;
  std::string job_id;
  uint64_t iostep_bytes = 0;  // PVFS_IOSTEP_BYTES (fs/job_id.h)
  uint64_t qos_runtime_ms = 0;  // PVFS_QOS_RUNTIME (fs/job_id.h)
};

class CallerCache {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::duration kDefaultLifetime = std::chrono::seconds(1);
  static constexpr size_t kDefaultMaxEntries = 4096;

  explicit CallerCache(Clock::duration lifetime = kDefaultLifetime,
                       size_t max_entries = kDefaultMaxEntries);

  // What was stored for thread `tid` running as (uid, gid) less than the
  // lifetime before `now`; null otherwise. Valid until the next store().
  const CallerInfo* find(uint32_t tid, uint32_t uid, uint32_t gid, Clock::time_point now) const;

  // Remembers `info` from `now` on. When full, forgets expired entries, and
  // if that freed less than a quarter, all of them.
  void store(uint32_t tid, uint32_t uid, uint32_t gid, CallerInfo info, Clock::time_point now);

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    uint32_t uid = 0, gid = 0;
    Clock::time_point stored;
    CallerInfo info;
  };
  const Clock::duration lifetime_;
  const size_t max_entries_;
  std::unordered_map<uint32_t, Entry> entries_;
};

}  // namespace pvfs
